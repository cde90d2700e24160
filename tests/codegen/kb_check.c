/* See kb_check.h. */
#include "kb_check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void kb_env_open(kb_env *env, const fcl_device_entry *device) {
  memset(env, 0, sizeof *env);
  env->device = fcl_test_device_name(device->device);
  CHECK_OK(fcl_context_create(1, &device->device, &env->ctx));
  if (env->ctx) CHECK_OK(fcl_queue_create(env->ctx, device->device, 0, &env->queue));
}

void kb_env_close(kb_env *env) {
  fcl_queue_release(&env->queue);
  fcl_context_release(&env->ctx);
}

static unsigned long long next_random(unsigned long long *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return *s >> 11;
}

static void fill(kb_data *d, const fcl_kbuilder *kb, const int64_t *params) {
  memset(d, 0, sizeof *d);
  d->nargs = fcl_kbuilder_num_args(kb);
  unsigned long long seed = 12345;
  for (size_t a = 0; a < d->nargs && a < KB_MAX_ARGS; ++a) {
    bool is_array;
    CHECK_OK(fcl_kbuilder_arg(kb, a, NULL, &is_array, NULL, NULL));
    d->scalar[a] = 0.75;
    if (!is_array) continue;
    size_t ndim, shape[FCL_KB_MAX_DIMS], n = 1;
    CHECK_OK(fcl_kbuilder_arg_shape(kb, a, params, &ndim, shape));
    for (size_t k = 0; k < ndim; ++k) n *= shape[k];
    d->count[a] = n;
    d->data[a] = malloc((n ? n : 1) * sizeof(double));
    for (size_t i = 0; i < n; ++i)
      d->data[a][i] = 0.5 + (double)(next_random(&seed) % 1000000) / 1e6;
  }
}

static void data_free(kb_data *d) {
  for (size_t a = 0; a < d->nargs && a < KB_MAX_ARGS; ++a) free(d->data[a]);
}

void kb_check(kb_env *env, const fcl_kbuilder *kb, const int64_t *params, kb_reference ref,
              const char *variant) {
  if (!env->ctx || !env->queue) return;
  fcl_launcher *l = NULL;
  fcl_status st = fcl_kbuilder_build(kb, env->ctx, NULL, env->queue, &l);
  if (st != FCL_OK) {
    char *src = NULL;
    fcl_kbuilder_generate(kb, &src);
    fcl_test_fail(__FILE__, __LINE__, "%s [%s]: build failed: %s\n%s", fcl_kbuilder_name(kb),
                  variant, fcl_last_error(), src ? src : "");
    free(src);
    return;
  }
  kb_data d, expect;
  fill(&d, kb, params);
  fill(&expect, kb, params);
  fcl_param_set *ps = NULL;
  CHECK_OK(fcl_param_set_create(l, &ps));
  fcl_mem *bufs[KB_MAX_ARGS] = {0};
  for (size_t a = 0; a < d.nargs; ++a) {
    const char *name;
    bool is_array;
    fcl_dtype t;
    CHECK_OK(fcl_kbuilder_arg(kb, a, &name, &is_array, &t, NULL));
    if (!is_array) {
      if (t == FCL_FLOAT32)
        CHECK_OK(fcl_param_set_f32(ps, name, (float)d.scalar[a]));
      else
        CHECK_OK(fcl_param_set_f64(ps, name, d.scalar[a]));
      continue;
    }
    size_t es = fcl_dtype_size(t), n = d.count[a];
    unsigned char *host = malloc((n ? n : 1) * es);
    for (size_t i = 0; i < n; ++i) {
      if (t == FCL_FLOAT32)
        ((float *)host)[i] = (float)d.data[a][i];
      else
        ((double *)host)[i] = d.data[a][i];
      /* the reference sees exactly what the device sees */
      d.data[a][i] = expect.data[a][i] = t == FCL_FLOAT32 ? (double)((float *)host)[i]
                                                          : d.data[a][i];
    }
    CHECK_OK(fcl_mem_create(env->ctx, FCL_MEM_DEVICE, (n ? n : 1) * es, host, &bufs[a]));
    free(host);
    CHECK_OK(fcl_param_set_buffer(ps, name, bufs[a]));
  }
  for (size_t p = 0; p < fcl_kbuilder_num_params(kb); ++p)
    CHECK_OK(fcl_param_set_i32(ps, fcl_kbuilder_param_name(kb, p), (int32_t)params[p]));
  CHECK_OK(fcl_launcher_call(l, NULL, ps, 0, NULL, NULL));
  CHECK_OK(fcl_queue_finish(env->queue));
  ref(&expect, params);
  size_t bad = 0, first = SIZE_MAX, first_arg = 0;
  double got_first = 0, want_first = 0;
  for (size_t a = 0; a < d.nargs; ++a) {
    bool is_array, written;
    fcl_dtype t;
    CHECK_OK(fcl_kbuilder_arg(kb, a, NULL, &is_array, &t, &written));
    if (!is_array || !written) continue;
    size_t es = fcl_dtype_size(t), n = d.count[a];
    unsigned char *host = malloc((n ? n : 1) * es);
    CHECK_OK(fcl_mem_read(env->queue, bufs[a], 0, n * es, host, FCL_BLOCKING, 0, NULL, NULL));
    double tol = t == FCL_FLOAT32 ? 1e-5 : 1e-12, scale = 0;
    for (size_t i = 0; i < n; ++i) scale = fmax(scale, fabs(expect.data[a][i]));
    for (size_t i = 0; i < n; ++i) {
      double got = t == FCL_FLOAT32 ? ((float *)host)[i] : ((double *)host)[i];
      double want = expect.data[a][i];
      if (!(fabs(got - want) <= tol * (fabs(want) + scale))) {
        if (first == SIZE_MAX) {
          first = i;
          first_arg = a;
          got_first = got;
          want_first = want;
        }
        bad++;
      }
    }
    free(host);
  }
  if (bad) {
    char *src = NULL;
    fcl_kbuilder_generate(kb, &src);
    fcl_test_fail(__FILE__, __LINE__,
                  "%s [%s] on %s: %zu wrong values; first: argument %zu "
                  "element %zu = %.17g, expected %.17g\n%s",
                  fcl_kbuilder_name(kb), variant, env->device, bad, first_arg, first, got_first,
                  want_first, src ? src : "");
    free(src);
  }
  for (size_t a = 0; a < d.nargs; ++a)
    if (bufs[a]) fcl_mem_release(&bufs[a]);
  fcl_param_set_destroy(&ps);
  fcl_launcher_destroy(&l);
  data_free(&d);
  data_free(&expect);
}

static void typed_on_device(const fcl_device_entry *device, void *user) {
  kb_typed_fn fn = *(kb_typed_fn *)user;
  kb_env env;
  kb_env_open(&env, device);
  fcl_device_info info;
  CHECK_OK(fcl_device_get_info(device->device, &info));
  fcl_dtype types[2] = {FCL_FLOAT32, FCL_FLOAT64};
  for (int k = 0; k < 2; ++k) {
    if (types[k] == FCL_FLOAT64 && !fcl_device_has_extension(&info, "cl_khr_fp64")) {
      fcl_test_skip_part(env.device, "the double variants (no cl_khr_fp64)");
      continue;
    }
    fn(&env, types[k]);
  }
  kb_env_close(&env);
}

int kb_run_typed(kb_typed_fn fn) { return fcl_test_run_on_devices(typed_on_device, &fn); }
