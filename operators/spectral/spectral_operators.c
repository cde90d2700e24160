/* Problem-layer descriptions of the spectral operators (flowcl/problem.h). */
#include <stdlib.h>

#include "check.h"
#include "spectral_impl.h"

typedef struct {
  fcl_spectral *spectral;
  fcl_field *in, *out;
  double nu;
  fcl_launcher *kernel; /* the pointwise kernel between the transforms (for statistics) */
} spectral_op;

static fcl_status biot_savart_apply(void *data, const fcl_step_info *info) {
  (void)info;
  spectral_op *o = data;
  return fcl_spectral_biot_savart(o->spectral, o->in, o->out);
}

static fcl_status diffusion_apply(void *data, const fcl_step_info *info) {
  spectral_op *o = data;
  return fcl_spectral_diffuse(o->spectral, o->out, o->nu, info->dt);
}

static fcl_status diffuse_biot_savart_apply(void *data, const fcl_step_info *info) {
  spectral_op *o = data;
  return fcl_spectral_diffuse_biot_savart(o->spectral, o->in, o->nu, info->dt, o->out);
}

static fcl_status project_apply(void *data, const fcl_step_info *info) {
  (void)info;
  spectral_op *o = data;
  return fcl_spectral_project(o->spectral, o->out);
}

/* Its kernel's statistics (device time, bytes); the FFT library's kernels are not profiled. */
static fcl_launcher *kernel_launcher(void *data, int index) {
  return index == 0 ? ((spectral_op *)data)->kernel : NULL;
}

static fcl_status describe(const char *name, fcl_spectral *s, fcl_field *in, fcl_field *out,
                           double nu, fcl_launcher *kernel,
                           fcl_status (*apply)(void *, const fcl_step_info *), fcl_operator *op) {
  spectral_op *o = malloc(sizeof *o);
  if (!o) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "%s", name);
  *o = (spectral_op){s, in, out, nu, kernel};
  *op = (fcl_operator){
      .name = name, .data = o, .apply = apply, .launcher = kernel_launcher, .destroy = free};
  if (in)
    op->uses[op->nuses++] = (fcl_field_use){
        .field = in, .ghosts = 0, .read = true, .written = false};
  op->uses[op->nuses++] = (fcl_field_use){.field = out, .ghosts = 0, .read = !in, .written = true};
  return FCL_OK;
}

fcl_status fcl_spectral_biot_savart_operator(fcl_spectral *s, fcl_field *omega, fcl_field *u,
                                             fcl_operator *out) {
  FCL_CHECK_NULL(s, 1);
  FCL_CHECK_NULL(omega, 2);
  FCL_CHECK_NULL(u, 3);
  FCL_CHECK_NULL(out, 4);
  FCL_TRY(fcl__spectral_check_ncomp(omega, s->dim == 3 ? 3 : 1, 2, "omega"));
  FCL_TRY(fcl__spectral_check_ncomp(u, s->dim, 3, "u"));
  return describe("biot_savart", s, omega, u, 0, s->biot_savart, biot_savart_apply, out);
}

fcl_status fcl_spectral_diffusion_operator(fcl_spectral *s, fcl_field *f, double nu,
                                           fcl_operator *out) {
  FCL_CHECK_NULL(s, 1);
  FCL_CHECK_NULL(f, 2);
  FCL_CHECK_NULL(out, 4);
  if (!(nu >= 0))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 3 (nu): %g (must be >= 0)", nu);
  return describe("spectral_diffusion", s, NULL, f, nu, s->diffuse, diffusion_apply, out);
}

fcl_status fcl_spectral_diffuse_biot_savart_operator(fcl_spectral *s, fcl_field *omega, double nu,
                                                     fcl_field *u, fcl_operator *out) {
  FCL_CHECK_NULL(s, 1);
  FCL_CHECK_NULL(omega, 2);
  FCL_CHECK_NULL(u, 4);
  FCL_CHECK_NULL(out, 5);
  if (!(nu >= 0))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 3 (nu): %g (must be >= 0)", nu);
  FCL_TRY(fcl__spectral_check_ncomp(omega, s->dim == 3 ? 3 : 1, 2, "omega"));
  FCL_TRY(fcl__spectral_check_ncomp(u, s->dim, 4, "u"));
  FCL_TRY(describe("diffusion_biot_savart", s, omega, u, nu, s->diffuse_biot_savart,
                   diffuse_biot_savart_apply, out));
  out->uses[0].written = true; /* the vorticity is diffused in place */
  return FCL_OK;
}

fcl_status fcl_spectral_project_operator(fcl_spectral *s, fcl_field *u, fcl_operator *out) {
  FCL_CHECK_NULL(s, 1);
  FCL_CHECK_NULL(u, 2);
  FCL_CHECK_NULL(out, 3);
  FCL_TRY(fcl__spectral_check_ncomp(u, s->dim, 2, "u"));
  return describe("projection", s, NULL, u, 0, s->project, project_apply, out);
}

typedef struct {
  fcl_spectral *spectral;
  fcl_field *b, *omega;
  double g[3];
} buoyancy_op;

static fcl_status buoyancy_apply(void *data, const fcl_step_info *info) {
  buoyancy_op *o = data;
  return fcl_spectral_buoyancy(o->spectral, o->b, o->g, info->dt, o->omega);
}

static fcl_launcher *buoyancy_launcher(void *data, int index) {
  return index == 0 ? ((buoyancy_op *)data)->spectral->buoyancy : NULL;
}

fcl_status fcl_spectral_buoyancy_operator(fcl_spectral *s, fcl_field *b, const double *g,
                                          fcl_field *omega, fcl_operator *out) {
  FCL_CHECK_NULL(s, 1);
  FCL_CHECK_NULL(b, 2);
  FCL_CHECK_NULL(g, 3);
  FCL_CHECK_NULL(omega, 4);
  FCL_CHECK_NULL(out, 5);
  FCL_TRY(fcl__spectral_check_ncomp(b, 1, 2, "b"));
  FCL_TRY(fcl__spectral_check_ncomp(omega, s->dim == 3 ? 3 : 1, 4, "omega"));
  buoyancy_op *o = calloc(1, sizeof *o);
  if (!o) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "buoyancy");
  *o = (buoyancy_op){.spectral = s, .b = b, .omega = omega};
  for (int a = 0; a < s->dim; ++a) o->g[a] = g[a];
  *out = (fcl_operator){.name = "buoyancy",
                        .data = o,
                        .apply = buoyancy_apply,
                        .launcher = buoyancy_launcher,
                        .destroy = free};
  out->uses[out->nuses++] = (fcl_field_use){
      .field = b, .ghosts = 0, .read = true, .written = false};
  out->uses[out->nuses++] = (fcl_field_use){
      .field = omega, .ghosts = 0, .read = true, .written = true};
  return FCL_OK;
}
