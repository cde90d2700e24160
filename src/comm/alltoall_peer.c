/* Peer writes: the device transport's all-to-all with every rank storing its blocks straight
 * into its peers' incoming staging, opened in this process (fcl_mem_open_shared: CUDA IPC over
 * NVLink). A strided block is packed on the way (the rectangle copy reads here and writes
 * there), so a block crosses once instead of packed, sent and received: on two H200 the block
 * of a 512^3 slab transpose (134.7 MB) moves in 0.38 ms each way at once against NCCL's 0.50
 * plus the packing (tools/probes/peer_write_transpose.cu, docs/benchmarks.md). The ranks' queues
 * meet twice on the link, by 4-byte messages: before the stores (each peer's staging is free:
 * its queue has passed its last unpacking) and after them (every block has arrived); then each
 * rank unpacks its staging into its buffers. The link's watchdog covers both meetings, so a rank
 * that fails ends its peers with an error as an exchange does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "comm_impl.h"

struct fcl__peer_writes {
  fcl_link *link;    /* the transport's */
  int size;          /* ranks */
  size_t part;       /* bytes of one pair's part of the staging */
  fcl_mem *stage;    /* incoming: the peers write here */
  fcl_mem *token;    /* 4 bytes to every peer from [0, 4), 4 from peer q into [4 + 4 q, 8 + 4 q) */
  fcl_mem **peer;    /* [P]: peer q's stage, opened here (NULL for this rank) */
  size_t *at;        /* [2 P]: where this rank's block starts in q's part: forward, backward */
  size_t *peer_part; /* [P]: q's part */
  fcl_link_message *msg; /* 2 P: one meeting */
};

/* FLOWCL_PEER_WRITES: unset, empty or "auto": where every rank can; "off": never. */
static fcl_status wanted(bool *want) {
  const char *v = getenv("FLOWCL_PEER_WRITES");
  *want = !v || !*v || strcmp(v, "auto") == 0;
  if (*want || strcmp(v, "off") == 0) return FCL_OK;
  return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "FLOWCL_PEER_WRITES='%s': auto or off", v);
}

void fcl__peer_writes_destroy(fcl__peer_writes **wp) {
  fcl__peer_writes *w = *wp;
  if (!w) return;
  for (int q = 0; w->peer && q < w->size; ++q) fcl_mem_release(&w->peer[q]);
  fcl_mem_release(&w->stage);
  fcl_mem_release(&w->token);
  free(w->peer);
  free(w->at);
  free(w->peer_part);
  free(w->msg);
  free(w);
  *wp = NULL;
}

/* This rank's staging and token, and its share of the staging into shares (P shares): false
 * with the reason logged where it cannot. */
static bool prepare(fcl__alltoall *x, fcl__peer_writes *w, unsigned char *shares) {
  fcl_status st = FCL_OK;
  if (!w->part) return false; /* nothing comes in: no staging to share */
  st = fcl_mem_create(x->context, FCL_MEM_DEVICE, w->part * (size_t)x->batch, NULL, &w->stage);
  if (st == FCL_OK)
    st = fcl_mem_create(x->context, FCL_MEM_DEVICE, 4 * ((size_t)x->size + 1), NULL, &w->token);
  if (st == FCL_OK) st = fcl_mem_share(w->stage, shares + (size_t)x->rank * FCL_MEM_SHARE_BYTES);
  if (st != FCL_OK) {
    fcl_log(FCL_LOG_INFO, "all-to-all: no peer writes on rank %d (%s)", x->rank, fcl_last_error());
    fcl_clear_error();
  }
  return st == FCL_OK;
}

/* Every peer's staging opened here: false with the reason logged where one cannot be. */
static bool open_peers(fcl__alltoall *x, fcl__peer_writes *w, const unsigned char *shares) {
  for (int q = 0; q < x->size; ++q) {
    if (q == x->rank) continue;
    fcl_status st = fcl_mem_open_shared(x->context, shares + (size_t)q * FCL_MEM_SHARE_BYTES,
                                        &w->peer[q]);
    if (st != FCL_OK) {
      fcl_log(FCL_LOG_INFO, "all-to-all: no peer writes from rank %d to %d (%s)", x->rank, q,
              fcl_last_error());
      fcl_clear_error();
      return false;
    }
  }
  return true;
}

