/* The advection operator: checks the fields, plans one list of kernels per axis (chunks of
 * components that fit local memory), and runs split steps with the CFL check. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advection_impl.h"
#include "check.h"

static const char *const formula_names[] = {"L2_1", "L2_2", "L4_2", "L6_4", "L8_4"};
enum { NUM_FORMULAS = sizeof formula_names / sizeof *formula_names };

const char *fcl_remesh_formula_name(fcl_remesh_formula formula) {
  return (unsigned)formula < NUM_FORMULAS ? formula_names[formula] : NULL;
}

fcl_status fcl_remesh_formula_parse(const char *text, fcl_remesh_formula *formula) {
  FCL_CHECK_NULL(text, 1);
  FCL_CHECK_NULL(formula, 2);
  char clean[16];
  size_t n = 0;
  for (const char *c = text; *c && n + 1 < sizeof clean; ++c) /* "l4,2", "L42", "Lambda4_2" */
    if (isalnum((unsigned char)*c)) clean[n++] = (char)toupper((unsigned char)*c);
  clean[n] = '\0';
  if (!strcmp(clean, "M4")) {
    *formula = FCL_REMESH_L2_1;
    return FCL_OK;
  }
  const char *digits = !strncmp(clean, "LAMBDA", 6) ? clean + 6 : clean[0] == 'L' ? clean + 1 : "";
  for (int f = 0; f < NUM_FORMULAS; ++f) {
    char want[3] = {formula_names[f][1], formula_names[f][3], '\0'};
    if (!strcmp(digits, want)) {
      *formula = (fcl_remesh_formula)f;
      return FCL_OK;
    }
  }
  return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                   "remeshing formula '%s': expected one of L2_1 "
                   "(M'4), L2_2, L4_2, L6_4, L8_4",
                   text);
}

fcl_advection_options fcl_advection_default_options(void) {
  return (fcl_advection_options){.formula = FCL_REMESH_L4_2,
                                 .rk_order = 2,
                                 .interp = FCL_INTERP_LINEAR,
                                 .splitting = FCL_SPLIT_STRANG,
                                 .max_cfl = 1.0,
                                 .cfl_lag = 2};
}

fcl__adv_reach fcl__adv_reach_of(const fcl_advection_options *o) {
  fcl__adv_reach r;
  r.support = fcl__remesh_formulas[o->formula].support;
  r.cfl = (int)ceil(o->max_cfl > 0 ? o->max_cfl : 1.0);
  r.interp = o->interp == FCL_INTERP_KERNEL ? r.support : 1;
  r.hp = r.support + r.cfl;
  r.hu = r.hp + r.cfl + r.interp;
  return r;
}

/* Options with the zero defaults filled in, or an error naming the wrong one. */
static fcl_status resolve(const fcl_advection_options *in, fcl_advection_options *out) {
  *out = in ? *in : fcl_advection_default_options();
  if (!out->rk_order) out->rk_order = 2;
  if (out->max_cfl == 0) out->max_cfl = 1.0;
  if (!out->cfl_lag) out->cfl_lag = 2;
  if (!fcl_remesh_formula_name(out->formula))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "advection options: formula %d is not a "
                     "fcl_remesh_formula",
                     (int)out->formula);
  if (out->rk_order < 2 || out->rk_order > 4)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "advection options: rk_order %d (2, 3 or 4)",
                     out->rk_order);
  if (out->interp != FCL_INTERP_LINEAR && out->interp != FCL_INTERP_KERNEL)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "advection options: interp %d", (int)out->interp);
  if (out->splitting != FCL_SPLIT_STRANG && out->splitting != FCL_SPLIT_FIRST_ORDER &&
      out->splitting != FCL_SPLIT_ALTERNATING)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "advection options: splitting %d",
                     (int)out->splitting);
  if (out->cfl_check != FCL_CFL_CHECK_NOW && out->cfl_check != FCL_CFL_CHECK_DEFERRED &&
      out->cfl_check != FCL_CFL_CHECK_BOUND)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "advection options: cfl_check %d",
                     (int)out->cfl_check);
  if (out->cfl_check == FCL_CFL_CHECK_BOUND &&
      !(out->velocity_bound > 0 && isfinite(out->velocity_bound)))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "advection options: velocity_bound %g with "
                     "FCL_CFL_CHECK_BOUND (must be finite and > 0)",
                     out->velocity_bound);
  if (out->max_segment < 0)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "advection options: max_segment %lld (>= 0)",
                     (long long)out->max_segment);
  if (out->strided != FCL_ADV_STRIDED_AUTO && out->strided != FCL_ADV_STRIDED_TILES &&
      out->strided != FCL_ADV_STRIDED_WALK)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "advection options: strided %d", (int)out->strided);
  if (out->cfl_lag < 1 || out->cfl_lag > FCL_CFL_MAX_LAG)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "advection options: cfl_lag %d (1 .. %d, 0: 2)",
                     out->cfl_lag, FCL_CFL_MAX_LAG);
  if (!(out->max_cfl > 0 && out->max_cfl <= 16))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "advection options: max_cfl %g (in (0, 16])",
                     out->max_cfl);
  return FCL_OK;
}

