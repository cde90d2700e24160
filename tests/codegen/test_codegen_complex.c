/* Complex-valued generated kernels against C99 complex arithmetic on the host: cfloat and
 * cdouble arrays and temporaries; + - * / between complex values and with reals; conj, real,
 * imag, abs, exp and complex(re, im); a sum reduction; cfloat widened to cdouble; each kernel
 * under several schedules (work-groups, ilp, vec, a local prefetch). The refusals: complex
 * operands of comparisons, casts, max reductions, a complex value assigned to a real, complex
 * scalar arguments of a launcher. */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fcl_test.h"

#define MAX_ARGS 8

typedef struct {
  size_t nargs;
  fcl_dtype type[MAX_ARGS];
  size_t count[MAX_ARGS];
  double complex *v[MAX_ARGS]; /* every argument as double complex (reals: imaginary 0) */
} data;

typedef void (*reference)(data *d, int64_t n);

static unsigned long long next_random(unsigned long long *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return *s >> 11;
}

/* A value of magnitude in [0.25, 1.5) and random sign (divisors stay away from zero). */
static double uniform(unsigned long long *s) {
  double m = 0.25 + 1.25 * (double)(next_random(s) % 1000000) / 1e6;
  return next_random(s) % 2 ? m : -m;
}

/* Host values rounded as the device stores them. */
static double complex stored(fcl_dtype t, double complex z) {
  switch (t) {
    case FCL_COMPLEX64: return CMPLXF((float)creal(z), (float)cimag(z));
    case FCL_FLOAT32: return (float)creal(z);
    case FCL_FLOAT64: return creal(z);
    default: return z;
  }
}

static void to_device(fcl_dtype t, const double complex *v, size_t n, void *host) {
  for (size_t i = 0; i < n; ++i) {
    if (t == FCL_COMPLEX64) {
      ((float *)host)[2 * i] = (float)creal(v[i]);
      ((float *)host)[2 * i + 1] = (float)cimag(v[i]);
    } else if (t == FCL_COMPLEX128) {
      ((double *)host)[2 * i] = creal(v[i]);
      ((double *)host)[2 * i + 1] = cimag(v[i]);
    } else if (t == FCL_FLOAT32) {
      ((float *)host)[i] = (float)creal(v[i]);
    } else {
      ((double *)host)[i] = creal(v[i]);
    }
  }
}

static double complex from_device(fcl_dtype t, const void *host, size_t i) {
  switch (t) {
    case FCL_COMPLEX64:
      return CMPLX(((const float *)host)[2 * i], ((const float *)host)[2 * i + 1]);
    case FCL_COMPLEX128:
      return CMPLX(((const double *)host)[2 * i], ((const double *)host)[2 * i + 1]);
    case FCL_FLOAT32: return ((const float *)host)[i];
    default: return ((const double *)host)[i];
  }
}

