/* flowcl-scalar solver: fields, operators and the time loop's callbacks.
 *
 * A step, the second-order splitting of flowcl-tgv (docs/validation.md): the velocity at the
 * half step extrapolated, u_mid = 3/2 u^n - 1/2 u^(n-1); the vortex stretching (w . grad) u_mid
 * (fourth-order differences, RK2) over dt / 2; u_mid interpolated to the scalar's grid (cubic,
 * transfer.h; none when the grids are one); advection over dt of the vorticity by u_mid on its
 * grid and of the scalar by the interpolated velocity on its own (remeshing; in S substeps of
 * dt / S, so that the velocity steps at its grid's CFL number while the scalar steps at its
 * own, both with u_mid: second order still); the stretching's
 * second half; exact diffusion over dt of the vorticity, with the Biot-Savart velocity u^(n+1)
 * in the same spectral pass, and of the scalar on its grid. With one grid, one advection carries
 * both. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scalar.h"

#define PI 3.14159265358979323846
#define TRY(x)                                                                                     \
  do {                                                                                             \
    fcl_status st_ = (x);                                                                          \
    if (st_ != FCL_OK) return st_;                                                                 \
  } while (0)

typedef struct {
  const scalar_options *o;
  int rank;
  fcl_topology *tu, *tc; /* the velocity's grid, the scalar's (tu when not refined) */
  fcl_context *ctx;
  fcl_queue *q;
  fcl_allocator *alloc;
  fcl_pool *pool;
  fcl_field *w, *u, *c, *uc; /* uc: the velocity on the scalar's grid (refined only) */
  fcl_field *u_mid, *u_prev;
  fcl_spectral *su, *sc; /* spectral solvers of each grid (sc: su when not refined) */
  fcl_advection *adv, *adv_c;
  fcl_fd *stretching, *extrapolate;
  fcl_transfer *interpolate;
  fcl_problem *problem;
  FILE *csv; /* rank 0 */
#if FLOWCL_ENABLE_HDF5
  fcl_io_series *series;
#endif
} scalar;

static fcl_status open_device(scalar *s) {
  fcl_device_entry dev;
  fcl_device_info info;
  TRY(fcl_topology_select_device(s->tu, s->o->device, &dev));
  TRY(fcl_device_get_info(dev.device, &info));
  if (s->o->dtype == FCL_FLOAT64 && !info.double_fp_config) {
    fprintf(stderr, "flowcl-scalar: device '%s' has no double precision (--precision float)\n",
            info.name);
    return FCL_ERR_NOT_SUPPORTED;
  }
  if (s->rank == 0 && !s->o->quiet) printf("device: %s\n", info.name);
  TRY(fcl_context_create(1, &dev.device, &s->ctx));
  TRY(fcl_queue_create(s->ctx, dev.device, FCL_QUEUE_PROFILING, &s->q));
  TRY(fcl_allocator_create_deferred(s->ctx, FCL_MEM_DEVICE, &s->alloc));
  return fcl_pool_create(s->alloc, NULL, &s->pool);
}

/* Slabs along z on both grids (the scalar's refines each slab). The velocity's grid has 2
 * ghosts on every axis (the stretching's differences and the cubic interpolation read them), the
 * scalar's only the advection's along the split axis. */
static fcl_status make_fields(scalar *s, MPI_Comm comm, int ghosts) {
  const scalar_options *o = s->o;
  const fcl_domain du = fcl_domain_periodic(3, o->resolution, 2 * PI);
  int size, procs[3] = {1, 1, 1};
  MPI_Comm_size(comm, &size);
  procs[2] = size;
  const int split = size > 1 ? ghosts : 0;
  const int gu[3] = {2, 2, split > 2 ? split : 2}, gc[3] = {0, 0, split};
  TRY(fcl_topology_create(comm, &du, procs, gu, &s->tu));
  s->rank = fcl_topology_rank(s->tu);
  TRY(open_device(s));
  TRY(fcl_field_create(s->tu, s->ctx, s->q, s->pool, "vorticity", 3, o->dtype, &s->w));
  TRY(fcl_field_create(s->tu, s->ctx, s->q, s->pool, "velocity", 3, o->dtype, &s->u));
  TRY(fcl_field_create(s->tu, s->ctx, s->q, s->pool, "velocity_mid", 3, o->dtype, &s->u_mid));
  TRY(fcl_field_create(s->tu, s->ctx, s->q, s->pool, "velocity_prev", 3, o->dtype, &s->u_prev));
  fcl_topology *tc = s->tu;
  if (o->refinement > 1) {
    const fcl_domain dc = fcl_domain_refine(&du, o->refinement);
    TRY(fcl_topology_create(comm, &dc, procs, gc, &s->tc));
    tc = s->tc;
    TRY(fcl_field_create(tc, s->ctx, s->q, s->pool, "velocity_fine", 3, o->dtype, &s->uc));
  }
  return fcl_field_create(tc, s->ctx, s->q, s->pool, "scalar", 1, o->dtype, &s->c);
}

