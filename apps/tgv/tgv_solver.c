/* flowcl-tgv solver: set-up and the time loop's callbacks. */
#include "tgv_impl.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PI 3.14159265358979323846

/* The initial vorticity: curl of u = (sin x cos y cos z, -cos x sin y cos z, 0). */
static const char *const w0[3] = {"-cos(x) * sin(y) * sin(z)", "-sin(x) * cos(y) * sin(z)",
                                  "2 * sin(x) * sin(y) * cos(z)"};

static fcl_status open_device(tgv *t) {
  fcl_device_entry dev;
  TRY(fcl_topology_select_device(t->topo, t->opt.device, &dev));
  TRY(fcl_device_get_info(dev.device, &t->info));
  if (t->opt.dtype == FCL_FLOAT64 && !t->info.double_fp_config) {
    fprintf(stderr, "flowcl-tgv: --precision double: device '%s' has no double precision\n",
            t->info.name);
    return FCL_ERR_NOT_SUPPORTED;
  }
  TRY(fcl_context_create(1, &dev.device, &t->ctx));
  TRY(fcl_queue_create(t->ctx, dev.device, FCL_QUEUE_PROFILING, &t->q));
  TRY(fcl_allocator_create_deferred(t->ctx, FCL_MEM_DEVICE, &t->alloc));
  return fcl_pool_create(t->alloc, NULL, &t->pool);
}

/* The process grid: slabs along z where every rank gets the ghost planes of a split axis (and
 * the transpose a y row), else (or with --pencils P1) pencils 1 x P1 x P2. */
static fcl_status process_grid(tgv *t, const fcl_domain *d, int size, int split_ghosts,
                               int procs[3]) {
  const int64_t *n = d->resolution;
  procs[0] = procs[1] = 1;
  procs[2] = size;
  int p1 = t->opt.pencils;
  if (!p1 && size > 1 && (n[2] / size < split_ghosts || size > n[1])) {
    int two[2] = {0, 0}; /* MPI's balanced pair, the larger along z */
    MPI_Dims_create(size, 2, two);
    p1 = two[1];
  }
  if (p1 > 1) {
    if (size % p1) {
      if (t->rank == 0)
        fprintf(stderr, "flowcl-tgv: --pencils %d does not divide the %d ranks\n", p1, size);
      return FCL_ERR_INVALID_ARGUMENT;
    }
    procs[1] = p1;
    procs[2] = size / p1;
  }
  for (int a = 1; a < 3; ++a)
    if (procs[a] > 1 && n[a] / procs[a] < split_ghosts) {
      if (t->rank == 0)
        fprintf(stderr,
                "flowcl-tgv: %d ranks along axis %d split its %lld points into parts thinner "
                "than the %d ghost layers advection needs; use fewer ranks or a finer grid\n",
                procs[a], a, (long long)n[a], split_ghosts);
      return FCL_ERR_INVALID_ARGUMENT;
    }
  return FCL_OK;
}

/* Fields on slabs or pencils with the ghosts of advection (split axes), stretching and
 * analytics. */
static fcl_status make_fields(tgv *t, MPI_Comm comm, const fcl_advection_options *ao) {
  fcl_domain d = fcl_domain_periodic(3, t->opt.resolution, 2 * PI);
  d.length[2] *= t->opt.z_periods; /* the flow repeats along z: averages are unchanged */
  d.resolution[2] *= t->opt.z_periods;
  int size, procs[3];
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &t->rank);
  const int adv_ghosts = fcl_advection_ghosts_needed(ao), split = adv_ghosts > 2 ? adv_ghosts : 2;
  TRY(process_grid(t, &d, size, split, procs));
  int ghosts[3] = {2, 2, 2};
  for (int a = 1; a < 3; ++a)
    if (procs[a] > 1) ghosts[a] = split;
  TRY(fcl_topology_create(comm, &d, procs, ghosts, &t->topo));
  t->rank = fcl_topology_rank(t->topo);
  t->size = fcl_topology_size(t->topo);
  TRY(open_device(t));
  TRY(fcl_field_create(t->topo, t->ctx, t->q, t->pool, "vorticity", 3, t->opt.dtype, &t->w));
  return fcl_field_create(t->topo, t->ctx, t->q, t->pool, "velocity", 3, t->opt.dtype, &t->u);
}