/* Walls: particles beyond a wall are the mirror images the ghost exchange puts there (each
 * field's own parity), pushed by the mirrored velocity, which must be odd (no flow through the
 * wall) for the images to mirror the particles' motion. Checked at creation and at every step
 * (a condition set afterwards with fcl_field_set_component_bc). */
static fcl_status check_no_penetration(const fcl_field *u) {
  const fcl_domain *d = fcl_topology_domain(fcl_field_topology(u));
  for (int a = 0; a < d->dim; ++a)
    for (int side = 0; side < 2 && d->bc[a][0] != FCL_BC_PERIODIC; ++side)
      if (fcl_field_component_bc(u, a, a, side) != FCL_BC_DIRICHLET)
        return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                         "advection: component %d of the velocity '%s' is Neumann at the %s "
                         "wall of axis %d; it must be Dirichlet there (no flow through a wall: "
                         "fcl_field_set_component_bc)",
                         a, fcl_field_name(u), side ? "upper" : "lower", a);
  return FCL_OK;
}
/* FCL_ADV_STRIDED_AUTO: FLOWCL_ADVECTION_STRIDED (auto, tiles or walk) may name the kernels. */
static fcl_status strided_from_env(fcl_adv_strided *strided) {
  const char *v = getenv("FLOWCL_ADVECTION_STRIDED");
  if (*strided != FCL_ADV_STRIDED_AUTO || !v || !*v || !strcmp(v, "auto")) return FCL_OK;
  if (!strcmp(v, "tiles"))
    *strided = FCL_ADV_STRIDED_TILES;
  else if (!strcmp(v, "walk"))
    *strided = FCL_ADV_STRIDED_WALK;
  else
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "FLOWCL_ADVECTION_STRIDED='%s': expected auto, tiles or walk", v);
  return FCL_OK;
}

int fcl_advection_ghosts_needed(const fcl_advection_options *options) {
  fcl_advection_options o;
  if (resolve(options, &o) != FCL_OK) return -1;
  return fcl__adv_reach_of(&o).hu;
}

