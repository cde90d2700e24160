/* The point-to-point messages of the comm layer on every transport (mpi, staged, device where the
 * devices link): a ring, each
 * rank sending a run of device values to the next and receiving the previous one's, through the
 * transport's staging and host steps in the order a ghost plan runs them, three exchanges in a
 * row (the staging reused); the checks of a group's messages. */
#include <stdlib.h>
#include <string.h>

#include "comm_test_util.h"

enum { N = 1000, ROUNDS = 3 };

static int32_t value(int rank, int round, int i) { return rank * 1000000 + round * 10000 + i; }

/* The step's host launcher into list, where the transport has one. */
static void push_step(fcl__p2p_group *g, fcl__p2p_step step, fcl_launcher *list) {
  fcl_launcher *l = NULL;
  CHECK_OK(fcl__p2p_launcher(g, step, "step", &l));
  if (l) CHECK_OK(fcl_launcher_list_push(list, l));
}

static void ring(fcl_test_mpi_env *e, fcl__transport kind, const char *expect) {
  const int P = e->size, me = e->rank, next = (me + 1) % P, prev = (me + P - 1) % P;
  const size_t bytes = N * sizeof(int32_t);
  fcl__p2p *p = NULL;
  CHECK_OK(fcl__p2p_create(e->ctx, e->q, MPI_COMM_WORLD, 2 * bytes, kind, &p));
  if (!p) return;
  CHECKF(strcmp(fcl__p2p_transport(p), expect) == 0, "transport %s: got %s",
         fcl__transport_name(kind), fcl__p2p_transport(p));
  if (P == 1) { /* no peer: the staging alone */
    fcl__p2p_destroy(&p);
    return;
  }
  fcl__message msg[2] = {{next, 3, true, bytes, 0, NULL}, {prev, 3, false, bytes, bytes, NULL}};
  fcl__p2p_group *g = NULL;
  CHECK_OK(fcl__p2p_group_create(p, 2, msg, &g));
  fcl_mem *src = NULL, *dst = NULL;
  CHECK_OK(fcl_mem_create(e->ctx, FCL_MEM_DEVICE, bytes, NULL, &src));
  CHECK_OK(fcl_mem_create(e->ctx, FCL_MEM_DEVICE, bytes, NULL, &dst));
  fcl_launcher *pre = NULL, *post = NULL, *l = NULL;
  CHECK_OK(fcl_launcher_create_list("pre", &pre));
  CHECK_OK(fcl_launcher_create_list("post", &post));
  if (g && pre && post) {
    const bool dev = fcl__p2p_on_device(p);
    CHECK(dev == (g->stage != NULL));
    push_step(g, FCL__P2P_REUSE, pre);
    if (dev) /* device staging: the caller copies on the device */
      CHECK_OK(fcl_launcher_create_copy_d2d("send", src, 0, g->stage, msg[0].at, bytes, &l));
    else
      CHECK_OK(fcl_launcher_create_copy_d2h("send", src, 0, g->host[0], bytes, &l));
    CHECK_OK(fcl_launcher_list_push(pre, l));
    push_step(g, FCL__P2P_POST, pre);
    push_step(g, FCL__P2P_COMPLETE, post);
    if (dev)
      CHECK_OK(fcl_launcher_create_copy_d2d("receive", g->stage, msg[1].at, dst, 0, bytes, &l));
    else
      CHECK_OK(fcl_launcher_create_copy_h2d("receive", g->host[1], dst, 0, bytes, &l));
    CHECK_OK(fcl_launcher_list_push(post, l));
    push_step(g, FCL__P2P_RELEASE, post);
  }
  int32_t host[N];
  for (int round = 0; g && pre && post && round < ROUNDS; ++round) {
    for (int i = 0; i < N; ++i) host[i] = value(me, round, i);
    CHECK_OK(fcl_mem_write(e->q, src, 0, bytes, host, FCL_BLOCKING, 0, NULL, NULL));
    CHECK_OK(fcl_launcher_call(pre, e->q, NULL, 0, NULL, NULL));
    CHECK_OK(fcl_launcher_call(post, e->q, NULL, 0, NULL, NULL));
    CHECK_OK(fcl_mem_read(e->q, dst, 0, bytes, host, FCL_BLOCKING, 0, NULL, NULL));
    int wrong = 0;
    for (int i = 0; i < N; ++i) wrong += host[i] != value(prev, round, i);
    CHECKF(!wrong, "%s transport, round %d, rank %d of %d: %d of %d values wrong (first %d)",
           expect, round, me, P, wrong, N, host[0]);
  }
  /* messages with buffers of their own (a device transport's only): src straight into the
   * peer's dst, at an offset */
  fcl__message own[2] = {{next, 4, true, bytes - 8, 8, src}, {prev, 4, false, bytes - 8, 8, dst}};
  fcl__p2p_group *go = NULL;
  if (!fcl__p2p_on_device(p)) {
    CHECK_STATUS(fcl__p2p_group_create(p, 2, own, &go), FCL_ERR_INTERNAL, "its own buffer");
  } else if (g && pre && post) {
    CHECK_OK(fcl__p2p_group_create(p, 2, own, &go));
    fcl_launcher *direct = NULL;
    CHECK_OK(fcl_launcher_create_list("direct", &direct));
    push_step(go, FCL__P2P_POST, direct);
    for (int i = 0; i < N; ++i) host[i] = value(me, ROUNDS, i);
    CHECK_OK(fcl_mem_write(e->q, src, 0, bytes, host, FCL_BLOCKING, 0, NULL, NULL));
    for (int i = 0; i < N; ++i) host[i] = -1;
    CHECK_OK(fcl_mem_write(e->q, dst, 0, bytes, host, FCL_BLOCKING, 0, NULL, NULL));
    CHECK_OK(fcl_launcher_call(direct, e->q, NULL, 0, NULL, NULL));
    CHECK_OK(fcl_mem_read(e->q, dst, 0, bytes, host, FCL_BLOCKING, 0, NULL, NULL));
    int wrong = 0;
    for (int i = 0; i < N; ++i) wrong += host[i] != (i < 2 ? -1 : value(prev, ROUNDS, i));
    CHECKF(!wrong, "%s transport, own buffers, rank %d of %d: %d of %d values wrong", expect, me, P,
           wrong, N);
    fcl_launcher_destroy(&direct);
  }
  /* a group's messages are checked before any is sent */
  fcl__message bad = {next, FCL__P2P_TAGS, true, bytes, 0, NULL};
  CHECK_STATUS(fcl__p2p_group_create(p, 1, &bad, &g), FCL_ERR_INTERNAL, "tag 32");
  bad = (fcl__message){next, 0, true, bytes, bytes + 1, NULL};
  CHECK_STATUS(fcl__p2p_group_create(p, 1, &bad, &g), FCL_ERR_INTERNAL, "staging of");
  bad = (fcl__message){me, 0, true, bytes, 0, NULL};
  CHECK_STATUS(fcl__p2p_group_create(p, 1, &bad, &g), FCL_ERR_INTERNAL, "peer");
  CHECK_OK(fcl_queue_finish(e->q));
  fcl_launcher_destroy(&pre);
  fcl_launcher_destroy(&post);
  fcl__p2p_destroy(&p);
  fcl_mem_release(&src);
  fcl_mem_release(&dst);
}

static void run(fcl_test_mpi_env *e) {
  ring(e, FCL__TRANSPORT_MPI, "mpi");
  ring(e, FCL__TRANSPORT_STAGED, "staged");
  /* auto: device where the devices link, else staged (the ranks of a test share one node) */
  const bool linked = fcl_test_device_transport(e);
  if (linked) ring(e, FCL__TRANSPORT_DEVICE, "device");
  ring(e, FCL__TRANSPORT_AUTO, linked ? "device" : "staged");
}

int main(int argc, char **argv) { return fcl_test_mpi_main(&argc, &argv, NULL, run); }