static fcl_status add(tgv *t, fcl_status described, const fcl_operator *op) {
  TRY(described);
  return fcl_problem_add_operator(t->problem, op);
}

/* The second-order splitting's velocities: u^(n+1/2) and u^(n-1). */
static fcl_status make_history(tgv *t) {
  TRY(fcl_field_create(t->topo, t->ctx, t->q, t->pool, "velocity_mid", 3, t->opt.dtype, &t->u_mid));
  return fcl_field_create(t->topo, t->ctx, t->q, t->pool, "velocity_prev", 3, t->opt.dtype,
                          &t->u_prev);
}

/* u_mid = 3/2 u - 1/2 u_prev, where the first stretching half does not extrapolate it: every
 * load first (registers), then the stores, which a GPU streams best. */
static fcl_status make_extrapolation(tgv *t) {
  static const char *const names[3][3] = {
      {"u0", "p0", "m0"}, {"u1", "p1", "m1"}, {"u2", "p2", "m2"}};
  const char *real = t->opt.dtype == FCL_FLOAT64 ? "double" : "float";
  fcl_fd_binding b[9];
  char text[2048];
  int len = 0;
  for (int c = 0; c < 3; ++c) {
    b[3 * c] = (fcl_fd_binding){names[c][0], t->u, c, 0};
    b[3 * c + 1] = (fcl_fd_binding){names[c][1], t->u_prev, c, 0};
    b[3 * c + 2] = (fcl_fd_binding){names[c][2], t->u_mid, c, 0};
    len += snprintf(text + len, sizeof text - (size_t)len,
                    "<%s> a%d = u%d[k, j, i]  {id=la%d, dep=}\n"
                    "<%s> b%d = p%d[k, j, i]  {id=lb%d, dep=}\n",
                    real, c, c, c, real, c, c, c);
  }
  for (int c = 0; c < 3; ++c)
    len += snprintf(text + len, sizeof text - (size_t)len,
                    "m%d[k, j, i] = 1.5 * a%d - 0.5 * b%d  {dep=la*:lb*}\n", c, c, c);
  /* bytes per point: u and u_prev read, u_mid written */
  return fcl_fd_kernel_create("extrapolate_velocity", 9, b, text,
                              9.0 * (double)fcl_dtype_size(t->opt.dtype), &t->extrapolate);
}

/* Lie: A(dt) S(dt) D(dt) with u^n, then u = BS(w). Strang: u_mid extrapolated, S(dt/2) A(dt)
 * S(dt/2) with u_mid, D(dt), u = BS(w): second order (docs/validation.md). */
