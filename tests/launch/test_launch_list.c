/* A list mixing copies (linear and rectangular), kernels with a shared parameter and a host
 * step, against the host-computed result; parameter unions and clashes; flattening; the empty
 * list; the three rectangular copies chained (host to device, device to device, device to
 * host) against the host's own rectangle. */
#include <string.h>

#include "fcl_test.h"

static const char *source =
    "FCL_KERNEL void scale(FCL_GLOBAL float *y, const float a) { y[get_global_id(0)] *= a; }\n"
    "FCL_KERNEL void shift(FCL_GLOBAL float *y, const int a) { y[get_global_id(0)] += a; }\n";

enum { N = 64, ROWS = 8, COLS = 8 };

typedef struct {
  const float *seen; /* what the device gave back before the host step */
  float *next;       /* what the host step prepares for the device */
  int calls, bad;
} host_state;

static fcl_status host_step(void *user, fcl_queue *q) {
  host_state *s = user;
  (void)q;
  ++s->calls;
  for (int i = 0; i < N; ++i) {
    s->bad += s->seen[i] != 2.0f * (float)i; /* the copy before this step has completed */
    s->next[i] = s->seen[i] + 1.0f;
  }
  return FCL_OK;
}

/* An enqueuing host step: copies the buffer user[0] into user[1] on the queue. */
static fcl_status enqueue_copy(void *user, fcl_queue *q) {
  fcl_mem **b = user;
  return fcl_mem_copy(q, b[0], 0, b[1], 0, N * sizeof(float), 0, NULL, NULL);
}

static fcl_status failing_step(void *user, fcl_queue *q) {
  (void)user;
  (void)q;
  return FCL_ERR_MPI;
}

