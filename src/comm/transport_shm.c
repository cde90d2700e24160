/* The staged transport for ranks of one node. Every rank owns a segment of an MPI-3
 * shared-memory window; the OpenCL driver wraps each segment (its own and its peers') as a buffer
 * over that host memory (CL_MEM_USE_HOST_PTR: NVIDIA's driver pins it, so copies run at the
 * PCIe link's speed, measured 26-28 GB/s each way with two ranks on one H100, against 3.3 GB/s
 * for MPI_Sendrecv between the same ranks). A run: each rank copies its outgoing blocks from its
 * device into its segment, maps it (the copy is then in host memory), the node synchronizes,
 * each rank copies the blocks addressed to it from its peers' segments into its device, and the
 * node synchronizes again before any segment is reused. The data crosses PCIe once each way and
 * is never copied by the host. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "comm_impl.h"

#define SEGMENT_ALIGN ((size_t)1 << 16)

typedef struct {
  MPI_Win win;
  size_t segment;       /* bytes of each rank's segment */
  char **base;          /* per rank: its segment in this process */
  cl_mem *wrap;         /* per rank: the driver's buffer over that segment */
  size_t *peer_send_at; /* where rank q keeps, in its segment, its send block for me */
  size_t *peer_recv_at; /* likewise for its recv block (backward runs) */
} shm_state;

static void shm_destroy(fcl__alltoall *x) {
  shm_state *s = x->state;
  if (!s) return;
  if (s->wrap) {
    clFinish(x->queue);
    for (int q = 0; q < x->size; ++q)
      if (s->wrap[q]) clReleaseMemObject(s->wrap[q]);
  }
  if (s->win != MPI_WIN_NULL) MPI_Win_free(&s->win);
  free(s->base);
  free(s->wrap);
  free(s->peer_send_at);
  free(s->peer_recv_at);
  free(s);
  x->state = NULL;
}

/* Every rank's verdict on a step: FCL_OK only where all succeeded; the others get
 * FCL_ERR_NOT_SUPPORTED naming the step (the error of the failing rank is kept there). */
static fcl_status agree(fcl__alltoall *x, fcl_status mine, const char *step) {
  int ok = mine == FCL_OK, all = 0;
  FCL_MPI_TRY(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, x->comm), "staged transport: agree");
  if (all) return FCL_OK;
  if (mine != FCL_OK) return FCL_ERROR(FCL_ERR_NOT_SUPPORTED, "staged transport: %s: %s", step,
                                       fcl_last_error());
  return FCL_ERROR(FCL_ERR_NOT_SUPPORTED, "staged transport: %s failed on another rank", step);
}

