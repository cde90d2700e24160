/* The runtime's and launchers' checks fire when the host runs ahead of the device (runtime.h,
 * launch.h): the device is held back by a user event that a second thread completes or fails
 * after a delay (fcl_test_gate.h), so each call under test runs before the work it checks.
 *   - fcl_events_wait: an event that ends in error while the host waits is reported by its
 *     index, with its code; the command behind the failed event does not run (OpenCL), or
 *     runs and its event and queue report the failure (CUDA);
 *   - fcl_event_profile of a command not yet run is FCL_ERR_NOT_SUPPORTED, its times once run;
 *   - a plain host step of a list runs only once the earlier steps have completed, and not at
 *     all when one of them failed (the call returns the failure);
 *   - fcl_kernel_capture refuses what it cannot capture: a program without source, a sampler
 *     argument, a file it cannot write;
 *   - the refusals with no test elsewhere: a work-size function for a launcher that is not a
 *     kernel launcher, a launcher parameter index out of range, an image over the device's
 *     limits or of a format it lacks, a tuning whose every choice fails (the default's reason in
 *     the message).
 * The parts that fail a user event run in processes of their own, each as its last command
 * (the argument names the part: late-failure, host-step, refusals): on NVIDIA's driver a
 * command behind a failed user event breaks every context of the process ("OpenCL context
 * error"), and every later command fails. On the CUDA backend the command behind a failed user
 * event runs (a stream cannot drop it) and its event, and waits on it, end in the failure;
 * kernel capture and images are OpenCL's (flowcl/opencl.h) and checked on OpenCL devices. */
#include <stdlib.h>
#include <string.h>

#include "fcl_test_gate.h"
#include "flowcl/opencl.h"

static const char *fill_source = /* the portable kernel vocabulary: every backend */
    "FCL_KERNEL void fill(FCL_GLOBAL int *x, const int v) { x[get_global_id(0)] = v; }\n";
static const char *sample_source =
    "__kernel void sample(__read_only image2d_t im, sampler_t s, __global float4 *out) {\n"
    "  out[0] = read_imagef(im, s, (int2)(0, 0));\n"
    "}\n";

enum { N = 1024 };

/* Whether the device under test is reached through OpenCL (else CUDA). */
static bool on_opencl;

/* The status a wait on a failed command returns: its backend's. */
static fcl_status backend_error(void) { return on_opencl ? FCL_ERR_OPENCL : FCL_ERR_CUDA; }

/* Set the buffer's N ints to 7 (blocking). */
static void reset(fcl_queue *q, fcl_mem *b) {
  int host[N];
  for (int i = 0; i < N; ++i) host[i] = 7;
  CHECK_OK(fcl_mem_write(q, b, 0, sizeof host, host, FCL_BLOCKING, 0, NULL, NULL));
}

/* The buffer's N ints all equal v. */
static bool all_equal(fcl_queue *q, fcl_mem *b, int v) {
  int host[N];
  if (fcl_mem_read(q, b, 0, sizeof host, host, FCL_BLOCKING, 0, NULL, NULL) != FCL_OK) return false;
  for (int i = 0; i < N; ++i)
    if (host[i] != v) return false;
  return true;
}

/* A write of v into b by the fill kernel on q after the wait list; its event in *ev. */
static void enqueue_fill(fcl_kernel *k, fcl_queue *q, fcl_mem *b, int v, unsigned nw,
                         fcl_event *const *w, fcl_event **ev) {
  size_t n = N;
  CHECK_OK(fcl_kernel_set_arg_buffer(k, 0, b));
  CHECK_OK(fcl_kernel_set_arg_i32(k, 1, v));
  CHECK_OK(fcl_kernel_enqueue(k, q, 1, &n, NULL, NULL, 0, nw, w, ev));
  CHECK_OK(fcl_queue_flush(q));
}

/* runtime.h: "an event that ended in error is reported by index"; "dependent commands do not
 * run" (OpenCL) or run and end in the failure (CUDA). The second of two events fails 0.3 s into
 * the wait. */