static fcl_status check_fields(const fcl_field *u, int nfields, fcl_field *const *fields,
                               const fcl__adv_reach *reach, bool wrap[3]) {
  const fcl_topology *topo = fcl_field_topology(u);
  const fcl_domain *d = fcl_topology_domain(topo);
  if (d->dim < 2)
    return FCL_ERROR(FCL_ERR_NOT_SUPPORTED, "advection: '%s' is %dD (2D and 3D only)",
                     fcl_field_name(u), d->dim);
  if (fcl_field_ncomp(u) != d->dim)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "advection: argument 1 (velocity): '%s' has %d "
                     "components, a %dD velocity has %d",
                     fcl_field_name(u), fcl_field_ncomp(u), d->dim, d->dim);
  for (int f = 0; f < nfields; ++f) {
    const fcl_field *q = fields[f];
    if (!q)
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "advection: argument 3 (fields): entry %d is "
                       "NULL",
                       f);
    if (q == u)
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "advection: '%s' is the velocity itself (advect "
                       "a copy)",
                       fcl_field_name(q));
    if (fcl_field_topology(q) != topo || fcl_field_dtype(q) != fcl_field_dtype(u) ||
        fcl_field_queue(q) != fcl_field_queue(u))
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "advection: '%s' is not on the topology, "
                       "precision and queue of the velocity '%s'",
                       fcl_field_name(q), fcl_field_name(u));
    for (int g = 0; g < f; ++g)
      if (fields[g] == q)
        return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "advection: '%s' is listed twice",
                         fcl_field_name(q));
  }
  const int *procs = fcl_topology_procs(topo), *ghosts = fcl_topology_ghosts(topo);
  const int64_t *local = fcl_topology_local_resolution(topo);
  FCL_TRY(check_no_penetration(u));
  for (int a = 0; a < d->dim; ++a) {
    wrap[a] = procs[a] == 1 && d->bc[a][0] == FCL_BC_PERIODIC;
    if (wrap[a] && local[a] < reach->hu)
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "advection: axis %d has %lld points, fewer "
                       "than the kernels' reach of %d",
                       a, (long long)local[a], reach->hu);
    if (!wrap[a] && ghosts[a] < reach->hu)
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "advection: axis %d %s and needs %d ghosts for these options (formula, "
                       "interpolation, max_cfl); the topology has %d",
                       a, procs[a] > 1 ? "is split over ranks" : "has walls", reach->hu, ghosts[a]);
  }
  return FCL_OK;
}

/* The fields' buffers as the parameters of an axis's kernels: set at every call, so that the
 * kernels follow fcl_field_swap (a value unchanged is not given to the kernel again). */
static fcl_status bind_fields(fcl_advection *adv, int axis) {
  char name[32];
  FCL_TRY(fcl_param_set_buffer(adv->params[axis], "u", fcl_field_buffer(adv->velocity, axis)));
  int c = 0;
  for (int f = 0; f < adv->nfields; ++f)
    for (int m = 0; m < fcl_field_ncomp(adv->fields[f]); ++m, ++c) {
      snprintf(name, sizeof name, "q%d", c);
      FCL_TRY(fcl_param_set_buffer(adv->params[axis], name, fcl_field_buffer(adv->fields[f], m)));
    }
  return FCL_OK;
}

