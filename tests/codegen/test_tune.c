/* The autotuner: it picks a valid variant (checked against a C loop), rejects a variant whose
 * results disagree and one the apply function refuses, remembers the result, reloads it
 * without timing, re-tunes at a higher effort, ignores and rewrites a corrupted entry, honours
 * FLOWCL_TUNE, measures at FCL_TUNE_AUTO on GPUs only, counts what it timed, and puts no inputs
 * on the device for an estimate (nor for a measure whose arrays would not fit beside others). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb_check.h"

static const int64_t tiles[] = {32, 16, 64, 128};
static const int64_t widths[] = {1, 2, 4};
static const int64_t bugs[] = {0, 1};
static const fcl_tune_axis axes[] = {{"tile", 4, tiles}, {"vec", 3, widths}, {"bug", 2, bugs}};

static int64_t refused_tile = -1; /* a tile the apply function refuses (another size) */

static fcl_status apply(void *user, fcl_kbuilder *kb, const int64_t *c) {
  (void)user;
  if (c[0] == refused_tile) return FCL_ERR_NOT_SUPPORTED;
  if (c[0] == 128 && c[1] == 4) /* a choice the space does not allow */
    return fcl_kbuilder_assume(kb, "n mod 0 = 1");
  if (c[2]) { /* a wrong variant: the tuner must notice */
    fcl_status st = fcl_kbuilder_add_instructions(kb, "out[i] = out[i] + 1 {dep=insn_0}");
    if (st != FCL_OK) return st;
  }
  if (c[1] == 1) return fcl_kbuilder_split_iname(kb, "i", c[0], "g.0", "l.0");
  fcl_status st = fcl_kbuilder_split_iname(kb, "i", c[0] * c[1], "g.0", NULL);
  return st ? st : fcl_kbuilder_split_iname(kb, "i_inner", c[1], "l.0", "vec");
}

static void ref(kb_data *d, const int64_t *p) {
  for (int64_t i = 0; i < p[0]; ++i) d->data[2][i] = 3.0 * d->data[0][i] + d->data[1][i];
}

static fcl_kbuilder *make(void) {
  fcl_kbuilder *kb = NULL;
  CHECK_OK(fcl_kbuilder_create("tuned_axpy", &kb));
  CHECK_OK(fcl_kbuilder_add_param(kb, "n"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "x", FCL_FLOAT32, "n"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "y", FCL_FLOAT32, "n"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "out", FCL_FLOAT32, "n"));
  CHECK_OK(fcl_kbuilder_add_domain(kb, "{ [i]: 0 <= i < n }"));
  CHECK_OK(fcl_kbuilder_add_instructions(kb, "out[i] = 3 * x[i] + y[i]"));
  return kb;
}

