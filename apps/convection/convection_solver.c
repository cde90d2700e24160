/* flowcl-convection solver: fields, operators and the time loop's callbacks.
 *
 * A step (Strang splitting): exact diffusion of theta and of the vorticity (Pr, with the
 * Biot-Savart velocity in the same spectral pass) over dt / 2; the buoyancy coupling over dt,
 * itself split symmetrically: omega += dt / 2 curl(Ra Pr theta e_z), the velocity of that
 * vorticity, theta += dt u_z (the conduction profile 1 - z advected), omega += dt / 2 curl(...);
 * in 3D the vortex stretching (w . grad) u (fourth-order differences, RK2); advection of the vorticity and theta by u (remeshing, mirror images at the plates); the
 * diffusions over dt / 2 again. Each part is an exact flow of its own equation but the
 * advection (the remeshed particles' Runge-Kutta push), so the linear coupling is second order
 * in dt.
 * Free slip at the plates: u_z, the tangential vorticity and theta are Dirichlet (odd about
 * the plates), the tangential velocity and the normal vorticity Neumann (even).
 * With --scalar-refinement R, theta lives on a grid R times finer (transfer.h): diffused there,
 * advected there by the velocity interpolated to it (cubic), theta += dt u_z there with u_z
 * interpolated, and restricted to the velocity's grid (full weighting) before each buoyancy
 * half. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convection.h"

#define PI 3.14159265358979323846
#define TRY(x)                                                                                     \
  do {                                                                                             \
    fcl_status st_ = (x);                                                                          \
    if (st_ != FCL_OK) return st_;                                                                 \
  } while (0)

typedef struct {
  const convection_options *o;
  int rank;
  fcl_topology *topo, *topo_f; /* the velocity's grid, theta's when refined */
  fcl_context *ctx;
  fcl_queue *q;
  fcl_allocator *alloc;
  fcl_pool *pool;
  fcl_field *w, *theta, *u, *dtheta;
  fcl_field *theta_f, *u_f; /* refined: theta and the velocity on theta's grid */
  fcl_spectral *sp, *sp_f;
  fcl_transfer *interpolate, *to_coarse;
  fcl_advection *adv, *adv_f;
  fcl_fd *source;
  fcl_fd *stretching; /* 3D */
  fcl_problem *problem;
  FILE *csv; /* rank 0 */
#if FLOWCL_ENABLE_HDF5
  fcl_io_series *series, *series_f;
#endif
  double volume;
} convection;

/* theta as it is advected and diffused (on its own grid when refined), the velocity there, and
 * the spectral solver of that grid. @{ */
static fcl_field *scalar_field(const convection *c) { return c->theta_f ? c->theta_f : c->theta; }
static fcl_field *scalar_velocity(const convection *c) { return c->u_f ? c->u_f : c->u; }
static fcl_spectral *scalar_spectral(const convection *c) { return c->sp_f ? c->sp_f : c->sp; }
/* @} */

static fcl_status open_device(convection *c) {
  fcl_device_entry dev;
  fcl_device_info info;
  TRY(fcl_topology_select_device(c->topo, c->o->device, &dev));
  TRY(fcl_device_get_info(dev.device, &info));
  if (c->o->dtype == FCL_FLOAT64 && !info.double_fp_config) {
    fprintf(stderr, "flowcl-convection: device '%s' has no double precision (--precision float)\n",
            info.name);
    return FCL_ERR_NOT_SUPPORTED;
  }
  if (c->rank == 0 && !c->o->quiet) printf("device: %s\n", info.name);
  TRY(fcl_context_create(1, &dev.device, &c->ctx));
  TRY(fcl_queue_create(c->ctx, dev.device, FCL_QUEUE_PROFILING, &c->q));
  TRY(fcl_allocator_create_deferred(c->ctx, FCL_MEM_DEVICE, &c->alloc));
  return fcl_pool_create(c->alloc, NULL, &c->pool);
}

/* The box: the vertical (axis 0) between the plates, whole on every rank; slabs along the last
 * horizontal axis; ghosts for the advection along the vertical and the split axis (and the
 * stretching's in 3D). */