static void events_wait_reports_a_late_failure(fcl_context *ctx, fcl_queue *q, fcl_kernel *k,
                                               fcl_mem *b) {
  fcl_queue *held = NULL;
  CHECK_OK(fcl_queue_create(ctx, NULL, 0, &held));
  reset(q, b);
  fcl_event *ok = NULL, *bad = NULL;
  CHECK_OK(fcl_queue_marker(q, 0, NULL, &ok));
  fcl_test_gate *gate = fcl_test_gate_hold(ctx, NULL, 0.3, -1000);
  if (!gate || !held) return;
  fcl_event *g = fcl_test_gate_event(gate);
  enqueue_fill(k, held, b, 1, 1, &g, &bad);
  fcl_event *const both[2] = {ok, bad};
  CHECK_STATUS(fcl_events_wait(2, both), backend_error(), "event 1 of 2 ended in error");
  CHECKF(fcl_test_gate_opened(gate), "%s", "fcl_events_wait returned before the event failed");
  CHECKF(fcl_last_native_error() < 0, "native code %d, expected the event's negative status",
         fcl_last_native_error());
  int status = 0;
  if (bad) CHECK_OK(fcl_event_status(bad, &status));
  CHECKF(status < 0, "the failed command's event has status %d", status);
  if (on_opencl) {
    CHECKF(all_equal(q, b, 7), "%s", "the command behind the failed event wrote its buffer");
  } else { /* runtime.h: it runs, and a host wait on its queue reports the failure */
    CHECK_STATUS(fcl_queue_finish(held), FCL_ERR_CUDA, "ran after a user event that failed");
    CHECKF(all_equal(q, b, 1), "%s", "the command behind the failed event did not run");
  }
  fcl_test_gate_join(&gate);
  fcl_event_release(&ok);
  if (bad) fcl_event_release(&bad);
  fcl_queue_release(&held);
}

/* runtime.h: "Profiling times of a completed event of a profiling queue; FCL_ERR_NOT_SUPPORTED
 * otherwise": a command held back has none yet. */
static void profile_of_a_pending_command(fcl_context *ctx, fcl_kernel *k, fcl_mem *b) {
  fcl_queue *pq = NULL;
  CHECK_OK(fcl_queue_create(ctx, NULL, FCL_QUEUE_PROFILING, &pq));
  fcl_test_gate *gate = fcl_test_gate_hold(ctx, pq, 1.0, FCL_EVENT_COMPLETE);
  if (!gate || !pq) return;
  fcl_event *ev = NULL;
  enqueue_fill(k, pq, b, 2, 0, NULL, &ev);
  fcl_event_times t;
  CHECK_STATUS(fcl_event_profile(ev, &t), FCL_ERR_NOT_SUPPORTED, "not complete");
  CHECKF(!fcl_test_gate_opened(gate), "%s", "the gate opened before the profile was asked");
  CHECK_OK(fcl_events_wait(1, &ev));
  CHECK_OK(fcl_event_profile(ev, &t));
  CHECK(t.queued_ns <= t.submit_ns && t.submit_ns <= t.start_ns && t.start_ns <= t.end_ns);
  fcl_test_gate_join(&gate);
  fcl_event_release(&ev);
  fcl_queue_release(&pq);
}

/* What a host step saw: the buffer's values (read on a queue of its own, which the list's
 * queue does not order) and whether the gate had opened. */
typedef struct {
  fcl_queue *reader;
  fcl_mem *b;
  fcl_test_gate *gate;
  bool ran, saw_write, saw_open;
} step_view;

static fcl_status look(void *user, fcl_queue *q) {
  (void)q;
  step_view *v = user;
  v->ran = true;
  v->saw_open = fcl_test_gate_opened(v->gate);
  v->saw_write = all_equal(v->reader, v->b, 3);
  return FCL_OK;
}

/* launch.h: "A host step: fn(user, queue) runs on the calling thread once every earlier step
 * of the call has completed". The kernel before it waits for a gate that opens after 0.3 s, or
 * fails: then the call returns the failure and the step does not run. */