static void on_device(const fcl_device_entry *device, void *user) {
  /* a cache directory per device: the file counts below are per device */
  static int devices;
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/%d", (const char *)user, devices++);
  setenv("FLOWCL_CACHE_DIR", dir, 1);
  kb_env env;
  kb_env_open(&env, device);
  if (!env.ctx) return;
  fcl_kbuilder *kb = make(), *best = NULL;
  int64_t n = 1 << 16;
  fcl_tune_options opt = {.effort = FCL_TUNE_MEASURE, .param_values = &n};
  fcl_tune_result r;
  char tunedir[4200];
  snprintf(tunedir, sizeof tunedir, "%s/tune", dir);

  /* measure: every axis varied around the best; the wrong and refused variants rejected */
  CHECK_OK(fcl_tune(kb, 3, axes, apply, NULL, env.ctx, device->device, &opt, &r, &best));
  CHECKF(!r.from_cache && r.timed >= 4 && r.rejected >= 1 && r.choice[2] == 0 && r.median_ns > 0,
         "measure: cached %d, timed %zu, rejected %zu, bug %lld, %.0f ns", r.from_cache, r.timed,
         r.rejected, (long long)r.choice[2], r.median_ns);
  if (best) kb_check(&env, best, &n, ref, "tuned");
  fcl_kbuilder_destroy(&best);
  CHECK(fcl_test_count_files(tunedir, ".txt") == 1);

  /* remembered: reloaded without timing */
  fcl_tune_result again;
  CHECK_OK(fcl_tune(kb, 3, axes, apply, NULL, env.ctx, device->device, &opt, &again, NULL));
  CHECKF(again.from_cache && again.timed == 0 && again.tried == 0 &&
             !memcmp(again.choice, r.choice, sizeof r.choice),
         "reload: cached %d, timed %zu", again.from_cache, again.timed);
  /* a lower effort is served by it too */
  opt.effort = FCL_TUNE_ESTIMATE;
  CHECK_OK(fcl_tune(kb, 3, axes, apply, NULL, env.ctx, device->device, &opt, &again, NULL));
  CHECK(again.from_cache && again.timed == 0);

  /* a corrupted entry is ignored, re-tuned and rewritten */
  char cmd[4500];
  snprintf(cmd, sizeof cmd,
           "for e in %s/*.txt; do sed -i 's/^choice.*/choice 16 2 0/' \"$e\"; done", tunedir);
  CHECK(system(cmd) == 0);
  opt.effort = FCL_TUNE_MEASURE;
  CHECK_OK(fcl_tune(kb, 3, axes, apply, NULL, env.ctx, device->device, &opt, &again, NULL));
  CHECKF(!again.from_cache && again.timed >= 4, "corrupted entry was used (cached %d)",
         again.from_cache);
  CHECK_OK(fcl_tune(kb, 3, axes, apply, NULL, env.ctx, device->device, &opt, &again, NULL));
  CHECK(again.from_cache);

  /* exhaustive asks for more than was remembered: every allowed combination is timed */
  opt.effort = FCL_TUNE_EXHAUSTIVE;
  CHECK_OK(fcl_tune(kb, 3, axes, apply, NULL, env.ctx, device->device, &opt, &r, NULL));
  CHECKF(!r.from_cache && r.tried == 24 && r.timed == 11 && r.rejected == 13,
         "exhaustive: tried %zu, timed %zu, rejected %zu", r.tried, r.timed, r.rejected);
  /* a budget stops it early, keeping the best so far */
  n = 1 << 15; /* another size class: not remembered */
  opt.budget_s = 1e-9;
  CHECK_OK(fcl_tune(kb, 3, axes, apply, NULL, env.ctx, device->device, &opt, &r, NULL));
  CHECKF(r.timed == 1 && r.tried == 1, "budget: tried %zu", r.tried);
  opt.budget_s = 0;

  /* none: the default, nothing timed or remembered; FLOWCL_TUNE when the effort is default */
  int files = fcl_test_count_files(tunedir, ".txt");
  n = 1 << 10;
  opt.effort = FCL_TUNE_DEFAULT;
  setenv("FLOWCL_TUNE", "none", 1);
  CHECK_OK(fcl_tune(kb, 3, axes, apply, NULL, env.ctx, device->device, &opt, &r, NULL));
  CHECK(r.effort == FCL_TUNE_NONE && r.timed == 0 && r.choice[0] == 32 && r.choice[1] == 1);
  CHECK(fcl_test_count_files(tunedir, ".txt") == files);
  setenv("FLOWCL_TUNE", "fastest", 1);
  CHECK_STATUS(fcl_tune(kb, 3, axes, apply, NULL, env.ctx, device->device, &opt, &r, NULL),
               FCL_ERR_INVALID_ARGUMENT, "tune effort 'fastest'");
  unsetenv("FLOWCL_TUNE");
  /* estimate: the first variant that builds, untimed */
  opt.effort = FCL_TUNE_ESTIMATE;
  CHECK_OK(fcl_tune(kb, 3, axes, apply, NULL, env.ctx, device->device, &opt, &r, NULL));
  CHECK(!r.from_cache && r.timed == 0 && r.choice[0] == 32);
  /* auto (what the operators ask for): measure on a GPU, estimate on a CPU, FLOWCL_TUNE over
   * both; a tuning that measured counts in the totals once, its reuse does not */
  size_t before = 0, after = 0, reused = 0;
  double seconds = 0;
  fcl_tune_totals(&before, NULL);
  n = 1 << 9; /* a size class not seen yet */
  opt.effort = FCL_TUNE_AUTO;
  fcl_device_info info;
  CHECK_OK(fcl_device_get_info(device->device, &info));
  const bool cpu = info.type & FCL_DEVICE_CPU;
  CHECK_OK(fcl_tune(kb, 3, axes, apply, NULL, env.ctx, device->device, &opt, &r, NULL));
  CHECKF(r.effort == (cpu ? FCL_TUNE_ESTIMATE : FCL_TUNE_MEASURE), "auto on a %s: %s",
         cpu ? "CPU" : "GPU", fcl_tune_effort_name(r.effort));
  setenv("FLOWCL_TUNE", "measure", 1);
  n = 1 << 8;
  CHECK_OK(fcl_tune(kb, 3, axes, apply, NULL, env.ctx, device->device, &opt, &r, NULL));
  CHECK(r.effort == FCL_TUNE_MEASURE && !r.from_cache && r.timed > 0);
  fcl_tune_totals(&after, &seconds);
  CHECKF(after == before + 1 + !cpu && seconds > 0, "totals: %zu tunings before, %zu after (%g s)",
         before, after, seconds);
  CHECK_OK(fcl_tune(kb, 3, axes, apply, NULL, env.ctx, device->device, &opt, &r, NULL));
  fcl_tune_totals(&reused, NULL);
  CHECKF(r.from_cache && r.timed == 0 && reused == after,
         "the second tuning of a size class "
         "timed %zu variants (from the cache: %d), totals %zu -> %zu",
         r.timed, r.from_cache, after, reused);
  /* a remembered choice that this size refuses (remembered by a rank with another block of
   * the same size class): searched again, not an error */
  refused_tile = r.choice[0];
  n = (1 << 8) - 3; /* the same size class */
  CHECK_OK(fcl_tune(kb, 3, axes, apply, NULL, env.ctx, device->device, &opt, &r, NULL));
  CHECKF(!r.from_cache && r.choice[0] != refused_tile,
         "a refused remembered choice: tile %lld "
         "(from the cache: %d)",
         (long long)r.choice[0], r.from_cache);
  refused_tile = -1;
  unsetenv("FLOWCL_TUNE");
  /* arrays larger than any device (2^40 floats each): an estimate only builds variants (it used
   * to fill and upload full-size inputs first: out of memory here, tens of seconds a kernel at
   * 1024^3), and a measure falls back to an estimate rather than doubling them on the device */
  n = (int64_t)1 << 40;
  opt.effort = FCL_TUNE_ESTIMATE;
  CHECK_OK(fcl_tune(kb, 3, axes, apply, NULL, env.ctx, device->device, &opt, &r, NULL));
  opt.effort = FCL_TUNE_MEASURE;
  CHECK_OK(fcl_tune(kb, 3, axes, apply, NULL, env.ctx, device->device, &opt, &r, NULL));
  CHECKF(r.effort == FCL_TUNE_ESTIMATE && r.timed == 0,
         "a measure over 4 TiB arrays: effort %d, %zu variants timed (expected an estimate)",
         (int)r.effort, r.timed);
  fcl_kbuilder_destroy(&kb);
  kb_env_close(&env);
}

int main(void) {
  char *dir = fcl_test_temp_dir("tune");
  int code = fcl_test_run_on_devices(on_device, dir);
  fcl_test_remove_dir(dir);
  free(dir);
  return code;
}