static fcl_status make_fields(convection *c, MPI_Comm comm, int ghosts) {
  const convection_options *o = c->o;
  fcl_domain d = fcl_domain_periodic(o->dim, convection_horizontal_points(o), o->aspect);
  d.resolution[0] = o->resolution;
  d.length[0] = 1;
  d.bc[0][0] = d.bc[0][1] = FCL_BC_DIRICHLET;
  /* 3D: the stretching's differences read 2 ghosts along every axis */
  /* refined: the velocity's cubic interpolation reads 2 ghosts along every axis, theta's
   * restriction R - 1 */
  const int r = o->refinement, other = o->dim == 3 || r > 1 ? 2 : 0;
  int size, procs[3] = {1, 1, 1}, g[3] = {ghosts, other, o->dim == 3 ? 2 : 0};
  MPI_Comm_size(comm, &size);
  procs[o->dim - 1] = size;
  if (size > 1 && ghosts > g[o->dim - 1]) g[o->dim - 1] = ghosts;
  if (g[0] < other) g[0] = other;
  c->volume = o->aspect * (o->dim == 3 ? o->aspect : 1);
  TRY(fcl_topology_create(comm, &d, procs, g, &c->topo));
  c->rank = fcl_topology_rank(c->topo);
  TRY(open_device(c));
  const int nw = o->dim == 3 ? 3 : 1;
  TRY(fcl_field_create(c->topo, c->ctx, c->q, c->pool, "vorticity", nw, o->dtype, &c->w));
  TRY(fcl_field_create(c->topo, c->ctx, c->q, c->pool, "theta", 1, o->dtype, &c->theta));
  TRY(fcl_field_create(c->topo, c->ctx, c->q, c->pool, "velocity", o->dim, o->dtype, &c->u));
  fcl_topology *ts = c->topo;
  if (r > 1) {
    const fcl_domain df = fcl_domain_refine(&d, r);
    int gf[3] = {ghosts > r - 1 ? ghosts : r - 1, r - 1, o->dim == 3 ? r - 1 : 0};
    if (size > 1 && ghosts > gf[o->dim - 1]) gf[o->dim - 1] = ghosts;
    TRY(fcl_topology_create(comm, &df, procs, gf, &c->topo_f));
    ts = c->topo_f;
    TRY(fcl_field_create(ts, c->ctx, c->q, c->pool, "theta_fine", 1, o->dtype, &c->theta_f));
    TRY(fcl_field_create(ts, c->ctx, c->q, c->pool, "velocity_fine", o->dim, o->dtype, &c->u_f));
  }
  TRY(fcl_field_create(ts, c->ctx, c->q, c->pool, "dtheta_dz", 1, o->dtype, &c->dtheta));
  const fcl_bc D = FCL_BC_DIRICHLET, N = FCL_BC_NEUMANN;
  for (int a = 1; a < o->dim; ++a) {
    TRY(fcl_field_set_component_bc(c->u, a, 0, N, N));
    if (c->u_f) TRY(fcl_field_set_component_bc(c->u_f, a, 0, N, N));
  }
  if (o->dim == 3) TRY(fcl_field_set_component_bc(c->w, 0, 0, N, N));
  TRY(fcl_field_set_component_bc(c->u, 0, 0, D, D));
  if (c->u_f) TRY(fcl_field_set_component_bc(c->u_f, 0, 0, D, D));
  return fcl_field_set_component_bc(c->dtheta, 0, 0, N, N);
}

/* theta = A sin(pi z) (cos(k x) + cos(k y)), the vorticity and velocity 0. */
static fcl_status initial(convection *c) {
  const convection_options *o = c->o;
  char e[256];
  const double k = 2 * PI / o->aspect;
  if (o->dim == 3)
    snprintf(e, sizeof e, "%.17g * sin(M_PI * x) * (cos(%.17g * y) + cos(%.17g * z))", o->amplitude,
             k, k);
  else
    snprintf(e, sizeof e, "%.17g * sin(M_PI * x) * cos(%.17g * y)", o->amplitude, k);
  return fcl_field_init_expr(scalar_field(c), 0, e);
}