static fcl_status shm_setup(fcl__alltoall *x) {
  shm_state *s = calloc(1, sizeof *s);
  if (!s) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "staged transport");
  x->state = s;
  s->win = MPI_WIN_NULL;
  const int P = x->size;
  /* One node only: every rank of the communicator must share memory with every other. */
  MPI_Comm node;
  FCL_MPI_TRY(MPI_Comm_split_type(x->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
              "staged transport: MPI_Comm_split_type");
  int node_size = 0, all_one_node = 0;
  MPI_Comm_size(node, &node_size);
  MPI_Comm_free(&node);
  int mine = node_size == P;
  FCL_MPI_TRY(MPI_Allreduce(&mine, &all_one_node, 1, MPI_INT, MPI_MIN, x->comm),
              "staged transport: agree");
  if (!all_one_node)
    return FCL_ERROR(FCL_ERR_NOT_SUPPORTED, "staged transport: the %d ranks are not all on one "
                     "node", P);
  s->base = calloc((size_t)P, sizeof *s->base);
  s->wrap = calloc((size_t)P, sizeof *s->wrap);
  s->peer_send_at = calloc((size_t)P, sizeof *s->peer_send_at);
  s->peer_recv_at = calloc((size_t)P, sizeof *s->peer_recv_at);
  if (!s->base || !s->wrap || !s->peer_send_at || !s->peer_recv_at)
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "staged transport");
  /* Equal, aligned segments: the largest any rank needs in either direction. */
  unsigned long long need = x->send_total > x->recv_total ? x->send_total : x->recv_total, most;
  FCL_MPI_TRY(MPI_Allreduce(&need, &most, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, x->comm),
              "staged transport: segment size");
  s->segment = ((size_t)most + SEGMENT_ALIGN - 1) / SEGMENT_ALIGN * SEGMENT_ALIGN;
  if (s->segment == 0) s->segment = SEGMENT_ALIGN;
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "alloc_shared_noncontig", "true");
  char *mybase = NULL;
  int rc = MPI_Win_allocate_shared((MPI_Aint)s->segment, 1, info, x->comm, &mybase, &s->win);
  MPI_Info_free(&info);
  fcl_status st = rc == MPI_SUCCESS ? FCL_OK : fcl__mpi_error(rc, "MPI_Win_allocate_shared");
  FCL_TRY(agree(x, st, "shared window"));
  for (int q = 0; q < P; ++q) {
    MPI_Aint size;
    int disp;
    FCL_MPI_TRY(MPI_Win_shared_query(s->win, q, &size, &disp, &s->base[q]),
                "staged transport: MPI_Win_shared_query");
  }
  /* The driver's buffers over every segment. */
  st = FCL_OK;
  for (int q = 0; q < P && st == FCL_OK; ++q) {
    cl_int err;
    s->wrap[q] = clCreateBuffer(x->context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, s->segment,
                                s->base[q], &err);
    if (err != CL_SUCCESS)
      st = FCL_CL_ERROR(err, "clCreateBuffer(CL_MEM_USE_HOST_PTR) over %zu bytes of the window",
                        s->segment);
  }
  FCL_TRY(agree(x, st, "wrapping the window"));
  /* Where each peer keeps the blocks addressed to me. */
  unsigned long long *at = malloc(4 * (size_t)P * sizeof *at);
  if (!at) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "staged transport");
  for (int q = 0; q < P; ++q) {
    at[q] = x->send_at[q];
    at[P + q] = x->recv_at[q];
  }
  rc = MPI_Alltoall(at, 1, MPI_UNSIGNED_LONG_LONG, at + 2 * P, 1, MPI_UNSIGNED_LONG_LONG, x->comm);
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
  size_t out_total = forward ? x->send_total : x->recv_total;
  /* 1. outgoing blocks into my segment; the own block stays on the device */
  for (int q = 0; q < P; ++q) {
    if (q == me) continue;
    fcl__block packed = fcl__block_range(out_at[q], fcl__block_bytes(&out_blocks[q]));
    FCL_TRY(fcl__block_copy(x->queue, from, &out_blocks[q], s->wrap[me], &packed));
  }
  FCL_TRY(fcl__block_copy(x->queue, from, &out_blocks[me], to, &in_blocks[me]));
  if (out_total) { /* mapping puts the copies into the host memory of the window */
    cl_int err;
    void *p = clEnqueueMapBuffer(x->queue, s->wrap[me], CL_TRUE, CL_MAP_READ, 0, out_total, 0,
                                 NULL, NULL, &err);
    FCL_CL_TRY(err, "staged transport: map the own segment");
    FCL_CL_TRY(clEnqueueUnmapMemObject(x->queue, s->wrap[me], p, 0, NULL, NULL),
               "staged transport: unmap the own segment");
  }
  FCL_CL_TRY(clFinish(x->queue), "staged transport: device to window");
  FCL_MPI_TRY(MPI_Win_sync(s->win), "staged transport: MPI_Win_sync");
  FCL_MPI_TRY(MPI_Barrier(x->comm), "staged transport: barrier");
  FCL_MPI_TRY(MPI_Win_sync(s->win), "staged transport: MPI_Win_sync");
  /* 2. incoming blocks from the peers' segments into the device */
  for (int q = 0; q < P; ++q) {
    size_t n = fcl__block_bytes(&in_blocks[q]);
    if (q == me || !n) continue;
    /* the host copy is the current one: tell the driver before it reads the buffer */
    cl_int err;
    void *p = clEnqueueMapBuffer(x->queue, s->wrap[q], CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION,
                                 peer_at[q], n, 0, NULL, NULL, &err);
    FCL_CL_TRY(err, "staged transport: map the segment of rank %d", q);
    FCL_CL_TRY(clEnqueueUnmapMemObject(x->queue, s->wrap[q], p, 0, NULL, NULL),
               "staged transport: unmap the segment of rank %d", q);
    fcl__block packed = fcl__block_range(peer_at[q], n);
    FCL_TRY(fcl__block_copy(x->queue, s->wrap[q], &packed, to, &in_blocks[q]));
  }
  FCL_CL_TRY(clFinish(x->queue), "staged transport: window to device");
  /* 3. no segment is rewritten before every peer has read it */
  FCL_MPI_TRY(MPI_Barrier(x->comm), "staged transport: barrier");
  return FCL_OK;
}

const fcl__transport_ops fcl__transport_staged = {"staged", shm_setup, shm_run, shm_destroy};