static void check_device(const fcl_device_entry *d, void *user) {
  (void)user;
  fcl_context *ctx = NULL;
  fcl_program *prog = NULL;
  fcl_queue *q = NULL;
  CHECK_OK(fcl_context_create(1, &d->device, &ctx));
  CHECK_OK(fcl_queue_create(ctx, NULL, 0, &q));
  CHECK_OK(fcl_program_create_source(ctx, source, "list test", &prog));
  CHECK_OK(fcl_program_build(prog, NULL));
  if (!q || !prog) return;
  float h[N], seen[N], next[N], final[N], block[3][4];
  for (int i = 0; i < N; ++i) h[i] = (float)i;
  memset(final, 0, sizeof final);
  fcl_mem *b = NULL;
  CHECK_OK(fcl_mem_create(ctx, FCL_MEM_DEVICE, sizeof h, NULL, &b));
  fcl_mem *b2 = NULL;
  CHECK_OK(fcl_mem_create(ctx, FCL_MEM_DEVICE, sizeof h, NULL, &b2));
  host_state hs = {seen, next, 0, 0};
  fcl_param_spec pa = {"a", 1, FCL_TYPE_F32};
  fcl_arg on_b = fcl_arg_buffer(0, b);
  fcl_launch_config cfg = {.work_dim = 1, .global = {N}};
  fcl_launcher *list = NULL, *step = NULL;
  CHECK_OK(fcl_launcher_create_list("pipeline", &list));
  CHECK_OK(fcl_launcher_create_copy_h2d("upload", h, b, 0, sizeof h, &step));
  CHECK_OK(fcl_launcher_list_push(list, step));
  CHECK_OK(fcl_launcher_create_kernel(prog, "scale1", "scale", 1, &on_b, 1, &pa, &cfg, &step));
  CHECK_OK(fcl_launcher_list_push(list, step));
  CHECK_OK(fcl_launcher_create_copy_d2h("download", b, 0, seen, sizeof seen, &step));
  CHECK_OK(fcl_launcher_list_push(list, step));
  CHECK_OK(fcl_launcher_create_host("host", host_step, &hs, &step));
  CHECK_OK(fcl_launcher_list_push(list, step));
  CHECK_OK(fcl_launcher_list_push(list, NULL)); /* ignored */
  CHECK_OK(fcl_launcher_create_copy_h2d("upload2", next, b, 0, sizeof next, &step));
  CHECK_OK(fcl_launcher_list_push(list, step));
  /* A sub-list, flattened into the list: scale again (same parameter) and copy to b2. */
  fcl_launcher *sub = NULL;
  CHECK_OK(fcl_launcher_create_list("tail", &sub));
  CHECK_OK(fcl_launcher_create_kernel(prog, "scale2", "scale", 1, &on_b, 1, &pa, &cfg, &step));
  CHECK_OK(fcl_launcher_list_push(sub, step));
  CHECK_OK(fcl_launcher_create_copy_d2d("mirror", b, 0, b2, 0, sizeof h, &step));
  CHECK_OK(fcl_launcher_list_push(sub, step));
  CHECK_OK(fcl_launcher_list_push(list, sub));
  /* A rectangle of b2 seen as 8x8: rows 2..4, columns 3..6. */
  fcl_rect r = {.src_origin = {3 * sizeof(float), 2, 0},
                .dst_origin = {0, 0, 0},
                .region = {4 * sizeof(float), 3, 1},
                .src_row_pitch = COLS * sizeof(float),
                .dst_row_pitch = 4 * sizeof(float)};
  CHECK_OK(fcl_launcher_create_copy_rect_d2h("corner", b2, block, &r, &step));
  CHECK_OK(fcl_launcher_list_push(list, step));
  CHECK_OK(fcl_launcher_create_copy_d2h("result", b2, 0, final, sizeof final, &step));
  CHECK_OK(fcl_launcher_list_push(list, step));
  CHECK(fcl_launcher_list_size(list) == 9);

  /* One parameter for the whole list; a clash of types is refused and changes nothing. */
  CHECK(fcl_launcher_num_params(list) == 1);
  fcl_param_spec pi = {"a", 1, FCL_TYPE_I32};
  CHECK_OK(fcl_launcher_create_kernel(prog, "shift", "shift", 1, &on_b, 1, &pi, &cfg, &step));
  CHECK_STATUS(fcl_launcher_list_push(list, step), FCL_ERR_INVALID_ARGUMENT,
               "parameter 'a' is int here but float");
  CHECK(fcl_launcher_list_size(list) == 9 && fcl_launcher_num_params(list) == 1);
  fcl_launcher_destroy(&step);

  fcl_param_set *p = NULL;
  CHECK_OK(fcl_param_set_create(list, &p));
  CHECK_OK(fcl_param_set_f32(p, "a", 2.0f));
  fcl_event *done = NULL;
  CHECK_OK(fcl_launcher_call(list, q, p, 0, NULL, &done));
  CHECK_OK(fcl_events_wait(1, &done));
  fcl_event_release(&done);
  CHECK(hs.calls == 1 && hs.bad == 0);
  int bad = 0;
  for (int i = 0; i < N; ++i) bad += final[i] != (2.0f * (float)i + 1.0f) * 2.0f;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) bad += block[i][j] != final[(2 + i) * COLS + 3 + j];
  CHECKF(bad == 0, "%d wrong values after the list", bad);
  /* The same list on an out-of-order queue: each step waits for the previous one. */
  fcl_device_info info;
  CHECK_OK(fcl_device_get_info(d->device, &info));
  if (info.queue_out_of_order) {
    fcl_queue *ooo = NULL;
    CHECK_OK(fcl_queue_create(ctx, NULL, FCL_QUEUE_OUT_OF_ORDER, &ooo));
    for (int i = 0; i < N; ++i) h[i] = (float)i;
    memset(final, 0, sizeof final);
    hs.calls = hs.bad = 0;
    CHECK_OK(fcl_launcher_call(list, ooo, p, 0, NULL, &done));
    CHECK_OK(fcl_events_wait(1, &done));
    fcl_event_release(&done);
    CHECK(hs.calls == 1 && hs.bad == 0);
    bad = 0;
    for (int i = 0; i < N; ++i) bad += final[i] != (2.0f * (float)i + 1.0f) * 2.0f;
    CHECKF(bad == 0, "%d wrong values after the list on an out-of-order queue", bad);
    fcl_queue_release(&ooo);
  }
  /* Without a queue, a list with copies is refused. */
  CHECK_STATUS(fcl_launcher_call(list, NULL, p, 0, NULL, NULL), FCL_ERR_INVALID_ARGUMENT,
               "needs the list to be called with a queue");

  /* A failing host step stops the call with its status. */
  fcl_launcher *stop = NULL;
  CHECK_OK(fcl_launcher_create_host("exchange", failing_step, NULL, &stop));
  CHECK_OK(fcl_launcher_list_push(list, stop));
  CHECK(fcl_launcher_call(list, q, p, 0, NULL, NULL) == FCL_ERR_MPI);
  (void)fcl_queue_finish(q); /* may report the failed step's command: nothing to check */
  fcl_clear_error();

  /* An enqueuing host step on an in-order queue: no wait for the queue before it (a plain host
   * step waits: one host sync), and its commands still follow the kernel before it. */
  for (int plain = 0; plain < 2; ++plain) {
    fcl_launcher *l2 = NULL, *k2 = NULL, *h2 = NULL;
    fcl_mem *pair[2] = {b, b2};
    CHECK_OK(fcl_launcher_create_list("enqueue", &l2));
    CHECK_OK(fcl_launcher_create_kernel(prog, "scale3", "scale", 1, &on_b, 1, &pa, &cfg, &k2));
    CHECK_OK(fcl_launcher_list_push(l2, k2));
    CHECK_OK(plain ? fcl_launcher_create_host("copy", enqueue_copy, pair, &h2)
                   : fcl_launcher_create_host_enqueue("copy", enqueue_copy, pair, &h2));
    CHECK_OK(fcl_launcher_list_push(l2, h2));
    for (int i = 0; i < N; ++i) h[i] = (float)i;
    CHECK_OK(fcl_mem_write(q, b, 0, sizeof h, h, FCL_BLOCKING, 0, NULL, NULL));
    fcl_param_set *p2 = NULL;
    CHECK_OK(fcl_param_set_create(l2, &p2));
    CHECK_OK(fcl_param_set_f32(p2, "a", 2.0f));
    /* the enqueuing step's list is called behind a closed gate: it must return without waiting
     * (a wait would never end); the plain one waits for the kernel (unless already done) */
    fcl_event *gate = NULL;
    if (!plain) {
      CHECK_OK(fcl_user_event_create(ctx, &gate));
      CHECK_OK(fcl_queue_barrier(q, 1, &gate, NULL));
    }
    const uint64_t s0 = fcl_count_host_syncs();
    fcl_event *ldone = NULL; /* as the last step, its event is a marker after its commands */
    CHECK_OK(fcl_launcher_call(l2, q, p2, 0, NULL, plain ? NULL : &ldone));
    const uint64_t syncs = fcl_count_host_syncs() - s0;
    fcl_param_set_destroy(&p2);
    if (gate) {
      CHECKF(ldone != NULL, "an enqueuing last step gave no event");
      int status = FCL_EVENT_COMPLETE;
      if (ldone) CHECK_OK(fcl_event_status(ldone, &status));
      CHECKF(status != FCL_EVENT_COMPLETE, "the list's event completed behind a closed gate");
      CHECK_OK(fcl_user_event_complete(gate));
      if (ldone) CHECK_OK(fcl_events_wait(1, &ldone));
      if (ldone) fcl_event_release(&ldone);
      fcl_event_release(&gate);
    }
    CHECKF(plain ? syncs <= 1 : syncs == 0, "%s host step: %llu host syncs in the list",
           plain ? "a plain" : "an enqueuing", (unsigned long long)syncs);
    CHECK_OK(fcl_mem_read(q, b2, 0, sizeof final, final, FCL_BLOCKING, 0, NULL, NULL));
    bad = 0;
    for (int i = 0; i < N; ++i) bad += final[i] != 2.0f * (float)i;
    CHECKF(bad == 0, "enqueuing host step: %d values copied before the kernel ran", bad);
    fcl_launcher_destroy(&l2);
  }

  /* The empty list waits for the wait list and returns no event. */
  fcl_launcher *empty = NULL;
  fcl_event *gate = NULL, *ev = (fcl_event *)1;
  CHECK_OK(fcl_launcher_create_list("empty", &empty));
  CHECK_OK(fcl_user_event_create(ctx, &gate));
  CHECK_OK(fcl_user_event_complete(gate));
  CHECK_OK(fcl_launcher_call(empty, q, NULL, 1, &gate, &ev));
  CHECK(ev == NULL);
  fcl_event_release(&gate);
  fcl_launcher_destroy(&empty);
  fcl_param_set_destroy(&p);
  fcl_launcher_destroy(&list);
  CHECK(list == NULL);
  fcl_mem_release(&b);
  fcl_mem_release(&b2);
  fcl_queue_release(&q);
  fcl_program_release(&prog);
  fcl_context_release(&ctx);
}

