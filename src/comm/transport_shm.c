/* The staged transport's all-to-all for ranks of one node, on shared staging (shm_stage.c). The blocks
 * travel in K chunks, pipelined: every chunk's way from the device into this rank's segment is
 * enqueued at once (the caller's queue, never idle while the host turns chunks around); as each
 * one reaches host memory it is announced, and the peers' same chunk comes from their segments
 * into the device on a second queue, so device->host and host->device run at once, the two
 * directions of the link.
 * A chunk is announced to a peer by an empty message once it is in host memory; the node
 * synchronizes before any segment is reused. The data crosses PCIe once each way and is never
 * copied by the host; the own block stays on the device. A batch of n buffer pairs is one
 * pipeline of n x K chunks (pair i's in part i of each segment), so that the pairs' transfers
 * overlap and the run synchronizes once. */
#include <stdlib.h>

#include "check.h"
#include "comm_impl.h"

enum { TAG_CHUNK = 7000, MAX_CHUNKS = 16 };
#define CHUNK_BYTES ((size_t)8 << 20) /* FLOWCL_TRANSPORT_CHUNK overrides */

typedef struct {
  fcl__shm_stage *stage;
  fcl_queue *upload; /* host -> device copies, beside the caller's queue */
  int chunks;
  size_t need;          /* bytes of one pair's part of a segment */
  size_t *peer_send_at; /* where rank q keeps, in its segment, its send block for me */
  size_t *peer_recv_at; /* likewise for its recv block (backward runs) */
  size_t *grain_send;   /* chunk grain of the pair (my send[q], q's recv[me]) */
  size_t *grain_recv;   /* chunk grain of the pair (my recv[q], q's send[me]) */
  MPI_Request *req;
  fcl_event **landed; /* per chunk, a marker after its reads into the own segment */
} shm_state;

static void shm_destroy(fcl__alltoall *x) {
  shm_state *s = x->state;
  if (!s) return;
  fcl_queue_finish(x->queue);
  if (s->upload) {
    fcl_queue_finish(s->upload);
    fcl_queue_release(&s->upload);
  }
  fcl__shm_stage_destroy(&s->stage);
  free(s->peer_send_at);
  free(s->peer_recv_at);
  free(s->grain_send);
  free(s->grain_recv);
  free(s->req);
  free(s->landed);
  free(s);
  x->state = NULL;
}

/* The grain of a pair: the coarser of the two sides', if it is a multiple of the finer; else
 * the whole block travels in the last chunk (0). */
static size_t pair_grain(size_t a, size_t b) {
  size_t hi = a > b ? a : b, lo = a > b ? b : a;
  return lo && hi % lo == 0 ? hi : 0;
}

