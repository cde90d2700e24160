/* Statistics against the events' own profiling times; not blocking on pending launches;
 * bandwidth from bytes per launch; tracing of matching launches only; the sum of two
 * statistics (fcl_launch_stats_add). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fcl_test.h"
#include "flowcl/opencl.h"

static const char *source =
    "FCL_KERNEL void scale(FCL_GLOBAL float *y, const float a) { y[get_global_id(0)] *= a; }\n";

static char traced[16384];
static void capture(fcl_log_level level, const char *message, void *user) {
  (void)level;
  (void)user;
  size_t used = strlen(traced);
  snprintf(traced + used, sizeof traced - used, "%s\n", message);
}

static void check_device(const fcl_device_entry *d, void *user) {
  (void)user;
  enum { N = 1 << 16, CALLS = 10 };
  fcl_context *ctx = NULL;
  fcl_program *prog = NULL;
  fcl_queue *q = NULL;
  CHECK_OK(fcl_context_create(1, &d->device, &ctx));
  CHECK_OK(fcl_queue_create(ctx, NULL, FCL_QUEUE_PROFILING, &q));
  CHECK_OK(fcl_program_create_source(ctx, source, "stats test", &prog));
  CHECK_OK(fcl_program_build(prog, NULL));
  if (!q || !prog) return;
  fcl_mem *b = NULL;
  CHECK_OK(fcl_mem_create(ctx, FCL_MEM_DEVICE, N * sizeof(float), NULL, &b));
  fcl_arg args[2] = {fcl_arg_buffer(0, b), fcl_arg_f32(1, 1.0f)};
  fcl_launch_config cfg = {
      .queue = q, .work_dim = 1, .global = {N}, .bytes_per_launch = 2 * N * sizeof(float)};
  traced[0] = '\0';
  fcl_log_set_handler(capture, NULL);
  setenv("FLOWCL_TRACE", "adv*", 1);
  fcl_launcher *l = NULL, *quiet = NULL;
  CHECK_OK(fcl_launcher_create_kernel(prog, "advect_x", "scale", 2, args, 0, NULL, &cfg, &l));
  CHECK_OK(fcl_launcher_create_kernel(prog, "other", "scale", 2, args, 0, NULL, &cfg, &quiet));
  unsetenv("FLOWCL_TRACE");

  /* A launch held back by a user event: the statistics do not wait for it. */
  fcl_event *gate = NULL, *held = NULL;
  CHECK_OK(fcl_user_event_create(ctx, &gate));
  CHECK_OK(fcl_launcher_call(l, NULL, NULL, 1, &gate, &held));
  fcl_launch_stats s;
  CHECK_OK(fcl_launcher_statistics(l, &s));
  CHECK(s.launches == 0 && s.pending == 1);
  CHECK_OK(fcl_user_event_complete(gate));
  CHECK_OK(fcl_events_wait(1, &held));
  double expect_total = 0, expect_min = 1e300, expect_max = 0;
  fcl_event *evs[CALLS];
  evs[0] = held;
  for (int i = 1; i < CALLS; ++i) CHECK_OK(fcl_launcher_call(l, NULL, NULL, 0, NULL, &evs[i]));
  CHECK_OK(fcl_launcher_call(quiet, NULL, NULL, 0, NULL, NULL));
  CHECK_OK(fcl_queue_finish(q));
  for (int i = 0; i < CALLS; ++i) {
    fcl_event_times t;
    CHECK_OK(fcl_event_profile(evs[i], &t));
    double ns = (double)(t.end_ns - t.start_ns);
    expect_total += ns;
    expect_min = ns < expect_min ? ns : expect_min;
    expect_max = ns > expect_max ? ns : expect_max;
    fcl_event_release(&evs[i]);
  }
  CHECK_OK(fcl_launcher_statistics(l, &s));
  CHECK(s.launches == CALLS && s.pending == 0);
  CHECKF(s.total_ns == expect_total && s.min_ns == expect_min && s.max_ns == expect_max,
         "statistics %.0f/%.0f/%.0f ns, events say %.0f/%.0f/%.0f", s.total_ns, s.min_ns, s.max_ns,
         expect_total, expect_min, expect_max);
  CHECK(fcl_test_close(s.mean_ns, expect_total / CALLS, 4, 0, false));
  CHECK(s.bytes == (double)CALLS * 2 * N * sizeof(float));
  CHECK(fcl_test_close(s.bandwidth_gbs, s.bytes / expect_total, 4, 0, false));
  /* Lists add up their members. */
  fcl_launcher *list = NULL;
  CHECK_OK(fcl_launcher_as_list(l, "one", &list));
  fcl_launch_stats ls;
  CHECK_OK(fcl_launcher_statistics(list, &ls));
  CHECK(ls.launches == CALLS && ls.total_ns == expect_total);
  CHECK_OK(fcl_launcher_reset_statistics(list));
  CHECK_OK(fcl_launcher_statistics(list, &ls));
  CHECK(ls.launches == 0 && ls.total_ns == 0);

  /* Tracing: the matching launcher's launches only, with sizes and values. */
  fcl_log_set_handler(NULL, NULL);
  fcl_log_set_level(FCL_LOG_WARNING);
  CHECKF(fcl_test_contains(traced, "trace: launcher 'advect_x' kernel 'scale' global (65536)") &&
             fcl_test_contains(traced, "[1] float 1"),
         "trace output: %s", traced);
  CHECK(!fcl_test_contains(traced, "launcher 'other'"));
  fcl_launcher_destroy(&list);
  fcl_launcher_destroy(&quiet);
  fcl_event_release(&gate);
  fcl_mem_release(&b);
  fcl_queue_release(&q);
  fcl_program_release(&prog);
  fcl_context_release(&ctx);
}

/* Sums by hand: counts, times and bytes add up, the extremes are over launches only. */
static void sums(void) {
  const fcl_launch_stats a = {.launches = 2,
                              .total_ns = 30,
                              .min_ns = 10,
                              .max_ns = 20,
                              .pending = 1,
                              .bytes = 300},
                         none = {.pending = 2}, /* no launch yet: its zero extremes count not */
      b = {.launches = 1, .total_ns = 5, .min_ns = 5, .max_ns = 5, .bytes = 100};
  fcl_launch_stats sum = {0};
  fcl_launch_stats_add(&sum, &b);
  fcl_launch_stats_add(&sum, &none);
  CHECKF(sum.min_ns == 5 && sum.max_ns == 5 && sum.pending == 2,
         "b + none: min %g max %g pending %zu", sum.min_ns, sum.max_ns, sum.pending);
  fcl_launch_stats_add(&sum, &a);
  CHECKF(sum.launches == 3 && sum.total_ns == 35 && sum.min_ns == 5 && sum.max_ns == 20 &&
             sum.bytes == 400 && sum.pending == 3,
         "b + none + a: %zu launches, %g ns (%g to %g), %g bytes, %zu pending", sum.launches,
         sum.total_ns, sum.min_ns, sum.max_ns, sum.bytes, sum.pending);
  CHECKF(fabs(sum.mean_ns - 35.0 / 3) < 1e-12 && fabs(sum.bandwidth_gbs - 400.0 / 35) < 1e-12,
         "mean %g, bandwidth %g", sum.mean_ns, sum.bandwidth_gbs);
}

int main(void) {
  sums();
  const int rc = fcl_test_run_on_devices(check_device, NULL);
  return fcl_test_failures ? 1 : rc; /* a failed sum is no skip */
}
