/* The all-to-all of device blocks: checks, the transport (transport.c), dispatch. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "comm_impl.h"

void fcl__alltoall_destroy(fcl__alltoall **xp) {
  if (!xp || !*xp) return;
  fcl__alltoall *x = *xp;
  if (x->ops) x->ops->alltoall->destroy(x);
  if (x->comm != MPI_COMM_NULL) MPI_Comm_free(&x->comm);
  free(x->send);
  free(x->recv);
  free(x->send_at);
  free(x->recv_at);
  free(x);
  *xp = NULL;
}

static fcl_status layout(fcl__alltoall *x, const fcl__block *send, const fcl__block *recv) {
  size_t P = (size_t)x->size;
  x->send = malloc(P * sizeof *x->send);
  x->recv = malloc(P * sizeof *x->recv);
  x->send_at = calloc(P, sizeof *x->send_at);
  x->recv_at = calloc(P, sizeof *x->recv_at);
  if (!x->send || !x->recv || !x->send_at || !x->recv_at)
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "all-to-all plan for %zu ranks", P);
  memcpy(x->send, send, P * sizeof *send);
  memcpy(x->recv, recv, P * sizeof *recv);
  for (int q = 0; q < x->size; ++q) {
    size_t s = fcl__block_bytes(&send[q]), r = fcl__block_bytes(&recv[q]);
    if (s % x->unit || r % x->unit)
      return FCL_ERROR(FCL_ERR_INTERNAL,
                       "all-to-all: the blocks of rank %d are not multiples "
                       "of %zu bytes",
                       q, x->unit);
    if (q == x->rank) {
      if (s != r)
        return FCL_ERROR(FCL_ERR_INTERNAL, "all-to-all: own block of %zu bytes into %zu", s, r);
      continue;
    }
    x->send_at[q] = x->send_total;
    x->recv_at[q] = x->recv_total;
    x->send_total += s;
    x->recv_total += r;
  }
  /* Each pair must agree on the size of what crosses between them. */
  unsigned long long *mine = malloc(2 * P * sizeof *mine);
  if (!mine) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "all-to-all plan");
  for (size_t q = 0; q < P; ++q) mine[q] = fcl__block_bytes(&send[q]);
  int rc = MPI_Alltoall(mine, 1, MPI_UNSIGNED_LONG_LONG, mine + P, 1, MPI_UNSIGNED_LONG_LONG,
                        x->comm);
  bool agree = true;
  for (size_t q = 0; rc == MPI_SUCCESS && q < P; ++q)
    agree = agree && mine[P + q] == fcl__block_bytes(&recv[q]);
  free(mine);
  if (rc != MPI_SUCCESS) return fcl__mpi_error(rc, "all-to-all plan: MPI_Alltoall");
  if (!agree) return FCL_ERROR(FCL_ERR_INTERNAL, "all-to-all: block sizes differ between ranks");
  return FCL_OK;
}

/* One transport's set-up of plan x; on failure nothing of it is left. */
static fcl_status try_transport(void *object, const fcl__transport_ops *t) {
  fcl__alltoall *x = object;
  x->ops = t;
  fcl_status st = t->alltoall->setup(x);
  if (st != FCL_OK) {
    t->alltoall->destroy(x);
    x->ops = NULL;
  }
  return st;
}

fcl_status fcl__alltoall_create(fcl_context *context, fcl_queue *queue, MPI_Comm comm, size_t unit,
                                const fcl__block *send, const fcl__block *recv, int batch,
                                fcl__transport kind, fcl__alltoall **out) {
  *out = NULL;
  if (batch < 1)
    return FCL_ERROR(FCL_ERR_INTERNAL, "all-to-all plan: batch %d (at least 1)", batch);
  fcl__alltoall *x = calloc(1, sizeof *x);
  if (!x) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "all-to-all plan");
  x->context = context;
  x->queue = queue;
  x->unit = unit ? unit : 1;
  x->batch = batch;
  x->comm = MPI_COMM_NULL;
  fcl_status st = FCL_OK;
  int rc = MPI_Comm_dup(comm, &x->comm);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_rank(x->comm, &x->rank);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_size(x->comm, &x->size);
  if (rc != MPI_SUCCESS) st = fcl__mpi_error(rc, "all-to-all plan: communicator");
  if (st == FCL_OK) st = layout(x, send, recv);
  if (st == FCL_OK) st = fcl__transport_select(kind, "all-to-all", try_transport, x);
  if (st != FCL_OK) {
    fcl__alltoall_destroy(&x);
    return st;
  }
  *out = x;
  return FCL_OK;
}

fcl_status fcl__alltoall_run(fcl__alltoall *x, fcl_mem *a, fcl_mem *b, bool forward) {
  return x->ops->alltoall->run(x, 1, &a, &b, forward);
}

fcl_status fcl__alltoall_run_batch(fcl__alltoall *x, int n, fcl_mem *const *a, fcl_mem *const *b,
                                   bool forward) {
  if (n < 1 || n > x->batch)
    return FCL_ERROR(FCL_ERR_INTERNAL, "all-to-all: %d buffer pairs, the plan takes 1 to %d", n,
                     x->batch);
  return x->ops->alltoall->run(x, n, a, b, forward);
}

const char *fcl__alltoall_transport(const fcl__alltoall *x) { return x->ops->name; }
bool fcl__alltoall_peer_writes(const fcl__alltoall *x) { return x->peer_writes; }