static fcl_status make_problem(tgv *t, const fcl_advection_options *ao) {
  TRY(fcl_spectral_create(t->w, t->opt.fft, t->pool, &t->spectral));
  if (!t->opt.lie) TRY(make_history(t));
  fcl_field *ua = t->opt.lie ? t->u : t->u_mid;
  TRY(fcl_advection_create(ua, 1, &t->w, ao, &t->adv));
  if (t->opt.stretching == TGV_STRETCH_GRADIENT)
    TRY(fcl_fd_stretching_create(ua, t->w, t->opt.stretching_rk, &t->stretch));
  else if (t->opt.diffusion == TGV_DIFFUSE_STRETCHING) /* its dt bound joins the dt policy */
    TRY(fcl_fd_stretching_diffusion_create(ua, t->w, t->nu, t->opt.stretching_rk, t->pool,
                                           &t->stretch));
  else
    TRY(fcl_fd_stretching_conservative_create(ua, t->w, t->opt.stretching_rk, t->pool,
                                              &t->stretch));
  if (!t->opt.lie && t->opt.stretching != TGV_STRETCH_GRADIENT) {
    /* the first half also extrapolates u_mid where it can (a GPU, one rank) */
    const fcl_status st = fcl_fd_stretching_extrapolated_create(t->u, t->u_prev, t->stretch,
                                                                &t->stretch_first);
    if (st == FCL_ERR_NOT_SUPPORTED)
      fcl_clear_error();
    else
      TRY(st);
  }
  if (!t->opt.lie && !t->stretch_first) TRY(make_extrapolation(t));
  TRY(fcl_analytics_create(t->u, t->w, t->pool, &t->an));
  TRY(fcl_problem_create("taylor-green", &t->problem));
  TRY(fcl_problem_add_field(t->problem, t->w, true));
  TRY(fcl_problem_add_field(t->problem, t->u, true));
  fcl_operator op;
  if (!t->opt.lie) {
    TRY(fcl_problem_add_field(t->problem, t->u_mid, false));
    TRY(fcl_problem_add_field(t->problem, t->u_prev, true));
    if (t->extrapolate) TRY(add(t, fcl_fd_operator(t->extrapolate, &op), &op));
    TRY(fcl_fd_operator(t->stretch_first ? t->stretch_first : t->stretch, &op));
    op.dt_fraction = 0.5;
    TRY(fcl_problem_add_operator(t->problem, &op));
    TRY(add(t, fcl_field_swap_operator(t->u, t->u_prev, &op), &op)); /* u_prev <- u */
  }
  TRY(add(t, fcl_advection_operator(t->adv, &op), &op));
  TRY(fcl_fd_operator(t->stretch, &op));
  op.dt_fraction = t->opt.lie ? 1 : 0.5;
  TRY(fcl_problem_add_operator(t->problem, &op));
  if (t->opt.diffusion == TGV_DIFFUSE_FD) { /* the explicit bound joins the dt policy */
    TRY(fcl_fd_diffusion_create(t->w, t->nu, 4, t->pool, &t->diffuse));
    TRY(add(t, fcl_fd_operator(t->diffuse, &op), &op));
    TRY(add(t, fcl_spectral_biot_savart_operator(t->spectral, t->w, t->u, &op), &op));
  } else if (t->opt.diffusion == TGV_DIFFUSE_STRETCHING) {
    TRY(add(t, fcl_spectral_biot_savart_operator(t->spectral, t->w, t->u, &op), &op));
  } else if (t->opt.separate_spectral) {
    TRY(add(t, fcl_spectral_diffusion_operator(t->spectral, t->w, t->nu, &op), &op));
    TRY(add(t, fcl_spectral_biot_savart_operator(t->spectral, t->w, t->u, &op), &op));
  } else { /* diffusion and Biot-Savart share the forward transforms of the vorticity */
    TRY(add(t, fcl_spectral_diffuse_biot_savart_operator(t->spectral, t->w, t->nu, t->u, &op),
            &op));
  }
  return fcl_problem_setup(t->problem);
}

/* Copy u into u_prev (no history: the first step extrapolates nothing). */
static fcl_status start_history(tgv *t) {
  const size_t *p = fcl_field_padded_shape(t->u);
  const size_t bytes = p[0] * p[1] * p[2] * fcl_dtype_size(t->opt.dtype);
  for (int c = 0; c < 3; ++c)
    TRY(fcl_mem_copy(t->q, fcl_field_buffer(t->u, c), 0, fcl_field_buffer(t->u_prev, c), 0, bytes,
                     0, NULL, NULL));
  return FCL_OK;
}

