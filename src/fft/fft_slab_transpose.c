/* The all-to-all transpose of the distributed slab scheme. Before it ("pre"), a rank holds its
 * slab of the last axis with the second-to-last axis whole; after it (the slot layout), the
 * second-to-last axis is split and the last one whole. The block for rank q is a rectangle of the
 * pre array (q's range of the split axis) and a contiguous run of the slot (the blocks arrive in
 * slot order); the comm layer's all-to-all moves them on the transport FLOWCL_TRANSPORT picks. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fft_impl.h"

struct fcl__slab_transpose {
  fcl__alltoall *exchange;
  size_t pre_bytes;
};

size_t fcl__slab_transpose_pre_bytes(const fcl__slab_transpose *t) { return t->pre_bytes; }

const char *fcl__slab_transpose_transport(const fcl__slab_transpose *t) {
  return fcl__alltoall_transport(t->exchange);
}

void fcl__slab_transpose_destroy(fcl__slab_transpose **tp) {
  if (!tp || !*tp) return;
  fcl__alltoall_destroy(&(*tp)->exchange);
  free(*tp);
  *tp = NULL;
}

fcl_status fcl__slab_transpose_create(const fcl_fft *fft, fcl__slab_transpose **out) {
  const fcl_topology *topo = fft->topo;
  const fcl_fft_layout *l = &fft->layout;
  const int dim = fft->dim, P = topo->size, split = dim - 2;
  const size_t cbytes = 2 * fft->real_size;
  fcl__transport kind;
  FCL_TRY(fcl__transport_from_env(&kind));
  fcl__slab_transpose *t = calloc(1, sizeof *t);
  fcl__block *pre = calloc((size_t)P, sizeof *pre), *slot = calloc((size_t)P, sizeof *slot);
  if (!t || !pre || !slot) {
    free(t);
    free(pre);
    free(slot);
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "fft transpose");
  }
  size_t d[3];
  for (int a = 0; a < 3; ++a) d[a] = (size_t)l->global[a];
  d[dim - 1] = (size_t)topo->local[dim - 1];
  t->pre_bytes = d[0] * d[1] * d[2] * cbytes;
  /* Per peer q: the pre-side block is q's split range in this slab; the slot-side block is this
   * rank's split range in q's slab. */
  const size_t row = d[0] * cbytes, slice = row * d[1];
  const int64_t my_split = l->local[dim - 2];
  size_t slot_at = 0;
  for (int q = 0; q < P; ++q) {
    int64_t split_n, split_lo, last_n, last_lo;
    fcl__fft_split(l->global[dim - 2], P, q, &split_n, &split_lo);
    fcl__fft_split(topo->domain.resolution[dim - 1], P, q, &last_n, &last_lo);
    fcl__block b = {0, {row, d[1], d[2]}, row, slice};
    if (split == 0) {
      b.offset = (size_t)split_lo * cbytes;
      b.region[0] = (size_t)split_n * cbytes;
    } else {
      b.offset = (size_t)split_lo * row;
      b.region[1] = (size_t)split_n;
    }
    if (fcl__block_bytes(&b) == 0) b = fcl__block_range(0, 0);
    pre[q] = b;
    size_t slot_bytes = (size_t)last_n * (size_t)my_split * (dim == 3 ? d[0] : 1) * cbytes;
    slot[q] = fcl__block_range(slot_at, slot_bytes);
    slot_at += slot_bytes;
  }
  fcl_status st = fcl__alltoall_create(fft->context, fft->queue, topo->comm, cbytes, pre, slot,
                                       kind, &t->exchange);
  free(pre);
  free(slot);
  if (st != FCL_OK) {
    fcl__slab_transpose_destroy(&t);
    return st;
  }
  *out = t;
  return FCL_OK;
}

fcl_status fcl__slab_transpose_run(fcl__slab_transpose *t, cl_mem pre, cl_mem slot, bool forward) {
  return fcl__alltoall_run(t->exchange, pre, slot, forward);
}
