/* Spectral operators: the plan (an FFT plan with one slot per component, the kernels of
 * kernels/spectral.cl) and the launchers every operator call goes through. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "spectral_impl.h"

static const double PI = 3.14159265358979323846;

static fcl_arg real_arg(unsigned index, fcl_dtype dtype, double v) {
  return dtype == FCL_FLOAT64 ? fcl_arg_f64(index, v) : fcl_arg_f32(index, (float)v);
}

/* A launcher over kernel name: nbuf slots, the layout, the scale 1 / N, then extra fixed
 * arguments and per-call parameters; `transfers` slots read or written per call (its bytes). */
static fcl_status make_launcher(fcl_spectral *s, const char *kernel, int nbuf, int transfers,
                                size_t nextra, const fcl_arg *extra, size_t nparams,
                                const fcl_param_spec *params, fcl_launcher **out) {
  const fcl_fft_layout *l = fcl_fft_layout_of(s->fft);
  const fcl_domain *d = fcl_fft_domain(s->fft); /* with walls, the extended one (fft.h) */
  fcl_arg args[24];
  size_t n = 0;
  const int nslots = fcl_fft_nslots(s->fft);
  for (int b = 0; b < nbuf; ++b, ++n)
    args[n] = fcl_arg_buffer((unsigned)n, fcl_fft_slot(s->fft, b < nslots ? b : nslots - 1));
  for (int m = 0; m < 3; ++m, ++n) args[n] = fcl_arg_i32((unsigned)n, l->order[m]);
  args[n] = fcl_arg_i64((unsigned)n, l->pitch);
  ++n;
  for (int a = 0; a < 3; ++a, ++n) args[n] = fcl_arg_i64((unsigned)n, l->offset[a]);
  for (int a = 0; a < 3; ++a, ++n)
    args[n] = fcl_arg_i64((unsigned)n, a < d->dim ? d->resolution[a] : 1);
  for (int a = 0; a < 3; ++a, ++n)
    args[n] = real_arg((unsigned)n, s->dtype, a < d->dim ? 2 * PI / d->length[a] : 0.0);
  double points = 1;
  for (int a = 0; a < d->dim; ++a) points *= (double)d->resolution[a];
  args[n] = real_arg((unsigned)n, s->dtype, 1.0 / points);
  ++n;
  for (size_t e = 0; e < nextra; ++e) {
    args[n] = extra[e];
    args[n].index = (unsigned)n;
    ++n;
  }
  fcl_param_spec ps[4];
  for (size_t p = 0; p < nparams; ++p) {
    ps[p] = params[p];
    ps[p].index = (unsigned)(n + p);
  }
  const size_t value_bytes = l->count * 2 * fcl_dtype_size(s->dtype);
  fcl_launch_config cfg = {
      .queue = s->queue, .work_dim = 2, .bytes_per_launch = (size_t)transfers * value_bytes};
  /* memory dimensions 0 and 1 as one (kernels/spectral.cl), rows over the pitch: the
   * work-items past local[order[0]] compute on the padding, which no transform reads (a
   * guard would cost every item) */
  cfg.global[0] = (size_t)l->pitch * (size_t)l->local[l->order[1]];
  cfg.global[1] = (size_t)l->local[l->order[2]];
  char name[96];
  snprintf(name, sizeof name, "spectral.%s", kernel + sizeof "spectral_" - 1);
  return fcl_launcher_create_kernel(s->program, name, kernel, n, args, nparams, ps, &cfg, out);
}

