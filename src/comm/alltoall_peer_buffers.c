/* The peers' destination buffers of peer writes, opened in this process: before a run every
 * rank tells the others which buffers its blocks go to (each buffer's serial and share, one
 * MPI_Allgather), and each rank opens those it has not opened yet and keeps them open. CUDA's
 * contract: memory must not be freed while another process has it open. So a rank holds a
 * reference to each buffer it shared (its memory stays while the plan lives, whoever releases
 * it), and the plan's end closes the peers' buffers on every rank, meets (MPI_Barrier), and only
 * then lets go of its own. A plan shares at most KEPT buffers of its own (an FFT plan's slots
 * and work arrays are fewer); a run that would share more on any rank goes through the staging
 * on every rank. CUDA counts repeated opens of one buffer in a process (each plan opens its
 * own), so two plans may hold the same peer buffer. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "comm_impl.h"

enum { KEPT = 64 };

/* What a rank tells of one destination buffer: its serial (0: none, not shared, or this rank
 * shares no more) and share. */
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

/* A buffer this rank shared (held: its reference), or could not share (held NULL). */
typedef struct {
  uint64_t serial;
  fcl_mem *held;
  unsigned char share[FCL_MEM_SHARE_BYTES];
} made;

struct fcl__peer_buffers {
  int batch, kept; /* kept: the most buffers of its own a rank shares */
  described *all;  /* [P * (batch + 1)] of the last exchange; [batch]: serial 1 = this rank full */
  opened *open;    /* [P * kept] */
  int nopen;
  made *own; /* [2 kept]: shared and refused ones */
  int nown, nheld;
};

fcl_status fcl__peer_buffers_create(const fcl__alltoall *x, fcl__peer_buffers **out) {
  fcl__peer_buffers *pb = calloc(1, sizeof *pb);
  if (pb) {
    pb->batch = x->batch;
    pb->kept = KEPT;
    pb->all = calloc((size_t)x->size * (size_t)(x->batch + 1), sizeof *pb->all);
    pb->open = calloc((size_t)x->size * (size_t)pb->kept, sizeof *pb->open);
    pb->own = calloc(2 * (size_t)pb->kept, sizeof *pb->own);
  }
  if (!pb || !pb->all || !pb->open || !pb->own) {
    fcl__peer_buffers_release(&pb);
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "peer writes' buffers for %d ranks", x->size);
  }
  *out = pb;
  return FCL_OK;
}

void fcl__peer_buffers_close(fcl__peer_buffers *pb) {
  for (int k = 0; pb && k < pb->nopen; ++k) fcl_mem_release(&pb->open[k].mem);
  if (pb) pb->nopen = 0;
}

void fcl__peer_buffers_release(fcl__peer_buffers **pbp) {
  fcl__peer_buffers *pb = *pbp;
  if (!pb) return;
  fcl__peer_buffers_close(pb);
  for (int k = 0; pb->own && k < pb->nown; ++k) fcl_mem_release(&pb->own[k].held);
  free(pb->own);
  free(pb->open);
  free(pb->all);
  free(pb);
  *pbp = NULL;
}

/* This rank's description of mem (its share made once per buffer); false where the rank shares
 * no more buffers (then d says nothing). */
static bool describe(fcl__peer_buffers *pb, fcl_mem *mem, described *d) {
  const uint64_t serial = fcl_mem_serial(mem);
  const made *m = NULL;
  memset(d, 0, sizeof *d);
  for (int k = 0; k < pb->nown && !m; ++k)
    if (pb->own[k].serial == serial) m = &pb->own[k];
  if (!m) {
    if (pb->nheld == pb->kept || pb->nown == 2 * pb->kept) return false;
    made *fresh = &pb->own[pb->nown++];
    fresh->serial = serial;
    if (fcl_mem_share(mem, fresh->share) == FCL_OK) {
      fresh->held = fcl_mem_retain(mem);
      ++pb->nheld;
    } else {
      fcl_log(FCL_LOG_INFO,
              "peer writes: a buffer not shared, its blocks come through staging (%s)",
              fcl_last_error());
      fcl_clear_error();
    }
    m = fresh;
  }
  if (m->held) {
    d->serial = serial;
    memcpy(d->share, m->share, sizeof d->share);
  }
  return true;
}

/* Peer q's buffer of serial among the open ones, else NULL. */
static fcl_mem *find(const fcl__peer_buffers *pb, int q, uint64_t serial) {
  for (int k = 0; k < pb->nopen; ++k)
    if (pb->open[k].peer == q && pb->open[k].serial == serial) return pb->open[k].mem;
  return NULL;
}

fcl_status fcl__peer_buffers_exchange(fcl__peer_buffers *pb, fcl__alltoall *x, int n,
                                      fcl_mem *const *mine, fcl_mem **theirs, bool *shared) {
  const int P = x->size, me = x->rank, B = pb->batch, W = B + 1;
  described *row = &pb->all[(size_t)me * (size_t)W];
  bool full = false;
  for (int i = 0; i < W; ++i) memset(&row[i], 0, sizeof row[i]);
  for (int i = 0; i < n; ++i)
    if (mine[i] && !describe(pb, mine[i], &row[i])) full = true;
  row[B].serial = full;
  FCL_MPI_TRY(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, pb->all, W * (int)sizeof *pb->all,
                            MPI_BYTE, x->comm),
              "peer writes: MPI_Allgather of the destinations");
  bool any_full = false;
  for (int q = 0; q < P; ++q) any_full = any_full || pb->all[(size_t)q * (size_t)W + B].serial;
  for (int i = 0; i < n; ++i) shared[i] = !any_full && row[i].serial != 0;
  for (int q = 0; q < P; ++q)
    for (int i = 0; q != me && i < n; ++i) {
      const described *d = &pb->all[(size_t)q * (size_t)W + (size_t)i];
      fcl_mem *m = NULL;
      if (!any_full && d->serial && !(m = find(pb, q, d->serial))) {
        /* rank q counts on this rank's stores: a share it made that cannot be opened here is
         * an error, not a way back to the staging (rank q would not unpack) */
        FCL_TRY(fcl_mem_open_shared(x->context, d->share, &m));
        pb->open[pb->nopen++] = (opened){q, d->serial, m};
      }
      theirs[q * B + i] = m;
    }
  return FCL_OK;
}