static fcl_status shm_setup(fcl__alltoall *x) {
  shm_state *s = calloc(1, sizeof *s);
  if (!s) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "staged transport");
  x->state = s;
  const int P = x->size;
  /* every rank's segment holds `batch` parts of the largest exchange of any rank (one stride
   * for all, so that a peer finds pair i's part) */
  size_t need = x->send_total > x->recv_total ? x->send_total : x->recv_total;
  unsigned long long most = need, all = 0;
  FCL_MPI_TRY(MPI_Allreduce(&most, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, x->comm),
              "staged transport: staging size");
  s->need = (size_t)all;
  FCL_TRY(
      fcl__shm_stage_create(x->context, x->queue, x->comm, s->need * (size_t)x->batch, &s->stage));
  fcl_device *dev;
  FCL_TRY(fcl_queue_device(x->queue, &dev));
  FCL_TRY(fcl_queue_create(x->context, dev, 0, &s->upload)); /* host-to-device copies */
  s->peer_send_at = calloc((size_t)P, sizeof *s->peer_send_at);
  s->peer_recv_at = calloc((size_t)P, sizeof *s->peer_recv_at);
  s->grain_send = calloc((size_t)P, sizeof *s->grain_send);
  s->grain_recv = calloc((size_t)P, sizeof *s->grain_recv);
  s->req = calloc(2 * (size_t)P, sizeof *s->req);
  s->landed = calloc((size_t)MAX_CHUNKS * (size_t)x->batch, sizeof *s->landed);
  unsigned long long *v = malloc(8 * (size_t)P * sizeof *v);
  if (!s->peer_send_at || !s->peer_recv_at || !s->grain_send || !s->grain_recv || !s->req ||
      !s->landed || !v) {
    free(v);
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "staged transport");
  }
  /* to each peer: my offsets and grains for it; back: the peer's for me */
  for (int q = 0; q < P; ++q) {
    v[4 * q] = x->send_at[q];
    v[4 * q + 1] = x->recv_at[q];
    v[4 * q + 2] = fcl__block_grain(&x->send[q], x->unit);
    v[4 * q + 3] = fcl__block_grain(&x->recv[q], x->unit);
  }
  int rc = MPI_Alltoall(v, 4, MPI_UNSIGNED_LONG_LONG, v + 4 * P, 4, MPI_UNSIGNED_LONG_LONG,
                        x->comm);
  for (int q = 0; rc == MPI_SUCCESS && q < P; ++q) {
    const unsigned long long *peer = v + 4 * P + 4 * q;
    s->peer_send_at[q] = (size_t)peer[0];
    s->peer_recv_at[q] = (size_t)peer[1];
    s->grain_send[q] = pair_grain((size_t)v[4 * q + 2], (size_t)peer[3]);
    s->grain_recv[q] = pair_grain((size_t)v[4 * q + 3], (size_t)peer[2]);
  }
  free(v);
  if (rc != MPI_SUCCESS) return fcl__mpi_error(rc, "staged transport: MPI_Alltoall");
  /* chunks of about CHUNK_BYTES of the largest exchange, the same count on every rank */
  size_t chunk_bytes = CHUNK_BYTES;
  const char *env = getenv("FLOWCL_TRANSPORT_CHUNK");
  if (env && *env) {
    char *end;
    unsigned long long asked = strtoull(env, &end, 10);
    if (*end || asked == 0)
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "FLOWCL_TRANSPORT_CHUNK='%s': not a positive "
                       "byte count",
                       env);
    chunk_bytes = (size_t)asked;
  }
  size_t k = (size_t)all / chunk_bytes;
  s->chunks = k < 1 ? 1 : k > MAX_CHUNKS ? MAX_CHUNKS : (int)k;
  return FCL_OK;
}

/* Packed bytes [lo, hi) of chunk j of n bytes split on grain g (0: all of it in the last). */
static void chunk(size_t n, size_t g, int j, int k, size_t *lo, size_t *hi) {
  if (!g || n % g) {
    *lo = j == k - 1 ? 0 : n;
    *hi = n;
    return;
  }
  size_t m = n / g;
  *lo = m * (size_t)j / (size_t)k * g;
  *hi = m * (size_t)(j + 1) / (size_t)k * g;
}

/* Chunk j of every outgoing block of pair i (from) read into pair i's part of my segment, a
 * marker after them (not waited for): pipeline chunk g = i K + j. */
static fcl_status send_chunk(fcl__alltoall *x, const fcl__block *out, const size_t *out_at,
                             const size_t *grain, fcl_mem *from, int i, int j) {
  shm_state *s = x->state;
  const int g = i * s->chunks + j;
  char *mine = fcl__shm_stage_host(s->stage, x->rank) + (size_t)i * s->need;
  for (int q = 0; q < x->size; ++q) {
    size_t lo, hi;
    chunk(fcl__block_bytes(&out[q]), grain[q], j, s->chunks, &lo, &hi);
    if (q == x->rank || hi == lo) continue;
    fcl__block part = fcl__block_part(&out[q], lo, hi);
    FCL_TRY(fcl__block_read(x->queue, from, &part, mine + out_at[q] + lo));
  }
  return fcl_queue_marker(x->queue, 0, NULL, &s->landed[g]);
}

/* Once pipeline chunk g is in host memory: tell every peer. */
static fcl_status announce_chunk(fcl__alltoall *x, int g) {
  shm_state *s = x->state;
  FCL_TRY(fcl_events_wait(1, &s->landed[g]));
  fcl_event_release(&s->landed[g]);
  s->landed[g] = NULL;
  FCL_TRY(fcl__shm_stage_sync(s->stage));
  int n = 0;
  for (int q = 0; q < x->size; ++q) {
    if (q == x->rank) continue;
    FCL_MPI_TRY(MPI_Isend(NULL, 0, MPI_BYTE, q, TAG_CHUNK + g, x->comm, &s->req[n++]),
                "staged transport: announce a chunk");
  }
  FCL_MPI_TRY(MPI_Waitall(n, s->req, MPI_STATUSES_IGNORE), "staged transport: announce a chunk");
  return FCL_OK;
}