#if FLOWCL_ENABLE_HDF5
/* The number named `name` in a checkpoint's state, if it has it. */
static bool checkpoint_param(const fcl_checkpoint_state *s, const char *name, double *value) {
  for (size_t p = 0; p < s->nparams; ++p)
    if (!strcmp(s->names[p], name)) {
      *value = s->values[p];
      return true;
    }
  return false;
}

/* The diagnostics' history a checkpoint carries (an older flowcl-tgv's carries none: the first
 * two rows then have no dissipation): the last rows' times and energies and the peak so far. */
static void restore_history(tgv *t, const fcl_checkpoint_state *s) {
  char name_t[32], name_e[32];
  for (t->rows = 0; t->rows < 3; ++t->rows) {
    snprintf(name_t, sizeof name_t, "row%d_t", t->rows);
    snprintf(name_e, sizeof name_e, "row%d_energy", t->rows);
    if (!checkpoint_param(s, name_t, &t->row_t[t->rows]) ||
        !checkpoint_param(s, name_e, &t->row_energy[t->rows]))
      break;
  }
  checkpoint_param(s, "peak_dissipation", &t->peak_eps);
  checkpoint_param(s, "peak_t", &t->peak_t);
}
#endif

/* The initial vorticity and u from it, or both from the checkpoint. */
static fcl_status initial_state(tgv *t) {
  if (t->opt.restart) {
#if FLOWCL_ENABLE_HDF5
    char path[1024];
    fcl_checkpoint_state s;
    /* the velocity (it came from the spectral pass, not from the stored vorticity) and, for the
     * second-order splitting, the previous velocity: the run continues bit for bit */
    fcl_field *fields[3] = {t->w, t->u, t->u_prev};
    const size_t nf = t->u_prev ? 3 : 2;
    bool latest = !strcmp(t->opt.restart, "latest");
    snprintf(path, sizeof path, "%s", t->opt.restart);
    fcl_status st = latest ? fcl_checkpoint_read_latest(t->opt.output_dir, "tgv", nf, fields, &s,
                                                        path, sizeof path)
                           : fcl_checkpoint_read(path, nf, fields, &s);
    if (st == FCL_ERR_INVALID_ARGUMENT && !latest) { /* an older flowcl-tgv's: no velocity */
      fields[1] = t->u_prev;
      if (fcl_checkpoint_read(path, nf - 1, fields, &s) != FCL_OK) return st;
      fcl_clear_error(); /* the first read's refusal is answered */
      TRY(fcl_spectral_biot_savart(t->spectral, t->w, t->u));
      if (t->rank == 0)
        printf("%s holds no velocity (older flowcl-tgv): recomputed from the vorticity, the "
               "run continues up to rounding\n",
               path);
    } else if (st != FCL_OK) {
      return st;
    }
    for (size_t p = 0; p < s.nparams; ++p)
      if ((!strcmp(s.names[p], "reynolds") && s.values[p] != t->opt.reynolds) ||
          (!strcmp(s.names[p], "resolution") && s.values[p] != (double)t->opt.resolution)) {
        if (t->rank == 0)
          fprintf(stderr, "flowcl-tgv: %s was written with %s = %g, this run has %g\n", path,
                  s.names[p], s.values[p],
                  !strcmp(s.names[p], "reynolds") ? t->opt.reynolds : (double)t->opt.resolution);
        return FCL_ERR_INVALID_ARGUMENT;
      }
    t->start = (fcl_sim_state){.step = s.step, .t = s.time, .dt = s.dt};
    restore_history(t, &s);
    if (t->rank == 0)
      printf("restarting from %s at step %lld, t = %g\n", path, (long long)s.step, s.time);
#else
    fprintf(stderr, "flowcl-tgv: --restart needs flowcl built with HDF5\n");
    return FCL_ERR_NOT_SUPPORTED;
#endif
  } else {
    for (int c = 0; c < 3; ++c) TRY(fcl_field_init_expr(t->w, c, w0[c]));
    TRY(fcl_spectral_biot_savart(t->spectral, t->w, t->u));
  }
  return t->u_prev && !t->opt.restart ? start_history(t) : FCL_OK;
}