/* The ABC flow with A = B = C = 1 (its vorticity equals it), the scalar cos(x). */
static fcl_status initial(scalar *s) {
  static const char *const abc[3] = {"sin(z) + cos(y)", "sin(x) + cos(z)", "sin(y) + cos(x)"};
  for (int a = 0; a < 3; ++a) {
    TRY(fcl_field_init_expr(s->w, a, abc[a]));
    TRY(fcl_field_init_expr(s->u, a, abc[a]));
    TRY(fcl_field_init_expr(s->u_prev, a, abc[a])); /* no history: nothing extrapolated */
  }
  return fcl_field_init_expr(s->c, 0, "cos(x)");
}

static fcl_status add(scalar *s, fcl_status described, const fcl_operator *op) {
  TRY(described);
  return fcl_problem_add_operator(s->problem, op);
}

/* u_mid = 3/2 u - 1/2 u_prev. */
static fcl_status make_extrapolation(scalar *s) {
  static const char *const names[3][3] = {
      {"u0", "p0", "m0"}, {"u1", "p1", "m1"}, {"u2", "p2", "m2"}};
  fcl_fd_binding b[9];
  char text[512];
  int len = 0;
  for (int c = 0; c < 3; ++c) {
    b[3 * c] = (fcl_fd_binding){names[c][0], s->u, c, 0};
    b[3 * c + 1] = (fcl_fd_binding){names[c][1], s->u_prev, c, 0};
    b[3 * c + 2] = (fcl_fd_binding){names[c][2], s->u_mid, c, 0};
    len += snprintf(text + len, sizeof text - (size_t)len,
                    "m%d[k, j, i] = 1.5 * u%d[k, j, i] - 0.5 * p%d[k, j, i]\n", c, c, c);
  }
  return fcl_fd_kernel_create("extrapolate_velocity", 9, b, text,
                              9.0 * (double)fcl_dtype_size(s->o->dtype), &s->extrapolate);
}