static fcl_status build(fcl_spectral *s, fcl_context *context) {
  fcl_device *dev;
  FCL_TRY(fcl_queue_device(s->queue, &dev));
  fcl_device_info info;
  FCL_TRY(fcl_device_get_info(dev, &info));
  /* NVIDIA's compiler gives these kernels at most 32 registers; allowed 64 (what a 1024-item
   * work-group can have), the 512^3 diffusion + Biot-Savart kernel takes 1.86 ms instead of
   * 2.30 on an H200, the same results bit for bit (docs/benchmarks.md). */
  const bool nv = strstr(info.extensions, "cl_nv_compiler_options") != NULL;
  char options[96];
  snprintf(options, sizeof options, "-DT=%s%s%s", s->dtype == FCL_FLOAT64 ? "double" : "float",
           info.double_fp_config ? " -DFCL_FP64" : "", nv ? " -cl-nv-maxrregcount=64" : "");
  FCL_TRY(fcl_program_create_builtin(context, "spectral.cl", &s->program));
  FCL_TRY(fcl_program_build(s->program, options));
  if (s->empty) return FCL_OK; /* nothing to launch on this rank */
  const bool three = s->dim == 3;
  fcl_value_type real = s->dtype == FCL_FLOAT64 ? FCL_TYPE_F64 : FCL_TYPE_F32;
  /* transfers (kernels/spectral.cl): slots read plus slots written */
  FCL_TRY(make_launcher(s, "spectral_poisson", 1, 2, 0, NULL, 0, NULL, &s->poisson));
  fcl_param_spec mean[4] = {{"mean_x", 0, real}, {"mean_y", 0, real}, {"mean_z", 0, real}};
  FCL_TRY(make_launcher(s, three ? "spectral_biot_savart3" : "spectral_biot_savart2", three ? 3 : 2,
                        three ? 6 : 3, 0, NULL, 3, mean, &s->biot_savart));
  /* In 2D the kernel never touches its third buffer (the last slot stands in). */
  fcl_arg dim_arg = fcl_arg_i32(0, s->dim);
  FCL_TRY(make_launcher(s, "spectral_project", 3, 2 * s->dim, 1, &dim_arg, 0, NULL, &s->project));
  fcl_param_spec nu = {"nu_dt", 0, real};
  FCL_TRY(make_launcher(s, "spectral_diffuse", 1, 2, 0, NULL, 1, &nu, &s->diffuse));
  fcl_param_spec nu_mean[4] = {nu, mean[0], mean[1], mean[2]};
  FCL_TRY(
      make_launcher(s, three ? "spectral_diffuse_biot_savart3" : "spectral_diffuse_biot_savart2",
                    three ? 6 : 3, three ? 9 : 4, 0, NULL, 4, nu_mean, &s->diffuse_biot_savart));
  fcl_param_spec deriv[2] = {{"axis", 0, FCL_TYPE_I32}, {"order", 0, FCL_TYPE_I32}};
  FCL_TRY(make_launcher(s, "spectral_derivative", 1, 2, 0, NULL, 2, deriv, &s->derivative));
  FCL_TRY(make_launcher(s, three ? "spectral_curl3" : "spectral_curl2", three ? 3 : 2,
                        three ? 6 : 3, 0, NULL, 0, NULL, &s->curl));
  fcl_param_spec g[3] = {{"gx", 0, real}, {"gy", 0, real}, {"gz", 0, real}};
  FCL_TRY(make_launcher(s, three ? "spectral_buoyancy3" : "spectral_buoyancy2", three ? 4 : 2,
                        three ? 7 : 3, 0, NULL, three ? 3 : 2, g, &s->buoyancy));
  FCL_TRY(fcl_param_set_create(s->buoyancy, &s->buoyancy_params));
  FCL_TRY(fcl_param_set_create(s->diffuse, &s->diffuse_params));
  FCL_TRY(fcl_param_set_create(s->derivative, &s->derivative_params));
  FCL_TRY(fcl_param_set_create(s->diffuse_biot_savart, &s->diffuse_biot_savart_params));
  FCL_TRY(fcl_param_set_create(s->biot_savart, &s->biot_savart_params));
  return fcl_spectral_set_mean_velocity(s, NULL);
}