/* One axis: a list of kernels, each advecting as many components as local memory holds. */
static fcl_status plan_axis(fcl_advection *adv, int axis) {
  const fcl_field *u = adv->velocity;
  const fcl_topology *topo = fcl_field_topology(u);
  fcl__adv_kernel_spec spec = {.axis = axis,
                               .wrap = adv->wrap[axis],
                               .dtype = fcl_field_dtype(u),
                               .formula = &fcl__remesh_formulas[adv->opt.formula],
                               .opt = adv->opt,
                               .reach = adv->reach};
  memcpy(spec.n, fcl_topology_local_resolution(topo), sizeof spec.n);
  memcpy(spec.padded, fcl_field_padded_shape(u), sizeof spec.padded);
  memcpy(spec.origin, fcl_topology_origin(topo), sizeof spec.origin);
  fcl_device *dev;
  fcl_device_info info;
  FCL_TRY(fcl_queue_device(fcl_field_queue(u), &dev));
  FCL_TRY(fcl_device_get_info(dev, &info));
  /* walking kernels measured faster on GPUs in 3D (in 2D whole lines give as many work-items as
   * the lines of one axis: not measured) */
  if (spec.opt.strided == FCL_ADV_STRIDED_AUTO)
    spec.opt.strided = info.type & FCL_DEVICE_GPU && adv->dim == 3 ? FCL_ADV_STRIDED_WALK
                                                                   : FCL_ADV_STRIDED_TILES;
  char name[32];
  snprintf(name, sizeof name, "advection.%c", "xyz"[axis]);
  FCL_TRY(fcl_launcher_create_list(name, &adv->dir[axis]));
  const double points = (double)(spec.n[0] * spec.n[1] * spec.n[2]);
  for (int first = 0; first < adv->ncomp;) {
    spec.first_comp = first;
    spec.ncomp = adv->ncomp - first;
    while (spec.ncomp > 1 && !fcl__adv_fits(&spec, 1, false, info.local_mem_size)) spec.ncomp--;
    fcl_launcher *k = NULL, *halo = NULL;
    size_t halo_elements = 0;
    FCL_TRY(fcl__adv_kernel_build(&spec, fcl_field_context(u), fcl_field_queue(u), &k, &halo,
                                  &halo_elements));
    const size_t size = fcl_dtype_size(spec.dtype);
    const double bytes = (1.0 + 2.0 * spec.ncomp) * points * (double)size;
    fcl_status st = FCL_OK;
    for (int c = first; halo && c < first + spec.ncomp && st == FCL_OK; ++c)
      st = fcl_array_create(fcl_field_pool(u), fcl_field_queue(u), spec.dtype, 1, &halo_elements,
                            &adv->halo[axis][c]);
    if (halo && st == FCL_OK)
      st = fcl_launcher_set_bytes_per_launch(halo, 2 * halo_elements * spec.ncomp * size);
    if (halo && st == FCL_OK) st = fcl_launcher_list_push(adv->dir[axis], halo);
    if (halo && st != FCL_OK) fcl_launcher_destroy(&halo);
    if (st == FCL_OK) st = fcl_launcher_set_bytes_per_launch(k, (size_t)bytes);
    if (st == FCL_OK)
      st = fcl_launcher_list_push(adv->dir[axis], k);
    else
      fcl_launcher_destroy(&k);
    FCL_TRY(st);
    adv->bytes[axis] += bytes;
    first += spec.ncomp;
  }
  FCL_TRY(fcl_param_set_create(adv->dir[axis], &adv->params[axis]));
  for (int c = 0; c < adv->ncomp; ++c) {
    snprintf(name, sizeof name, "h%d", c);
    if (adv->halo[axis][c])
      FCL_TRY(fcl_param_set_buffer(adv->params[axis], name, fcl_array_buffer(adv->halo[axis][c])));
  }
  return bind_fields(adv, axis);
}

fcl_status fcl_advection_create(fcl_field *velocity, int nfields, fcl_field *const *fields,
                                const fcl_advection_options *options, fcl_advection **out) {
  FCL_CHECK_NULL(velocity, 1);
  FCL_CHECK_NULL(fields, 3);
  FCL_CHECK_NULL(out, 5);
  *out = NULL;
  if (nfields < 1)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 2 (nfields): must be >= 1, got %d",
                     nfields);
  fcl_advection_options opt;
  FCL_TRY(resolve(options, &opt));
  FCL_TRY(strided_from_env(&opt.strided));
  fcl__adv_reach reach = fcl__adv_reach_of(&opt);
  bool wrap[3] = {true, true, true};
  FCL_TRY(check_fields(velocity, nfields, fields, &reach, wrap));
  int ncomp = 0;
  for (int f = 0; f < nfields; ++f) ncomp += fcl_field_ncomp(fields[f]);
  if (ncomp > FCL__ADV_MAX_COMPS)
    return FCL_ERROR(FCL_ERR_NOT_SUPPORTED,
                     "advection: %d components (at most %d per "
                     "operator)",
                     ncomp, FCL__ADV_MAX_COMPS);
  fcl_advection *adv = calloc(1, sizeof *adv);
  if (!adv || !(adv->fields = malloc((size_t)nfields * sizeof *adv->fields))) {
    free(adv);
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "advection");
  }
  memcpy(adv->fields, fields, (size_t)nfields * sizeof *fields);
  adv->velocity = velocity;
  adv->nfields = nfields;
  adv->ncomp = ncomp;
  adv->opt = opt;
  adv->reach = reach;
  memcpy(adv->wrap, wrap, sizeof wrap);
  const fcl_domain *d = fcl_topology_domain(fcl_field_topology(velocity));
  adv->dim = d->dim;
  fcl_status st = FCL_OK;
  for (int a = 0; a < adv->dim && st == FCL_OK; ++a) {
    adv->dx[a] = fcl_domain_spacing(d, a);
    st = plan_axis(adv, a);
  }
  if (st != FCL_OK) {
    fcl_advection_destroy(&adv);
    return st;
  }
  *out = adv;
  return FCL_OK;
}