static fcl_status add(convection *c, fcl_status described, const fcl_operator *op) {
  TRY(described);
  return fcl_problem_add_operator(c->problem, op);
}

static fcl_status make_problem(convection *c, const fcl_advection_options *ao) {
  const convection_options *o = c->o;
  TRY(fcl_spectral_create(c->w, FCL_FFT_AUTO, c->pool, &c->sp));
  if (c->theta_f) {
    TRY(fcl_spectral_create(c->theta_f, FCL_FFT_AUTO, c->pool, &c->sp_f));
    TRY(fcl_transfer_create(c->u, c->u_f, &c->interpolate));
    TRY(fcl_transfer_create(c->theta_f, c->theta, &c->to_coarse));
    TRY(fcl_advection_create(c->u, 1, &c->w, ao, &c->adv));
    TRY(fcl_advection_create(c->u_f, 1, &c->theta_f, ao, &c->adv_f));
  } else {
    fcl_field *carried[2] = {c->w, c->theta};
    TRY(fcl_advection_create(c->u, 2, carried, ao, &c->adv));
  }
  fcl_field *th = scalar_field(c);
  const fcl_fd_binding b[2] = {{"th", th, 0, 0}, {"uz", scalar_velocity(c), 0, 0}};
  TRY(fcl_fd_kernel_create("conduction_profile", 2, b,
                           "th[k, j, i] = th[k, j, i] + dt * uz[k, j, i]",
                           3.0 * (o->dtype == FCL_FLOAT64 ? 8 : 4), &c->source));
  /* 3D: vortex stretching (w . grad) u, fourth-order differences reading u's mirrored ghosts */
  if (o->dim == 3) TRY(fcl_fd_stretching_create(c->u, c->w, 2, &c->stretching));
  TRY(fcl_problem_create("convection", &c->problem));
  TRY(fcl_problem_add_field(c->problem, c->w, true));
  TRY(fcl_problem_add_field(c->problem, c->theta, !c->theta_f));
  TRY(fcl_problem_add_field(c->problem, c->u, true));
  if (c->theta_f) {
    TRY(fcl_problem_add_field(c->problem, c->theta_f, true));
    TRY(fcl_problem_add_field(c->problem, c->u_f, false));
  }
  /* Strang: half diffusion, the coupling (half buoyancy, the velocity of that vorticity, the
   * profile's advection, half buoyancy), advection, half diffusion */
  const double g[3] = {o->rayleigh * o->prandtl, 0, 0};
  fcl_operator op;
  for (int half = 0; half < 2; ++half) {
    if (half) TRY(add(c, fcl_advection_operator(c->adv, &op), &op));
    if (half && c->adv_f) TRY(add(c, fcl_advection_operator(c->adv_f, &op), &op));
    TRY(fcl_spectral_diffusion_operator(scalar_spectral(c), th, 1.0, &op));
    op.dt_fraction = 0.5;
    TRY(add(c, FCL_OK, &op));
    TRY(fcl_spectral_diffuse_biot_savart_operator(c->sp, c->w, o->prandtl, c->u, &op));
    op.dt_fraction = 0.5;
    TRY(add(c, FCL_OK, &op));
    if (half) break;
    if (c->to_coarse) TRY(add(c, fcl_transfer_operator(c->to_coarse, &op), &op));
    TRY(fcl_spectral_buoyancy_operator(c->sp, c->theta, g, c->w, &op));
    op.dt_fraction = 0.5;
    TRY(add(c, FCL_OK, &op));
    TRY(add(c, fcl_spectral_biot_savart_operator(c->sp, c->w, c->u, &op), &op));
    if (c->interpolate) TRY(add(c, fcl_transfer_operator(c->interpolate, &op), &op));
    TRY(add(c, fcl_fd_operator(c->source, &op), &op));
    if (c->to_coarse) TRY(add(c, fcl_transfer_operator(c->to_coarse, &op), &op));
    TRY(fcl_spectral_buoyancy_operator(c->sp, c->theta, g, c->w, &op));
    op.dt_fraction = 0.5;
    TRY(add(c, FCL_OK, &op));
    if (c->stretching) TRY(add(c, fcl_fd_operator(c->stretching, &op), &op));
  }
  return fcl_problem_setup(c->problem);
}

