/* The mpi transport's point-to-point messages: pinned host staging (pinned.c), the data in
 * MPI_Isend/Irecv. */
#include <stdlib.h>

#include "check.h"
#include "comm_impl.h"

static void mpi_destroy(fcl__p2p *p) {
  fcl__pinned *s = p->state;
  if (!s) return;
  fcl__pinned_destroy(s);
  free(s);
  p->state = NULL;
}

static fcl_status mpi_setup(fcl__p2p *p) {
  fcl__pinned *s = calloc(1, sizeof *s);
  if (!s) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "mpi transport");
  p->state = s;
  return p->bytes ? fcl__pinned_create(p->context, p->queue, p->bytes, s) : FCL_OK;
}

/* A message's bytes at its offset of this rank's staging, either way. */
static fcl_status mpi_connect(fcl__p2p_group *g) {
  const fcl__pinned *s = g->p2p->state;
  for (int i = 0; i < g->n; ++i) g->host[i] = s->host + g->msg[i].at;
  return FCL_OK;
}

static fcl_status mpi_post(void *user, fcl_queue *queue) {
  (void)queue;
  fcl__p2p_group *g = user;
  const MPI_Comm comm = g->p2p->comm;
  for (int i = 0; i < g->n; ++i) { /* receives first */
    const fcl__message *m = &g->msg[i];
    if (!m->send)
      FCL_MPI_TRY(MPI_Irecv(g->host[i], (int)m->bytes, MPI_BYTE, m->peer, m->tag, comm, &g->req[i]),
                  "point-to-point: MPI_Irecv");
  }
  for (int i = 0; i < g->n; ++i) {
    const fcl__message *m = &g->msg[i];
    if (m->send)
      FCL_MPI_TRY(MPI_Isend(g->host[i], (int)m->bytes, MPI_BYTE, m->peer, m->tag, comm, &g->req[i]),
                  "point-to-point: MPI_Isend");
  }
  return FCL_OK;
}

static fcl_status mpi_complete(void *user, fcl_queue *queue) {
  (void)queue;
  fcl__p2p_group *g = user;
  FCL_MPI_TRY(MPI_Waitall(g->n, g->req, MPI_STATUSES_IGNORE), "point-to-point: MPI_Waitall");
  return FCL_OK;
}

const fcl__p2p_ops fcl__p2p_mpi = {mpi_setup,
                                   mpi_connect,
                                   {[FCL__P2P_POST] = mpi_post, [FCL__P2P_COMPLETE] = mpi_complete},
                                   mpi_destroy,
                                   false};