fcl_status fcl__peer_writes_create(fcl__alltoall *x, fcl_link *link, fcl__peer_writes **out) {
  *out = NULL;
  const int P = x->size;
  bool want = false;
  int bad = wanted(&want) != FCL_OK, any_bad = 0;
  char why[256] = "";
  if (bad) snprintf(why, sizeof why, "%s", fcl_last_error());
  FCL_MPI_TRY(MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, x->comm),
              "peer writes: MPI_Allreduce");
  if (any_bad)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "%s",
                     bad ? why : "FLOWCL_PEER_WRITES is neither auto nor off on another rank");
  fcl__peer_writes *w = calloc(1, sizeof *w);
  unsigned char *shares = calloc((size_t)P, FCL_MEM_SHARE_BYTES);
  unsigned long long *mine = calloc(6 * (size_t)P, sizeof *mine);
  if (w) {
    w->link = link;
    w->size = P;
    w->part = x->send_total > x->recv_total ? x->send_total : x->recv_total;
    w->peer = calloc((size_t)P, sizeof *w->peer);
    w->at = calloc(2 * (size_t)P, sizeof *w->at);
    w->peer_part = calloc((size_t)P, sizeof *w->peer_part);
    w->msg = calloc(2 * (size_t)P, sizeof *w->msg);
  }
  if (!w || !shares || !mine || !w->peer || !w->at || !w->peer_part || !w->msg) {
    fcl__peer_writes_destroy(&w);
    free(shares);
    free(mine);
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "peer writes for %d ranks", P);
  }
  unsigned long long *theirs = mine + 3 * P;
  /* every rank reaches every collective below, whatever it could do */
  int can = want && P > 1 && prepare(x, w, shares), all = 0;
  int rc = MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, shares, FCL_MEM_SHARE_BYTES, MPI_BYTE,
                         x->comm);
  if (rc == MPI_SUCCESS) {
    int every = 0;
    rc = MPI_Allreduce(&can, &every, 1, MPI_INT, MPI_MIN, x->comm);
    can = every && open_peers(x, w, shares);
  }
  if (rc == MPI_SUCCESS) rc = MPI_Allreduce(&can, &all, 1, MPI_INT, MPI_MIN, x->comm);
  /* where this rank's blocks start in each peer's staging: the peer's recv_at and send_at of it */
  for (int q = 0; q < P; ++q) {
    mine[3 * q] = x->recv_at[q];
    mine[3 * q + 1] = x->send_at[q];
    mine[3 * q + 2] = w->part;
  }
  if (rc == MPI_SUCCESS)
    rc = MPI_Alltoall(mine, 3, MPI_UNSIGNED_LONG_LONG, theirs, 3, MPI_UNSIGNED_LONG_LONG, x->comm);
  for (int q = 0; q < P; ++q) {
    w->at[2 * q] = (size_t)theirs[3 * q];
    w->at[2 * q + 1] = (size_t)theirs[3 * q + 1];
    w->peer_part[q] = (size_t)theirs[3 * q + 2];
  }
  free(shares);
  free(mine);
  if (rc != MPI_SUCCESS) {
    fcl__peer_writes_destroy(&w);
    return fcl__mpi_error(rc, "peer writes: set-up");
  }
  if (!all) { /* the transport sends through the link instead */
    fcl__peer_writes_destroy(&w);
    return FCL_OK;
  }
  fcl_log(FCL_LOG_INFO, "all-to-all: peer writes between %d ranks", P);
  *out = w;
  return FCL_OK;
}

/* The ranks' queues meet: each sends 4 bytes to every peer and receives 4 from each. */
static fcl_status meet(fcl__peer_writes *w, fcl__alltoall *x) {
  unsigned m = 0;
  for (int q = 0; q < x->size; ++q) {
    if (q == x->rank) continue;
    w->msg[m++] = (fcl_link_message){w->token, 0, 4, q, true};
    w->msg[m++] = (fcl_link_message){w->token, 4 + 4 * (size_t)q, 4, q, false};
  }
  fcl_status st = fcl_link_exchange(w->link, x->queue, m, w->msg);
  if (st != FCL_OK) fcl__link_failed(w->link); /* its peers may never meet it: abort on leave */
  return st;
}

fcl_status fcl__peer_writes_run(fcl__peer_writes *w, fcl__alltoall *x, int n, fcl_mem *const *a,
                                fcl_mem *const *b, bool forward) {
  const int P = x->size, me = x->rank;
  const fcl__block *out_blocks = forward ? x->send : x->recv,
                   *in_blocks = forward ? x->recv : x->send;
  const size_t *in_at = forward ? x->recv_at : x->send_at;
  FCL_TRY(meet(w, x)); /* the peers' staging is free */
  for (int i = 0; i < n; ++i) {
    fcl_mem *from = forward ? a[i] : b[i], *to = forward ? b[i] : a[i];
    FCL_TRY(fcl__block_copy(x->queue, from, &out_blocks[me], to, &in_blocks[me]));
    for (int q = 0; q < P; ++q) {
      const size_t bytes = fcl__block_bytes(&out_blocks[q]);
      if (q == me || !bytes) continue;
      fcl__block there = fcl__block_range((size_t)i * w->peer_part[q] + w->at[2 * q + !forward],
                                          bytes);
      FCL_TRY(fcl__block_copy(x->queue, from, &out_blocks[q], w->peer[q], &there));
    }
  }
  FCL_TRY(meet(w, x)); /* every block has arrived */
  for (int i = 0; i < n; ++i) {
    fcl_mem *to = forward ? b[i] : a[i];
    for (int q = 0; q < P; ++q) {
      const size_t bytes = fcl__block_bytes(&in_blocks[q]);
      if (q == me || !bytes) continue;
      fcl__block packed = fcl__block_range((size_t)i * w->part + in_at[q], bytes);
      FCL_TRY(fcl__block_copy(x->queue, w->stage, &packed, to, &in_blocks[q]));
    }
  }
  return FCL_OK;
}