/* Once each peer announced chunk j of pair i: its parts written into the device (to), on the
 * upload queue. */
static fcl_status receive_chunk(fcl__alltoall *x, const fcl__block *in, const size_t *peer_at,
                                const size_t *grain, fcl_mem *to, int i, int j, fcl_event *after) {
  shm_state *s = x->state;
  const int g = i * s->chunks + j;
  for (int q = 0; q < x->size; ++q) {
    if (q == x->rank) continue;
    FCL_MPI_TRY(MPI_Recv(NULL, 0, MPI_BYTE, q, TAG_CHUNK + g, x->comm, MPI_STATUS_IGNORE),
                "staged transport: wait for a chunk");
  }
  FCL_TRY(fcl__shm_stage_sync(s->stage));
  for (int q = 0; q < x->size; ++q) {
    size_t lo, hi;
    chunk(fcl__block_bytes(&in[q]), grain[q], j, s->chunks, &lo, &hi);
    if (q == x->rank || hi == lo) continue;
    if (after) FCL_TRY(fcl_queue_barrier(s->upload, 1, &after, NULL));
    after = NULL;
    fcl__block part = fcl__block_part(&in[q], lo, hi);
    const char *theirs = fcl__shm_stage_host(s->stage, q) + (size_t)i * s->need;
    FCL_TRY(fcl__block_write(s->upload, to, &part, theirs + peer_at[q] + lo));
  }
  return FCL_OK;
}

static fcl_status shm_run(fcl__alltoall *x, int n, fcl_mem *const *a, fcl_mem *const *b,
                          bool forward) {
  shm_state *s = x->state;
  const int me = x->rank, K = s->chunks;
  const fcl__block *out = forward ? x->send : x->recv, *in = forward ? x->recv : x->send;
  const size_t *out_at = forward ? x->send_at : x->recv_at;
  const size_t *peer_at = forward ? s->peer_send_at : s->peer_recv_at;
  /* grains: my outgoing pairs are (send, recv) forward, (recv, send) backward */
  const size_t *out_grain = forward ? s->grain_send : s->grain_recv;
  const size_t *in_grain = forward ? s->grain_recv : s->grain_send;
  fcl_mem *const *from = forward ? a : b, *const *to = forward ? b : a;
  /* the upload queue starts after the caller's earlier work on `to` */
  fcl_event *start = NULL;
  FCL_TRY(fcl_queue_marker(x->queue, 0, NULL, &start));
  fcl_status st = FCL_OK;
  for (int i = 0; st == FCL_OK && i < n; ++i)
    st = fcl__block_copy(x->queue, from[i], &out[me], to[i], &in[me]);
  for (int g = 0; st == FCL_OK && g < n * K; ++g)
    st = send_chunk(x, out, out_at, out_grain, from[g / K], g / K, g % K);
  if (st == FCL_OK) st = fcl_queue_flush(x->queue);
  for (int g = 0; st == FCL_OK && g < n * K; ++g) {
    st = announce_chunk(x, g);
    if (st == FCL_OK)
      st = receive_chunk(x, in, peer_at, in_grain, to[g / K], g / K, g % K, g == 0 ? start : NULL);
    if (st == FCL_OK) st = fcl_queue_flush(s->upload);
  }
  for (int g = 0; g < n * K; ++g) /* an error left markers behind */
    if (s->landed[g]) {
      fcl_event_release(&s->landed[g]);
      s->landed[g] = NULL;
    }
  fcl_event_release(&start);
  if (st != FCL_OK) { /* nothing stays in flight on a or b, nor reads the peers' segments */
    fcl_queue_finish(x->queue);
    fcl_queue_finish(s->upload);
    return st;
  }
  FCL_TRY(fcl_queue_finish(s->upload)); /* window to device */
  FCL_TRY(fcl_queue_finish(x->queue));  /* device to window */
  /* no segment is rewritten before every peer has read it */
  FCL_MPI_TRY(MPI_Barrier(x->comm), "staged transport: barrier");
  return FCL_OK;
}

const fcl__alltoall_ops fcl__alltoall_staged = {shm_setup, shm_run, shm_destroy};
