/* Contexts, queues and events: reference counting, wrapping a caller's context, queue flags,
 * barrier and marker, user events gating work, failed user events, completion callbacks,
 * profiling times, native kernels, host memory for transfers (fcl_host_alloc) and non-blocking
 * transfers that do not wait for the device. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fcl_test_gate.h"
#include "flowcl/opencl.h"

static atomic_int callback_calls;
static void on_done(fcl_event *e, int status, void *user) {
  (void)e;
  if (status == FCL_EVENT_COMPLETE && user == (void *)&callback_calls)
    atomic_fetch_add(&callback_calls, 1);
}

typedef struct {
  int value;
  int *target; /* a host pointer travels inside the block OpenCL copies */
} native_args;

static void native_double(void *args) {
  native_args *a = args;
  *a->target = a->value * 2;
}

/* runtime.h: a non-blocking transfer needs the host memory valid until its event, and does not
 * wait for the device, also with the caller's pageable memory (the CUDA driver stages pageable
 * memory after waiting for the stream): behind a queue held by a user event, writes and reads,
 * whole and rectangles (the read one of two slices), and reads into fcl_host_alloc memory,
 * return at once; once the event is set the values arrive, and host bytes around a rectangle read
 * are left as they were. Round 1 takes again the staging blocks that round 0 gave back. */
enum { ROW = 64, SLICE = 16 * ROW, N = 4 * SLICE, PW = 8, PH = 4, PP = 12 };
enum { RW = 10, RH = 5, RD = 2, RP = 16, RS = 8 * RP, RN = 3 * RS };

static void transfers_behind_a_gate(fcl_context *ctx, fcl_queue *held, fcl_mem *b, int round) {
  int *in = malloc(N * sizeof *in), *out = malloc(N * sizeof *out), *want = malloc(N * sizeof *in);
  int *patch = malloc(PP * (PH + 1) * sizeof *patch), *part = malloc(RN * sizeof *part);
  fcl_test_gate *gate = fcl_test_gate_hold(ctx, held, 1.0, FCL_EVENT_COMPLETE);
  if (in && out && want && patch && part && gate) {
    for (int i = 0; i < N; ++i) want[i] = in[i] = 3 * i + 1 + 1000000 * round;
    for (int i = 0; i < PP * (PH + 1); ++i) patch[i] = 100000 + i - 7 * round;
    for (int i = 0; i < RN; ++i) part[i] = -7 - round;
    /* the patch's rows at host (2 ints, 1 row), pitch PP ints, into b at (16 ints, row 3) */
    const fcl_rect pr = {.src_origin = {2 * sizeof(int), 1, 0},
                         .dst_origin = {16 * sizeof(int), 3, 0},
                         .region = {PW * sizeof(int), PH, 1},
                         .src_row_pitch = PP * sizeof(int),
                         .dst_row_pitch = ROW * sizeof(int)};
    for (int y = 0; y < PH; ++y)
      for (int x = 0; x < PW; ++x) want[(3 + y) * ROW + 16 + x] = patch[(1 + y) * PP + 2 + x];
    /* b at (8 ints, row 2, slice 1), RW x RH x RD ints, into part at (3 ints, row 2, slice 1),
     * pitches RP and RS ints */
    const fcl_rect rr = {.src_origin = {8 * sizeof(int), 2, 1},
                         .dst_origin = {3 * sizeof(int), 2, 1},
                         .region = {RW * sizeof(int), RH, RD},
                         .src_row_pitch = ROW * sizeof(int),
                         .src_slice_pitch = SLICE * sizeof(int),
                         .dst_row_pitch = RP * sizeof(int),
                         .dst_slice_pitch = RS * sizeof(int)};
    fcl_event *ev[5] = {NULL, NULL, NULL, NULL, NULL};
    int *lent = NULL; /* fcl_host_alloc's memory: read without staging */
    CHECK_OK(fcl_host_alloc(ctx, N * sizeof *lent, (void **)&lent));
    CHECK_OK(fcl_mem_write(held, b, 0, N * sizeof *in, in, FCL_NON_BLOCKING, 0, NULL, &ev[0]));
    CHECK_OK(fcl_mem_write_rect(held, b, patch, &pr, FCL_NON_BLOCKING, 0, NULL, &ev[1]));
    CHECK_OK(fcl_mem_read(held, b, 0, N * sizeof *out, out, FCL_NON_BLOCKING, 0, NULL, &ev[2]));
    CHECK_OK(fcl_mem_read_rect(held, b, part, &rr, FCL_NON_BLOCKING, 0, NULL, &ev[3]));
    if (lent)
      CHECK_OK(fcl_mem_read(held, b, 0, N * sizeof *lent, lent, FCL_NON_BLOCKING, 0, NULL, &ev[4]));
    CHECKF(!fcl_test_gate_opened(gate),
           "round %d: a non-blocking transfer of pageable memory waited for a queue held by a "
           "user event",
           round);
    CHECK_OK(fcl_events_wait(lent ? 5 : 4, ev));
    int bad = 0, around = 0;
    for (int i = 0; i < N; ++i) bad += (out[i] != want[i]) + (lent && lent[i] != want[i]);
    for (int z = 0; z < RN / RS; ++z)
      for (int y = 0; y < RS / RP; ++y)
        for (int x = 0; x < RP; ++x) {
          const int v = part[z * RS + y * RP + x];
          if (z >= 1 && z < 1 + RD && y >= 2 && y < 2 + RH && x >= 3 && x < 3 + RW)
            bad += v != want[z * SLICE + y * ROW + 8 + x - 3];
          else
            around += v != -7 - round;
        }
    CHECKF(bad == 0 && around == 0,
           "round %d: non-blocking transfers of pageable memory: %d wrong values, %d host values "
           "around a rectangle overwritten",
           round, bad, around);
    for (int i = 0; i < 5; ++i) fcl_event_release(&ev[i]);
    fcl_host_free(ctx, lent);
  }
  CHECK(gate != NULL);
  fcl_test_gate_join(&gate);
  CHECK_OK(fcl_queue_finish(held));
  free(in);
  free(out);
  free(want);
  free(patch);
  free(part);
}