static fcl_status make_problem(scalar *s, const fcl_advection_options *ao) {
  const scalar_options *o = s->o;
  const double kappa = o->viscosity / o->schmidt;
  TRY(fcl_spectral_create(s->w, FCL_FFT_AUTO, s->pool, &s->su));
  if (s->uc) {
    TRY(fcl_spectral_create(s->c, FCL_FFT_AUTO, s->pool, &s->sc));
    TRY(fcl_transfer_create(s->u_mid, s->uc, &s->interpolate));
    TRY(fcl_advection_create(s->u_mid, 1, &s->w, ao, &s->adv));
    TRY(fcl_advection_create(s->uc, 1, &s->c, ao, &s->adv_c));
  } else {
    fcl_field *carried[2] = {s->w, s->c};
    TRY(fcl_advection_create(s->u_mid, 2, carried, ao, &s->adv));
  }
  TRY(make_extrapolation(s));
  TRY(fcl_fd_stretching_create(s->u_mid, s->w, 2, &s->stretching));
  TRY(fcl_problem_create("scalar", &s->problem));
  TRY(fcl_problem_add_field(s->problem, s->w, true));
  TRY(fcl_problem_add_field(s->problem, s->u, true));
  TRY(fcl_problem_add_field(s->problem, s->u_prev, true));
  TRY(fcl_problem_add_field(s->problem, s->u_mid, false));
  TRY(fcl_problem_add_field(s->problem, s->c, true));
  if (s->uc) TRY(fcl_problem_add_field(s->problem, s->uc, false));
  fcl_operator op;
  TRY(add(s, fcl_fd_operator(s->extrapolate, &op), &op));
  TRY(fcl_fd_operator(s->stretching, &op));
  op.dt_fraction = 0.5;
  TRY(add(s, FCL_OK, &op));
  TRY(add(s, fcl_field_swap_operator(s->u, s->u_prev, &op), &op)); /* u_prev <- u */
  if (s->interpolate) TRY(add(s, fcl_transfer_operator(s->interpolate, &op), &op));
  TRY(add(s, fcl_advection_operator(s->adv, &op), &op));
  for (int k = 0; s->adv_c && k < o->substeps; ++k) {
    TRY(fcl_advection_operator(s->adv_c, &op));
    op.dt_fraction = 1.0 / o->substeps;
    TRY(add(s, FCL_OK, &op));
  }
  TRY(fcl_fd_operator(s->stretching, &op));
  op.dt_fraction = 0.5;
  TRY(add(s, FCL_OK, &op));
  TRY(add(s, fcl_spectral_diffuse_biot_savart_operator(s->su, s->w, o->viscosity, s->u, &op), &op));
  TRY(add(s, fcl_spectral_diffusion_operator(s->sc ? s->sc : s->su, s->c, kappa, &op), &op));
  return fcl_problem_setup(s->problem);
}

/* The CFL bound of a scalar substep on the scalar's grid (the finer one). */
static fcl_status measure(void *user, fcl_dt_inputs *in) {
  scalar *s = user;
  const fcl_domain *d = fcl_topology_domain(fcl_field_topology(s->c));
  *in = (fcl_dt_inputs){.dim = 3};
  for (int a = 0; a < 3; ++a) {
    TRY(fcl_field_reduce(s->u, a, FCL_REDUCE_NORM_LINF, &in->umax[a]));
    in->dx[a] = fcl_domain_spacing(d, a) * s->o->substeps;
  }
  return FCL_OK;
}

static fcl_status diagnostics(void *user, const fcl_sim_state *st) {
  scalar *s = user;
  const double volume = 8 * PI * PI * PI;
  double e = 0, l2, sum, cmax;
  for (int a = 0; a < 3; ++a) {
    TRY(fcl_field_reduce(s->u, a, FCL_REDUCE_NORM_L2, &l2));
    e += l2 * l2;
  }
  TRY(fcl_field_reduce(s->c, 0, FCL_REDUCE_NORM_L2, &l2));
  TRY(fcl_field_reduce(s->c, 0, FCL_REDUCE_INTEGRAL, &sum));
  TRY(fcl_field_reduce(s->c, 0, FCL_REDUCE_NORM_LINF, &cmax));
  const double mean = sum / volume;
  if (s->csv)
    fprintf(s->csv, "%lld,%.12g,%.6g,%.12e,%.12e,%.6e,%.9e\n", (long long)st->step, st->t, st->dt,
            e / (2 * volume), l2 * l2 / volume - mean * mean, mean, cmax);
  if (!isfinite(e) || !isfinite(l2)) {
    fprintf(stderr, "flowcl-scalar: not finite at t = %g: unstable (a smaller --dt or --cfl)\n",
            st->t);
    return FCL_ERR_INVALID_STATE;
  }
  return FCL_OK;
}

static fcl_status snapshot(void *user, const fcl_sim_state *st) {
#if FLOWCL_ENABLE_HDF5
  scalar *s = user;
  return fcl_io_series_write(s->series, 1, &s->c, st->t, st->step);
#else
  (void)user;
  (void)st;
  fprintf(stderr, "flowcl-scalar: snapshots need HDF5 (not built in)\n");
  return FCL_ERR_NOT_SUPPORTED;
#endif
}