void fcl_advection_destroy(fcl_advection **adv) {
  if (!adv || !*adv) return;
  for (int a = 0; a < 3; ++a) {
    fcl_param_set_destroy(&(*adv)->params[a]);
    fcl_launcher_destroy(&(*adv)->dir[a]);
    for (int c = 0; c < FCL__ADV_MAX_COMPS; ++c) fcl_array_destroy(&(*adv)->halo[a][c]);
  }
  for (int k = 0; k < FCL_CFL_MAX_LAG; ++k) fcl_reduction_destroy(&(*adv)->pending[k].umax);
  free((*adv)->fields);
  free(*adv);
  *adv = NULL;
}

/* A substep along axis (velocity ghosts current). */
static fcl_status substep(fcl_advection *adv, int axis, double dt) {
  if (!adv->wrap[axis]) /* the axes that wrap read periodic images: their ghosts left out */
    for (int f = 0; f < adv->nfields; ++f)
      FCL_TRY(fcl_field_ghosts_update_unwrapped(adv->fields[f]));
  const double cdt = dt / adv->dx[axis];
  FCL_TRY(bind_fields(adv, axis));
  if (fcl_field_dtype(adv->velocity) == FCL_FLOAT64)
    FCL_TRY(fcl_param_set_f64(adv->params[axis], "cdt", cdt));
  else
    FCL_TRY(fcl_param_set_f32(adv->params[axis], "cdt", (float)cdt));
  return fcl_launcher_call(adv->dir[axis], fcl_field_queue(adv->velocity), adv->params[axis], 0,
                           NULL, NULL);
}

fcl_status fcl_advection_direction(fcl_advection *adv, int axis, double dt) {
  FCL_CHECK_NULL(adv, 1);
  if (axis < 0 || axis >= adv->dim)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "argument 2 (axis): %d is not an axis of the "
                     "%dD domain",
                     axis, adv->dim);
  if (!isfinite(dt)) return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 3 (dt): not finite");
  if (!adv->wrap[axis]) FCL_TRY(fcl_field_ghosts_update_unwrapped(adv->velocity));
  return substep(adv, axis, dt);
}

static fcl_status advance(fcl_advection *adv, double dt, bool velocity_current, int64_t index);

/* dt max|u_d| / dx_d <= max_cfl on every axis, or an error naming the step (index) and, for a
 * deferred check, when it ran (when: "" before the step). */
static fcl_status check_cfl(const fcl_advection *adv, double dt, const double *umax, int64_t index,
                            const char *when) {
  for (int a = 0; a < adv->dim; ++a) {
    if (!(umax[a] >= 0 && isfinite(umax[a])))
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "advection, step %lld%s: max|u_%c| = %g (must be finite and >= 0)",
                       (long long)index, when, "xyz"[a], umax[a]);
    const double cfl = dt * umax[a] / adv->dx[a];
    /* the bound is met when it holds up to the rounding of the velocity's precision */
    const double eps = fcl_field_dtype(adv->velocity) == FCL_FLOAT64 ? 1e-15 : 1e-6;
    if (!(cfl <= adv->opt.max_cfl * (1 + 4 * eps)))
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "advection, step %lld%s: dt * max|u_%c| / dx = %g * %g / %g = %g exceeds "
                       "max_cfl = %g the kernels were built for (lower dt or raise max_cfl)",
                       (long long)index, when, "xyz"[a], dt, umax[a], adv -> dx[a], cfl,
                       adv -> opt.max_cfl);
  }
  return FCL_OK;
}

/* FCL_CFL_CHECK_DEFERRED: finish and check the reduction of ring slot k, if one is in flight;
 * index: the step now being taken, or -1 when settling after the last one. */