static void host_step_waits(fcl_context *ctx, fcl_queue *q, fcl_program *prog, fcl_mem *b) {
  for (int fails = 0; fails < 2; ++fails) {
    step_view v = {.reader = q, .b = b};
    fcl_queue *lq = NULL; /* the list's queue, fresh: a failed command may taint it */
    CHECK_OK(fcl_queue_create(ctx, NULL, 0, &lq));
    fcl_launcher *list = NULL, *kl = NULL, *hl = NULL;
    const fcl_arg args[2] = {fcl_arg_buffer(0, b), fcl_arg_i32(1, 3)};
    const fcl_launch_config cfg = {.work_dim = 1, .global = {N}};
    CHECK_OK(fcl_launcher_create_list("gated", &list));
    CHECK_OK(fcl_launcher_create_kernel(prog, "fill3", "fill", 2, args, 0, NULL, &cfg, &kl));
    CHECK_OK(fcl_launcher_list_push(list, kl));
    CHECK_OK(fcl_launcher_create_host("look", look, &v, &hl));
    CHECK_OK(fcl_launcher_list_push(list, hl));
    reset(q, b);
    v.gate = fcl_test_gate_hold(ctx, NULL, 0.3, fails ? -1001 : FCL_EVENT_COMPLETE);
    if (!v.gate || !list || !lq) return;
    fcl_event *const g = fcl_test_gate_event(v.gate);
    const fcl_status st = fcl_launcher_call(list, lq, NULL, 1, &g, NULL);
    if (fails) {
      CHECK_STATUS(st, backend_error(), "ended in error");
      CHECKF(!v.ran, "%s", "a host step ran after a failed step");
    } else {
      CHECK_OK(st);
      CHECKF(v.ran && v.saw_open && v.saw_write, "the host step ran %s the gate opened and saw %s",
             v.saw_open ? "after" : "before",
             v.saw_write ? "the kernel's values" : "the values from before the kernel");
    }
    fcl_test_gate_join(&v.gate);
    fcl_queue_finish(lq); /* may report the failed command: nothing to check */
    fcl_clear_error();
    fcl_launcher_destroy(&list);
    fcl_queue_release(&lq);
  }
}

/* runtime.h, fcl_kernel_capture: "a program without source or an image, sampler or queue
 * argument (FCL_ERR_NOT_SUPPORTED), a file that cannot be written (FCL_ERR_IO)". */
static void capture_refusals(fcl_context *ctx, fcl_queue *q, fcl_program *prog, fcl_mem *b,
                             fcl_device *device) {
  char *dir = fcl_test_temp_dir("checks-fire");
  if (!dir) return;
  char path[1024], nowhere[1024];
  snprintf(path, sizeof path, "%s/capture.c", dir);
  snprintf(nowhere, sizeof nowhere, "%s/no/such/dir/capture.c", dir);
  size_t n = N;
  fcl_kernel *k = NULL;
  CHECK_OK(fcl_kernel_create(prog, "fill", &k));
  CHECK_OK(fcl_kernel_set_arg_buffer(k, 0, b));
  CHECK_OK(fcl_kernel_set_arg_i32(k, 1, 5));
  CHECK_STATUS(fcl_kernel_capture(k, q, 1, &n, NULL, NULL, 0, nowhere), FCL_ERR_IO, nowhere);
  CHECK_OK(fcl_kernel_capture(k, q, 1, &n, NULL, NULL, 0, path)); /* the same, writable */
  fcl_kernel_destroy(&k);
  /* the program rebuilt from its binary has no source */
  const unsigned char *bin = NULL;
  size_t size = 0;
  fcl_program *from_binary = NULL;
  CHECK_OK(fcl_program_binary(prog, device, &bin, &size));
  CHECK_OK(fcl_program_create_binaries(ctx, 1, &device, &size, &bin, &from_binary));
  CHECK_OK(fcl_program_build(from_binary, NULL));
  CHECK_OK(fcl_kernel_create(from_binary, "fill", &k));
  if (k) {
    CHECK_OK(fcl_kernel_set_arg_buffer(k, 0, b));
    CHECK_OK(fcl_kernel_set_arg_i32(k, 1, 5));
    CHECK_STATUS(fcl_kernel_capture(k, q, 1, &n, NULL, NULL, 0, path), FCL_ERR_NOT_SUPPORTED,
                 "has no source");
  }
  fcl_kernel_destroy(&k);
  fcl_program_release(&from_binary);
  /* a sampler argument (where the device has images) */
  fcl_device_info info;
  CHECK_OK(fcl_device_get_info(device, &info));
  if (info.image_support) {
    const fcl_sampler_desc desc = {false, CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_NEAREST};
    const cl_image_format format = {CL_RGBA, CL_FLOAT};
    fcl_image *im = NULL;
    cl_sampler s = NULL;
    CHECK_OK(fcl_image_create(ctx, CL_MEM_READ_ONLY, format, 2, (size_t[]){4, 4, 1}, NULL, &im));
    CHECK_OK(fcl_sampler_create(ctx, &desc, &s));
    CHECK_OK(fcl_kernel_create(prog, "sample", &k));
    if (k && im && s) {
      CHECK_OK(fcl_kernel_set_arg_image(k, 0, fcl_image_mem(im)));
      CHECK_OK(fcl_kernel_set_arg_sampler(k, 1, s));
      CHECK_OK(fcl_kernel_set_arg_buffer(k, 2, b));
      CHECK_STATUS(fcl_kernel_capture(k, q, 1, (size_t[]){1}, NULL, NULL, 0, path),
                   FCL_ERR_NOT_SUPPORTED, "an image, a sampler or a queue");
    }
    fcl_kernel_destroy(&k);
    if (s) clReleaseSampler(s);
    fcl_image_release(&im);
  } else {
    fcl_test_skip_part(fcl_test_device_name(device), "capture of an image argument (no images)");
  }
  fcl_test_remove_dir(dir);
  free(dir);
}

