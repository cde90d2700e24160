/* Peer writes: the device transport's all-to-all with every rank storing its blocks straight
 * into its peers' buffers, opened in this process (fcl_mem_open_shared: CUDA IPC over NVLink;
 * alltoall_peer_buffers.c tells the ranks each run's destinations). A rectangle copy reads the
 * block here and writes it there in the peer's layout, so a block crosses once instead of
 * packed, sent and unpacked: on two H200 the block of a 512^3 slab transpose (134.7 MB) moves
 * in 0.38 ms each way at once against NCCL's 0.50 plus the packing
 * (tools/probes/peer_write_transpose.cu, docs/benchmarks.md). Where a destination cannot be
 * shared, is also a source of the run, or the two blocks' shapes need two copies, the block goes
 * into the peer's incoming staging instead and the peer unpacks it. The ranks' queues meet twice
 * on the link, by 4-byte messages: before the stores (each peer has passed its last use of its
 * buffers and staging) and after them (every block has arrived). The link's watchdog covers
 * both meetings, so a rank that fails there ends its peers with an error as an exchange does;
 * not the host's MPI_Allgather of a run's destinations, which waits for every rank (a rank that
 * never reaches the run leaves its peers there). Where the watchdog ends a meeting, the stores
 * enqueued behind it still run: the peer's buffers then hold undefined data, as an aborted
 * exchange's would. */
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
  fcl__block *their;     /* [2 P]: q's send[me] and recv[me] */
  fcl__peer_buffers *buffers;
  fcl_mem **targets; /* [P * batch]: this run's destination buffers of the peers, opened here */
  bool *shared;      /* [batch]: this run's destinations of this rank, shared */
  fcl_mem **dest;    /* [batch]: this run's destinations that peers may store into */
  MPI_Comm comm;     /* the plan's, once every rank takes part (MPI_COMM_NULL before) */
  bool shared_out;   /* this rank may have shared memory with the others */
};

/* FLOWCL_PEER_WRITES for P ranks: unset, empty or "auto": on two ranks, the one size where
 * they were measured faster than the link's sends and receives (docs/scaling.md); "on": on any
 * number; "off": never. Every rank also has to be able to (the caller agrees that). */
static fcl_status wanted(int P, bool *want) {
  const char *v = getenv("FLOWCL_PEER_WRITES");
  const bool automatic = !v || !*v || strcmp(v, "auto") == 0;
  *want = automatic ? P == 2 : strcmp(v, "on") == 0;
  if (automatic || *want || strcmp(v, "off") == 0) return FCL_OK;
  return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "FLOWCL_PEER_WRITES='%s': auto, on or off", v);
}

void fcl__peer_writes_destroy(fcl__peer_writes **wp, bool settled) {
  fcl__peer_writes *w = *wp;
  if (!w) return;
  /* close what this rank opened of the others; then, once every rank has, free what it shared */
  for (int q = 0; w->peer && q < w->size; ++q) fcl_mem_release(&w->peer[q]);
  fcl__peer_buffers_close(w->buffers);
  /* every rank that took part comes here (the plan's end is collective) and learns whether all
   * ended well: only then is what this rank shared closed everywhere and free to go */
  if (w->comm != MPI_COMM_NULL) {
    int mine = settled, all = 0;
    settled = MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, w->comm) == MPI_SUCCESS && all;
  }
  if (settled || !w->shared_out) {
    fcl_mem_release(&w->stage);
    fcl__peer_buffers_release(&w->buffers);
  } else {
    fcl_log(FCL_LOG_WARNING, "peer writes: the ranks did not end together; this rank's shared "
                             "memory stays allocated (a peer may still have it open)");
  }
  fcl_mem_release(&w->token);
  free(w->peer);
  free(w->at);
  free(w->peer_part);
  free(w->msg);
  free(w->their);
  free(w->targets);
  free(w->shared);
  free(w->dest);
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