static fcl_status check_pending(fcl_advection *adv, int k, int64_t index) {
  fcl__adv_pending *p = &adv->pending[k];
  if (!fcl_reduction_in_flight(p->umax)) return FCL_OK;
  double umax[3] = {0, 0, 0};
  FCL_TRY(fcl_reduction_finish(p->umax, umax));
  char when[96];
  if (index >= 0)
    snprintf(when, sizeof when, " (deferred check, at step %lld)", (long long)index);
  else
    snprintf(when, sizeof when, " (deferred check, settled after step %lld)", (long long)adv->last);
  return check_cfl(adv, p->dt, umax, p->step, when);
}

/* FCL_CFL_CHECK_DEFERRED: the step cfl_lag steps back is checked (its slot of the ring), then
 * the slot measures the velocity this step starts from. Every rank takes the same steps, so
 * they finish the same reductions (each an MPI_Allreduce) in the same order. */
static fcl_status deferred_check(fcl_advection *adv, double dt, int64_t index) {
  const int k = (int)(adv->deferred % adv->opt.cfl_lag);
  if (!adv->pending[k].umax)
    FCL_TRY(fcl_reduction_create(adv->velocity, FCL_REDUCE_NORM_LINF, &adv->pending[k].umax));
  FCL_TRY(check_pending(adv, k, index));
  adv->pending[k].dt = dt;
  adv->pending[k].step = index;
  FCL_TRY(fcl_reduction_start(adv->pending[k].umax));
  ++adv->deferred;
  adv->last = index;
  return FCL_OK;
}

fcl_status fcl_advection_settle(fcl_advection *adv) {
  FCL_CHECK_NULL(adv, 1);
  if (adv->opt.cfl_check != FCL_CFL_CHECK_DEFERRED) return FCL_OK;
  fcl_status first = FCL_OK;
  char why[1024] = "";
  const int lag = adv->opt.cfl_lag;
  for (int64_t j = 0; j < lag; ++j) { /* oldest first: the slot after the last one filled */
    const fcl_status st = check_pending(adv, (int)((adv->deferred + j) % lag), -1);
    if (st != FCL_OK && first == FCL_OK) {
      first = st;
      snprintf(why, sizeof why, "%s", fcl_last_error());
    }
  }
  return first == FCL_OK ? FCL_OK : FCL_ERROR(first, "%s", why);
}

/* A step, the CFL checked with umax (NULL: as the options say); velocity_current: its ghosts
 * are up to date (a problem's step refreshed them), else they are exchanged first; index: the
 * step's index (its parity orders an alternating splitting's substeps). Its message names dt
 * without a number: a problem's step passes info->dt, not an argument of the user's call. */
static fcl_status step(fcl_advection *adv, double dt, const double *bound, bool velocity_current,
                       int64_t index) {
  if (!(isfinite(dt) && dt >= 0))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "dt = %g (must be finite and >= 0)", dt);
  if (bound) {
    FCL_TRY(check_cfl(adv, dt, bound, index, ""));
    return advance(adv, dt, velocity_current, index);
  }
  double umax[3] = {0, 0, 0};
  if (adv->opt.cfl_check == FCL_CFL_CHECK_BOUND) {
    for (int a = 0; a < adv->dim; ++a) umax[a] = adv->opt.velocity_bound;
    return step(adv, dt, umax, velocity_current, index);
  }
  if (adv->opt.cfl_check == FCL_CFL_CHECK_DEFERRED) {
    FCL_TRY(deferred_check(adv, dt, index));
    return advance(adv, dt, velocity_current, index);
  }
  fcl_reduction **now = &adv->pending[0].umax;
  if (!*now) FCL_TRY(fcl_reduction_create(adv->velocity, FCL_REDUCE_NORM_LINF, now));
  FCL_TRY(fcl_reduction_start(*now));
  FCL_TRY(fcl_reduction_finish(*now, umax));
  FCL_TRY(check_cfl(adv, dt, umax, index, ""));
  return advance(adv, dt, velocity_current, index);
}

fcl_status fcl_advection_step(fcl_advection *adv, double dt) {
  FCL_CHECK_NULL(adv, 1);
  return step(adv, dt, NULL, false, adv->calls);
}

fcl_status fcl_advection_step_bounded(fcl_advection *adv, double dt, const double *umax) {
  FCL_CHECK_NULL(adv, 1);
  FCL_CHECK_NULL(umax, 3);
  return step(adv, dt, umax, false, adv->calls);
}

