/* The device transport's all-to-all: device memory to device memory over the ranks' link
 * (fcl_link, device_link.c), every run one group of sends and receives enqueued on the caller's
 * queue, so that nothing waits on the host. A block that is one run of memory travels as it is;
 * a strided one is packed into (or unpacked from) device staging by a rectangle copy on the same
 * queue; the own block is copied on the device. Where FLOWCL_PEER_WRITES asks for them (default:
 * on two ranks) and every rank can open its peers' memory, the blocks go by peer writes instead
 * (alltoall_peer.c). */
#include <stdlib.h>

#include "check.h"
#include "comm_impl.h"

typedef struct {
  fcl_link *link;
  size_t part;            /* bytes of one pair's part of a staging buffer */
  fcl_mem *stage[2];      /* [0]: outgoing packed blocks, [1]: incoming */
  fcl_link_message *msg;  /* 2 (P - 1) per pair */
  fcl__peer_writes *peer; /* NULL: sends and receives on the link */
} a2a_state;

static void a2a_destroy(fcl__alltoall *x) {
  a2a_state *s = x->state;
  if (!s) return;
  /* the staging may be in flight; a failed wait or exchange: the ranks may not end together */
  const bool settled = fcl_queue_finish(x->queue) == FCL_OK && s->link &&
                       !fcl__link_broken(s->link);
  fcl__peer_writes_destroy(&s->peer, settled);
  x->peer_writes = false;
  for (int i = 0; i < 2; ++i) fcl_mem_release(&s->stage[i]);
  fcl__link_leave(&s->link);
  free(s->msg);
  free(s);
  x->state = NULL;
}

static fcl_status a2a_setup(fcl__alltoall *x) {
  a2a_state *s = calloc(1, sizeof *s);
  if (!s) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "device transport");
  x->state = s;
  FCL_TRY(fcl__link_join(x->context, x->comm, &s->link));
  s->part = x->send_total > x->recv_total ? x->send_total : x->recv_total;
  s->msg = calloc(2 * (size_t)x->size * (size_t)x->batch, sizeof *s->msg);
  fcl_status st = s->msg ? FCL_OK : FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "device transport");
  /* every rank goes on, or none: the peer writes' set-up is collective */
  FCL_TRY(fcl__all_ok(x->comm, st == FCL_OK, fcl_last_error()));
  FCL_TRY(fcl__peer_writes_create(x, s->link, &s->peer));
  x->peer_writes = s->peer != NULL;
  /* staging only where some block is strided and blocks go on the link */
  bool strided = false;
  for (int q = 0; q < x->size; ++q)
    strided = strided || (q != x->rank && (!fcl__block_contiguous(&x->send[q]) ||
                                           !fcl__block_contiguous(&x->recv[q])));
  for (int i = 0; st == FCL_OK && strided && !s->peer && s->part && i < 2; ++i)
    st = fcl_mem_create(x->context, FCL_MEM_DEVICE, s->part * (size_t)x->batch, NULL, &s->stage[i]);
  /* all ranks set up, or none (then auto takes another transport) */
  return fcl__all_ok(x->comm, st == FCL_OK, fcl_last_error());
}

static fcl_status a2a_run(fcl__alltoall *x, int n, fcl_mem *const *a, fcl_mem *const *b,
                          bool forward) {
  a2a_state *s = x->state;
  if (s->peer) return fcl__peer_writes_run(s->peer, x, n, a, b, forward);
  const int P = x->size, me = x->rank;
  const fcl__block *out_blocks = forward ? x->send : x->recv,
                   *in_blocks = forward ? x->recv : x->send;
  const size_t *out_at = forward ? x->send_at : x->recv_at,
               *in_at = forward ? x->recv_at : x->send_at;
  unsigned m = 0;
  for (int i = 0; i < n; ++i) {
    fcl_mem *from = forward ? a[i] : b[i], *to = forward ? b[i] : a[i];
    const size_t base = (size_t)i * s->part;
    FCL_TRY(fcl__block_copy(x->queue, from, &out_blocks[me], to, &in_blocks[me]));
    for (int q = 0; q < P; ++q) {
      if (q == me) continue;
      const fcl__block *o = &out_blocks[q], *in = &in_blocks[q];
      fcl_link_message *send = &s->msg[m++], *recv = &s->msg[m++];
      *send = (fcl_link_message){from, o->offset, fcl__block_bytes(o), q, true};
      /* an empty block goes as it is (nothing moves; the staging may not exist) */
      if (!fcl__block_contiguous(o) && send->bytes) {
        fcl__block packed = fcl__block_range(base + out_at[q], send->bytes);
        FCL_TRY(fcl__block_copy(x->queue, from, o, s->stage[0], &packed));
        *send = (fcl_link_message){s->stage[0], packed.offset, send->bytes, q, true};
      }
      *recv = (fcl_link_message){to, in->offset, fcl__block_bytes(in), q, false};
      if (!fcl__block_contiguous(in) && recv->bytes)
        *recv = (fcl_link_message){s->stage[1], base + in_at[q], recv->bytes, q, false};
    }
  }
  fcl_status st = fcl_link_exchange(s->link, x->queue, m, s->msg);
  if (st != FCL_OK) {
    fcl__link_failed(s->link); /* its peers' halves may never complete: abort it on leave */
    return st;
  }
  for (int i = 0; i < n; ++i) { /* unpack the strided blocks that arrived in staging */
    fcl_mem *to = forward ? b[i] : a[i];
    for (int q = 0; q < P; ++q) {
      const fcl__block *in = &in_blocks[q];
      if (q == me || fcl__block_contiguous(in) || !fcl__block_bytes(in)) continue;
      fcl__block packed = fcl__block_range((size_t)i * s->part + in_at[q], fcl__block_bytes(in));
      FCL_TRY(fcl__block_copy(x->queue, s->stage[1], &packed, to, in));
    }
  }
  return FCL_OK;
}

const fcl__alltoall_ops fcl__alltoall_device = {a2a_setup, a2a_run, a2a_destroy};