static fcl_status sizes(void *user, const fcl_value *values, cl_uint *work_dim, size_t global[3],
                        size_t local[3]) {
  (void)user;
  (void)values;
  *work_dim = 1;
  global[0] = N;
  local[0] = 0;
  return FCL_OK;
}

static fcl_status nothing(void *user, fcl_queue *q) {
  (void)user;
  (void)q;
  return FCL_OK;
}

/* Every choice names an iname the kernel does not have. */
static fcl_status refuse(void *user, fcl_kbuilder *kb, const int64_t *choice) {
  (void)user;
  return fcl_kbuilder_split_iname(kb, "no_such_iname", choice[0], NULL, NULL);
}

/* launch.h: fcl_launcher_set_work_size_fn, "another launcher is FCL_ERR_INVALID_ARGUMENT";
 * fcl_launcher_param, "i out of range: FCL_ERR_INVALID_ARGUMENT"; image.h: "Sizes beyond the
 * device's image limits are an error naming the limit"; tune.h: fcl_tune "Fails when no choice
 * gives a valid variant, with the reason of the default's failure". */
static void other_refusals(fcl_context *ctx, fcl_queue *q, fcl_program *prog, fcl_device *device) {
  fcl_launcher *host = NULL, *kl = NULL;
  CHECK_OK(fcl_launcher_create_host("host", nothing, NULL, &host));
  CHECK_STATUS(fcl_launcher_set_work_size_fn(host, sizes, NULL, NULL), FCL_ERR_INVALID_ARGUMENT,
               "not a kernel launcher");
  fcl_launcher_destroy(&host);
  const fcl_arg args[1] = {fcl_arg_i32(1, 3)};
  const fcl_param_spec buffer = {"x", 0, FCL_TYPE_BUFFER};
  const fcl_launch_config cfg = {.queue = q, .work_dim = 1, .global = {N}};
  CHECK_OK(fcl_launcher_create_kernel(prog, "fill", "fill", 1, args, 1, &buffer, &cfg, &kl));
  const char *name = NULL;
  CHECK_OK(fcl_launcher_param(kl, 0, &name, NULL));
  CHECK_STATUS(fcl_launcher_param(kl, 1, &name, NULL), FCL_ERR_INVALID_ARGUMENT, "out of range");
  fcl_launcher_destroy(&kl);

  fcl_device_info info;
  CHECK_OK(fcl_device_get_info(device, &info));
  if (on_opencl && info.image_support) { /* images are OpenCL's (flowcl/opencl.h) */
    const cl_image_format format = {CL_R, CL_FLOAT};
    fcl_image *im = NULL;
    char limit[64];
    snprintf(limit, sizeof limit, "takes 1 to %zu", info.image2d_max_size[0]);
    CHECK_STATUS(fcl_image_create(ctx, CL_MEM_READ_WRITE, format, 2,
                                  (size_t[]){info.image2d_max_size[0] + 1, 1}, NULL, &im),
                 FCL_ERR_INVALID_ARGUMENT, limit);
    CHECK(im == NULL);
    /* image.h: "a format the context does not support for the flags and image type is
     * FCL_ERR_NOT_SUPPORTED naming the format": the first of these the device lacks */
    static const cl_image_format rare[] = {{CL_DEPTH, CL_UNORM_INT16},
                                           {CL_sRGBA, CL_UNORM_INT8},
                                           {CL_LUMINANCE, CL_SIGNED_INT32},
                                           {CL_RA, CL_HALF_FLOAT}};
    cl_image_format *have = NULL;
    size_t nhave = 0;
    CHECK_OK(fcl_image_supported_formats(ctx, CL_MEM_READ_WRITE, 2, &have, &nhave));
    int lacking = -1;
    for (int f = 0; f < 4 && lacking < 0; ++f) {
      bool supported = false;
      for (size_t h = 0; h < nhave; ++h)
        supported = supported ||
                    (have[h].image_channel_order == rare[f].image_channel_order &&
                     have[h].image_channel_data_type == rare[f].image_channel_data_type);
      if (!supported) lacking = f;
    }
    free(have);
    if (lacking >= 0) {
      char fname[64];
      fcl_image_format_name(rare[lacking], fname, sizeof fname);
      CHECK_STATUS(
          fcl_image_create(ctx, CL_MEM_READ_WRITE, rare[lacking], 2, (size_t[]){4, 4}, NULL, &im),
          FCL_ERR_NOT_SUPPORTED, fname);
      CHECK(im == NULL);
    } else {
      fcl_test_skip_part(fcl_test_device_name(device), "an unsupported image format (it has all)");
    }
  } else if (on_opencl) {
    fcl_test_skip_part(fcl_test_device_name(device), "the image limits (no images)");
  }

  fcl_kbuilder *kb = NULL;
  CHECK_OK(fcl_kbuilder_create("refused", &kb));
  CHECK_OK(fcl_kbuilder_add_param(kb, "n"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "y", FCL_FLOAT32, "n"));
  CHECK_OK(fcl_kbuilder_add_domain(kb, "{ [i]: 0 <= i < n }"));
  CHECK_OK(fcl_kbuilder_add_instructions(kb, "y[i] = 2 * y[i]"));
  static const int64_t tiles[] = {32, 64};
  const fcl_tune_axis axis = {"tile", 2, tiles};
  const int64_t n = N;
  const fcl_tune_options opt = {.effort = FCL_TUNE_ESTIMATE, .param_values = &n};
  fcl_tune_result r;
  const fcl_status st = kb ? fcl_tune(kb, 1, &axis, refuse, NULL, ctx, device, &opt, &r, NULL)
                           : FCL_ERR_INVALID_ARGUMENT;
  CHECKF(st != FCL_OK && fcl_test_contains(fcl_last_error(), "no valid variant") &&
             fcl_test_contains(fcl_last_error(), "no_such_iname"),
         "a tuning whose every choice fails: %s: %s", fcl_status_name(st), fcl_last_error());
  fcl_kbuilder_destroy(&kb);
}

