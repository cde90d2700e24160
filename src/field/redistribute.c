/* Redistribution of a field component between two topologies of one domain and communicator
 * (blocks to pencils, ...): the boxes intersected, and the comm layer's all-to-all of device
 * blocks (on the transport FLOWCL_TRANSPORT chooses) moves them between the padded storages,
 * this rank's own part on the device. Planned at each call: redistribution is not in a time
 * loop. */
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

/* Box b (inside box `mine`, held by this rank) of field f's padded storage as a block. */
static fcl__block padded_block(const fcl_field *f, box3 mine, box3 b) {
  if (!volume(b)) return fcl__block_range(0, 0);
  const int *o = f->topo->origin;
  const size_t row = f->padded[0] * f->itemsize, slice = row * f->padded[1];
  size_t at[3];
  for (int a = 0; a < 3; ++a) at[a] = (size_t)(b.lo[a] - mine.lo[a] + o[a]);
  return (fcl__block){at[0] * f->itemsize + at[1] * row + at[2] * slice,
                      {(size_t)b.n[0] * f->itemsize, (size_t)b.n[1], (size_t)b.n[2]},
                      row,
                      slice};
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
  if (src->context != dst->context)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "redistribute: '%s' and '%s' are not on one context",
                     src->name, dst->name);
  FCL_CHECK_ARG(src_comp >= 0 && src_comp < src->ncomp, 2, "src_comp",
                "not a component of the source field");
  FCL_CHECK_ARG(dst_comp >= 0 && dst_comp < dst->ncomp, 4, "dst_comp",
                "not a component of the destination field");
  fcl__transport kind;
  FCL_TRY(fcl__transport_from_env(&kind));
  /* the exchange runs on dst's queue: src's writes on its own queue must be done */
  if (src->queue != dst->queue) FCL_TRY(fcl_queue_finish(src->queue));
  const int size = ts->size, me = ts->rank;
  box3 mine_src = rank_box(ts, me), mine_dst = rank_box(td, me);
  fcl__block *send = calloc((size_t)size, sizeof *send), *recv = calloc((size_t)size, sizeof *recv);
  fcl_status st = send && recv ? FCL_OK
                               : FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "redistribute '%s'", src->name);
  for (int q = 0; st == FCL_OK && q < size; ++q) {
    send[q] = padded_block(src, mine_src, intersect(mine_src, rank_box(td, q)));
    recv[q] = padded_block(dst, mine_dst, intersect(rank_box(ts, q), mine_dst));
  }
  fcl__alltoall *x = NULL;
  if (st == FCL_OK)
    st = fcl__alltoall_create(dst->context, dst->queue, td->comm, src->itemsize, send, recv, 1,
                              kind, &x);
  if (st == FCL_OK)
    st = fcl__alltoall_run(x, fcl_field_buffer(src, src_comp), fcl_field_buffer(dst, dst_comp),
                           true);
  /* src's queue may write src again once the exchange has read it */
  if (st == FCL_OK && src->queue != dst->queue) st = fcl_queue_finish(dst->queue);
  fcl__alltoall_destroy(&x);
  free(send);
  free(recv);
  return st;
}