/* Build kb, run it over n on random data, compare the written arrays with ref's. */
static void check(fcl_context *ctx, fcl_queue *queue, const fcl_kbuilder *kb, int64_t n,
                  reference ref, const char *variant) {
  fcl_launcher *l = NULL;
  fcl_status st = fcl_kbuilder_build(kb, ctx, NULL, queue, &l);
  char *src = NULL;
  fcl_kbuilder_generate(kb, &src);
  if (st != FCL_OK) {
    fcl_test_fail(__FILE__, __LINE__, "%s [%s]: build failed: %s\n%s", fcl_kbuilder_name(kb),
                  variant, fcl_last_error(), src ? src : "");
    free(src);
    return;
  }
  data d = {.nargs = fcl_kbuilder_num_args(kb)}, want;
  fcl_param_set *ps = NULL;
  CHECK_OK(fcl_param_set_create(l, &ps));
  fcl_mem *buf[MAX_ARGS] = {0};
  unsigned long long seed = 777;
  for (size_t a = 0; a < d.nargs && a < MAX_ARGS; ++a) {
    const char *name;
    size_t ndim, shape[FCL_KB_MAX_DIMS];
    CHECK_OK(fcl_kbuilder_arg(kb, a, &name, NULL, &d.type[a], NULL));
    CHECK_OK(fcl_kbuilder_arg_shape(kb, a, &n, &ndim, shape));
    d.count[a] = 1;
    for (size_t k = 0; k < ndim; ++k) d.count[a] *= shape[k];
    d.v[a] = malloc(d.count[a] * sizeof *d.v[a]);
    for (size_t i = 0; i < d.count[a]; ++i)
      d.v[a][i] = stored(d.type[a], CMPLX(uniform(&seed), uniform(&seed)));
    size_t bytes = d.count[a] * fcl_dtype_size(d.type[a]);
    void *host = malloc(bytes);
    to_device(d.type[a], d.v[a], d.count[a], host);
    CHECK_OK(fcl_mem_create(ctx, FCL_MEM_DEVICE, bytes, host, &buf[a]));
    free(host);
    CHECK_OK(fcl_param_set_buffer(ps, name, buf[a]));
  }
  CHECK_OK(fcl_param_set_i32(ps, "n", (int32_t)n));
  CHECK_OK(fcl_launcher_call(l, NULL, ps, 0, NULL, NULL));
  CHECK_OK(fcl_queue_finish(queue));
  want = d;
  for (size_t a = 0; a < d.nargs; ++a) {
    want.v[a] = malloc(d.count[a] * sizeof *want.v[a]);
    memcpy(want.v[a], d.v[a], d.count[a] * sizeof *want.v[a]);
  }
  ref(&want, n);
  size_t bad = 0;
  for (size_t a = 0; a < d.nargs; ++a) {
    bool written;
    CHECK_OK(fcl_kbuilder_arg(kb, a, NULL, NULL, NULL, &written));
    if (!written) continue;
    void *host = malloc(d.count[a] * fcl_dtype_size(d.type[a]));
    CHECK_OK(fcl_mem_read(queue, buf[a], 0, d.count[a] * fcl_dtype_size(d.type[a]), host,
                          FCL_BLOCKING, 0, NULL, NULL));
    bool single = d.type[a] == FCL_COMPLEX64 || d.type[a] == FCL_FLOAT32;
    for (size_t i = 0; i < d.count[a]; ++i) {
      double complex got = from_device(d.type[a], host, i), w = want.v[a][i];
      /* relative to the value's modulus: the parts of a product cancel */
      double tol = (single ? 1e-5 : 1e-13) * (1 + cabs(w));
      if (!(cabs(got - w) <= tol)) {
        if (!bad)
          fcl_test_fail(__FILE__, __LINE__,
                        "%s [%s]: argument %zu element %zu = (%.9g, %.9g), expected (%.9g, %.9g)"
                        "\n%s",
                        fcl_kbuilder_name(kb), variant, a, i, creal(got), cimag(got), creal(w),
                        cimag(w), src ? src : "");
        bad++;
      }
    }
    free(host);
  }
  if (bad > 1) printf("  %s [%s]: %zu wrong values in all\n", fcl_kbuilder_name(kb), variant, bad);
  for (size_t a = 0; a < d.nargs; ++a) {
    fcl_mem_release(&buf[a]);
    free(d.v[a]);
    free(want.v[a]);
  }
  free(src);
  fcl_param_set_destroy(&ps);
  fcl_launcher_destroy(&l);
}

typedef void (*schedule)(fcl_kbuilder *kb);
static void s_plain(fcl_kbuilder *kb) { (void)kb; }
static void s_groups(fcl_kbuilder *kb) {
  CHECK_OK(fcl_kbuilder_split_iname(kb, "i", 32, "g.0", "l.0"));
}
static void s_ilp(fcl_kbuilder *kb) {
  CHECK_OK(fcl_kbuilder_split_iname(kb, "i", 64, "g.0", NULL));
  CHECK_OK(fcl_kbuilder_split_iname(kb, "i_inner", 4, "l.0", "ilp"));
}
static void s_vec(fcl_kbuilder *kb) {
  CHECK_OK(fcl_kbuilder_split_iname(kb, "i", 64, "g.0", NULL));
  CHECK_OK(fcl_kbuilder_split_iname(kb, "i_inner", 4, "l.0", "vec"));
}
static const struct {
  const char *name;
  schedule apply;
} schedules[] = {{"one work-item", s_plain},
                 {"i on g.0/l.0 by 32", s_groups},
                 {"ilp by 4", s_ilp},
                 {"vec by 4", s_vec}};

static void run_schedules(fcl_context *ctx, fcl_queue *queue, const fcl_kbuilder *base, int64_t n,
                          reference ref) {
  for (size_t s = 0; s < sizeof schedules / sizeof *schedules; ++s) {
    fcl_kbuilder *kb = NULL;
    CHECK_OK(fcl_kbuilder_copy(base, &kb));
    schedules[s].apply(kb);
    check(ctx, queue, kb, n, ref, schedules[s].name);
    fcl_kbuilder_destroy(&kb);
  }
}

/* ---------------- arithmetic: args a, b (complex), x (real), o1..o3 (complex), r (real) */

