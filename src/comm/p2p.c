/* Point-to-point messages through staging: checks, the transport (transport.c), the
 * groups and their host steps. */
#include <limits.h>
#include <stdlib.h>

#include "check.h"
#include "comm_impl.h"

void fcl__p2p_destroy(fcl__p2p **pp) {
  if (!pp || !*pp) return;
  fcl__p2p *p = *pp;
  for (fcl__p2p_group *g = p->groups, *next; g; g = next) {
    next = g->next;
    if (g->done_pending) MPI_Waitall(g->n, g->done, MPI_STATUSES_IGNORE);
    free(g);
  }
  if (p->ops) p->ops->p2p->destroy(p);
  fcl_context_release(&p->context);
  free(p);
  *pp = NULL;
}

/* One transport's set-up of p; on failure nothing of it is left. */
static fcl_status try_transport(void *object, const fcl__transport_ops *t) {
  fcl__p2p *p = object;
  p->ops = t;
  fcl_status st = t->p2p->setup(p);
  if (st != FCL_OK) {
    t->p2p->destroy(p);
    p->ops = NULL;
  }
  return st;
}

fcl_status fcl__p2p_create(fcl_context *context, fcl_queue *queue, MPI_Comm comm, size_t bytes,
                           fcl__transport kind, fcl__p2p **out) {
  *out = NULL;
  fcl__p2p *p = calloc(1, sizeof *p);
  if (!p) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "point-to-point plan");
  p->context = fcl_context_retain(context);
  p->queue = queue;
  p->comm = comm;
  p->bytes = bytes;
  fcl_status st = FCL_OK;
  int rc = MPI_Comm_rank(comm, &p->rank);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_size(comm, &p->size);
  if (rc != MPI_SUCCESS) st = fcl__mpi_error(rc, "point-to-point plan: communicator");
  if (st == FCL_OK) st = fcl__transport_select(kind, "point-to-point", try_transport, p);
  if (st != FCL_OK) {
    fcl__p2p_destroy(&p);
    return st;
  }
  *out = p;
  return FCL_OK;
}

static fcl_status check_message(const fcl__p2p *p, const fcl__message *m) {
  if (m->peer < 0 || m->peer >= p->size || m->peer == p->rank)
    return FCL_ERROR(FCL_ERR_INTERNAL, "point-to-point: peer %d (rank %d of %d)", m->peer, p->rank,
                     p->size);
  if (m->tag < 0 || m->tag >= FCL__P2P_TAGS)
    return FCL_ERROR(FCL_ERR_INTERNAL, "point-to-point: tag %d (0 to %d)", m->tag,
                     FCL__P2P_TAGS - 1);
  if (m->bytes > INT_MAX)
    return FCL_ERROR(FCL_ERR_NOT_SUPPORTED,
                     "point-to-point: a message of %zu bytes (MPI counts stop at INT_MAX)",
                     m->bytes);
  if (m->buf && !p->ops->p2p->on_device)
    return FCL_ERROR(FCL_ERR_INTERNAL,
                     "point-to-point: a message with its own buffer on the %s "
                     "transport (device transports only)",
                     p->ops->name);
  if (m->buf) return FCL_OK;
  if (m->at > p->bytes || m->bytes > p->bytes - m->at)
    return FCL_ERROR(FCL_ERR_INTERNAL, "point-to-point: %zu bytes at %zu of a staging of %zu bytes",
                     m->bytes, m->at, p->bytes);
  return FCL_OK;
}

fcl_status fcl__p2p_group_create(fcl__p2p *p, int n, const fcl__message *msg,
                                 fcl__p2p_group **out) {
  *out = NULL;
  if (n < 0 || n > FCL__P2P_MAX_MESSAGES)
    return FCL_ERROR(FCL_ERR_INTERNAL, "point-to-point: a group of %d messages (at most %d)", n,
                     FCL__P2P_MAX_MESSAGES);
  for (int i = 0; i < n; ++i) FCL_TRY(check_message(p, &msg[i]));
  fcl__p2p_group *g = calloc(1, sizeof *g);
  if (!g) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "point-to-point group");
  g->p2p = p;
  g->n = n;
  for (int i = 0; i < n; ++i) g->msg[i] = msg[i];
  g->next = p->groups;
  p->groups = g;
  FCL_TRY(p->ops->p2p->connect(g));
  *out = g;
  return FCL_OK;
}

fcl_status fcl__p2p_launcher(fcl__p2p_group *g, fcl__p2p_step step, const char *name,
                             fcl_launcher **out) {
  *out = NULL;
  const fcl__p2p_ops *ops = g->p2p->ops->p2p;
  fcl_host_fn fn = ops->step[step];
  if (!fn) return FCL_OK;
  return ops->on_device ? fcl_launcher_create_host_enqueue(name, fn, g, out)
                        : fcl_launcher_create_host(name, fn, g, out);
}

void fcl__p2p_rebind(fcl__p2p *p, size_t n, fcl_mem *const *old, fcl_mem *const *now) {
  for (fcl__p2p_group *g = p ? p->groups : NULL; g; g = g->next)
    for (int i = 0; i < g->n; ++i)
      for (size_t k = 0; k < n; ++k)
        if (g->msg[i].buf && g->msg[i].buf == old[k]) {
          g->msg[i].buf = now[k];
          break;
        }
}

const char *fcl__p2p_transport(const fcl__p2p *p) { return p->ops->name; }

bool fcl__p2p_on_device(const fcl__p2p *p) { return p->ops->p2p->on_device; }