static void check_pageable_transfers_behind_a_gate(fcl_context *ctx) {
  fcl_queue *held = NULL;
  fcl_mem *b = NULL;
  CHECK_OK(fcl_queue_create(ctx, NULL, 0, &held));
  CHECK_OK(fcl_mem_create(ctx, FCL_MEM_DEVICE, N * sizeof(int), NULL, &b));
  for (int round = 0; round < 2 && held && b; ++round) transfers_behind_a_gate(ctx, held, b, round);
  fcl_mem_release(&b);
  fcl_queue_release(&held);
}

static void check_device(const fcl_device_entry *e, void *user) {
  (void)user;
  atomic_store(&callback_calls, 0);
  fcl_context *ctx = NULL, *wrapped = NULL;
  CHECK_OK(fcl_context_create(1, &e->device, &ctx));
  if (!ctx) return;
  CHECK(fcl_context_num_devices(ctx) == 1 && fcl_context_device(ctx, 0) == e->device);
  CHECK(fcl_context_device(ctx, 1) == NULL);
  /* the native objects in and out are OpenCL's (flowcl/opencl.h) */
  const bool on_opencl = !strcmp(fcl_device_backend(e->device), "opencl");
  if (on_opencl) { /* wrapping leaves the caller's reference alone */
    cl_uint refs_before = 0, refs_after = 0;
    clGetContextInfo(fcl_context_cl(ctx), CL_CONTEXT_REFERENCE_COUNT, sizeof refs_before,
                     &refs_before, NULL);
    CHECK_OK(fcl_context_wrap(fcl_context_cl(ctx), &wrapped));
    fcl_context_release(&wrapped);
    CHECK(wrapped == NULL);
    clGetContextInfo(fcl_context_cl(ctx), CL_CONTEXT_REFERENCE_COUNT, sizeof refs_after,
                     &refs_after, NULL);
    CHECK(refs_before == refs_after);
  }
  fcl_context *extra = fcl_context_retain(ctx);
  fcl_context_release(&extra);
  CHECK(extra == NULL && (!on_opencl || fcl_context_cl(ctx) != NULL));
  fcl_context *by_type = NULL;
  CHECK_OK(fcl_context_create_from_type(e->platform, FCL_DEVICE_ALL, &by_type));
  CHECK(fcl_context_num_devices(by_type) >= 1);
  fcl_context_release(&by_type);
  CHECK_STATUS(fcl_context_create(0, &e->device, &extra), FCL_ERR_INVALID_ARGUMENT,
               "argument 1 (num_devices)");
  fcl_device *no_device[2] = {e->device, NULL};
  CHECK_STATUS(fcl_context_create(2, no_device, &extra), FCL_ERR_INVALID_ARGUMENT,
               "device 1 is NULL");
  /* The context of one type of the platform's devices: the device itself is one of them. */
  fcl_device_info di;
  CHECK_OK(fcl_device_get_info(e->device, &di));
  CHECK_OK(fcl_context_create_from_type(e->platform, di.type, &by_type));
  bool found = false;
  for (unsigned i = 0; i < fcl_context_num_devices(by_type); ++i)
    found = found || fcl_context_device(by_type, i) == e->device;
  CHECK(found);
  fcl_context_release(&by_type);
  if (!(di.type & FCL_DEVICE_CUSTOM))
    CHECK_STATUS(fcl_context_create_from_type(e->platform, FCL_DEVICE_CUSTOM, &by_type),
                 FCL_ERR_NOT_FOUND, "no CUSTOM device");

  fcl_device_info d;
  CHECK_OK(fcl_device_get_info(e->device, &d));
  fcl_queue *q = NULL, *ooo = NULL;
  CHECK_OK(fcl_queue_create(ctx, NULL, FCL_QUEUE_PROFILING, &q));
  CHECK_STATUS(fcl_queue_create(ctx, NULL, 1u << 7, &ooo), FCL_ERR_INVALID_ARGUMENT, "flags");
  if (d.queue_out_of_order) {
    CHECK_OK(fcl_queue_create(ctx, e->device, FCL_QUEUE_OUT_OF_ORDER, &ooo));
    cl_command_queue_properties props = 0;
    clGetCommandQueueInfo(fcl_queue_cl(ooo), CL_QUEUE_PROPERTIES, sizeof props, &props, NULL);
    CHECK(props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    CHECK(fcl_queue_flags(ooo) == FCL_QUEUE_OUT_OF_ORDER);
  } else {
    CHECK_STATUS(fcl_queue_create(ctx, e->device, FCL_QUEUE_OUT_OF_ORDER, &ooo),
                 FCL_ERR_NOT_SUPPORTED, "out-of-order");
  }
  fcl_device *qd = NULL;
  CHECK_OK(fcl_queue_device(q, &qd));
  CHECK(qd == e->device);
  fcl_queue *qwrapped = NULL, *again = NULL;
  if (on_opencl) { /* a wrapped queue: the same queue, its flags read back, retained by it */
    CHECK_OK(fcl_queue_wrap(ctx, fcl_queue_cl(q), &qwrapped));
    CHECK(fcl_queue_cl(qwrapped) == fcl_queue_cl(q));
    CHECK(fcl_queue_flags(qwrapped) == FCL_QUEUE_PROFILING);
    cl_uint refs = 0;
    clGetCommandQueueInfo(fcl_queue_cl(q), CL_QUEUE_REFERENCE_COUNT, sizeof refs, &refs, NULL);
    CHECK(refs == 2);
    CHECK_OK(fcl_queue_device(qwrapped, &qd));
    CHECK(qd == e->device);
    fcl_queue_release(&qwrapped);
    CHECK(qwrapped == NULL);
    clGetCommandQueueInfo(fcl_queue_cl(q), CL_QUEUE_REFERENCE_COUNT, sizeof refs, &refs, NULL);
    CHECK(refs == 1);
    CHECK_STATUS(fcl_queue_wrap(ctx, NULL, &qwrapped), FCL_ERR_INVALID_ARGUMENT, "argument 2");
  }
  again = fcl_queue_retain(q);
  CHECK(again == q && fcl_queue_flags(q) == FCL_QUEUE_PROFILING);
  fcl_queue_release(&again);
  CHECK(again == NULL);

  /* A user event holds back a marker until it is completed. */
  fcl_event *gate = NULL, *marker = NULL, *barrier = NULL;
  CHECK_OK(fcl_user_event_create(ctx, &gate));
  CHECK_OK(fcl_queue_marker(q, 1, &gate, &marker));
  CHECK_OK(fcl_event_on_complete(marker, on_done, &callback_calls));
  CHECK_OK(fcl_queue_flush(q));
  int st = FCL_EVENT_COMPLETE;
  CHECK_OK(fcl_event_status(marker, &st));
  CHECK(st > FCL_EVENT_COMPLETE); /* queued, submitted or running: it cannot be complete yet */
  CHECK_OK(fcl_event_status(gate, &st));
  CHECK(st == FCL_EVENT_SUBMITTED);
  CHECK(strcmp(fcl_event_status_name(FCL_EVENT_SUBMITTED), "submitted") == 0);
  CHECK(strcmp(fcl_event_status_name(-5), "error") == 0);
  CHECK_OK(fcl_user_event_complete(gate));
  CHECK_OK(fcl_queue_barrier(q, 0, NULL, &barrier));
  CHECK_OK(fcl_events_wait(1, &barrier));
  CHECK_OK(fcl_event_status(marker, &st));
  CHECK(st == FCL_EVENT_COMPLETE);
  CHECK_OK(fcl_queue_finish(q));
  /* Callbacks may run on a driver thread after the status changes: wait for it. */
  for (int i = 0; i < 1000 && atomic_load(&callback_calls) == 0; ++i) {
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  CHECK(atomic_load(&callback_calls) == 1);

  /* Profiling times of a completed command are ordered. */
  fcl_event_times t;
  CHECK_OK(fcl_event_profile(barrier, &t));
  CHECK(t.queued_ns <= t.submit_ns && t.submit_ns <= t.start_ns && t.start_ns <= t.end_ns);
  fcl_event_release(&marker);
  fcl_event_release(&barrier);
  fcl_event_release(&gate);

  /* A user event put in an error state: waiting on it reports the error and its code. */
  fcl_event *bad = NULL;
  CHECK_OK(fcl_user_event_create(ctx, &bad));
  CHECK_STATUS(fcl_user_event_fail(bad, 5), FCL_ERR_INVALID_ARGUMENT, "negative");
  CHECK_OK(fcl_user_event_fail(bad, -1000));
  CHECK_STATUS(fcl_events_wait(1, &bad), on_opencl ? FCL_ERR_OPENCL : FCL_ERR_CUDA, "event 0 of 1");
  CHECK(fcl_last_native_error() == -1000);
  fcl_event_release(&bad);

  /* Profiling needs a profiling queue. */
  fcl_queue *plain = NULL;
  fcl_event *m2 = NULL;
  CHECK_OK(fcl_queue_create(ctx, NULL, 0, &plain));
  CHECK_OK(fcl_queue_marker(plain, 0, NULL, &m2));
  CHECK_OK(fcl_queue_finish(plain));
  CHECK_STATUS(fcl_event_profile(m2, &t), FCL_ERR_NOT_SUPPORTED, "FCL_QUEUE_PROFILING");
  fcl_event_release(&m2);

  /* Events are reference counted: the command's event outlives one release of two. */
  fcl_event *m3 = NULL;
  CHECK_OK(fcl_queue_marker(plain, 0, NULL, &m3));
  fcl_event *also = fcl_event_retain(m3);
  CHECK(also == m3 && fcl_event_retain(NULL) == NULL);
  fcl_event_release(&also);
  CHECK(also == NULL);
  CHECK_OK(fcl_events_wait(1, &m3));
  if (on_opencl) { /* OpenCL's event in and out: the wrapped one is the same command */
    fcl_event *ewrapped = NULL;
    CHECK(fcl_event_cl(m3) != NULL && fcl_event_cl(NULL) == NULL);
    CHECK_OK(fcl_event_wrap(fcl_event_cl(m3), &ewrapped));
    CHECK(ewrapped != m3 && fcl_event_cl(ewrapped) == fcl_event_cl(m3));
    CHECK_OK(fcl_event_status(ewrapped, &st));
    CHECK(st == FCL_EVENT_COMPLETE);
    fcl_event_release(&ewrapped);
    CHECK_STATUS(fcl_event_wrap(NULL, &ewrapped), FCL_ERR_INVALID_ARGUMENT, "argument 1");
  }
  /* A wait list is checked: a NULL event in it is named, not handed to the device. */
  fcl_event *holes[2] = {m3, NULL};
  CHECK_STATUS(fcl_queue_marker(plain, 2, holes, NULL), FCL_ERR_INVALID_ARGUMENT,
               "event 1 of 2 is NULL");
  CHECK_STATUS(fcl_events_wait(2, holes), FCL_ERR_INVALID_ARGUMENT, "event 1 of 2 is NULL");
  CHECK_STATUS(fcl_queue_barrier(plain, 1, NULL, NULL), FCL_ERR_INVALID_ARGUMENT,
               "must not be NULL");
  fcl_event_release(&m3);
  fcl_event_release(&m3); /* NULL is accepted */

  /* Fresh memory made to exist on the device now. */
  fcl_mem *fresh = NULL;
  CHECK_OK(fcl_mem_create(ctx, FCL_MEM_DEVICE, 1 << 16, NULL, &fresh));
  CHECK_OK(fcl_mem_commit(plain, fresh));
  CHECK_STATUS(fcl_mem_commit(plain, NULL), FCL_ERR_INVALID_ARGUMENT, "argument 2");
  fcl_mem_release(&fresh);

  /* Host memory for transfers (fcl_host_alloc): arguments named; a non-blocking read into it
   * and a write from it carry the values; freed memory comes back for the next request. */
  void *h = NULL, *h2 = NULL;
  CHECK_STATUS(fcl_host_alloc(NULL, 64, &h), FCL_ERR_INVALID_ARGUMENT, "argument 1");
  CHECK_STATUS(fcl_host_alloc(ctx, 0, &h), FCL_ERR_INVALID_ARGUMENT, "argument 2 (bytes)");
  CHECK_STATUS(fcl_host_alloc(ctx, 64, NULL), FCL_ERR_INVALID_ARGUMENT, "argument 3");
  CHECK_OK(fcl_host_alloc(ctx, 4096 * sizeof(int), &h));
  fcl_mem *via = NULL;
  CHECK_OK(fcl_mem_create(ctx, FCL_MEM_DEVICE, 4096 * sizeof(int), NULL, &via));
  if (h && via) {
    int *hi = h, wrong = 0;
    for (int i = 0; i < 4096; ++i) hi[i] = 5 * i - 3;
    fcl_event *done = NULL;
    CHECK_OK(fcl_mem_write(plain, via, 0, 4096 * sizeof(int), h, FCL_NON_BLOCKING, 0, NULL, &done));
    CHECK_OK(fcl_events_wait(1, &done));
    fcl_event_release(&done);
    for (int i = 0; i < 4096; ++i) hi[i] = 0;
    CHECK_OK(fcl_mem_read(plain, via, 0, 4096 * sizeof(int), h, FCL_NON_BLOCKING, 0, NULL, &done));
    CHECK_OK(fcl_events_wait(1, &done));
    fcl_event_release(&done);
    for (int i = 0; i < 4096; ++i) wrong += hi[i] != 5 * i - 3;
    CHECKF(!wrong, "fcl_host_alloc memory: %d of 4096 values wrong after a write and a read",
           wrong);
  }
  fcl_mem_release(&via);
  fcl_host_free(ctx, h);
  CHECK_OK(fcl_host_alloc(ctx, 4096 * sizeof(int), &h2));
  fcl_host_free(ctx, h2);
  fcl_host_free(ctx, NULL); /* accepted */

  /* Native kernels where the device has them; a clear refusal otherwise. */
  int result = 0;
  native_args args = {21, &result};
  if (d.native_kernels) {
    CHECK_OK(fcl_queue_enqueue_native(plain, native_double, &args, sizeof args, 0, NULL, NULL));
    CHECK_OK(fcl_queue_finish(plain));
    CHECK(result == 42);
  } else if (on_opencl) {
    CHECK_STATUS(fcl_queue_enqueue_native(plain, native_double, &args, sizeof args, 0, NULL, NULL),
                 FCL_ERR_NOT_SUPPORTED, "not supported by this device");
  } else { /* flowcl/opencl.h's */
    CHECK_STATUS(fcl_queue_enqueue_native(plain, native_double, &args, sizeof args, 0, NULL, NULL),
                 FCL_ERR_INVALID_ARGUMENT, "not an OpenCL queue");
  }
  fcl_queue_release(&plain);
  fcl_queue_release(&q);
  fcl_queue_release(&ooo);
  check_pageable_transfers_behind_a_gate(ctx);
  fcl_context_release(&ctx);
  CHECK(ctx == NULL);
  fcl_context_release(&ctx); /* NULL is accepted */
}

int main(void) { return fcl_test_run_on_devices(check_device, NULL); }
