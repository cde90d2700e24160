/* The autotuner: generate variants, check them against the first, time them, keep the fastest. */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "check.h"
#include "tune_impl.h"
#include "codegen_impl.h"

const char *fcl_tune_effort_name(fcl_tune_effort effort) {
  switch (effort) {
    case FCL_TUNE_NONE: return "none";
    case FCL_TUNE_ESTIMATE: return "estimate";
    case FCL_TUNE_MEASURE: return "measure";
    case FCL_TUNE_EXHAUSTIVE: return "exhaustive";
    default: return "default";
  }
}

fcl_status fcl_tune_effort_parse(const char *text, fcl_tune_effort *effort) {
  FCL_CHECK_NULL(text, 1);
  FCL_CHECK_NULL(effort, 2);
  for (int e = FCL_TUNE_NONE; e <= FCL_TUNE_EXHAUSTIVE; ++e)
    if (!strcasecmp(text, fcl_tune_effort_name((fcl_tune_effort)e))) {
      *effort = (fcl_tune_effort)e;
      return FCL_OK;
    }
  return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                   "tune effort '%s': expected none, estimate, measure "
                   "or exhaustive",
                   text);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---------------- running a variant ---------------- */

#define MAX_ARGS 32

typedef struct {
  const fcl_kbuilder *base;
  fcl_context *ctx;
  fcl_queue *queue; /* profiling */
  const fcl_tune_options *opt;
  unsigned repeats;
  size_t nargs;
  fcl_mem *buf[MAX_ARGS];
  unsigned char *pristine[MAX_ARGS];  /* initial contents of written arrays */
  unsigned char *reference[MAX_ARGS]; /* outputs of the first variant that ran */
  size_t bytes[MAX_ARGS];
  bool have_reference;
} bench;

static unsigned long long next_random(unsigned long long *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return *s >> 11;
}

/* Bytes of the full-size inputs a measured search puts on the device. */
static fcl_status bench_bytes(const fcl_kbuilder *base, const fcl_tune_options *opt,
                              double *total) {
  *total = 0;
  for (size_t a = 0; a < fcl_kbuilder_num_args(base); ++a) {
    bool is_array;
    fcl_dtype t;
    FCL_TRY(fcl_kbuilder_arg(base, a, NULL, &is_array, &t, NULL));
    if (!is_array) continue;
    size_t ndim, shape[FCL_KB_MAX_DIMS];
    double n = 1;
    FCL_TRY(fcl_kbuilder_arg_shape(base, a, opt->param_values, &ndim, shape));
    for (size_t d = 0; d < ndim; ++d) n *= (double)shape[d];
    *total += n * (double)fcl_dtype_size(t);
  }
  return FCL_OK;
}

/* The bench of a search; with_data: a profiling queue and full-size inputs on the device (a
 * measured search). An estimate only builds variants: no data, so that planning a kernel over a
 * large grid (1024^3: 4 GiB an array) costs no host work and no device memory. */
static fcl_status bench_open(bench *b, const fcl_kbuilder *base, fcl_context *ctx,
                             const fcl_device *device, const fcl_tune_options *opt,
                             bool with_data) {
  memset(b, 0, sizeof *b);
  b->base = base;
  b->ctx = ctx;
  b->opt = opt;
  b->repeats = opt->repeats ? opt->repeats : 5;
  b->nargs = fcl_kbuilder_num_args(base);
  if (b->nargs > MAX_ARGS)
    return FCL_ERROR(FCL_ERR_NOT_SUPPORTED, "tune: kernel '%s' has more than %d arguments",
                     fcl_kbuilder_name(base), MAX_ARGS);
  if (!with_data) return FCL_OK;
  FCL_TRY(fcl_queue_create(ctx, device, FCL_QUEUE_PROFILING, &b->queue));
  unsigned long long seed = 2024;
  for (size_t a = 0; a < b->nargs; ++a) {
    bool is_array, written;
    fcl_dtype t;
    FCL_TRY(fcl_kbuilder_arg(base, a, NULL, &is_array, &t, &written));
    if (!is_array) continue;
    size_t ndim, shape[FCL_KB_MAX_DIMS], n = 1, es = fcl_dtype_size(t);
    FCL_TRY(fcl_kbuilder_arg_shape(base, a, opt->param_values, &ndim, shape));
    for (size_t d = 0; d < ndim; ++d) n *= shape[d];
    b->bytes[a] = (n ? n : 1) * es;
    unsigned char *host = calloc(1, b->bytes[a]);
    if (!host) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "tune: %zu bytes of inputs", b->bytes[a]);
    fcl_dtype part = fcl__dtype_real_part(t); /* complex: pairs of reals */
    size_t reals = part != t ? 2 * n : n;
    for (size_t i = 0; i < reals; ++i) {
      double v = 0.5 + (double)(next_random(&seed) % 1000000) / 1e6;
      if (part == FCL_FLOAT32)
        ((float *)host)[i] = (float)v;
      else if (part == FCL_FLOAT64)
        ((double *)host)[i] = v;
    }
    fcl_status st = fcl_mem_create(ctx, FCL_MEM_DEVICE, b->bytes[a], host, &b->buf[a]);
    if (st != FCL_OK) {
      free(host);
      return st;
    }
    if (written)
      b->pristine[a] = host;
    else
      free(host);
  }
  return FCL_OK;
}