/* rows 1..3, columns 2..5 of an 8x8 host matrix -> the corner of a (zeroed) buffer a -> rows
 * 5..7, columns 4..7 of a zeroed buffer b -> back to the host. */
static void check_rects(const fcl_device_entry *d, void *user) {
  (void)user;
  fcl_context *ctx = NULL;
  fcl_queue *q = NULL;
  CHECK_OK(fcl_context_create(1, &d->device, &ctx));
  CHECK_OK(fcl_queue_create(ctx, NULL, 0, &q));
  if (!q) return;
  float h[N], zero[N] = {0}, back[N];
  for (int i = 0; i < N; ++i) h[i] = (float)i + 0.5f;
  fcl_mem *a = NULL;
  CHECK_OK(fcl_mem_create(ctx, FCL_MEM_DEVICE, sizeof zero, zero, &a));
  fcl_mem *b = NULL;
  CHECK_OK(fcl_mem_create(ctx, FCL_MEM_DEVICE, sizeof zero, zero, &b));
  const size_t pitch = COLS * sizeof(float);
  fcl_rect in = {.src_origin = {2 * sizeof(float), 1, 0},
                 .region = {4 * sizeof(float), 3, 1},
                 .src_row_pitch = pitch,
                 .dst_row_pitch = pitch};
  fcl_rect move = {.src_origin = {0, 0, 0},
                   .dst_origin = {4 * sizeof(float), 5, 0},
                   .region = {4 * sizeof(float), 3, 1},
                   .src_row_pitch = pitch,
                   .dst_row_pitch = pitch};
  fcl_launcher *list = NULL, *step = NULL;
  CHECK_OK(fcl_launcher_create_list("rects", &list));
  CHECK(list && !strcmp(fcl_launcher_name(list), "rects"));
  CHECK_OK(fcl_launcher_create_copy_rect_h2d("in", h, a, &in, &step));
  CHECK_OK(fcl_launcher_list_push(list, step));
  CHECK_OK(fcl_launcher_create_copy_rect_d2d("move", a, b, &move, &step));
  CHECK_OK(fcl_launcher_list_push(list, step));
  CHECK_OK(fcl_launcher_create_copy_d2h("back", b, 0, back, sizeof back, &step));
  CHECK_OK(fcl_launcher_list_push(list, step));
  CHECK_OK(fcl_launcher_call(list, q, NULL, 0, NULL, NULL));
  CHECK_OK(fcl_queue_finish(q));
  int bad = 0;
  for (int r = 0; r < ROWS; ++r)
    for (int c = 0; c < COLS; ++c) {
      bool inside = r >= 5 && c >= 4;
      bad += back[r * COLS + c] != (inside ? h[(r - 4) * COLS + c - 2] : 0.0f);
    }
  CHECKF(bad == 0, "rectangular copies: %d of %d values wrong", bad, N);
  fcl_launcher_destroy(&list);
  fcl_mem_release(&a);
  fcl_mem_release(&b);
  fcl_queue_release(&q);
  fcl_context_release(&ctx);
}

static void check_all(const fcl_device_entry *d, void *user) {
  check_device(d, user);
  check_rects(d, user);
}

int main(void) { return fcl_test_run_on_devices(check_all, NULL); }