static void ref_arith(data *d, int64_t n) {
  double complex *a = d->v[0], *b = d->v[1], *x = d->v[2];
  fcl_dtype tc = d->type[0], tr = d->type[2];
  for (int64_t i = 0; i < n; ++i) {
    double complex t = a[i] * conj(a[i]);
    d->v[3][i] = stored(tc, a[i] * b[i] + x[i] - t / 2);
    d->v[4][i] = stored(tc, a[i] / b[i] - conj(a[i]) + x[i] / b[i]);
    d->v[5][i] = stored(tc, cexp(a[i]) * 2 + CMPLX(creal(x[i]), 1.5) - a[i] / x[i] +
                                (creal(x[i]) > 0 ? a[i] : x[i]));
    d->v[6][i] = stored(tr, cabs(a[i]) + creal(b[i]) * cimag(a[i]) + creal(x[i]) - cimag(x[i]));
  }
}

static void arith_tests(fcl_context *ctx, fcl_queue *queue, fcl_dtype tc) {
  fcl_dtype tr = tc == FCL_COMPLEX64 ? FCL_FLOAT32 : FCL_FLOAT64;
  fcl_kbuilder *kb = NULL;
  CHECK_OK(fcl_kbuilder_create("complex_arith", &kb));
  CHECK_OK(fcl_kbuilder_add_param(kb, "n"));
  const char *names[] = {"a", "b", "x", "o1", "o2", "o3", "r"};
  for (int k = 0; k < 7; ++k)
    CHECK_OK(fcl_kbuilder_add_array(kb, names[k], k == 2 || k == 6 ? tr : tc, "n"));
  CHECK_OK(fcl_kbuilder_add_temporary(kb, "t", tc, FCL_TEMP_PRIVATE, NULL));
  CHECK_OK(fcl_kbuilder_add_domain(kb, "{ [i]: 0 <= i < n }"));
  CHECK_OK(fcl_kbuilder_add_instructions(
      kb, "t = a[i] * conj(a[i])  {id=t}\n"
          "o1[i] = a[i] * b[i] + x[i] - t / 2  {dep=t}\n"
          "<> q = a[i] / b[i]\n"
          "o2[i] = q - conj(a[i]) + x[i] / b[i]\n"
          "o3[i] = exp(a[i]) * 2 + complex(x[i], 1.5) - a[i] / x[i] + (x[i] > 0 ? a[i] : x[i])\n"
          "r[i] = abs(a[i]) + real(b[i]) * imag(a[i]) + real(x[i]) - imag(x[i])"));
  run_schedules(ctx, queue, kb, 1000, ref_arith);
  fcl_kbuilder_destroy(&kb);
}

/* ---------------- a complex matrix-vector product: y[i] = sum(k, m[i, k] * v[k]) */

static void ref_matvec(data *d, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    double complex s = 0;
    for (int64_t k = 0; k < 16; ++k) s += d->v[0][i * 16 + k] * d->v[1][k];
    d->v[2][i] = stored(d->type[2], s);
  }
}

static void matvec_tests(fcl_context *ctx, fcl_queue *queue, fcl_dtype tc) {
  fcl_kbuilder *kb = NULL;
  CHECK_OK(fcl_kbuilder_create("complex_matvec", &kb));
  CHECK_OK(fcl_kbuilder_add_param(kb, "n"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "m", tc, "n, 16"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "v", tc, "16"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "y", tc, "n"));
  CHECK_OK(fcl_kbuilder_add_domain(kb, "{ [i, k]: 0 <= i < n and 0 <= k < 16 }"));
  CHECK_OK(fcl_kbuilder_add_instructions(kb, "y[i] = sum(k, m[i, k] * v[k])"));
  run_schedules(ctx, queue, kb, 256, ref_matvec);
  CHECK_OK(fcl_kbuilder_split_iname(kb, "i", 32, "g.0", "l.0"));
  CHECK_OK(fcl_kbuilder_add_prefetch(kb, (fcl_prefetch){.array = "v", .sweep = "k"}));
  check(ctx, queue, kb, 256, ref_matvec, "v prefetched to local memory");
  fcl_kbuilder_destroy(&kb);
}

/* ---------------- cfloat widened to cdouble: w[i] = zf[i] * zd[i] + zf[i] + d[i] */

static void ref_widen(data *d, int64_t n) {
  for (int64_t i = 0; i < n; ++i) d->v[3][i] = d->v[0][i] * d->v[1][i] + d->v[0][i] + d->v[2][i];
}