static void bench_close(bench *b) {
  for (size_t a = 0; a < b->nargs; ++a) {
    if (b->buf[a]) fcl_mem_release(&b->buf[a]);
    free(b->pristine[a]);
    free(b->reference[a]);
  }
  fcl_queue_release(&b->queue);
}

static fcl_status set_params(bench *b, const fcl_kbuilder *v, fcl_param_set *ps) {
  for (size_t a = 0; a < b->nargs; ++a) {
    const char *name;
    bool is_array;
    fcl_dtype t;
    FCL_TRY(fcl_kbuilder_arg(b->base, a, &name, &is_array, &t, NULL));
    if (is_array)
      FCL_TRY(fcl_param_set_buffer(ps, name, b->buf[a]));
    else if (t == FCL_FLOAT32)
      FCL_TRY(fcl_param_set_f32(ps, name, 0.75f));
    else if (t == FCL_FLOAT64)
      FCL_TRY(fcl_param_set_f64(ps, name, 0.75));
    else if (t == FCL_INT32)
      FCL_TRY(fcl_param_set_i32(ps, name, 1));
    else if (t == FCL_UINT32)
      FCL_TRY(fcl_param_set_u32(ps, name, 1));
    else if (t == FCL_INT64)
      FCL_TRY(fcl_param_set_i64(ps, name, 1));
    else
      FCL_TRY(fcl_param_set_u64(ps, name, 1));
  }
  /* the variant's parameters (some may have been fixed by the choice), by name */
  for (size_t p = 0; p < fcl_kbuilder_num_params(v); ++p) {
    const char *name = fcl_kbuilder_param_name(v, p);
    for (size_t q = 0; q < fcl_kbuilder_num_params(b->base); ++q)
      if (!strcmp(name, fcl_kbuilder_param_name(b->base, q)))
        FCL_TRY(fcl_param_set_i32(ps, name, (int32_t)b->opt->param_values[q]));
  }
  return FCL_OK;
}

static bool agrees(const unsigned char *got, const unsigned char *want, size_t bytes, fcl_dtype t) {
  t = fcl__dtype_real_part(t); /* complex values compare part by part */
  if (t != FCL_FLOAT32 && t != FCL_FLOAT64) return memcmp(got, want, bytes) == 0;
  size_t n = bytes / fcl_dtype_size(t);
  double eps = 64 * (t == FCL_FLOAT32 ? FLT_EPSILON : DBL_EPSILON), scale = 0;
  for (size_t i = 0; i < n; ++i)
    scale = fmax(scale,
                 fabs(t == FCL_FLOAT32 ? ((const float *)want)[i] : ((const double *)want)[i]));
  for (size_t i = 0; i < n; ++i) {
    double g = t == FCL_FLOAT32 ? ((const float *)got)[i] : ((const double *)got)[i];
    double w = t == FCL_FLOAT32 ? ((const float *)want)[i] : ((const double *)want)[i];
    if (!(fabs(g - w) <= eps * (fabs(w) + scale))) return false;
  }
  return true;
}

