/* Links (fcl_link): arguments checked here, the group made and driven by the device's backend. */
#include <errno.h>
#include <stdlib.h>

#include "backend.h"
#include "check.h"
#include "runtime_impl.h"

fcl_status fcl_link_supported(const fcl_device *device) {
  FCL_CHECK_NULL(device, 1);
  const fcl__backend *b = device->backend;
  if (!b->link_supported)
    return FCL_ERROR(FCL_ERR_NOT_SUPPORTED, "%s devices have no links between processes", b->name);
  return b->link_supported(device);
}

fcl_status fcl_link_id(const fcl_device *device, unsigned char *id) {
  FCL_CHECK_NULL(device, 1);
  FCL_CHECK_NULL(id, 2);
  FCL_TRY(fcl_link_supported(device));
  return device->backend->link_id(device, id);
}

fcl_status fcl_link_create(fcl_context *context, const unsigned char *id, int ranks, int rank,
                           fcl_link **out) {
  FCL_CHECK_NULL(context, 1);
  FCL_CHECK_NULL(id, 2);
  FCL_CHECK_ARG(ranks >= 1, 3, "ranks", "at least 1");
  FCL_CHECK_ARG(rank >= 0 && rank < ranks, 4, "rank", "from 0 to ranks - 1");
  FCL_CHECK_NULL(out, 5);
  *out = NULL;
  FCL_CHECK_ARG(context->num_devices == 1, 1, "context", "a link needs a context of one device");
  FCL_TRY(fcl_link_supported(context->devices[0]));
  double timeout;
  FCL_TRY(fcl_link_timeout(&timeout));
  fcl_link *l = calloc(1, sizeof *l);
  if (!l) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "link object");
  l->timeout = timeout;
  l->backend = context->backend;
  l->context = fcl_context_retain(context);
  l->ranks = ranks;
  l->rank = rank;
  fcl_status st = l->backend->link_create(l, id);
  if (st != FCL_OK) {
    fcl_context_release(&l->context);
    free(l);
    return st;
  }
  *out = l;
  return FCL_OK;
}

fcl_status fcl_link_timeout(double *seconds) {
  FCL_CHECK_NULL(seconds, 1);
  *seconds = 600;
  const char *v = getenv("FLOWCL_LINK_TIMEOUT");
  if (!v || !*v) return FCL_OK;
  char *end;
  errno = 0;
  const double t = strtod(v, &end);
  if (errno || *end || !(t >= 0))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "FLOWCL_LINK_TIMEOUT='%s': seconds a link's exchange may take (0: no limit)",
                     v);
  *seconds = t;
  return FCL_OK;
}

fcl_status fcl_link_exchange(fcl_link *link, fcl_queue *queue, unsigned n,
                             const fcl_link_message *msg) {
  FCL_CHECK_NULL(link, 1);
  FCL_CHECK_NULL(queue, 2);
  FCL_CHECK_ARG(n == 0 || msg, 4, "msg", "must not be NULL when n > 0");
  FCL_CHECK_ARG(queue->device == link->context->devices[0], 2, "queue",
                "not a queue of the link's device");
  for (unsigned i = 0; i < n; ++i) {
    const fcl_link_message *m = &msg[i];
    if (!m->mem || m->mem->backend != link->backend)
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 4 (msg): message %u: %s", i,
                       m->mem ? "memory of another backend" : "NULL memory");
    if (m->offset > m->mem->size || m->bytes > m->mem->size - m->offset)
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "argument 4 (msg): message %u: %zu bytes at %zu of a buffer of %zu", i,
                       m->bytes, m->offset, m->mem->size);
    if (m->peer < 0 || m->peer >= link->ranks || m->peer == link->rank)
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "argument 4 (msg): message %u: peer %d (rank %d of %d)", i, m->peer,
                       link->rank, link->ranks);
  }
  return n ? link->backend->link_exchange(link, queue, n, msg) : FCL_OK;
}

fcl_status fcl_link_ranks(const fcl_link *link, int *ranks, int *rank) {
  FCL_CHECK_NULL(link, 1);
  if (ranks) *ranks = link->ranks;
  if (rank) *rank = link->rank;
  return FCL_OK;
}

void fcl_link_release(fcl_link **link, bool abort) {
  if (!link || !*link) return;
  fcl_link *l = *link;
  *link = NULL;
  l->backend->link_destroy(l, abort);
  fcl_context_release(&l->context);
  free(l);
}
