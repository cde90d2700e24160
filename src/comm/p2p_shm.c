/* The staged transport's point-to-point messages, for ranks of one node, on shared staging
 * (shm_stage.c): a send's bytes are read from the device into the sender's segment and written
 * from there into the receiver's device; the messages carry no data, only "ready" (the bytes
 * are in the segment) and "read" (the receiver copied them out: the segment may be rewritten). */
#include <stdlib.h>

#include "check.h"
#include "comm_impl.h"

enum { TAG_READ = FCL__P2P_TAGS, TAG_OFFSET = 2 * FCL__P2P_TAGS };

static void shm_destroy(fcl__p2p *p) {
  fcl__shm_stage *stage = p->state;
  if (!stage) return;
  fcl_queue_finish(p->queue); /* nothing may still read or write the window */
  fcl__shm_stage_destroy(&stage);
  p->state = NULL;
}

static fcl_status shm_setup(fcl__p2p *p) {
  fcl__shm_stage *stage = NULL;
  FCL_TRY(fcl__shm_stage_create(p->context, p->queue, p->comm, p->bytes, &stage));
  p->state = stage;
  return FCL_OK;
}

/* Sends in this rank's segment; receives where each peer keeps them in its own (the offsets
 * exchanged with the peers now). */
static fcl_status shm_connect(fcl__p2p_group *g) {
  const fcl__p2p *p = g->p2p;
  MPI_Request req[FCL__P2P_MAX_MESSAGES];
  unsigned long long at[FCL__P2P_MAX_MESSAGES];
  for (int i = 0; i < g->n; ++i) {
    const fcl__message *m = &g->msg[i];
    at[i] = m->at;
    int tag = m->tag + TAG_OFFSET;
    FCL_MPI_TRY(m->send
                    ? MPI_Isend(&at[i], 1, MPI_UNSIGNED_LONG_LONG, m->peer, tag, p->comm, &req[i])
                    : MPI_Irecv(&at[i], 1, MPI_UNSIGNED_LONG_LONG, m->peer, tag, p->comm, &req[i]),
                "point-to-point: staging offsets");
  }
  FCL_MPI_TRY(MPI_Waitall(g->n, req, MPI_STATUSES_IGNORE), "point-to-point: staging offsets");
  for (int i = 0; i < g->n; ++i) {
    const fcl__message *m = &g->msg[i];
    g->host[i] = fcl__shm_stage_host(p->state, m->send ? p->rank : m->peer) + at[i];
  }
  return FCL_OK;
}

/* Before the device writes into this rank's segment: the peers have read what the last exchange
 * left there. */
static fcl_status shm_reuse(void *user, fcl_queue *queue) {
  (void)queue;
  fcl__p2p_group *g = user;
  if (!g->done_pending) return FCL_OK;
  g->done_pending = false;
  FCL_MPI_TRY(MPI_Waitall(g->n, g->done, MPI_STATUSES_IGNORE),
              "point-to-point: MPI_Waitall (read)");
  return FCL_OK;
}

/* The sends are in the segment: make them visible, tell the peers, listen for theirs. */
static fcl_status shm_post(void *user, fcl_queue *queue) {
  fcl__p2p_group *g = user;
  const fcl__p2p *p = g->p2p;
  bool sends = false;
  for (int i = 0; i < g->n; ++i) sends = sends || g->msg[i].send;
  if (sends) { /* one wait for every send in host memory */
    FCL_TRY(fcl_queue_finish(queue));
    FCL_TRY(fcl__shm_stage_sync(p->state));
  }
  for (int i = 0; i < g->n; ++i) {
    const fcl__message *m = &g->msg[i];
    FCL_MPI_TRY(m->send ? MPI_Isend(NULL, 0, MPI_BYTE, m->peer, m->tag, p->comm, &g->req[i])
                        : MPI_Irecv(NULL, 0, MPI_BYTE, m->peer, m->tag, p->comm, &g->req[i]),
                "point-to-point: ready message");
  }
  return FCL_OK;
}

/* The peers' bytes are ready: the driver must read them from host memory. */
static fcl_status shm_complete(void *user, fcl_queue *queue) {
  (void)queue;
  fcl__p2p_group *g = user;
  FCL_MPI_TRY(MPI_Waitall(g->n, g->req, MPI_STATUSES_IGNORE), "point-to-point: MPI_Waitall");
  return fcl__shm_stage_sync(g->p2p->state);
}

/* The receives were copied out of the peers' segments: tell them; listen for the same of ours. */
static fcl_status shm_release(void *user, fcl_queue *queue) {
  fcl__p2p_group *g = user;
  const fcl__p2p *p = g->p2p;
  FCL_TRY(fcl_queue_finish(queue)); /* the copies out of the shared staging */
  for (int i = 0; i < g->n; ++i) {
    const fcl__message *m = &g->msg[i];
    int tag = m->tag + TAG_READ;
    FCL_MPI_TRY(m->send ? MPI_Irecv(NULL, 0, MPI_BYTE, m->peer, tag, p->comm, &g->done[i])
                        : MPI_Isend(NULL, 0, MPI_BYTE, m->peer, tag, p->comm, &g->done[i]),
                "point-to-point: read message");
  }
  g->done_pending = true;
  return FCL_OK;
}

const fcl__p2p_ops fcl__p2p_staged = {shm_setup,
                                      shm_connect,
                                      {[FCL__P2P_REUSE] = shm_reuse,
                                       [FCL__P2P_POST] = shm_post,
                                       [FCL__P2P_COMPLETE] = shm_complete,
                                       [FCL__P2P_RELEASE] = shm_release},
                                      shm_destroy,
                                      false};
