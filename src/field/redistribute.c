/* Redistribution of a field component between two topologies of one domain and communicator
 * (blocks to pencils, ...): interiors staged on the host, boxes intersected, MPI_Alltoallv. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "field_impl.h"

typedef struct {
  int64_t lo[3], n[3];
} box3;

static box3 rank_box(const fcl_topology *t, int rank) {
  const int dim = t->domain.dim;
  int mc[3] = {0, 0, 0};
  MPI_Cart_coords(t->comm, rank, dim, mc);
  box3 b;
  for (int a = 0; a < 3; ++a) {
    int p = a < dim ? t->procs[a] : 1, c = a < dim ? mc[dim - 1 - a] : 0;
    int64_t n = a < dim ? t->domain.resolution[a] : 1, base = n / p, extra = n % p;
    b.n[a] = base + (c < extra ? 1 : 0);
    b.lo[a] = c * base + (c < extra ? c : extra);
  }
  return b;
}

static box3 intersect(box3 x, box3 y) {
  box3 r;
  for (int a = 0; a < 3; ++a) {
    int64_t lo = x.lo[a] > y.lo[a] ? x.lo[a] : y.lo[a];
    int64_t hi0 = x.lo[a] + x.n[a], hi1 = y.lo[a] + y.n[a], hi = hi0 < hi1 ? hi0 : hi1;
    r.lo[a] = lo;
    r.n[a] = hi > lo ? hi - lo : 0;
  }
  return r;
}

static size_t volume(box3 b) { return (size_t)(b.n[0] * b.n[1] * b.n[2]); }

/* Copy box b between a packed local array of box `local` and a packed block. */
static void copy_box(char *local, box3 lb, char *block, box3 b, size_t item, bool to_block) {
  size_t at = 0;
  for (int64_t k = 0; k < b.n[2]; ++k)
    for (int64_t j = 0; j < b.n[1]; ++j) {
      size_t row = (size_t)(((b.lo[2] + k - lb.lo[2]) * lb.n[1] + (b.lo[1] + j - lb.lo[1])) *
                                lb.n[0] +
                            (b.lo[0] - lb.lo[0]));
      size_t bytes = (size_t)b.n[0] * item;
      if (to_block)
        memcpy(block + at, local + row * item, bytes);
      else
        memcpy(local + row * item, block + at, bytes);
      at += bytes;
    }
}

fcl_status fcl_field_redistribute(const fcl_field *src, int src_comp, fcl_field *dst,
                                  int dst_comp) {
  FCL_CHECK_NULL(src, 1);
  FCL_CHECK_NULL(dst, 3);
  const fcl_topology *ts = src->topo, *td = dst->topo;
  if (ts->size != td->size || ts->domain.dim != td->domain.dim ||
      memcmp(ts->domain.resolution, td->domain.resolution, sizeof ts->domain.resolution))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "redistribute: '%s' and '%s' are not on one "
                     "domain resolution and communicator size",
                     src->name, dst->name);
  if (src->dtype != dst->dtype)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "redistribute: '%s' and '%s' differ in precision",
                     src->name, dst->name);
  const int size = ts->size, me = ts->rank;
  const size_t item = src->itemsize;
  box3 mine_src = rank_box(ts, me), mine_dst = rank_box(td, me);
  int *counts = calloc(4 * (size_t)size, sizeof *counts);
  char *in = malloc(volume(mine_src) * item), *out = malloc(volume(mine_dst) * item);
  char *sendbuf = malloc(volume(mine_src) * item + 1),
       *recvbuf = malloc(volume(mine_dst) * item + 1);
  fcl_status st = counts && in && out && sendbuf && recvbuf
                      ? FCL_OK
                      : FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "redistribute '%s'", src->name);
  int *scount = counts, *sdispl = counts + size, *rcount = counts + 2 * size,
      *rdispl = counts + 3 * size;
  if (st == FCL_OK) st = fcl_field_read(src, src_comp, false, in);
  if (st == FCL_OK) {
    size_t s = 0, r = 0;
    for (int q = 0; q < size; ++q) {
      box3 out_box = intersect(mine_src, rank_box(td, q)),
           in_box = intersect(rank_box(ts, q), mine_dst);
      sdispl[q] = (int)s;
      scount[q] = (int)(volume(out_box) * item);
      copy_box(in, mine_src, sendbuf + s, out_box, item, true);
      s += (size_t)scount[q];
      rdispl[q] = (int)r;
      rcount[q] = (int)(volume(in_box) * item);
      r += (size_t)rcount[q];
    }
    int rc = MPI_Alltoallv(sendbuf, scount, sdispl, MPI_BYTE, recvbuf, rcount, rdispl, MPI_BYTE,
                           td->comm);
    if (rc != MPI_SUCCESS) st = fcl__mpi_error(rc, "redistribute: MPI_Alltoallv");
  }
  if (st == FCL_OK) {
    for (int q = 0; q < size; ++q)
      copy_box(out, mine_dst, recvbuf + rdispl[q], intersect(rank_box(ts, q), mine_dst), item,
               false);
    st = fcl_field_write(dst, dst_comp, false, out);
  }
  free(counts);
  free(in);
  free(out);
  free(sendbuf);
  free(recvbuf);
  return st;
}