/* Rank 0's verdict on a step every rank must agree on (no rank left waiting for the others). */
static fcl_status agreed(tgv *t, bool ok) {
  int all = ok;
  MPI_Bcast(&all, 1, MPI_INT, 0, fcl_topology_comm(t->topo));
  return all ? FCL_OK : FCL_ERR_IO;
}

/* The --json file can be written: checked before the run, not after it (opened to append, so an
 * existing file is kept as it is until the results replace it). */
static fcl_status check_json(tgv *t) {
  bool ok = true;
  if (t->rank == 0 && t->opt.json) {
    FILE *f = fopen(t->opt.json, "a");
    if (!f)
      fprintf(stderr, "flowcl-tgv: cannot write %s: %s\n", t->opt.json, strerror(errno));
    else
      fclose(f);
    ok = f != NULL;
  }
  return agreed(t, ok);
}

static const char csv_header[] =
    "step,t,dt,energy,enstrophy,t_mid,dissipation_dEdt_pair,dissipation_2nu_enstrophy,"
    "max_vorticity,divergence_rms\n";

/* A restart's diagnostics.csv as fcl_run_dir_keep_rows left it (rank 0): *header when its first
 * line is this flowcl-tgv's header, and the step of its last row in t->csv_last_step (this run
 * does not write that row again). No file (a new output directory) or an empty one: no header
 * yet. False, with the message, for rows under another header or none (an older flowcl-tgv's
 * columns): appended to, the file would mix two definitions. */
static bool read_rows(tgv *t, const char *path, bool *header) {
  *header = false;
  FILE *f = fopen(path, "r");
  if (!f) return true;
  char line[4096];
  bool ok = true;
  for (int n = 0; ok && fgets(line, sizeof line, f); ++n)
    if (n == 0)
      ok = *header = !strcmp(line, csv_header);
    else
      t->csv_last_step = strtoll(line, NULL, 10);
  fclose(f);
  if (!ok)
    fprintf(stderr,
            "flowcl-tgv: %s does not begin with this flowcl-tgv's header (%.*s): restart into "
            "another directory (--restart CHECKPOINT --output NEW)\n",
            path, (int)strlen(csv_header) - 1, csv_header);
  return ok;
}

