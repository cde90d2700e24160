/* MPI cartesian decomposition of a domain: process grid, local sizes (uneven divisions),
 * neighbours, index conversion, and the device of each rank. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "field_impl.h"

/* Points of part c of n split in p: the first n mod p parts get one more. */
static void split(int64_t n, int p, int c, int64_t *count, int64_t *offset) {
  int64_t base = n / p, extra = n % p;
  *count = base + (c < extra ? 1 : 0);
  *offset = c * base + (c < extra ? c : extra);
}

/* Rows start aligned (FCL_ROW_ALIGN elements: 128 bytes of floats) where the x ghosts allow and
 * the padding costs at most an eighth of a row per side: a GPU loads a row's interior in whole
 * transactions (one H200, flowcl-tgv 512^3: stretching 4.67 ms against 5.43 a half-step, the
 * step 34.4 against 36.1; docs/benchmarks.md). FLOWCL_ROW_ALIGN=on aligns
 * every topology with x ghosts (the tests' small grids exercise the layout), off none. Decided
 * from the global shape, so every rank has the same layout (ghost faces go between ranks as
 * runs of memory). */
enum { FCL_ROW_ALIGN = 32 };

static fcl_status storage_origin(fcl_topology *t) {
  const char *env = getenv("FLOWCL_ROW_ALIGN");
  const bool forced = env && !strcmp(env, "on"), off = env && !strcmp(env, "off");
  if (env && *env && !forced && !off && strcmp(env, "auto"))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "FLOWCL_ROW_ALIGN=%s: auto, on or off", env);
  memcpy(t->origin, t->ghosts, sizeof t->origin);
  const int64_t row = t->domain.resolution[0] / t->procs[0];
  if (t->ghosts[0] && !off && (forced || row >= 8 * FCL_ROW_ALIGN))
    t->origin[0] = (t->ghosts[0] + FCL_ROW_ALIGN - 1) / FCL_ROW_ALIGN * FCL_ROW_ALIGN;
  return FCL_OK;
}

fcl_status fcl_topology_create(MPI_Comm comm, const fcl_domain *domain, const int *procs,
                               const int *ghosts, fcl_topology **out) {
  FCL_CHECK_NULL(domain, 2);
  FCL_CHECK_NULL(out, 5);
  *out = NULL;
  FCL_TRY(fcl_domain_check(domain));
  int size = 0;
  FCL_MPI_TRY(MPI_Comm_size(comm, &size), "topology: MPI_Comm_size");
  const int dim = domain->dim;
  int dims[3] = {1, 1, 1}, periods[3] = {0, 0, 0};
  for (int a = 0; a < dim; ++a) {
    dims[a] = procs ? procs[a] : 0;
    if (dims[a] < 0)
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "topology: procs[%d] = %d must be >= 0", a,
                       dims[a]);
    periods[a] = domain->bc[a][0] == FCL_BC_PERIODIC;
  }
  int product = 1, free_axes = 0;
  for (int a = 0; a < dim; ++a) {
    if (dims[a])
      product *= dims[a];
    else
      free_axes++;
  }
  if ((!free_axes && product != size) || (free_axes && size % product))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "topology: the process grid %d x %d x %d does not "
                     "fit %d ranks (0: chosen by MPI)",
                     dims[0], dims[1], dims[2], size);
  /* MPI_Dims_create balances its first entries largest; we want z split first (x contiguous
   * stays whole longest): fill reversed axes */
  int rev[3];
  for (int a = 0; a < dim; ++a) rev[a] = dims[dim - 1 - a];
  FCL_MPI_TRY(MPI_Dims_create(size, dim, rev), "topology: MPI_Dims_create");
  for (int a = 0; a < dim; ++a) dims[a] = rev[dim - 1 - a];
  for (int a = 0; a < dim; ++a) {
    int g = ghosts ? ghosts[a] : 0;
    if (g < 0)
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "topology: ghosts[%d] = %d must be >= 0", a, g);
    if (domain->resolution[a] / dims[a] < (g ? g : 1))
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "topology: axis %d: %lld points over %d ranks "
                       "leave some rank fewer than %d (the ghost width)",
                       a, (long long)domain->resolution[a], dims[a], g ? g : 1);
    if (g && domain->bc[a][0] != FCL_BC_PERIODIC && domain->resolution[a] / dims[a] <= g)
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "topology: axis %d: mirrored ghosts need more "
                       "than %d points per rank",
                       a, g);
  }
  fcl_topology *t = calloc(1, sizeof *t);
  if (!t) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "topology");
  t->domain = *domain;
  t->comm = MPI_COMM_NULL;
  /* MPI's cartesian order is row-major over its dims: give it (z, y, x) so that ranks along x
   * are neighbours in rank order */
  int mdims[3], mper[3];
  for (int a = 0; a < dim; ++a) {
    mdims[a] = dims[dim - 1 - a];
    mper[a] = periods[dim - 1 - a];
  }
  int rc = MPI_Cart_create(comm, dim, mdims, mper, 0, &t->comm);
  int mcoords[3] = {0, 0, 0};
  if (rc == MPI_SUCCESS) rc = MPI_Comm_rank(t->comm, &t->rank);
  if (rc == MPI_SUCCESS) rc = MPI_Cart_coords(t->comm, t->rank, dim, mcoords);
  t->size = size;
  for (int a = 0; a < 3; ++a) {
    bool on = a < dim;
    t->procs[a] = on ? dims[a] : 1;
    t->coords[a] = on ? mcoords[dim - 1 - a] : 0;
    t->ghosts[a] = on && ghosts ? ghosts[a] : 0;
    t->local[a] = 1;
    t->offset[a] = 0;
    if (on) split(domain->resolution[a], dims[a], t->coords[a], &t->local[a], &t->offset[a]);
    t->neighbour[a][0] = t->neighbour[a][1] = MPI_PROC_NULL;
    if (on && rc == MPI_SUCCESS)
      rc = MPI_Cart_shift(t->comm, dim - 1 - a, 1, &t->neighbour[a][0], &t->neighbour[a][1]);
  }
  if (rc != MPI_SUCCESS) {
    fcl_topology_destroy(&t);
    return fcl__mpi_error(rc, "topology: cartesian communicator");
  }
  fcl_status st = storage_origin(t);
  if (st != FCL_OK) {
    fcl_topology_destroy(&t);
    return st;
  }
  *out = t;
  return FCL_OK;
}