/* Build, run once on fresh inputs, compare with the reference (or become it), time. */
static fcl_status run_variant(bench *b, const fcl_kbuilder *v, bool time_it, double *median_ns) {
  fcl_launcher *l = NULL;
  fcl_param_set *ps = NULL;
  FCL_TRY(fcl_kbuilder_build(v, b->ctx, b->opt->build_options, b->queue, &l));
  fcl_status st = fcl_param_set_create(l, &ps);
  if (st == FCL_OK) st = set_params(b, v, ps);
  for (size_t a = 0; st == FCL_OK && a < b->nargs; ++a)
    if (b->pristine[a])
      st = fcl_mem_write(b->queue, b->buf[a], 0, b->bytes[a], b->pristine[a], FCL_BLOCKING, 0, NULL,
                         NULL);
  if (st == FCL_OK) st = fcl_launcher_call(l, NULL, ps, 0, NULL, NULL);
  if (st == FCL_OK) st = fcl_queue_finish(b->queue);
  for (size_t a = 0; st == FCL_OK && a < b->nargs; ++a) {
    if (!b->pristine[a]) continue;
    unsigned char *out = malloc(b->bytes[a]);
    fcl_dtype t;
    fcl_kbuilder_arg(b->base, a, NULL, NULL, &t, NULL);
    if (!out || fcl_mem_read(b->queue, b->buf[a], 0, b->bytes[a], out, FCL_BLOCKING, 0, NULL,
                             NULL) != FCL_OK) {
      free(out);
      st = FCL_ERROR(FCL_ERR_OPENCL, "tune: reading an output");
    } else if (!b->have_reference) {
      b->reference[a] = out;
    } else {
      bool same = agrees(out, b->reference[a], b->bytes[a], t);
      free(out);
      if (!same)
        st = FCL_ERROR(FCL_ERR_INVALID_STATE, "its outputs differ from the first variant's");
    }
  }
  if (st == FCL_OK) b->have_reference = true;
  double times[64];
  unsigned reps = b->repeats < 64 ? b->repeats : 64;
  for (unsigned r = 0; st == FCL_OK && time_it && r < reps; ++r) {
    fcl_event *ev = NULL;
    st = fcl_launcher_call(l, NULL, ps, 0, NULL, &ev);
    if (st == FCL_OK) st = fcl_events_wait(1, &ev);
    fcl_event_times t = {0};
    if (st == FCL_OK && ev) st = fcl_event_profile(ev, &t);
    fcl_event_release(&ev);
    times[r] = (double)(t.end_ns - t.start_ns);
  }
  if (st == FCL_OK && time_it) {
    for (unsigned i = 1; i < reps; ++i) /* insertion sort: a handful of values */
      for (unsigned k = i; k > 0 && times[k] < times[k - 1]; --k) {
        double t = times[k];
        times[k] = times[k - 1];
        times[k - 1] = t;
      }
    *median_ns = reps % 2 ? times[reps / 2] : 0.5 * (times[reps / 2 - 1] + times[reps / 2]);
  }
  fcl_param_set_destroy(&ps);
  fcl_launcher_destroy(&l);
  return st;
}

/* ---------------- the search ---------------- */

typedef struct {
  const fcl_kbuilder *base;
  size_t num_axes;
  const fcl_tune_axis *axes;
  fcl_tune_apply_fn apply;
  void *user;
  bench bench;
  fcl_tune_result *res;
  size_t best[FCL_TUNE_MAX_AXES];
  bool have_best;
  double best_ns;
  size_t (*seen)[FCL_TUNE_MAX_AXES];
  size_t nseen, cap_seen;
  double start, budget;
  bool budget_hit;
  fcl_status first_error;
  char first_message[1024];
} search;

static void choice_values(const search *s, const size_t *idx, int64_t *values) {
  for (size_t a = 0; a < s->num_axes; ++a) values[a] = s->axes[a].values[idx[a]];
}

static const char *choice_text(const search *s, const size_t *idx, char *buf, size_t size) {
  size_t n = 0;
  buf[0] = '\0';
  for (size_t a = 0; a < s->num_axes && n < size; ++a)
    n += (size_t)snprintf(buf + n, size - n, "%s%s=%lld", a ? " " : "", s->axes[a].name,
                          (long long)s->axes[a].values[idx[a]]);
  return buf;
}

/* A variant for choice idx (NULL with the error recorded when the choice is refused). */
static fcl_status make_variant(const search *s, const size_t *idx, fcl_kbuilder **out) {
  int64_t values[FCL_TUNE_MAX_AXES];
  choice_values(s, idx, values);
  FCL_TRY(fcl_kbuilder_copy(s->base, out));
  fcl_status st = s->apply(s->user, *out, values);
  if (st == FCL_ERR_NOT_SUPPORTED)
    st = FCL_ERROR(FCL_ERR_NOT_SUPPORTED, "the apply function refused this choice");
  if (st != FCL_OK) fcl_kbuilder_destroy(out);
  return st;
}

