/* The staged transport for ranks of one node, on shared staging (shm_stage.c). A run: each rank
 * copies its outgoing blocks from its device into its segment and publishes them, the node
 * synchronizes, each rank copies the blocks addressed to it from its peers' segments into its
 * device, and the node synchronizes again before any segment is reused. The data crosses PCIe
 * once each way and is never copied by the host; the own block stays on the device. */
#include <stdlib.h>

#include "check.h"
#include "comm_impl.h"

typedef struct {
  fcl__shm_stage *stage;
  size_t *peer_send_at; /* where rank q keeps, in its segment, its send block for me */
  size_t *peer_recv_at; /* likewise for its recv block (backward runs) */
} shm_state;

static void shm_destroy(fcl__alltoall *x) {
  shm_state *s = x->state;
  if (!s) return;
  clFinish(x->queue);
  fcl__shm_stage_destroy(&s->stage);
  free(s->peer_send_at);
  free(s->peer_recv_at);
  free(s);
  x->state = NULL;
}

static fcl_status shm_setup(fcl__alltoall *x) {
  shm_state *s = calloc(1, sizeof *s);
  if (!s) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "staged transport");
  x->state = s;
  const int P = x->size;
  size_t need = x->send_total > x->recv_total ? x->send_total : x->recv_total;
  FCL_TRY(fcl__shm_stage_create(x->context, x->comm, need, &s->stage));
  s->peer_send_at = calloc((size_t)P, sizeof *s->peer_send_at);
  s->peer_recv_at = calloc((size_t)P, sizeof *s->peer_recv_at);
  unsigned long long *at = malloc(4 * (size_t)P * sizeof *at);
  if (!s->peer_send_at || !s->peer_recv_at || !at) {
    free(at);
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "staged transport");
  }
  for (int q = 0; q < P; ++q) {
    at[q] = x->send_at[q];
    at[P + q] = x->recv_at[q];
  }
  int rc = MPI_Alltoall(at, 1, MPI_UNSIGNED_LONG_LONG, at + 2 * P, 1, MPI_UNSIGNED_LONG_LONG, x->comm);
  if (rc == MPI_SUCCESS)
    rc = MPI_Alltoall(at + P, 1, MPI_UNSIGNED_LONG_LONG, at + 3 * P, 1, MPI_UNSIGNED_LONG_LONG,
                      x->comm);
  for (int q = 0; q < P; ++q) {
    s->peer_send_at[q] = (size_t)at[2 * P + q];
    s->peer_recv_at[q] = (size_t)at[3 * P + q];
  }
  free(at);
  if (rc != MPI_SUCCESS) return fcl__mpi_error(rc, "staged transport: MPI_Alltoall");
  return FCL_OK;
}

static fcl_status shm_run(fcl__alltoall *x, cl_mem a, cl_mem b, bool forward) {
  shm_state *s = x->state;
  const int P = x->size, me = x->rank;
  const fcl__block *out_blocks = forward ? x->send : x->recv, *in_blocks = forward ? x->recv : x->send;
  const size_t *out_at = forward ? x->send_at : x->recv_at;
  const size_t *peer_at = forward ? s->peer_send_at : s->peer_recv_at;
  cl_mem from = forward ? a : b, to = forward ? b : a;
  cl_mem mine = fcl__shm_stage_buffer(s->stage, me);
  /* 1. outgoing blocks into my segment; the own block stays on the device */
  for (int q = 0; q < P; ++q) {
    if (q == me) continue;
    fcl__block packed = fcl__block_range(out_at[q], fcl__block_bytes(&out_blocks[q]));
    FCL_TRY(fcl__block_copy(x->queue, from, &out_blocks[q], mine, &packed));
  }
  FCL_TRY(fcl__block_copy(x->queue, from, &out_blocks[me], to, &in_blocks[me]));
  FCL_TRY(fcl__shm_stage_publish(s->stage, x->queue, me, 0,
                                 forward ? x->send_total : x->recv_total));
  FCL_MPI_TRY(MPI_Barrier(x->comm), "staged transport: barrier");
  /* 2. incoming blocks from the peers' segments into the device */
  for (int q = 0; q < P; ++q) {
    size_t n = fcl__block_bytes(&in_blocks[q]);
    if (q == me || !n) continue;
    FCL_TRY(fcl__shm_stage_refresh(s->stage, x->queue, q, peer_at[q], n));
    fcl__block packed = fcl__block_range(peer_at[q], n);
    FCL_TRY(fcl__block_copy(x->queue, fcl__shm_stage_buffer(s->stage, q), &packed, to,
                            &in_blocks[q]));
  }
  FCL_CL_TRY(clFinish(x->queue), "staged transport: window to device");
  /* 3. no segment is rewritten before every peer has read it */
  FCL_MPI_TRY(MPI_Barrier(x->comm), "staged transport: barrier");
  return FCL_OK;
}

const fcl__transport_ops fcl__transport_staged = {"staged", shm_setup, shm_run, shm_destroy};