static fcl_status outputs(scalar *s, MPI_Comm comm) {
  const scalar_options *o = s->o;
  TRY(fcl_run_dir_prepare(comm, o->output_dir, NULL, "diagnostics.csv", true, o->overwrite, NULL));
  if (s->rank == 0) {
    char path[1200];
    snprintf(path, sizeof path, "%s/diagnostics.csv", o->output_dir);
    s->csv = fopen(path, "w");
    if (!s->csv) {
      fprintf(stderr, "flowcl-scalar: cannot write %s\n", path);
      return FCL_ERR_IO;
    }
    fprintf(s->csv,
            "# flowcl-scalar: ABC flow, velocity %lld^3, scalar %lld^3, nu %.9g, Sc %.9g\n"
            "step,t,dt,energy,variance,mean,c_max\n",
            (long long)o->resolution, (long long)(o->resolution * o->refinement), o->viscosity,
            o->schmidt);
  }
#if FLOWCL_ENABLE_HDF5
  if (o->snapshot_every > 0) TRY(fcl_io_series_create(o->output_dir, "scalar", &s->series));
#endif
  return FCL_OK;
}

static void destroy(scalar *s) {
  if (s->csv) fclose(s->csv);
#if FLOWCL_ENABLE_HDF5
  fcl_io_series_destroy(&s->series);
#endif
  fcl_problem_destroy(&s->problem);
  fcl_fd_destroy(&s->stretching);
  fcl_fd_destroy(&s->extrapolate);
  fcl_transfer_destroy(&s->interpolate);
  fcl_advection_destroy(&s->adv_c);
  fcl_advection_destroy(&s->adv);
  fcl_spectral_destroy(&s->sc);
  fcl_spectral_destroy(&s->su);
  fcl_field *f[6] = {s->w, s->u, s->u_mid, s->u_prev, s->c, s->uc};
  for (int i = 0; i < 6; ++i) fcl_field_destroy(&f[i]);
  fcl_pool_release(&s->pool);
  fcl_allocator_release(&s->alloc);
  fcl_queue_release(&s->q);
  fcl_context_release(&s->ctx);
  fcl_topology_destroy(&s->tc);
  fcl_topology_destroy(&s->tu);
}

/* The report (collective: rank 0 writes it) with the time loop's wall time. */
static fcl_status report(scalar *s, const fcl_sim_state *final, double seconds) {
  char path[1200];
  snprintf(path, sizeof path, "%s/report.txt", s->o->output_dir);
  FILE *f = s->rank == 0 ? fopen(path, "w") : NULL;
  fcl_status st = fcl_problem_report(s->problem, f ? f : stdout);
  if (f) {
    fprintf(f, "time loop: %.6f s wall for %lld steps\n", seconds, (long long) final->step);
    fclose(f);
  }
  return st;
}

static fcl_status run(scalar *s, MPI_Comm comm, fcl_sim_state *final, double *seconds) {
  const scalar_options *o = s->o;
  fcl_advection_options ao = fcl_advection_default_options();
  TRY(make_fields(s, comm, fcl_advection_ghosts_needed(&ao)));
  TRY(initial(s));
  TRY(make_problem(s, &ao));
  TRY(outputs(s, comm));
  fcl_simulation_options so = {.t_end = o->t_end,
                               .max_steps = o->max_steps,
                               .dt = {.dt_max = o->dt_max, .cfl = o->cfl},
                               .measure = measure,
                               .diagnostics = diagnostics,
                               .diagnostics_every = o->diagnostics_every,
                               .user = s,
                               .progress = o->quiet ? NULL : stdout};
  if (o->snapshot_every > 0) { /* the initial state, then every snapshot_every */
    so.output = snapshot;
    so.output_every_t = o->snapshot_every;
    TRY(snapshot(s, &(fcl_sim_state){0}));
  }
  TRY(fcl_queue_finish(s->q));
  MPI_Barrier(comm);
  const double start = MPI_Wtime();
  TRY(fcl_simulation_run(s->problem, &so, final));
  TRY(fcl_queue_finish(s->q));
  MPI_Barrier(comm);
  *seconds = MPI_Wtime() - start;
  if (final->step % o->diagnostics_every) TRY(diagnostics(s, final)); /* the row at t_end */
  return report(s, final, *seconds);
}

fcl_status scalar_run(const scalar_options *o, MPI_Comm comm, fcl_sim_state *final,
                      double *seconds) {
  scalar s = {.o = o};
  fcl_status st = run(&s, comm, final, seconds);
  destroy(&s);
  return st;
}