/* All of w's arrays (false: some allocation failed). */
static bool allocate(fcl__alltoall *x, fcl_link *link, fcl__peer_writes **wp) {
  const int P = x->size;
  fcl__peer_writes *w = *wp = calloc(1, sizeof *w);
  if (!w) return false;
  w->link = link;
  w->comm = MPI_COMM_NULL;
  w->size = P;
  w->part = x->send_total > x->recv_total ? x->send_total : x->recv_total;
  w->peer = calloc((size_t)P, sizeof *w->peer);
  w->at = calloc(2 * (size_t)P, sizeof *w->at);
  w->peer_part = calloc((size_t)P, sizeof *w->peer_part);
  w->msg = calloc(2 * (size_t)P, sizeof *w->msg);
  w->their = calloc(2 * (size_t)P, sizeof *w->their);
  w->targets = calloc((size_t)P * (size_t)x->batch, sizeof *w->targets);
  w->shared = calloc((size_t)x->batch, sizeof *w->shared);
  w->dest = calloc((size_t)x->batch, sizeof *w->dest);
  if (fcl__peer_buffers_create(x, &w->buffers) != FCL_OK) fcl_clear_error();
  return w->peer && w->at && w->peer_part && w->msg && w->their && w->targets && w->shared &&
         w->dest && w->buffers;
}