static void reject(search *s, const size_t *idx, fcl_status st) {
  char buf[256];
  s->res->rejected++;
  fcl_log(FCL_LOG_INFO, "tune '%s': variant %s rejected: %s", fcl_kbuilder_name(s->base),
          choice_text(s, idx, buf, sizeof buf), fcl_last_error());
  if (s->first_error == FCL_OK) {
    s->first_error = st;
    snprintf(s->first_message, sizeof s->first_message, "%s", fcl_last_error());
  }
}

static void evaluate(search *s, const size_t *idx) {
  for (size_t k = 0; k < s->nseen; ++k)
    if (!memcmp(s->seen[k], idx, s->num_axes * sizeof *idx)) return;
  if (s->have_best && s->budget > 0 && now_s() - s->start > s->budget) {
    s->budget_hit = true;
    return;
  }
  if (s->nseen == s->cap_seen) {
    size_t cap = s->cap_seen ? 2 * s->cap_seen : 64;
    void *grown = realloc(s->seen, cap * sizeof *s->seen);
    if (!grown) return;
    s->seen = grown;
    s->cap_seen = cap;
  }
  memcpy(s->seen[s->nseen++], idx, s->num_axes * sizeof *idx);
  s->res->tried++;
  fcl_kbuilder *v = NULL;
  double ns = 0;
  fcl_status st = make_variant(s, idx, &v);
  if (st == FCL_OK) st = run_variant(&s->bench, v, true, &ns);
  fcl_kbuilder_destroy(&v);
  if (st != FCL_OK) {
    reject(s, idx, st);
    return;
  }
  s->res->timed++;
  char buf[256];
  fcl_log(FCL_LOG_INFO, "tune '%s': %s: %.1f us", fcl_kbuilder_name(s->base),
          choice_text(s, idx, buf, sizeof buf), ns / 1e3);
  if (!s->have_best || ns < s->best_ns) {
    memcpy(s->best, idx, s->num_axes * sizeof *idx);
    s->best_ns = ns;
    s->have_best = true;
  }
}

/* Advance an odometer over the axes; false after the last combination. */
static bool next_choice(const search *s, size_t *idx) {
  for (size_t a = s->num_axes; a-- > 0;) {
    if (++idx[a] < s->axes[a].count) return true;
    idx[a] = 0;
  }
  return false;
}

static fcl_status search_measured(search *s, fcl_tune_effort effort) {
  size_t idx[FCL_TUNE_MAX_AXES] = {0};
  evaluate(s, idx);
  if (effort == FCL_TUNE_EXHAUSTIVE) {
    while (next_choice(s, idx) && !s->budget_hit) evaluate(s, idx);
  } else {
    /* each axis in turn around the best so far (around the default while none ran) */
    for (size_t a = 0; a < s->num_axes && !s->budget_hit; ++a) {
      size_t around[FCL_TUNE_MAX_AXES];
      memcpy(around, s->have_best ? s->best : idx, sizeof around);
      for (size_t k = 0; k < s->axes[a].count && !s->budget_hit; ++k) {
        around[a] = k;
        evaluate(s, around);
      }
    }
  }
  if (s->budget_hit)
    fcl_log(FCL_LOG_INFO, "tune '%s': time budget of %.1f s reached after %zu variants",
            fcl_kbuilder_name(s->base), s->budget, s->res->tried);
  return FCL_OK;
}

/* estimate: the first choice, from the default on, whose variant builds. */
static fcl_status search_estimate(search *s) {
  size_t idx[FCL_TUNE_MAX_AXES] = {0};
  do {
    s->res->tried++;
    fcl_kbuilder *v = NULL;
    fcl_launcher *l = NULL;
    fcl_status st = make_variant(s, idx, &v);
    if (st == FCL_OK)
      st = fcl_kbuilder_build(v, s->bench.ctx, s->bench.opt->build_options, NULL, &l);
    fcl_launcher_destroy(&l);
    fcl_kbuilder_destroy(&v);
    if (st == FCL_OK) {
      memcpy(s->best, idx, sizeof idx);
      s->have_best = true;
      return FCL_OK;
    }
    reject(s, idx, st);
  } while (next_choice(s, idx));
  return FCL_OK;
}