fcl_status fcl_spectral_set_mean_velocity(fcl_spectral *s, const double *velocity) {
  FCL_CHECK_NULL(s, 1);
  for (int a = 0; velocity && a < s->dim; ++a)
    if (!isfinite(velocity[a]))
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 2 (velocity): component %d is %g", a,
                       velocity[a]);
  static const char *const names[3] = {"mean_x", "mean_y", "mean_z"};
  for (int a = 0; a < 3; ++a) {
    double v = velocity && a < s->dim ? velocity[a] : 0.0;
    s->mean[a] = v;
    FCL_TRY(fcl__spectral_set_real(s, s->biot_savart_params, names[a], v));
    FCL_TRY(fcl__spectral_set_real(s, s->diffuse_biot_savart_params, names[a], v));
  }
  return FCL_OK;
}

fcl_status fcl_spectral_create(const fcl_field *like, fcl_fft_backend backend, fcl_pool *pool,
                               fcl_spectral **out) {
  FCL_CHECK_NULL(like, 1);
  FCL_CHECK_NULL(pool, 3);
  FCL_CHECK_NULL(out, 4);
  *out = NULL;
  fcl_spectral *s = calloc(1, sizeof *s);
  if (!s)
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "spectral operators for '%s'", fcl_field_name(like));
  s->topo = fcl_field_topology(like);
  s->dim = fcl_topology_domain(s->topo)->dim;
  for (int a = 0; a < s->dim; ++a)
    if (fcl_topology_domain(s->topo)->bc[a][0] != FCL_BC_PERIODIC) s->walled |= 1u << a;
  s->dtype = fcl_field_dtype(like);
  /* slots: one per component, and as many again for the velocity of the fused
   * diffusion + Biot-Savart pass (3D: omega and u, 3 each; 2D: omega, then ux and uy) */
  fcl_status st = fcl_fft_create(like, backend, s->dim == 3 ? 6 : 3, pool, &s->fft);
  if (st == FCL_OK) {
    s->queue = fcl_field_queue(like);
    s->empty = fcl_fft_layout_of(s->fft)->count == 0;
    st = build(s, fcl_field_context(like));
  }
  if (st != FCL_OK) {
    fcl_spectral_destroy(&s);
    return st;
  }
  *out = s;
  return FCL_OK;
}

void fcl_spectral_destroy(fcl_spectral **spectral) {
  if (!spectral || !*spectral) return;
  fcl_spectral *s = *spectral;
  fcl_param_set_destroy(&s->diffuse_params);
  fcl_param_set_destroy(&s->derivative_params);
  fcl_param_set_destroy(&s->diffuse_biot_savart_params);
  fcl_param_set_destroy(&s->biot_savart_params);
  fcl_param_set_destroy(&s->buoyancy_params);
  fcl_launcher *all[] = {s->poisson, s->biot_savart,         s->project, s->diffuse, s->derivative,
                         s->curl,    s->diffuse_biot_savart, s->buoyancy};
  for (size_t i = 0; i < sizeof all / sizeof *all; ++i) fcl_launcher_destroy(&all[i]);
  fcl_program_release(&s->program);
  fcl_fft_destroy(&s->fft);
  free(s);
  *spectral = NULL;
}

fcl_fft *fcl_spectral_fft(const fcl_spectral *s) { return s ? s->fft : NULL; }

fcl_status fcl__spectral_run(fcl_spectral *s, fcl_launcher *launcher, const fcl_param_set *set) {
  if (s->empty) return FCL_OK;
  return fcl_launcher_call(launcher, s->queue, set, 0, NULL, NULL);
}

fcl_status fcl__spectral_check_ncomp(const fcl_field *f, int ncomp, int pos, const char *name) {
  if (fcl_field_ncomp(f) != ncomp)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "argument %d (%s): field '%s' has %d component(s), "
                     "needs %d",
                     pos, name, fcl_field_name(f), fcl_field_ncomp(f), ncomp);
  return FCL_OK;
}

fcl_status fcl__spectral_set_real(fcl_spectral *s, fcl_param_set *set, const char *name,
                                  double value) {
  if (s->empty) return FCL_OK;
  return s->dtype == FCL_FLOAT64 ? fcl_param_set_f64(set, name, value)
                                 : fcl_param_set_f32(set, name, (float)value);
}