static fcl_status measure(void *user, fcl_dt_inputs *in) {
  convection *c = user;
  const fcl_domain *d = fcl_topology_domain(fcl_field_topology(scalar_field(c)));
  *in = (fcl_dt_inputs){.dim = d->dim};
  for (int a = 0; a < d->dim; ++a) {
    TRY(fcl_field_reduce(c->u, a, FCL_REDUCE_NORM_LINF, &in->umax[a]));
    in->dx[a] = fcl_domain_spacing(d, a);
  }
  return FCL_OK;
}

/* The plates' Nusselt numbers, 1 - <d theta / dz> over each plate (d theta / dz spectral). */
static fcl_status nusselt(convection *c, double nu[2]) {
  TRY(fcl_spectral_derivative(scalar_spectral(c), scalar_field(c), 0, 0, 1, c->dtheta, 0));
  const fcl_topology *t = fcl_field_topology(c->dtheta);
  const int64_t *n = fcl_topology_local_resolution(t), *global = fcl_topology_domain(t)->resolution;
  const size_t count = (size_t)(n[0] * n[1] * n[2]);
  double *v = malloc(count * sizeof *v), s[2] = {0, 0}, all[2];
  fcl_status st = v ? fcl_field_read(c->dtheta, 0, false, v) : FCL_ERR_OUT_OF_MEMORY;
  if (st == FCL_OK && c->o->dtype == FCL_FLOAT32)
    for (size_t i = count; i-- > 0;) v[i] = ((float *)v)[i];
  for (size_t r = 0; st == FCL_OK && r < count / (size_t)n[0]; ++r) {
    s[0] += v[r * (size_t)n[0]];
    s[1] += v[r * (size_t)n[0] + (size_t)n[0] - 1];
  }
  free(v);
  /* every rank reaches the sum, its own failure included (no rank left in it alone) */
  MPI_Allreduce(s, all, 2, MPI_DOUBLE, MPI_SUM, fcl_topology_comm(c->topo));
  TRY(st);
  const double points = (double)global[1] * (double)global[2];
  nu[0] = 1 - all[0] / points;
  nu[1] = 1 - all[1] / points;
  return FCL_OK;
}

static fcl_status diagnostics(void *user, const fcl_sim_state *st) {
  convection *c = user;
  double e = 0, tmax, nu[2];
  for (int a = 0; a < c->o->dim; ++a) {
    double l2;
    TRY(fcl_field_reduce(c->u, a, FCL_REDUCE_NORM_L2, &l2));
    e += l2 * l2;
  }
  TRY(fcl_field_reduce(scalar_field(c), 0, FCL_REDUCE_NORM_LINF, &tmax));
  TRY(nusselt(c, nu));
  if (c->csv)
    fprintf(c->csv, "%lld,%.12g,%.6g,%.12e,%.12g,%.12g,%.12e\n", (long long)st->step, st->t, st->dt,
            e / (2 * c->volume), nu[0], nu[1], tmax);
  if (!isfinite(e)) {
    fprintf(stderr,
            "flowcl-convection: the kinetic energy is %g at t = %g: unstable (a smaller "
            "--dt or --cfl)\n",
            e, st->t);
    return FCL_ERR_INVALID_STATE;
  }
  return FCL_OK;
}

static fcl_status snapshot(void *user, const fcl_sim_state *st) {
#if FLOWCL_ENABLE_HDF5
  convection *c = user;
  if (c->theta_f) { /* theta on its own grid, beside the vorticity */
    TRY(fcl_io_series_write(c->series_f, 1, &c->theta_f, st->t, st->step));
    return fcl_io_series_write(c->series, 1, &c->w, st->t, st->step);
  }
  fcl_field *fields[2] = {c->theta, c->w};
  return fcl_io_series_write(c->series, 2, fields, st->t, st->step);
#else
  (void)user;
  (void)st;
  fprintf(stderr, "flowcl-convection: snapshots need HDF5 (not built in)\n");
  return FCL_ERR_NOT_SUPPORTED;
#endif
}