static fcl_status check_args(const fcl_kbuilder *base, size_t num_axes, const fcl_tune_axis *axes,
                             fcl_tune_apply_fn apply, fcl_context *context,
                             const fcl_device *device, const fcl_tune_options *options,
                             fcl_tune_result *result) {
  FCL_CHECK_NULL(base, 1);
  FCL_CHECK_ARG(num_axes <= FCL_TUNE_MAX_AXES, 2, "num_axes", "at most FCL_TUNE_MAX_AXES");
  FCL_CHECK_ARG(num_axes == 0 || axes, 3, "axes", "must not be NULL when num_axes > 0");
  for (size_t a = 0; a < num_axes; ++a)
    if (!axes[a].count || !axes[a].values)
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 3 (axes): axis %zu (%s) has no values",
                       a, axes[a].name ? axes[a].name : "unnamed");
  FCL_CHECK_NULL(apply, 4);
  FCL_CHECK_NULL(context, 6);
  FCL_CHECK_NULL(device, 7);
  FCL_CHECK_NULL(options, 8);
  FCL_CHECK_ARG(options->effort >= FCL_TUNE_AUTO && options->effort <= FCL_TUNE_EXHAUSTIVE, 8,
                "options", "effort is not an fcl_tune_effort");
  FCL_CHECK_ARG(options->param_values || fcl_kbuilder_num_params(base) == 0, 8, "options",
                "param_values must give the problem size");
  FCL_CHECK_NULL(result, 9);
  return FCL_OK;
}

static struct {
  pthread_mutex_t lock;
  size_t tunings;
  double wall_s;
} totals = {PTHREAD_MUTEX_INITIALIZER, 0, 0};

void fcl_tune_totals(size_t *tunings, double *wall_s) {
  pthread_mutex_lock(&totals.lock);
  if (tunings) *tunings = totals.tunings;
  if (wall_s) *wall_s = totals.wall_s;
  pthread_mutex_unlock(&totals.lock);
}

fcl_status fcl_tune_effort_from_env(fcl_tune_effort *effort, bool *set) {
  FCL_CHECK_NULL(effort, 1);
  FCL_CHECK_NULL(set, 2);
  const char *env = getenv("FLOWCL_TUNE");
  *set = env && *env;
  if (!*set) return FCL_OK;
  return fcl_tune_effort_parse(env, effort); /* its error names the value */
}

/* The effort that FCL_TUNE_DEFAULT or FCL_TUNE_AUTO stand for on device. */
static fcl_status resolve_effort(fcl_tune_effort asked, const fcl_device *device,
                                 fcl_tune_effort *effort) {
  *effort = asked;
  if (asked != FCL_TUNE_DEFAULT && asked != FCL_TUNE_AUTO) return FCL_OK;
  bool set = false;
  FCL_TRY(fcl_tune_effort_from_env(effort, &set));
  if (set) return FCL_OK;
  *effort = FCL_TUNE_MEASURE;
  if (asked == FCL_TUNE_AUTO) {
    fcl_device_info info;
    FCL_TRY(fcl_device_get_info(device, &info));
    if (info.type & FCL_DEVICE_CPU) *effort = FCL_TUNE_ESTIMATE;
  }
  return FCL_OK;
}