static fcl_status make_outputs(tgv *t) {
  if (t->opt.benchmark) return check_json(t);
  MPI_Comm comm = fcl_topology_comm(t->topo);
  int removed = 0;
  fcl_status st = fcl_run_dir_prepare(comm, t->opt.output_dir, "tgv", "diagnostics.csv",
                                      !t->opt.restart, t->opt.overwrite, &removed);
  if (st != FCL_OK) {
    if (t->rank == 0)
      fprintf(stderr, "flowcl-tgv: %s%s\n", fcl_last_error(),
              st == FCL_ERR_INVALID_ARGUMENT ? ": --restart latest continues it, --overwrite "
                                               "replaces it, or choose another --output"
                                             : "");
    return st;
  }
  if (removed && t->rank == 0)
    printf("--overwrite: removed %d checkpoint(s) of an earlier run\n", removed);
  bool ok = true;
#if FLOWCL_ENABLE_HDF5
  /* the longest file it will write through MPI-IO: a snapshot's temporary name */
  size_t longest = strlen(t->opt.output_dir) + strlen("/vorticity_000000000.h5.tmp");
  if (t->rank == 0 && (t->opt.snapshot_every > 0 || t->opt.checkpoint_every > 0) &&
      longest > FCL_IO_MAX_PATH) {
    fprintf(stderr,
            "flowcl-tgv: --output '%s' is too long for snapshots and checkpoints: their "
            "paths would reach %zu characters, MPI-IO takes at most %d\n",
            t->opt.output_dir, longest, FCL_IO_MAX_PATH);
    ok = false;
  }
#endif
  TRY(agreed(t, ok));
  char path[1024];
  snprintf(path, sizeof path, "%s/diagnostics.csv", t->opt.output_dir);
  if (t->opt.restart) {
    /* a restart appends to the rows of the run it continues, up to the step it resumes from */
    int dropped = 0;
    st = fcl_run_dir_keep_rows(comm, path, t->start.step, &dropped);
    if (st != FCL_OK) {
      if (t->rank == 0) fprintf(stderr, "flowcl-tgv: %s\n", fcl_last_error());
      return st;
    }
    if (dropped && t->rank == 0)
      printf("%s: dropped %d row(s) after step %lld, the restart computes them again\n", path,
             dropped, (long long)t->start.step);
  }
  if (t->rank == 0) {
    /* a restart appends, under the header of the file or its own in a new directory */
    bool header = false;
    ok = !t->opt.restart || read_rows(t, path, &header);
    t->csv = ok ? fopen(path, t->opt.restart ? "a" : "w") : NULL;
    if (ok && !t->csv) {
      fprintf(stderr, "flowcl-tgv: cannot write %s: %s\n", path, strerror(errno));
      ok = false;
    } else if (t->csv && !header) {
      fputs(csv_header, t->csv);
    }
  }
  TRY(agreed(t, ok));
#if FLOWCL_ENABLE_HDF5
  if (t->opt.snapshot_every > 0)
    TRY(fcl_io_series_create(t->opt.output_dir, "vorticity", &t->series));
#else
  if (t->opt.snapshot_every > 0 || t->opt.checkpoint_every > 0) {
    if (t->rank == 0) fprintf(stderr, "flowcl-tgv: snapshots and checkpoints need HDF5\n");
    return FCL_ERR_NOT_SUPPORTED;
  }
#endif
  return FCL_OK;
}

fcl_status tgv_create(const tgv_options *options, MPI_Comm comm, tgv **out) {
  tgv *t = calloc(1, sizeof *t);
  *out = t;
  if (!t) return FCL_ERR_OUT_OF_MEMORY;
  t->opt = *options;
  t->nu = 1 / options->reynolds;
  MPI_Comm_rank(comm, &t->rank);
  t->csv_last_step = -1;
  fcl_advection_options ao = fcl_advection_default_options();
  ao.formula = options->formula;
  ao.rk_order = options->advection_rk;
  ao.splitting = options->splitting;
  ao.max_cfl = options->cfl;
  if (options->dt_fixed > 0) ao.cfl_check = FCL_CFL_CHECK_DEFERRED;
  TRY(make_fields(t, comm, &ao));
  TRY(make_problem(t, &ao));
  TRY(initial_state(t));
  return make_outputs(t);
}

void tgv_destroy(tgv **tp) {
  tgv *t = *tp;
  if (!t) return;
  if (t->csv) fclose(t->csv);
#if FLOWCL_ENABLE_HDF5
  fcl_io_series_destroy(&t->series);
#endif
  fcl_problem_destroy(&t->problem);
  fcl_analytics_destroy(&t->an);
  fcl_fd_destroy(&t->stretch_first);
  fcl_fd_destroy(&t->stretch);
  fcl_fd_destroy(&t->diffuse);
  fcl_advection_destroy(&t->adv);
  fcl_spectral_destroy(&t->spectral);
  fcl_fd_destroy(&t->extrapolate);
  fcl_field_destroy(&t->u_mid);
  fcl_field_destroy(&t->u_prev);
  fcl_field_destroy(&t->u);
  fcl_field_destroy(&t->w);
  fcl_pool_release(&t->pool);
  fcl_allocator_release(&t->alloc);
  fcl_queue_release(&t->q);
  fcl_context_release(&t->ctx);
  fcl_topology_destroy(&t->topo);
  free(t->step_wall);
  free(t);
  *tp = NULL;
}