/* The split step itself (the CFL check done). */
static fcl_status advance(fcl_advection *adv, double dt, bool velocity_current, int64_t index) {
  FCL_TRY(check_no_penetration(adv->velocity));
  ++adv->calls;
  bool exchange = false;
  for (int a = 0; a < adv->dim; ++a) exchange = exchange || !adv->wrap[a];
  if (exchange && !velocity_current) FCL_TRY(fcl_field_ghosts_update_unwrapped(adv->velocity));
  const int last = adv->dim - 1;
  switch (adv->opt.splitting) {
    case FCL_SPLIT_FIRST_ORDER:
      for (int a = 0; a <= last; ++a) FCL_TRY(substep(adv, a, dt));
      return FCL_OK;
    case FCL_SPLIT_ALTERNATING:
      for (int s = 0; s <= last; ++s) FCL_TRY(substep(adv, index % 2 ? last - s : s, dt));
      return FCL_OK;
    default:
      for (int a = 0; a < last; ++a) FCL_TRY(substep(adv, a, dt / 2));
      FCL_TRY(substep(adv, last, dt));
      for (int a = last - 1; a >= 0; --a) FCL_TRY(substep(adv, a, dt / 2));
      return FCL_OK;
  }
}

fcl_launcher *fcl_advection_launcher(const fcl_advection *adv, int axis) {
  return adv && axis >= 0 && axis < adv->dim ? adv->dir[axis] : NULL;
}

double fcl_advection_step_bytes(const fcl_advection *adv) {
  if (!adv) return 0;
  double b = 0;
  for (int a = 0; a < adv->dim; ++a)
    b += adv->bytes[a] * (adv->opt.splitting == FCL_SPLIT_STRANG && a < adv->dim - 1 ? 2 : 1);
  return b;
}

/* In a problem's step the velocity's ghosts are refreshed by the problem where its use below
 * says so: not exchanged again here when another operator's use already did. */
static fcl_status operator_apply(void *data, const fcl_step_info *info) {
  fcl_advection *adv = data;
  return step(adv, info->dt, info->umax, adv->problem_refreshes, info->step);
}

static fcl_status operator_settle(void *data) { return fcl_advection_settle(data); }

static fcl_launcher *operator_launcher(void *data, int index) {
  const fcl_advection *adv = data;
  return index < adv->dim ? adv->dir[index] : NULL;
}

fcl_status fcl_advection_operator(fcl_advection *adv, fcl_operator *out) {
  FCL_CHECK_NULL(adv, 1);
  FCL_CHECK_NULL(out, 2);
  if (adv->nfields + 1 > FCL_OPERATOR_MAX_USES)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "advection of %d fields: a problem operator uses "
                     "at most %d fields",
                     adv->nfields, FCL_OPERATOR_MAX_USES);
  *out = (fcl_operator){.name = "advection",
                        .data = adv,
                        .apply = operator_apply,
                        .launcher = operator_launcher,
                        .settle = operator_settle,
                        .nuses = 1 + adv->nfields};
  /* where an axis does not wrap, the velocity's ghosts are read: a use of 1 layer makes the
   * problem refresh them when stale (an update fills every layer; the reach along the split axes
   * was checked at creation), those of the axes that wrap left out (periodic images). A
   * topology with none on some axis would refuse that use: there the advection refreshes them
   * itself. */
  const int *g = fcl_topology_ghosts(fcl_field_topology(adv->velocity));
  int width = 0;
  for (int a = 0; a < adv->dim; ++a)
    if (!adv->wrap[a]) width = 1;
  for (int a = 0; a < adv->dim && width; ++a)
    if (g[a] == 0) width = 0;
  adv->problem_refreshes = width > 0;
  out->uses[0] = (fcl_field_use){
      .field = adv->velocity, .ghosts = width, .read = true, .periodic_images = true};
  for (int f = 0; f < adv->nfields; ++f)
    out->uses[1 + f] = (fcl_field_use){
        .field = adv->fields[f], .ghosts = 0, .read = true, .written = true};
  return FCL_OK;
}
