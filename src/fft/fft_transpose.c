/* The all-to-all transposes of the distributed transforms: a complex array (memory x, y, z)
 * whose axis `whole` a rank holds whole and axis `split` in part becomes one whose `whole` axis
 * is split over the communicator's ranks and `split` axis whole. The block for rank q is q's
 * range of `whole` before and q's range of `split` after, each a rectangle of its array (or a
 * contiguous run, when the range is along the slowest axis); the comm layer's all-to-all moves
 * them on the transport FLOWCL_TRANSPORT picks. Slabs use one transpose over every rank,
 * pencils two, each over one row or column of the process grid. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fft_impl.h"

struct fcl__fft_transpose {
  fcl__alltoall *exchange;
  size_t before_bytes, after_bytes;
};

size_t fcl__fft_transpose_bytes(const fcl__fft_transpose *t, bool after) {
  return after ? t->after_bytes : t->before_bytes;
}

const char *fcl__fft_transpose_transport(const fcl__fft_transpose *t) {
  return fcl__alltoall_transport(t->exchange);
}

void fcl__fft_transpose_destroy(fcl__fft_transpose **tp) {
  if (!tp || !*tp) return;
  fcl__alltoall_destroy(&(*tp)->exchange);
  free(*tp);
  *tp = NULL;
}

/* Points [lo, lo + n) of axis `axis` of a packed array of shape e (elements of cb bytes). */
static fcl__block range_block(const int64_t e[3], int axis, int64_t lo, int64_t n, size_t cb) {
  const size_t row = (size_t)e[0] * cb, slice = row * (size_t)e[1];
  if (n == 0 || e[0] * e[1] * e[2] == 0) return fcl__block_range(0, 0);
  if (axis == 2) return fcl__block_range((size_t)lo * slice, (size_t)n * slice);
  fcl__block b = {0, {row, (size_t)e[1], (size_t)e[2]}, row, slice};
  if (axis == 0) {
    b.offset = (size_t)lo * cb;
    b.region[0] = (size_t)n * cb;
  } else {
    b.offset = (size_t)lo * row;
    b.region[1] = (size_t)n;
  }
  return b;
}

static size_t shape_bytes(const int64_t e[3], size_t cb) {
  return (size_t)(e[0] * e[1] * e[2]) * cb;
}

fcl_status fcl__fft_transpose_create(const fcl_fft *fft, MPI_Comm comm, const int64_t before[3],
                                     int whole, int split, int64_t split_global, int batch,
                                     fcl__fft_transpose **out) {
  int P = 1, me = 0;
  FCL_MPI_TRY(MPI_Comm_size(comm, &P), "fft transpose: communicator size");
  FCL_MPI_TRY(MPI_Comm_rank(comm, &me), "fft transpose: communicator rank");
  const size_t cb = 2 * fft->real_size;
  fcl__transport kind;
  FCL_TRY(fcl__transport_from_env(&kind));
  int64_t after[3] = {before[0], before[1], before[2]}, unused;
  fcl__fft_split(before[whole], P, me, &after[whole], &unused);
  after[split] = split_global;
  fcl__fft_transpose *t = calloc(1, sizeof *t);
  fcl__block *send = calloc((size_t)P, sizeof *send), *recv = calloc((size_t)P, sizeof *recv);
  if (!t || !send || !recv) {
    free(t);
    free(send);
    free(recv);
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "fft transpose");
  }
  t->before_bytes = shape_bytes(before, cb);
  t->after_bytes = shape_bytes(after, cb);
  for (int q = 0; q < P; ++q) {
    int64_t n, lo;
    fcl__fft_split(before[whole], P, q, &n, &lo);
    send[q] = range_block(before, whole, lo, n, cb);
    fcl__fft_split(split_global, P, q, &n, &lo);
    recv[q] = range_block(after, split, lo, n, cb);
  }
  fcl_status st = fcl__alltoall_create(fft->context, fft->queue, comm, cb, send, recv, batch, kind,
                                       &t->exchange);
  free(send);
  free(recv);
  if (st != FCL_OK) {
    fcl__fft_transpose_destroy(&t);
    return st;
  }
  *out = t;
  return FCL_OK;
}

fcl_status fcl__fft_transpose_run(fcl__fft_transpose *t, int n, fcl_mem *const *before,
                                  fcl_mem *const *after, bool forward) {
  return fcl__alltoall_run_batch(t->exchange, n, before, after, forward);
}