/* ---- the time loop's callbacks ---- */

#define TGV_ENERGY0 0.125 /* <u.u>/2 of the initial velocity */

static fcl_status measure(void *user, fcl_dt_inputs *in) {
  tgv *t = user;
  return fcl_analytics_dt_inputs(t->an, t->opt.lcfl > 0, in);
}

static fcl_status diagnostics(void *user, const fcl_sim_state *s) {
  tgv *t = user;
  fcl_diagnostics d = {0};
  TRY(fcl_analytics_compute(
      t->an, FCL_DIAG_ENERGY | FCL_DIAG_ENSTROPHY | FCL_DIAG_MAX_VORTICITY | FCL_DIAG_DIVERGENCE,
      &d));
  /* a restart's first call is at the checkpoint's row, which the history restored holds */
  if (!(t->rows > 0 && s->t == t->row_t[0])) {
    memmove(t->row_t + 1, t->row_t, 2 * sizeof *t->row_t);
    memmove(t->row_energy + 1, t->row_energy, 2 * sizeof *t->row_energy);
    t->row_t[0] = s->t;
    t->row_energy[0] = d.energy;
    t->rows += t->rows < 3;
  }
  t->last_enstrophy = d.enstrophy;
  /* -dE/dt over the last two intervals: the directions alternate from step to step (X Y Z,
   * Z Y X), and the two orders lose energy differently; over one step the rate zig-zags by
   * +-1.5 % near t = 8 at 64^3, over two it spans a whole period */
  double eps = NAN, t_mid = NAN;
  if (t->rows == 3 && t->row_t[0] > t->row_t[2]) {
    eps = (t->row_energy[2] - t->row_energy[0]) / (t->row_t[0] - t->row_t[2]);
    t_mid = (t->row_t[0] + t->row_t[2]) / 2;
    if (eps > t->peak_eps) {
      t->peak_eps = eps;
      t->peak_t = t_mid;
    }
  }
  if (!isfinite(d.energy) || !isfinite(d.enstrophy) || d.energy > 2 * TGV_ENERGY0) {
    if (t->rank == 0)
      fprintf(stderr,
              "flowcl-tgv: the flow diverged at step %lld, t = %g (energy %g, enstrophy "
              "%g); lower --cfl or --lcfl\n",
              (long long)s->step, s->t, d.energy, d.enstrophy);
    return FCL_ERR_INVALID_ARGUMENT;
  }
  /* the step a run starts from: dt is the step's that reached it (a checkpoint's) */
  const double dt = s->step == t->start.step ? t->start.dt : s->dt;
  if (t->csv && s->step > t->csv_last_step)
    fprintf(t->csv, "%lld,%.9g,%.6g,%.12g,%.12g,%.9g,%.9g,%.9g,%.9g,%.3g\n", (long long)s->step,
            s->t, dt, d.energy, d.enstrophy, t_mid, eps, 2 * t->nu * d.enstrophy, d.max_vorticity,
            d.divergence);
  return FCL_OK;
}

#if FLOWCL_ENABLE_HDF5
static fcl_status snapshot(void *user, const fcl_sim_state *s) {
  tgv *t = user;
  return fcl_io_series_write(t->series, 1, &t->w, s->t, s->step);
}