fcl_status fcl__peer_writes_create(fcl__alltoall *x, fcl_link *link, fcl__peer_writes **out) {
  *out = NULL;
  const int P = x->size;
  bool want = false;
  /* this rank's verdict before any rank shares anything: 1 a bad FLOWCL_PEER_WRITES, 2 out of
   * memory; every rank learns the worst, so that all go on or all stop */
  int bad = wanted(P, &want) != FCL_OK ? 1 : 0, worst = 0;
  char why[256] = "";
  if (bad) snprintf(why, sizeof why, "%s", fcl_last_error());
  fcl__peer_writes *w = NULL;
  unsigned char *shares = calloc((size_t)P, FCL_MEM_SHARE_BYTES);
  unsigned long long *mine = calloc(6 * (size_t)P, sizeof *mine);
  fcl__block *blocks = malloc(2 * (size_t)P * sizeof *blocks);
  if (!allocate(x, link, &w) || !shares || !mine || !blocks) bad = bad ? bad : 2;
  int rc = MPI_Allreduce(&bad, &worst, 1, MPI_INT, MPI_MAX, x->comm);
  if (rc != MPI_SUCCESS || worst) {
    fcl__peer_writes_destroy(&w, false); /* nothing shared yet, no collective */
    free(shares);
    free(mine);
    free(blocks);
    if (rc != MPI_SUCCESS) return fcl__mpi_error(rc, "peer writes: MPI_Allreduce");
    if (worst == 1)
      return FCL_ERROR(
          FCL_ERR_INVALID_ARGUMENT, "%s",
          bad == 1 ? why : "FLOWCL_PEER_WRITES is none of auto, on and off on another rank");
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "peer writes for %d ranks%s", P,
                     bad == 2 ? "" : " (on another rank)");
  }
  unsigned long long *theirs = mine + 3 * P;
  w->comm = x->comm; /* every rank is in the collectives from here */
  /* every rank reaches every collective below, whatever it could do */
  int can = want && P > 1 && prepare(x, w, shares), all = 0;
  w->shared_out = can;
  rc = MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, shares, FCL_MEM_SHARE_BYTES, MPI_BYTE,
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
  /* each peer's blocks with this rank, for stores into its own buffers */
  for (int q = 0; q < P; ++q) {
    blocks[2 * q] = x->send[q];
    blocks[2 * q + 1] = x->recv[q];
  }
  if (rc == MPI_SUCCESS)
    rc = MPI_Alltoall(blocks, (int)(2 * sizeof *blocks), MPI_BYTE, w->their,
                      (int)(2 * sizeof *blocks), MPI_BYTE, x->comm);
  free(blocks);
  for (int q = 0; q < P; ++q) {
    w->at[2 * q] = (size_t)theirs[3 * q];
    w->at[2 * q + 1] = (size_t)theirs[3 * q + 1];
    w->peer_part[q] = (size_t)theirs[3 * q + 2];
  }
  free(shares);
  free(mine);
  if (rc != MPI_SUCCESS) { /* MPI failed: no further collective (what was shared stays) */
    w->comm = MPI_COMM_NULL;
    fcl__peer_writes_destroy(&w, false);
    return fcl__mpi_error(rc, "peer writes: set-up");
  }
  if (!all) {                           /* the transport sends through the link instead */
    fcl__peer_writes_destroy(&w, true); /* every rank comes here */
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

/* Whether a block goes from s into d by one copy (fcl__block_copy). */
static bool copyable(const fcl__block *s, const fcl__block *d) {
  return fcl__block_contiguous(s) || fcl__block_contiguous(d) ||
         (s->region[0] == d->region[0] && s->region[1] == d->region[1]);
}

static fcl_status run(fcl__peer_writes *w, fcl__alltoall *x, int n, fcl_mem *const *a,
                      fcl_mem *const *b, bool forward) {
  const int P = x->size, me = x->rank, B = x->batch;
  const fcl__block *out_blocks = forward ? x->send : x->recv,
                   *in_blocks = forward ? x->recv : x->send;
  const size_t *in_at = forward ? x->recv_at : x->send_at;
  /* a peer's block from this rank lands in its recv[me] forward, its send[me] backward */
  const int theirs_in = forward ? 1 : 0, theirs_out = 1 - theirs_in;
  /* a destination that is also a source of this run takes its blocks through the staging: a
   * peer's stores would overwrite what this rank still sends */
  fcl_mem **dest = w->dest;
  for (int i = 0; i < n; ++i) {
    dest[i] = forward ? b[i] : a[i];
    for (int j = 0; j < n; ++j)
      if (dest[i] == (forward ? a[j] : b[j])) dest[i] = NULL;
  }
  FCL_TRY(fcl__peer_buffers_exchange(w->buffers, x, n, dest, w->targets, w->shared));
  FCL_TRY(meet(w, x)); /* the peers' buffers and staging are free */
  for (int i = 0; i < n; ++i) {
    fcl_mem *from = forward ? a[i] : b[i], *to = forward ? b[i] : a[i];
    FCL_TRY(fcl__block_copy(x->queue, from, &out_blocks[me], to, &in_blocks[me]));
    /* rank me stores into me + k at step k: every step is a permutation, so no rank's links
     * take the stores of all its peers at once while others idle */
    for (int k = 1; k < P; ++k) {
      const int q = (me + k) % P;
      const size_t bytes = fcl__block_bytes(&out_blocks[q]);
      if (!bytes) continue;
      const fcl__block *into = &w->their[2 * q + theirs_in];
      fcl_mem *target = w->targets[q * B + i];
      if (target && copyable(&out_blocks[q], into)) { /* straight into the peer's buffer */
        FCL_TRY(fcl__block_copy(x->queue, from, &out_blocks[q], target, into));
        continue;
      }
      fcl__block there = fcl__block_range((size_t)i * w->peer_part[q] + w->at[2 * q + !forward],
                                          bytes);
      FCL_TRY(fcl__block_copy(x->queue, from, &out_blocks[q], w->peer[q], &there));
    }
  }
  FCL_TRY(meet(w, x));          /* every block has arrived */
  for (int i = 0; i < n; ++i) { /* unpack what came through the staging */
    fcl_mem *to = forward ? b[i] : a[i];
    for (int q = 0; q < P; ++q) {
      const size_t bytes = fcl__block_bytes(&in_blocks[q]);
      if (q == me || !bytes) continue;
      if (w->shared[i] && copyable(&w->their[2 * q + theirs_out], &in_blocks[q])) continue;
      fcl__block packed = fcl__block_range((size_t)i * w->part + in_at[q], bytes);
      FCL_TRY(fcl__block_copy(x->queue, w->stage, &packed, to, &in_blocks[q]));
    }
  }
  return FCL_OK;
}

fcl_status fcl__peer_writes_run(fcl__peer_writes *w, fcl__alltoall *x, int n, fcl_mem *const *a,
                                fcl_mem *const *b, bool forward) {
  fcl_status st = run(w, x, n, a, b, forward);
  if (st != FCL_OK) fcl__link_failed(w->link); /* the peers may wait for this rank for ever */
  return st;
}
