/* The device transport's point-to-point messages: device staging that the caller packs and
 * unpacks (fcl__p2p_ops.on_device), or the caller's own buffers (fcl__message.buf); the post
 * step enqueues the group's messages over the ranks' link (device_link.c) on the caller's
 * queue; no host wait. */
#include <stdlib.h>

#include "check.h"
#include "comm_impl.h"

typedef struct {
  fcl_link *link;
  fcl_mem *stage;
} p2p_state;

static void p2p_destroy(fcl__p2p *p) {
  p2p_state *s = p->state;
  if (!s) return;
  fcl_mem_release(&s->stage);
  fcl__link_leave(&s->link);
  free(s);
  p->state = NULL;
}

static fcl_status p2p_setup(fcl__p2p *p) {
  p2p_state *s = calloc(1, sizeof *s);
  if (!s) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "device transport");
  p->state = s;
  FCL_TRY(fcl__link_join(p->context, p->comm, &s->link));
  fcl_status st = p->bytes ? fcl_mem_create(p->context, FCL_MEM_DEVICE, p->bytes, NULL, &s->stage)
                           : FCL_OK;
  return fcl__all_ok(p->comm, st == FCL_OK, fcl_last_error()); /* all ranks, or none */
}

static fcl_status p2p_connect(fcl__p2p_group *g) {
  const p2p_state *s = g->p2p->state;
  g->stage = s->stage;
  return FCL_OK;
}

/* The group's messages on the caller's queue (after its packing, before its unpacking). */
static fcl_status p2p_post(void *user, fcl_queue *queue) {
  fcl__p2p_group *g = user;
  const p2p_state *s = g->p2p->state;
  /* a link matches the messages between two ranks in their order, not by tag: in the order of
   * the tags (a send's tag is its receive's), two faces with one peer find their partners */
  fcl_link_message msg[FCL__P2P_MAX_MESSAGES];
  int tag[FCL__P2P_MAX_MESSAGES];
  for (int i = 0; i < g->n; ++i) {
    const fcl__message *m = &g->msg[i];
    int j = i;
    for (; j > 0 && tag[j - 1] > m->tag; --j) {
      msg[j] = msg[j - 1];
      tag[j] = tag[j - 1];
    }
    msg[j] = (fcl_link_message){m->buf ? m->buf : s->stage, m->at, m->bytes, m->peer, m->send};
    tag[j] = m->tag;
  }
  fcl_status st = fcl_link_exchange(s->link, queue ? queue : g->p2p->queue, (unsigned)g->n, msg);
  if (st != FCL_OK) fcl__link_failed(s->link); /* its peers may wait for it: abort on leave */
  return st;
}

const fcl__p2p_ops fcl__p2p_device = {
    p2p_setup, p2p_connect, {[FCL__P2P_POST] = p2p_post}, p2p_destroy, true};