static fcl_status checkpoint(void *user, const fcl_sim_state *s) {
  tgv *t = user;
  /* a diverged state is never kept: it would replace the good checkpoints a restart needs (the
   * kinetic energy of the vortex only decays from its initial 1/8) */
  fcl_diagnostics d = {0};
  TRY(fcl_analytics_compute(t->an, FCL_DIAG_ENERGY | FCL_DIAG_ENSTROPHY, &d));
  if (!isfinite(d.energy) || !isfinite(d.enstrophy) || d.energy > 2 * TGV_ENERGY0) {
    if (t->rank == 0)
      fprintf(stderr,
              "flowcl-tgv: not checkpointing step %lld, t = %g: the flow diverged "
              "(energy %g, enstrophy %g); the earlier checkpoints are kept\n",
              (long long)s->step, s->t, d.energy, d.enstrophy);
    return FCL_ERR_INVALID_STATE;
  }
  if (t->csv) fflush(t->csv); /* the rows up to this checkpoint survive a kill */
  fcl_checkpoint_state c = {
      .time = s->t,
      .dt = s->dt,
      .step = s->step,
      .nparams = 4,
      .names = {"reynolds", "resolution", "peak_dissipation", "peak_t"},
      .values = {t->opt.reynolds, (double)t->opt.resolution, t->peak_eps, t->peak_t}};
  for (int k = 0; k < t->rows; ++k) { /* the rows the dissipation of the next ones needs */
    snprintf(c.names[c.nparams], sizeof c.names[0], "row%d_t", k);
    c.values[c.nparams++] = t->row_t[k];
    snprintf(c.names[c.nparams], sizeof c.names[0], "row%d_energy", k);
    c.values[c.nparams++] = t->row_energy[k];
  }
  fcl_field *fields[3] = {t->w, t->u, t->u_prev};
  return fcl_checkpoint_write(t->opt.output_dir, "tgv", 2, t->u_prev ? 3 : 2, fields, &c, NULL, 0);
}
#endif

fcl_simulation_options tgv__loop_options(tgv *t) {
  fcl_simulation_options o = {
      .t_start = t->start.t,
      .t_end = t->opt.t_end,
      .step_start = t->start.step,
      /* --max-steps is the last step, as --t-end is the last time: a restart ends where the
       * run it continues would have */
      .max_steps = t->opt.max_steps > 0 ? t->opt.max_steps - t->start.step : 0,
      .dt = t->opt.dt_fixed > 0
                ? (fcl_dt_policy){.dt_max = t->opt.dt_fixed}
                : (fcl_dt_policy){.dt_max = t->opt.dt_max, .cfl = t->opt.cfl, .lcfl = t->opt.lcfl},
      .measure = measure,
      .diagnostics = diagnostics,
      .diagnostics_every = t->opt.diagnostics_every,
      .user = t,
      .progress = t->opt.quiet ? NULL : stdout,
      .progress_every_s = 5};
#if FLOWCL_ENABLE_HDF5
  if (t->opt.snapshot_every > 0) {
    o.output = snapshot;
    o.output_every_t = t->opt.snapshot_every;
  }
  if (t->opt.checkpoint_every > 0) {
    o.checkpoint = checkpoint;
    o.checkpoint_every = t->opt.checkpoint_every;
  }
#endif
  return o;
}

fcl_status tgv_run(tgv *t, fcl_sim_state *final) {
  fcl_simulation_options o = tgv__loop_options(t);
  if (t->opt.max_steps > 0 && o.max_steps <= 0) { /* restarted at or past the last step */
    *final = t->start;
    return FCL_OK;
  }
#if FLOWCL_ENABLE_HDF5
  if (t->series && !t->opt.restart) TRY(snapshot(t, &t->start));
#endif
  fcl_status st = fcl_simulation_run(t->problem, &o, final);
  if (t->csv) fflush(t->csv);
  return st;
}

void tgv_peak_dissipation(const tgv *t, double *value, double *time) {
  *value = t->peak_eps;
  *time = t->peak_t;
}

void tgv_last_diagnostics(const tgv *t, double *time, double *energy, double *enstrophy) {
  *time = t->row_t[0];
  *energy = t->row_energy[0];
  *enstrophy = t->last_enstrophy;
}

fcl_status tgv_report(tgv *t, FILE *out) { return fcl_problem_report(t->problem, out); }

const char *tgv_device_name(const tgv *t) { return t->info.name; }

const char *tgv_fft_description(const tgv *t) {
  return fcl_fft_description(fcl_spectral_fft(t->spectral));
}
