/* The peers' destination buffers of peer writes, opened in this process: before a run every
 * rank tells the others which buffers its blocks go to (each buffer's serial and share, one
 * MPI_Allgather), and each rank opens those it has not opened yet. A buffer stays open while it
 * may come again (an FFT plan's work arrays and slots come every step); past KEPT of them the
 * queue is finished and every one closed, so that buffers freed by their peer do not pile up. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "comm_impl.h"

/* What a rank tells of one destination buffer: its serial (0: none, or not shared) and share. */
typedef struct {
  uint64_t serial;
  unsigned char share[FCL_MEM_SHARE_BYTES];
} described;

/* A peer's buffer opened here. */
typedef struct {
  int peer;
  uint64_t serial;
  fcl_mem *mem;
} opened;

/* A share this rank made (ok false: its buffer cannot be shared). */
typedef struct {
  uint64_t serial;
  bool ok;
  unsigned char share[FCL_MEM_SHARE_BYTES];
} made;

enum { MADE = 16 };

struct fcl__peer_buffers {
  int batch;
  described *all; /* [P * batch] of the last exchange */
  opened *open;   /* [kept] */
  int nopen, kept;
  made own[MADE]; /* the latest shares made, oldest replaced first */
  int nown;
};

fcl_status fcl__peer_buffers_create(const fcl__alltoall *x, fcl__peer_buffers **out) {
  const size_t every = (size_t)x->size * (size_t)x->batch;
  fcl__peer_buffers *pb = calloc(1, sizeof *pb);
  if (pb) {
    pb->batch = x->batch;
    pb->kept = (int)(4 * every > 64 ? 4 * every : 64);
    pb->all = calloc(every, sizeof *pb->all);
    pb->open = calloc((size_t)pb->kept, sizeof *pb->open);
  }
  if (!pb || !pb->all || !pb->open) {
    fcl__peer_buffers_destroy(&pb);
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "peer writes' buffers for %d ranks", x->size);
  }
  *out = pb;
  return FCL_OK;
}

static void close_all(fcl__peer_buffers *pb) {
  for (int k = 0; k < pb->nopen; ++k) fcl_mem_release(&pb->open[k].mem);
  pb->nopen = 0;
}

void fcl__peer_buffers_destroy(fcl__peer_buffers **pbp) {
  fcl__peer_buffers *pb = *pbp;
  if (!pb) return;
  if (pb->open) close_all(pb);
  free(pb->open);
  free(pb->all);
  free(pb);
  *pbp = NULL;
}

/* This rank's description of mem, its share made once per buffer. */
static void describe(fcl__peer_buffers *pb, fcl_mem *mem, described *d) {
  const uint64_t serial = fcl_mem_serial(mem);
  const made *m = NULL;
  for (int k = 0; k < pb->nown && !m; ++k)
    if (pb->own[k].serial == serial) m = &pb->own[k];
  if (!m) {
    if (pb->nown == MADE) { /* the oldest goes */
      memmove(pb->own, pb->own + 1, (MADE - 1) * sizeof *pb->own);
      --pb->nown;
    }
    made *fresh = &pb->own[pb->nown++];
    fresh->serial = serial;
    fresh->ok = fcl_mem_share(mem, fresh->share) == FCL_OK;
    if (!fresh->ok) {
      fcl_log(FCL_LOG_INFO,
              "peer writes: a buffer not shared, its blocks come through staging (%s)",
              fcl_last_error());
      fcl_clear_error();
    }
    m = fresh;
  }
  memset(d, 0, sizeof *d);
  if (!m->ok) return;
  d->serial = serial;
  memcpy(d->share, m->share, sizeof d->share);
}

/* Peer q's buffer of serial among the open ones, else NULL. */
static fcl_mem *find(const fcl__peer_buffers *pb, int q, uint64_t serial) {
  for (int k = 0; k < pb->nopen; ++k)
    if (pb->open[k].peer == q && pb->open[k].serial == serial) return pb->open[k].mem;
  return NULL;
}

fcl_status fcl__peer_buffers_exchange(fcl__peer_buffers *pb, fcl__alltoall *x, int n,
                                      fcl_mem *const *mine, fcl_mem **theirs, bool *shared) {
  const int P = x->size, me = x->rank, B = pb->batch;
  described *row = &pb->all[(size_t)me * (size_t)B];
  for (int i = 0; i < B; ++i) {
    memset(&row[i], 0, sizeof row[i]);
    if (i < n && mine[i]) describe(pb, mine[i], &row[i]);
    if (i < n) shared[i] = row[i].serial != 0;
  }
  FCL_MPI_TRY(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, pb->all, B * (int)sizeof *pb->all,
                            MPI_BYTE, x->comm),
              "peer writes: MPI_Allgather of the destinations");
  int missing = 0;
  for (int q = 0; q < P; ++q)
    for (int i = 0; q != me && i < n; ++i) {
      const uint64_t serial = pb->all[(size_t)q * (size_t)B + (size_t)i].serial;
      missing += serial && !find(pb, q, serial);
    }
  if (pb->nopen + missing > pb->kept) { /* none of those closed may be in flight */
    FCL_TRY(fcl_queue_finish(x->queue));
    close_all(pb);
  }
  for (int q = 0; q < P; ++q)
    for (int i = 0; q != me && i < n; ++i) {
      const described *d = &pb->all[(size_t)q * (size_t)B + (size_t)i];
      fcl_mem *m = d->serial ? find(pb, q, d->serial) : NULL;
      /* rank q counts on this rank's stores: a share it made that cannot be opened here is an
       * error, not a way back to the staging (rank q would not unpack) */
      if (d->serial && !m) {
        FCL_TRY(fcl_mem_open_shared(x->context, d->share, &m));
        pb->open[pb->nopen++] = (opened){q, d->serial, m};
      }
      theirs[q * B + i] = m;
    }
  return FCL_OK;
}