static void widen_tests(fcl_context *ctx, fcl_queue *queue) {
  fcl_kbuilder *kb = NULL;
  CHECK_OK(fcl_kbuilder_create("complex_widen", &kb));
  CHECK_OK(fcl_kbuilder_add_param(kb, "n"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "zf", FCL_COMPLEX64, "n"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "zd", FCL_COMPLEX128, "n"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "d", FCL_FLOAT64, "n"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "w", FCL_COMPLEX128, "n"));
  CHECK_OK(fcl_kbuilder_add_domain(kb, "{ [i]: 0 <= i < n }"));
  CHECK_OK(fcl_kbuilder_add_instructions(kb, "w[i] = zf[i] * zd[i] + zf[i] + d[i]"));
  run_schedules(ctx, queue, kb, 500, ref_widen);
  fcl_kbuilder_destroy(&kb);
}

/* ---------------- refusals */

static void refusal_tests(void) {
  fcl_kbuilder *kb = NULL;
  CHECK_OK(fcl_kbuilder_create("complex_errors", &kb));
  CHECK_OK(fcl_kbuilder_add_param(kb, "n"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "a", FCL_COMPLEX64, "n"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "f", FCL_FLOAT32, "n"));
  CHECK_OK(fcl_kbuilder_add_domain(kb, "{ [i]: 0 <= i < n }"));
  const struct {
    const char *insn, *text;
  } bad[] = {{"f[i] = a[i] < a[i]", "'<' of a complex value"},
             {"f[i] = a[i]", "a complex value assigned to 'f' of type float"},
             {"f[i] = (float)a[i]", "a cast"},
             {"a[i] = max(a[i], a[i])", "'max' of a complex value"},
             {"a[i] = sin(a[i])", "'sin' of a complex value"},
             {"a[i] = complex(a[i], 1)", "'complex' of a complex value"},
             {"a[i] = conj(a[i], a[i])", "conj() takes 1 argument(s), 2 given"},
             {"f[i] = f[a[i]]", "[] (as an index)"}};
  for (size_t k = 0; k < sizeof bad / sizeof *bad; ++k)
    CHECK_STATUS(fcl_kbuilder_add_instructions(kb, bad[k].insn), FCL_ERR_INVALID_ARGUMENT,
                 bad[k].text);
  fcl_kbuilder_destroy(&kb);
}

static void scalar_refusal(fcl_context *ctx, fcl_queue *queue) {
  fcl_kbuilder *kb = NULL;
  CHECK_OK(fcl_kbuilder_create("complex_scalar", &kb));
  CHECK_OK(fcl_kbuilder_add_param(kb, "n"));
  CHECK_OK(fcl_kbuilder_add_scalar(kb, "s", FCL_COMPLEX64));
  CHECK_OK(fcl_kbuilder_add_array(kb, "a", FCL_COMPLEX64, "n"));
  CHECK_OK(fcl_kbuilder_add_domain(kb, "{ [i]: 0 <= i < n }"));
  CHECK_OK(fcl_kbuilder_add_instructions(kb, "a[i] = a[i] * s"));
  fcl_launcher *l = NULL;
  CHECK_STATUS(fcl_kbuilder_build(kb, ctx, NULL, queue, &l), FCL_ERR_NOT_SUPPORTED,
               "scalar 's' of type float2");
  fcl_kbuilder_destroy(&kb);
}

static void on_device(const fcl_device_entry *device, void *user) {
  (void)user;
  const char *name = fcl_test_device_name(device->device);
  fcl_context *ctx = NULL;
  fcl_queue *queue = NULL;
  CHECK_OK(fcl_context_create(1, &device->device, &ctx));
  if (ctx) CHECK_OK(fcl_queue_create(ctx, device->device, 0, &queue));
  if (!queue) {
    fcl_context_release(&ctx);
    return;
  }
  fcl_device_info info;
  CHECK_OK(fcl_device_get_info(device->device, &info));
  bool fp64 = fcl_device_has_extension(&info, "cl_khr_fp64");
  arith_tests(ctx, queue, FCL_COMPLEX64);
  matvec_tests(ctx, queue, FCL_COMPLEX64);
  if (fp64) {
    arith_tests(ctx, queue, FCL_COMPLEX128);
    matvec_tests(ctx, queue, FCL_COMPLEX128);
    widen_tests(ctx, queue);
  } else {
    fcl_test_skip_part(name, "the cdouble kernels (no cl_khr_fp64)");
  }
  scalar_refusal(ctx, queue);
  fcl_queue_release(&queue);
  fcl_context_release(&ctx);
}

int main(void) {
  refusal_tests();
  return fcl_test_run_on_devices(on_device, NULL);
}
