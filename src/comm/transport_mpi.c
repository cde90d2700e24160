/* The mpi transport's all-to-all: blocks leave the device into pinned host staging (pinned.c),
 * cross with MPI_Alltoallv, and land from the other staging buffer. Works between any ranks; on one node it
 * pays MPI's shared-memory copies. The reference for the other transports. */
#include <limits.h>
#include <stdlib.h>

#include "check.h"
#include "comm_impl.h"

typedef struct {
  MPI_Datatype unit;
  fcl__pinned stage[2]; /* [0]: packed send-side blocks, [1]: packed recv-side blocks */
  int *counts; /* 4 x P: send counts, send displacements, recv counts, recv displacements */
} mpi_state;

static void mpi_destroy(fcl__alltoall *x) {
  mpi_state *s = x->state;
  if (!s) return;
  for (int i = 0; i < 2; ++i) fcl__pinned_destroy(&s->stage[i]);
  if (s->unit != MPI_DATATYPE_NULL) MPI_Type_free(&s->unit);
  free(s->counts);
  free(s);
  x->state = NULL;
}

static fcl_status mpi_setup(fcl__alltoall *x) {
  mpi_state *s = calloc(1, sizeof *s);
  if (!s) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "mpi transport");
  x->state = s;
  s->unit = MPI_DATATYPE_NULL;
  const int P = x->size;
  s->counts = calloc(4 * (size_t)P, sizeof *s->counts);
  if (!s->counts) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "mpi transport");
  FCL_MPI_TRY(MPI_Type_contiguous((int)x->unit, MPI_BYTE, &s->unit), "mpi transport: datatype");
  FCL_MPI_TRY(MPI_Type_commit(&s->unit), "mpi transport: datatype");
  for (int q = 0; q < P; ++q) {
    if (q == x->rank) continue;
    size_t sc = fcl__block_bytes(&x->send[q]) / x->unit,
           rc = fcl__block_bytes(&x->recv[q]) / x->unit;
    size_t sd = x->send_at[q] / x->unit, rd = x->recv_at[q] / x->unit;
    if (sc > INT_MAX || rc > INT_MAX || sd > INT_MAX || rd > INT_MAX)
      return FCL_ERROR(FCL_ERR_NOT_SUPPORTED, "mpi transport: a block of more than INT_MAX "
                                              "elements");
    s->counts[q] = (int)sc;
    s->counts[P + q] = (int)sd;
    s->counts[2 * P + q] = (int)rc;
    s->counts[3 * P + q] = (int)rd;
  }
  size_t bytes[2] = {x->send_total, x->recv_total};
  for (int i = 0; i < 2; ++i)
    if (bytes[i]) FCL_TRY(fcl__pinned_create(x->context, x->queue, bytes[i], &s->stage[i]));
  return FCL_OK;
}

/* One pair of buffers. */
static fcl_status mpi_run_one(fcl__alltoall *x, fcl_mem *a, fcl_mem *b, bool forward) {
  mpi_state *s = x->state;
  const int P = x->size, me = x->rank;
  /* forward: a's send blocks -> b's recv blocks; backward: b's recv blocks -> a's send blocks */
  const fcl__block *out_blocks = forward ? x->send : x->recv,
                   *in_blocks = forward ? x->recv : x->send;
  const size_t *out_at = forward ? x->send_at : x->recv_at,
               *in_at = forward ? x->recv_at : x->send_at;
  fcl_mem *from = forward ? a : b, *to = forward ? b : a;
  char *out_host = s->stage[forward ? 0 : 1].host, *in_host = s->stage[forward ? 1 : 0].host;
  int *out_count = s->counts + (forward ? 0 : 2 * P), *out_displ = out_count + P;
  int *in_count = s->counts + (forward ? 2 * P : 0), *in_displ = in_count + P;
  for (int q = 0; q < P; ++q)
    if (q != me) FCL_TRY(fcl__block_read(x->queue, from, &out_blocks[q], out_host + out_at[q]));
  FCL_TRY(fcl_queue_finish(x->queue)); /* device to host */
  FCL_TRY(fcl__block_copy(x->queue, from, &out_blocks[me], to, &in_blocks[me]));
  FCL_MPI_TRY(MPI_Alltoallv(out_host, out_count, out_displ, s->unit, in_host, in_count, in_displ,
                            s->unit, x->comm),
              "mpi transport: MPI_Alltoallv");
  for (int q = 0; q < P; ++q)
    if (q != me) FCL_TRY(fcl__block_write(x->queue, to, &in_blocks[q], in_host + in_at[q]));
  FCL_TRY(fcl_queue_finish(x->queue)); /* host to device */
  return FCL_OK;
}

/* The reference path: the pairs one after the other. */
static fcl_status mpi_run(fcl__alltoall *x, int n, fcl_mem *const *a, fcl_mem *const *b,
                          bool forward) {
  for (int i = 0; i < n; ++i) FCL_TRY(mpi_run_one(x, a[i], b[i], forward));
  return FCL_OK;
}

const fcl__alltoall_ops fcl__alltoall_mpi = {mpi_setup, mpi_run, mpi_destroy};