static fcl_status outputs(convection *c, MPI_Comm comm) {
  const convection_options *o = c->o;
  TRY(fcl_run_dir_prepare(comm, o->output_dir, NULL, "diagnostics.csv", true, o->overwrite, NULL));
  if (c->rank == 0) {
    char path[1200];
    snprintf(path, sizeof path, "%s/diagnostics.csv", o->output_dir);
    c->csv = fopen(path, "w");
    if (!c->csv) {
      fprintf(stderr, "flowcl-convection: cannot write %s\n", path);
      return FCL_ERR_IO;
    }
    fprintf(c->csv,
            "# flowcl-convection: dim %d, Ra %.9g, Pr %.9g, aspect %.9g, %lld points "
            "vertically\nstep,t,dt,energy,nu_bottom,nu_top,theta_max\n",
            o->dim, o->rayleigh, o->prandtl, o->aspect, (long long)o->resolution);
  }
#if FLOWCL_ENABLE_HDF5
  if (o->snapshot_every > 0) TRY(fcl_io_series_create(o->output_dir, "convection", &c->series));
  if (o->snapshot_every > 0 && o->refinement > 1)
    TRY(fcl_io_series_create(o->output_dir, "theta_fine", &c->series_f));
#endif
  return FCL_OK;
}

static void destroy(convection *c) {
  if (c->csv) fclose(c->csv);
#if FLOWCL_ENABLE_HDF5
  fcl_io_series_destroy(&c->series);
  fcl_io_series_destroy(&c->series_f);
#endif
  fcl_problem_destroy(&c->problem);
  fcl_fd_destroy(&c->source);
  fcl_fd_destroy(&c->stretching);
  fcl_advection_destroy(&c->adv);
  fcl_advection_destroy(&c->adv_f);
  fcl_transfer_destroy(&c->interpolate);
  fcl_transfer_destroy(&c->to_coarse);
  fcl_spectral_destroy(&c->sp_f);
  fcl_spectral_destroy(&c->sp);
  fcl_field *f[6] = {c->w, c->theta, c->u, c->dtheta, c->theta_f, c->u_f};
  for (int i = 0; i < 6; ++i) fcl_field_destroy(&f[i]);
  fcl_pool_release(&c->pool);
  fcl_allocator_release(&c->alloc);
  fcl_queue_release(&c->q);
  fcl_context_release(&c->ctx);
  fcl_topology_destroy(&c->topo_f);
  fcl_topology_destroy(&c->topo);
}

static fcl_status run(convection *c, MPI_Comm comm, fcl_sim_state *final) {
  const convection_options *o = c->o;
  fcl_advection_options ao = fcl_advection_default_options();
  TRY(make_fields(c, comm, fcl_advection_ghosts_needed(&ao)));
  TRY(initial(c));
  TRY(make_problem(c, &ao));
  TRY(outputs(c, comm));
  fcl_simulation_options so = {.t_end = o->t_end,
                               .max_steps = o->max_steps,
                               .dt = {.dt_max = o->dt_max, .cfl = o->cfl},
                               .measure = measure,
                               .diagnostics = diagnostics,
                               .diagnostics_every = o->diagnostics_every,
                               .user = c,
                               .progress = o->quiet ? NULL : stdout};
  if (o->snapshot_every > 0) { /* the initial state, then every snapshot_every */
    so.output = snapshot;
    so.output_every_t = o->snapshot_every;
    TRY(snapshot(c, &(fcl_sim_state){0}));
  }
  TRY(fcl_simulation_run(c->problem, &so, final));
  /* the report is collective: rank 0 writes it */
  char path[1200];
  snprintf(path, sizeof path, "%s/report.txt", o->output_dir);
  FILE *f = c->rank == 0 ? fopen(path, "w") : NULL;
  fcl_status st = fcl_problem_report(c->problem, f ? f : stdout);
  if (f) fclose(f);
  TRY(st);
  return FCL_OK;
}

fcl_status convection_run(const convection_options *o, MPI_Comm comm, fcl_sim_state *final) {
  convection c = {.o = o};
  fcl_status st = run(&c, comm, final);
  destroy(&c);
  return st;
}