fcl_status fcl_tune(const fcl_kbuilder *base, size_t num_axes, const fcl_tune_axis *axes,
                    fcl_tune_apply_fn apply, void *user, fcl_context *context,
                    const fcl_device *device, const fcl_tune_options *options,
                    fcl_tune_result *result, fcl_kbuilder **best) {
  if (best) *best = NULL;
  FCL_TRY(check_args(base, num_axes, axes, apply, context, device, options, result));
  memset(result, 0, sizeof *result);
  result->num_axes = num_axes;
  fcl_tune_effort effort;
  FCL_TRY(resolve_effort(options->effort, device, &effort));
  result->effort = effort;
  /* auto's measuring has a budget: on an H200 at 512^3 the TGV's 15 kernels took 296 s to tune
   * fully and gained under 1 % */
  fcl_tune_effort from_env;
  bool env_set = false;
  FCL_TRY(fcl_tune_effort_from_env(&from_env, &env_set));
  const bool auto_measure = options->effort == FCL_TUNE_AUTO && effort == FCL_TUNE_MEASURE &&
                            !env_set;
  search s = {.base = base,
              .num_axes = num_axes,
              .axes = axes,
              .apply = apply,
              .user = user,
              .res = result,
              .start = now_s(),
              .budget = options->budget_s > 0 || !auto_measure ? options->budget_s
                                                               : FCL_TUNE_AUTO_BUDGET_S};
  char key[65] = "";
  fcl__tune_entry entry;
  bool cached = false;
  fcl_status st = FCL_OK;
  if (effort != FCL_TUNE_NONE) {
    st = fcl__tune_key(base, num_axes, axes, options->build_options, device, options->param_values,
                       key);
    cached = st == FCL_OK && fcl__tune_cache_load(key, num_axes, axes, &entry) &&
             entry.effort >= (auto_measure ? FCL_TUNE_ESTIMATE : effort);
  }
  if (st == FCL_OK && cached) {
    for (size_t a = 0; a < num_axes; ++a)
      for (size_t k = 0; k < axes[a].count; ++k)
        if (axes[a].values[k] == entry.choice[a]) s.best[a] = k;
    /* a choice remembered for another size of the class (another rank's block) may not apply
     * to this one: then search as if nothing were remembered */
    fcl_kbuilder *check = NULL;
    if (make_variant(&s, s.best, &check) != FCL_OK) {
      fcl_log(FCL_LOG_INFO,
              "tune '%s': the remembered choice does not apply here (%s): "
              "searching",
              fcl_kbuilder_name(base), fcl_last_error());
      fcl_clear_error();
      cached = false;
      memset(s.best, 0, sizeof s.best);
    }
    fcl_kbuilder_destroy(&check);
  }
  if (st == FCL_OK && cached) {
    s.have_best = true;
    result->from_cache = true;
    result->median_ns = entry.median_ns;
  } else if (st == FCL_OK && effort == FCL_TUNE_NONE) {
    s.have_best = true; /* the default */
  } else if (st == FCL_OK) {
    /* a measured search doubles the kernel's arrays on the device: beyond an eighth of its
     * memory (a 1024^3 grid on one GPU) it could not fit beside the fields, so estimate */
    double bytes = 0;
    fcl_device_info info;
    if (effort >= FCL_TUNE_MEASURE && bench_bytes(base, options, &bytes) == FCL_OK &&
        fcl_device_get_info(device, &info) == FCL_OK && bytes > (double)info.global_mem_size / 8) {
      fcl_log(FCL_LOG_INFO,
              "tune '%s': its arrays take %.1f GiB, more than an eighth of the device's memory: "
              "estimated, not measured",
              fcl_kbuilder_name(base), bytes / (1 << 30));
      effort = FCL_TUNE_ESTIMATE;
      result->effort = effort;
    }
    st = bench_open(&s.bench, base, context, device, options, effort != FCL_TUNE_ESTIMATE);
    if (st == FCL_OK)
      st = effort == FCL_TUNE_ESTIMATE ? search_estimate(&s) : search_measured(&s, effort);
    bench_close(&s.bench);
    if (st == FCL_OK && !s.have_best)
      st = fcl__error_set(s.first_error ? s.first_error : FCL_ERR_INVALID_ARGUMENT, 0, __func__,
                          __FILE__, __LINE__,
                          "tune '%s': no valid variant among %zu tried; the "
                          "first failed with: %s",
                          fcl_kbuilder_name(base), result->tried, s.first_message);
    if (effort >= FCL_TUNE_MEASURE) {
      pthread_mutex_lock(&totals.lock);
      totals.tunings++;
      totals.wall_s += now_s() - s.start;
      pthread_mutex_unlock(&totals.lock);
    }
    if (st == FCL_OK && effort >= FCL_TUNE_MEASURE) {
      result->median_ns = s.best_ns;
      /* a search that auto's budget cut short is remembered below measure: auto reuses it,
       * an explicit FLOWCL_TUNE=measure searches in full */
      fcl__tune_entry e = {.effort = auto_measure && s.budget_hit ? FCL_TUNE_ESTIMATE : effort,
                           .median_ns = s.best_ns};
      for (size_t a = 0; a < num_axes; ++a) e.choice[a] = axes[a].values[s.best[a]];
      fcl__tune_cache_store(key, fcl_kbuilder_name(base), num_axes, &e);
    }
  }
  free(s.seen);
  if (st != FCL_OK) return st;
  for (size_t a = 0; a < num_axes; ++a) result->choice[a] = axes[a].values[s.best[a]];
  if (best) {
    fcl_status bst = make_variant(&s, s.best, best);
    if (bst != FCL_OK) return bst;
  }
  return FCL_OK;
}