void fcl_topology_destroy(fcl_topology **topo) {
  if (!topo || !*topo) return;
  if ((*topo)->comm != MPI_COMM_NULL) MPI_Comm_free(&(*topo)->comm);
  free(*topo);
  *topo = NULL;
}

const fcl_domain *fcl_topology_domain(const fcl_topology *t) { return t ? &t->domain : NULL; }
MPI_Comm fcl_topology_comm(const fcl_topology *t) { return t ? t->comm : MPI_COMM_NULL; }
int fcl_topology_rank(const fcl_topology *t) { return t ? t->rank : -1; }
int fcl_topology_size(const fcl_topology *t) { return t ? t->size : 0; }
const int *fcl_topology_procs(const fcl_topology *t) { return t ? t->procs : NULL; }
const int *fcl_topology_coords(const fcl_topology *t) { return t ? t->coords : NULL; }
const int64_t *fcl_topology_local_resolution(const fcl_topology *t) { return t ? t->local : NULL; }
const int64_t *fcl_topology_offset(const fcl_topology *t) { return t ? t->offset : NULL; }
const int *fcl_topology_ghosts(const fcl_topology *t) { return t ? t->ghosts : NULL; }
const int *fcl_topology_origin(const fcl_topology *t) { return t ? t->origin : NULL; }

int fcl_topology_neighbour(const fcl_topology *t, int axis, int side) {
  if (!t || axis < 0 || axis > 2 || side < 0 || side > 1) return MPI_PROC_NULL;
  return t->neighbour[axis][side];
}

int64_t fcl_topology_global_index(const fcl_topology *t, int axis, int64_t local) {
  return t && axis >= 0 && axis < 3 ? t->offset[axis] + local : -1;
}

int fcl_topology_owner(const fcl_topology *t, const int64_t *global) {
  if (!t || !global) return -1;
  int mcoords[3];
  const int dim = t->domain.dim;
  for (int a = 0; a < dim; ++a) {
    int64_t n = t->domain.resolution[a], base = n / t->procs[a], extra = n % t->procs[a];
    if (global[a] < 0 || global[a] >= n) return -1;
    /* the first extra parts have base + 1 points */
    int64_t c = global[a] < extra * (base + 1) ? global[a] / (base + 1)
                                               : extra + (global[a] - extra * (base + 1)) / base;
    mcoords[dim - 1 - a] = (int)c;
  }
  int rank = -1;
  return MPI_Cart_rank(t->comm, mcoords, &rank) == MPI_SUCCESS ? rank : -1;
}

fcl_status fcl_comm_select_device(MPI_Comm comm, const char *spec, fcl_device_entry *out) {
  FCL_CHECK_ARG(comm != MPI_COMM_NULL, 1, "comm", "must not be MPI_COMM_NULL");
  FCL_CHECK_NULL(out, 3);
  MPI_Comm node = MPI_COMM_NULL;
  int rank = 0, local_rank = 0;
  MPI_Comm_rank(comm, &rank);
  FCL_MPI_TRY(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node),
              "select device: node communicator");
  MPI_Comm_rank(node, &local_rank);
  MPI_Comm_free(&node);
  return fcl_device_select_nth(spec, local_rank, out);
}

fcl_status fcl_topology_select_device(const fcl_topology *t, const char *spec,
                                      fcl_device_entry *out) {
  FCL_CHECK_NULL(t, 1);
  FCL_CHECK_NULL(out, 3);
  return fcl_comm_select_device(t->comm, spec, out);
}