/* What a part runs on. */
typedef struct {
  fcl_context *ctx;
  fcl_queue *q;
  fcl_program *prog;
  fcl_kernel *k;
  fcl_mem *b;
} kit;

static bool kit_open(fcl_device *device, kit *t) {
  *t = (kit){0};
  CHECK_OK(fcl_context_create(1, &device, &t->ctx));
  if (!t->ctx) return false;
  CHECK_OK(fcl_queue_create(t->ctx, NULL, 0, &t->q));
  char source[1024]; /* the image kernel only where images are: OpenCL's */
  snprintf(source, sizeof source, "%s%s", fill_source, on_opencl ? sample_source : "");
  CHECK_OK(fcl_program_create_source(t->ctx, source, "checks fire", &t->prog));
  CHECK_OK(fcl_program_build(t->prog, NULL));
  CHECK_OK(fcl_kernel_create(t->prog, "fill", &t->k));
  CHECK_OK(fcl_mem_create(t->ctx, FCL_MEM_DEVICE, N * sizeof(int), NULL, &t->b));
  return t->q && t->k && t->b;
}

static void kit_close(kit *t) {
  if (t->b) fcl_mem_release(&t->b);
  fcl_kernel_destroy(&t->k);
  fcl_program_release(&t->prog);
  fcl_queue_release(&t->q);
  fcl_context_release(&t->ctx);
}

static void check_device(const fcl_device_entry *e, void *user) {
  const char *part = user;
  on_opencl = !strcmp(fcl_device_backend(e->device), "opencl");
  kit t;
  if (kit_open(e->device, &t)) {
    if (!strcmp(part, "late-failure")) {
      events_wait_reports_a_late_failure(t.ctx, t.q, t.k, t.b);
    } else if (!strcmp(part, "host-step")) {
      host_step_waits(t.ctx, t.q, t.prog, t.b); /* its failing call last */
    } else {
      profile_of_a_pending_command(t.ctx, t.k, t.b);
      if (on_opencl) capture_refusals(t.ctx, t.q, t.prog, t.b, e->device);
      other_refusals(t.ctx, t.q, t.prog, e->device);
    }
  }
  kit_close(&t);
}

int main(int argc, char **argv) {
  if (argc != 2 || (strcmp(argv[1], "late-failure") && strcmp(argv[1], "host-step") &&
                    strcmp(argv[1], "refusals"))) {
    fprintf(stderr, "usage: %s late-failure | host-step | refusals\n", argv[0]);
    return 2;
  }
  return fcl_test_run_on_devices(check_device, argv[1]);
}
