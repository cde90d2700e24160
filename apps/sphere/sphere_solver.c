/* flowcl-sphere solver: the fields, the operators of a step, the time loop and its diagnostics. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sphere.h"

#define PI 3.14159265358979323846
#define TRY(call)                                                                                  \
  do {                                                                                             \
    fcl_status s_ = (call);                                                                        \
    if (s_ != FCL_OK) return s_;                                                                   \
  } while (0)

typedef struct {
  const sphere_options *o;
  int rank;
  fcl_topology *topo;
  fcl_context *ctx;
  fcl_queue *q;
  fcl_allocator *alloc;
  fcl_pool *pool;
  fcl_field *w, *u, *chi;
  fcl_spectral *spectral;
  fcl_fd *penalize, *stretch, *layer;
  /* --curl spectral: u penalized alone, w += the spectral curl of its change */
  fcl_fd *penalize_u, *change, *add_curl;
  fcl_field *u_old, *du, *curl_du;
  fcl_advection *adv;
  fcl_analytics *an;
  fcl_problem *problem;
  FILE *csv;           /* rank 0 */
  double *cd, *cl, *t; /* rank 0: the coefficients' history (cl: y and z, interleaved) */
  size_t n, cap;
  fcl_sim_state start; /* the first step's time and index (a restart's checkpoint) */
  double slip_dt;      /* the step over which the slip the last penalization removed built up */
#if FLOWCL_ENABLE_HDF5
  fcl_io_series *series;
#endif
} sphere;

static fcl_status open_device(sphere *s) {
  fcl_device_entry dev;
  TRY(fcl_topology_select_device(s->topo, s->o->device, &dev));
  TRY(fcl_context_create(1, &dev.device, &s->ctx));
  TRY(fcl_queue_create(s->ctx, dev.device, FCL_QUEUE_PROFILING, &s->q));
  TRY(fcl_allocator_create_deferred(s->ctx, FCL_MEM_DEVICE, &s->alloc));
  return fcl_pool_create(s->alloc, NULL, &s->pool);
}

/* The box on slabs along z, 2 ghosts (differences of order 4) or what advection needs. */
static fcl_status make_fields(sphere *s, MPI_Comm comm, const fcl_advection_options *ao) {
  const sphere_options *o = s->o;
  fcl_domain d = fcl_domain_periodic(3, 1, 1);
  for (int a = 0; a < 3; ++a) {
    d.length[a] = o->box[a];
    d.resolution[a] = (int64_t)llround(o->box[a] * (double)o->resolution);
  }
  int size;
  MPI_Comm_size(comm, &size);
  const int adv = fcl_advection_ghosts_needed(ao);
  const int procs[3] = {1, 1, size}, ghosts[3] = {2, 2, size > 1 && adv > 2 ? adv : 2};
  TRY(fcl_topology_create(comm, &d, procs, ghosts, &s->topo));
  s->rank = fcl_topology_rank(s->topo);
  TRY(open_device(s));
  TRY(fcl_field_create(s->topo, s->ctx, s->q, s->pool, "vorticity", 3, o->dtype, &s->w));
  TRY(fcl_field_create(s->topo, s->ctx, s->q, s->pool, "velocity", 3, o->dtype, &s->u));
  return fcl_field_create(s->topo, s->ctx, s->q, s->pool, "mask", 1, o->dtype, &s->chi);
}

/* The penalization with the curl of u's change taken spectrally, as Biot-Savart inverts it:
 * u_old = u, u penalized, du = u - u_old, w += curl(du). */
static fcl_status spectral_penalization(void *data, const fcl_step_info *info) {
  sphere *s = data;
  const size_t *p = fcl_field_padded_shape(s->u);
  const size_t bytes = p[0] * p[1] * p[2] * fcl_dtype_size(s->o->dtype);
  for (int c = 0; c < 3; ++c)
    TRY(fcl_mem_copy(s->q, fcl_field_buffer(s->u, c), 0, fcl_field_buffer(s->u_old, c), 0, bytes, 0,
                     NULL, NULL));
  TRY(fcl_fd_enqueue(s->penalize_u, info->dt));
  TRY(fcl_fd_enqueue(s->change, info->dt));
  TRY(fcl_spectral_curl(s->spectral, s->du, s->curl_du));
  return fcl_fd_enqueue(s->add_curl, info->dt);
}

static fcl_status make_spectral_penalization(sphere *s, fcl_operator *op) {
  const sphere_options *o = s->o;
  TRY(fcl_field_create(s->topo, s->ctx, s->q, s->pool, "velocity_old", 3, o->dtype, &s->u_old));
  TRY(fcl_field_create(s->topo, s->ctx, s->q, s->pool, "velocity_change", 3, o->dtype, &s->du));
  TRY(fcl_field_create(s->topo, s->ctx, s->q, s->pool, "curl_change", 3, o->dtype, &s->curl_du));
  TRY(fcl_penalization_create(s->u, s->chi, NULL, o->lambda, &s->penalize_u));
  fcl_fd_binding b[9];
  static const char *const n[3][3] = {{"a0", "b0", "d0"}, {"a1", "b1", "d1"}, {"a2", "b2", "d2"}};
  for (int c = 0; c < 3; ++c) {
    b[3 * c] = (fcl_fd_binding){n[c][0], s->u, c, 0};
    b[3 * c + 1] = (fcl_fd_binding){n[c][1], s->u_old, c, 0};
    b[3 * c + 2] = (fcl_fd_binding){n[c][2], s->du, c, 0};
  }
  TRY(fcl_fd_kernel_create("velocity_change", 9, b,
                           "d0[k, j, i] = a0[k, j, i] - b0[k, j, i]\n"
                           "d1[k, j, i] = a1[k, j, i] - b1[k, j, i]\n"
                           "d2[k, j, i] = a2[k, j, i] - b2[k, j, i]",
                           9.0 * (double)fcl_dtype_size(o->dtype), &s->change));
  fcl_fd_binding a[6] = {{"w0", s->w, 0, 0},       {"w1", s->w, 1, 0},
                         {"w2", s->w, 2, 0},       {"c0", s->curl_du, 0, 0},
                         {"c1", s->curl_du, 1, 0}, {"c2", s->curl_du, 2, 0}};
  TRY(fcl_fd_kernel_create("add_curl", 6, a,
                           "w0[k, j, i] = w0[k, j, i] + c0[k, j, i]\n"
                           "w1[k, j, i] = w1[k, j, i] + c1[k, j, i]\n"
                           "w2[k, j, i] = w2[k, j, i] + c2[k, j, i]",
                           9.0 * (double)fcl_dtype_size(o->dtype), &s->add_curl));
  *op = (fcl_operator){
      .name = "penalization (spectral curl)",
      .data = s,
      .apply = spectral_penalization,
      .nuses = 3,
      .uses = {{s->chi, 0, true, false}, {s->u, 0, true, true}, {s->w, 0, true, true}}};
  return FCL_OK;
}

/* The force on the sphere over the last step (either penalization). */
static fcl_status force(sphere *s, double dt, double *f) {
  if (!s->du) return fcl_penalization_force(s->penalize, dt, f);
  for (int c = 0; c < 3; ++c) {
    TRY(fcl_field_reduce(s->du, c, FCL_REDUCE_INTEGRAL, &f[c]));
    f[c] = -f[c] / dt;
  }
  return FCL_OK;
}

static fcl_status add(sphere *s, fcl_status described, const fcl_operator *op) {
  TRY(described);
  return fcl_problem_add_operator(s->problem, op);
}

/* A step (Lie splitting): penalization of the sphere (u, and w through curl of u's change),
 * advection and stretching of w by u, the absorbing layer, then diffusion of w and
 * u = U + Biot-Savart(w) in one spectral pass. */
static fcl_status make_problem(sphere *s, const fcl_advection_options *ao) {
  const sphere_options *o = s->o;
  const double h = 1.0 / (double)o->resolution,
               center[3] = {o->center_x, o->box[1] / 2, o->box[2] / 2};
  const double stream[3] = {1, 0, 0};
  TRY(fcl_mask_sphere(s->chi, center, 1 - 2 * o->retraction * h, o->smoothing * h));
  TRY(fcl_spectral_create(s->w, FCL_FFT_AUTO, s->pool, &s->spectral));
  TRY(fcl_spectral_set_mean_velocity(s->spectral, stream));
  if (!o->spectral_curl)
    TRY(fcl_penalization_vorticity_create(s->u, s->w, s->chi, NULL, o->lambda, s->pool,
                                          &s->penalize));
  TRY(fcl_advection_create(s->u, 1, &s->w, ao, &s->adv));
  TRY(fcl_fd_stretching_conservative_create(s->u, s->w, 2, s->pool, &s->stretch));
  TRY(fcl_absorbing_layer_create(s->w, 0, o->box[0] - o->layer, o->box[0], s->pool, &s->layer));
  TRY(fcl_analytics_create(s->u, s->w, s->pool, &s->an));
  TRY(fcl_problem_create("sphere", &s->problem));
  TRY(fcl_problem_add_field(s->problem, s->w, true));
  TRY(fcl_problem_add_field(s->problem, s->u, true));
  TRY(fcl_problem_add_field(s->problem, s->chi, true)); /* set once, read every step */
  fcl_operator op;
  if (o->spectral_curl) {
    TRY(make_spectral_penalization(s, &op));
    TRY(fcl_problem_add_operator(s->problem, &op));
  } else {
    TRY(add(s, fcl_fd_operator(s->penalize, &op), &op));
  }
  TRY(add(s, fcl_advection_operator(s->adv, &op), &op));
  TRY(add(s, fcl_fd_operator(s->stretch, &op), &op));
  TRY(add(s, fcl_fd_operator(s->layer, &op), &op));
  const double nu = 1 / o->reynolds;
  TRY(add(s, fcl_spectral_diffuse_biot_savart_operator(s->spectral, s->w, nu, s->u, &op), &op));
  TRY(fcl_problem_setup(s->problem));
  /* at rest in the stream: w = 0, u = U */
  return fcl_spectral_biot_savart(s->spectral, s->w, s->u);
}

static fcl_status measure(void *user, fcl_dt_inputs *in) {
  sphere *s = user;
  return fcl_analytics_dt_inputs(s->an, false, in);
}

static fcl_status remember(sphere *s, double t, double cd, double lift_y, double lift_z);

/* The coefficients of the step just taken: 2 F / (U^2 A), A = pi D^2 / 4. */
static fcl_status diagnostics(void *user, const fcl_sim_state *st) {
  sphere *s = user;
  /* the first state: no penalization has run yet (a restart's row is in the file already) */
  if (st->step == s->start.step) return FCL_OK;
  /* The penalization opens the step: it removes the slip the previous step's advection and
   * diffusion left in the body, so the force is that momentum over the previous step's dt (the
   * last step, shortened to reach t_end, would otherwise show the drag several times over). */
  double f[3];
  TRY(force(s, s->slip_dt > 0 ? s->slip_dt : st->dt, f));
  s->slip_dt = st->dt;
  const double k = 2 / (PI / 4);
  if (s->rank != 0) return FCL_OK;
  fprintf(s->csv, "%lld,%.9g,%.6g,%.9g,%.9g,%.9g\n", (long long)st->step, st->t, st->dt, k * f[0],
          k * f[1], k * f[2]);
  return remember(s, st->t, k * f[0], k * f[1], k * f[2]);
}

/* Rank 0: one step's coefficients into the history the summary reads. */
static fcl_status remember(sphere *s, double t, double cd, double lift_y, double lift_z) {
  if (s->n == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 1024;
    double *a = realloc(s->cd, cap * sizeof *a),
           *b = a ? realloc(s->cl, 2 * cap * sizeof *b) : NULL,
           *c = b ? realloc(s->t, cap * sizeof *c) : NULL;
    if (a) s->cd = a;
    if (b) s->cl = b;
    if (c) s->t = c;
    if (!c) return FCL_ERR_OUT_OF_MEMORY;
    s->cap = cap;
  }
  s->cd[s->n] = cd, s->cl[2 * s->n] = lift_y, s->cl[2 * s->n + 1] = lift_z, s->t[s->n++] = t;
  return FCL_OK;
}

/* A snapshot: the vorticity and the mask (ParaView shows the sphere as the mask's contour). */
static fcl_status snapshot(void *user, const fcl_sim_state *st) {
#if FLOWCL_ENABLE_HDF5
  sphere *s = user;
  fcl_field *fields[2] = {s->w, s->chi};
  return fcl_io_series_write(s->series, 2, fields, st->t, st->step);
#else
  (void)user;
  (void)st;
  return FCL_ERR_NOT_SUPPORTED;
#endif
}

/* Rank 0's verdict shared by every rank. */
static fcl_status agreed(sphere *s, bool ok) {
  int all = ok;
  MPI_Bcast(&all, 1, MPI_INT, 0, fcl_topology_comm(s->topo));
  return all ? FCL_OK : FCL_ERR_IO;
}

/* A refusal the app words itself: said on rank 0, returned without a library message. */
static fcl_status refuse(const sphere *s, fcl_status st, const char *fmt, ...) {
  if (s->rank == 0) {
    va_list ap;
    va_start(ap, fmt);
    fputs("flowcl-sphere: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
  }
  fcl_clear_error();
  return st;
}

#if FLOWCL_ENABLE_HDF5
/* The parameters a checkpoint carries, which a restart must match. */
static fcl_checkpoint_state run_state(const sphere *s, const fcl_sim_state *st) {
  const sphere_options *o = s->o;
  return (fcl_checkpoint_state){
      .time = st->t,
      .dt = st->dt,
      .step = st->step,
      .nparams = 8,
      .names = {"box_x", "box_y", "box_z", "center_x", "resolution", "retraction", "reynolds",
                "smoothing"},
      .values = {o->box[0], o->box[1], o->box[2], o->center_x, (double)o->resolution, o->retraction,
                 o->reynolds, o->smoothing}};
}

/* --restart: the vorticity and the velocity (the step's Biot-Savart: the run continues bit for
 * bit) and the state, from a checkpoint written with the same parameters. */
static fcl_status restore(sphere *s) {
  const sphere_options *o = s->o;
  char path[2048];
  fcl_field *fields[2] = {s->w, s->u};
  fcl_checkpoint_state c;
  snprintf(path, sizeof path, "%s", o->restart);
  fcl_status st = !strcmp(o->restart, "latest")
                      ? fcl_checkpoint_read_latest(o->output_dir, "sphere", 2, fields, &c, path,
                                                   sizeof path)
                      : fcl_checkpoint_read(path, 2, fields, &c);
  TRY(st);
  const fcl_sim_state now = {0};
  const fcl_checkpoint_state mine = run_state(s, &now);
  for (size_t p = 0; p < mine.nparams; ++p) {
    size_t q = 0;
    while (q < c.nparams && strcmp(c.names[q], mine.names[p])) q++;
    if (q == c.nparams)
      return refuse(s, FCL_ERR_INVALID_ARGUMENT,
                    "%s has no parameter %s (written by an older flowcl-sphere)", path,
                    mine.names[p]);
    if (c.values[q] != mine.values[p])
      return refuse(s, FCL_ERR_INVALID_ARGUMENT, "%s was written with %s = %g, this run has %g",
                    path, mine.names[p], c.values[q], mine.values[p]);
  }
  s->start = (fcl_sim_state){.step = c.step, .t = c.time, .dt = c.dt};
  s->slip_dt = c.dt;
  if (s->rank == 0)
    printf("restarting from %s at step %lld, t = %g\n", path, (long long)c.step, c.time);
  return FCL_OK;
}

/* Every checkpoint_every steps: the fields and the state, the rows so far on disk first. A
 * diverged state (a drag that is not finite) is never kept: it would replace the good
 * checkpoints a restart needs. */
static fcl_status checkpoint(void *user, const fcl_sim_state *st) {
  sphere *s = user;
  if (s->csv) fflush(s->csv);
  int finite = s->rank != 0 || s->n == 0 || isfinite(s->cd[s->n - 1]);
  MPI_Bcast(&finite, 1, MPI_INT, 0, fcl_topology_comm(s->topo));
  if (!finite) {
    if (s->rank == 0)
      fprintf(stderr,
              "flowcl-sphere: not checkpointing step %lld, t = %g: the drag is not finite (the "
              "flow diverged); the earlier checkpoints are kept\n",
              (long long)st->step, st->t);
    return FCL_OK;
  }
  const fcl_checkpoint_state c = run_state(s, st);
  fcl_field *fields[2] = {s->w, s->u};
  return fcl_checkpoint_write(s->o->output_dir, "sphere", 2, 2, fields, &c, NULL, 0);
}
#endif

/* Rank 0, a restart: the coefficients of the rows kept, for the summary's mean and period. */
static fcl_status reload_history(sphere *s, const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return FCL_OK;
  char line[512];
  fcl_status st = FCL_OK;
  while (st == FCL_OK && fgets(line, sizeof line, f)) {
    long long step;
    double t, dt, cd, lift_y, lift_z;
    if (sscanf(line, "%lld,%lf,%lf,%lf,%lf,%lf", &step, &t, &dt, &cd, &lift_y, &lift_z) == 6)
      st = remember(s, t, cd, lift_y, lift_z);
  }
  fclose(f);
  return st;
}

/* The output directory, owned by this run (or the one it continues), and diagnostics.csv. */
static fcl_status open_outputs(sphere *s) {
  const sphere_options *o = s->o;
  MPI_Comm comm = fcl_topology_comm(s->topo);
  int removed = 0;
  fcl_status st = fcl_run_dir_prepare(comm, o->output_dir, "sphere", "diagnostics.csv", !o->restart,
                                      o->overwrite, &removed);
  if (st == FCL_ERR_INVALID_ARGUMENT && s->rank == 0)
    fprintf(stderr, "flowcl-sphere: --restart latest continues the earlier run, --overwrite "
                    "replaces it, or choose another --output\n");
  TRY(st);
  if (removed && s->rank == 0)
    printf("--overwrite: removed %d checkpoint(s) of an earlier run\n", removed);
  bool ok = true;
  if (o->snapshot_every > 0 || o->checkpoint_every > 0 || o->restart) {
#if FLOWCL_ENABLE_HDF5
    /* the longest file written through MPI-IO: a checkpoint's temporary name */
    size_t longest = strlen(o->output_dir) + strlen("/sphere_000000000.chk.h5.tmp");
    if (longest > FCL_IO_MAX_PATH)
      return refuse(s, FCL_ERR_INVALID_ARGUMENT,
                    "--output '%s' is too long for snapshots and checkpoints: their paths would "
                    "reach %zu characters, MPI-IO takes at most %d",
                    o->output_dir, longest, FCL_IO_MAX_PATH);
    if (o->restart) TRY(restore(s));
#else
    return refuse(s, FCL_ERR_NOT_SUPPORTED,
                  "snapshots, checkpoints and restarts need flowcl built with HDF5");
#endif
  }
  char path[2048];
  snprintf(path, sizeof path, "%s/diagnostics.csv", o->output_dir);
  if (o->restart) { /* the rows of the run it continues, up to the step it resumes from */
    int dropped = 0;
    TRY(fcl_run_dir_keep_rows(comm, path, s->start.step, &dropped));
    if (dropped && s->rank == 0)
      printf("%s: dropped %d row(s) after step %lld, the restart computes them again\n", path,
             dropped, (long long)s->start.step);
  }
  if (s->rank == 0) {
    if (o->restart) ok = reload_history(s, path) == FCL_OK;
    s->csv = ok ? fopen(path, o->restart ? "a" : "w") : NULL;
    if (!s->csv) {
      fprintf(stderr, "flowcl-sphere: cannot write %s: %s\n", path, strerror(errno));
      ok = false;
    } else if (!o->restart) {
      fprintf(s->csv, "step,t,dt,cd,lift_y,lift_z\n");
    }
  }
  TRY(agreed(s, ok));
  if (o->snapshot_every <= 0) return FCL_OK;
#if FLOWCL_ENABLE_HDF5
  TRY(fcl_io_series_create(o->output_dir, "flow", &s->series));
  return o->restart ? FCL_OK : snapshot(s, &s->start);
#else
  return FCL_ERR_NOT_SUPPORTED;
#endif
}

/* Mean drag over the second half; the lift's period from the upward crossings of its mean by
 * its component along the mean lift: a shedding wake keeps a plane of symmetry, which holds the
 * mean lift and in which the lift oscillates (Johnson and Patel 1999), and which the run's
 * round-off sets, not y or z (the plane may also turn slowly: the direction the lift varies in
 * most can be that drift). Where the mean lift is below the lift's variation, that direction. */
static void summarize(const sphere *s, double t_end) {
  size_t first = 0;
  while (first < s->n && s->t[first] < t_end / 2) first++;
  if (first >= s->n) return;
  const double m = (double)(s->n - first);
  double cd = 0, my = 0, mz = 0;
  for (size_t i = first; i < s->n; ++i) cd += s->cd[i], my += s->cl[2 * i], mz += s->cl[2 * i + 1];
  cd /= m, my /= m, mz /= m;
  printf("drag coefficient: %.4f (mean over t in [%g, %g])\n", cd, s->t[first], s->t[s->n - 1]);
  double yy = 0, zz = 0, yz = 0;
  for (size_t i = first; i < s->n; ++i) {
    const double y = s->cl[2 * i] - my, z = s->cl[2 * i + 1] - mz;
    yy += y * y, zz += z * z, yz += y * z;
  }
  const double mean = hypot(my, mz), angle = 0.5 * atan2(2 * yz, yy - zz);
  const bool along_mean = mean * mean > (yy + zz) / m;
  const double cy = along_mean ? my / mean : cos(angle), cz = along_mean ? mz / mean : sin(angle);
  /* steady or not from the whole variation, in any direction */
  const double amplitude = sqrt(2 * (yy + zz) / m);
  if (!(amplitude > 1e-3 * fabs(cd))) { /* rounding noise crosses its mean too */
    printf("Strouhal number: none (no shedding: lift amplitude %.3g)\n", amplitude);
    return;
  }
  double up[64];
  int crossings = 0;
  for (size_t i = first + 1; i < s->n && crossings < 64; ++i) {
    const double a = cy * (s->cl[2 * i - 2] - my) + cz * (s->cl[2 * i - 1] - mz),
                 b = cy * (s->cl[2 * i] - my) + cz * (s->cl[2 * i + 1] - mz);
    if (a < 0 && b >= 0) /* interpolated crossing time */
      up[crossings++] = s->t[i - 1] + (s->t[i] - s->t[i - 1]) * -a / (b - a);
  }
  if (crossings >= 3)
    printf("Strouhal number: %.4f (lift period %.4f over %d periods, amplitude %.3g)\n",
           (crossings - 1) / (up[crossings - 1] - up[0]),
           (up[crossings - 1] - up[0]) / (crossings - 1), crossings - 1, amplitude);
  else
    printf("Strouhal number: none (the lift has not oscillated: %d crossing(s) of its mean)\n",
           crossings);
}

/* OUTPUT/sphere.png with gnuplot, the published drag at Re = 100 and 300 (about 1.09 and 0.66)
 * (Johnson and Patel 1999); a missing gnuplot is a note. */
static void plot(const sphere_options *o) {
  struct stat st;
  const char *dir = stat(SPHERE_SOURCE_DIR "/plot_sphere.gp", &st) == 0 ? SPHERE_SOURCE_DIR
                                                                        : SPHERE_INSTALL_DIR;
  if (strpbrk(o->output_dir, "'\"\\$`") || strpbrk(dir, "'\"\\$`")) {
    printf("plot: skipped (quotes or shell characters in '%s')\n", o->output_dir);
    return;
  }
  const double cd = o->reynolds == 100 ? 1.09 : o->reynolds == 300 ? 0.66 : 0;
  char cmd[4096];
  snprintf(cmd, sizeof cmd,
           "command -v gnuplot >/dev/null 2>&1 && gnuplot -e \"csv='%s/diagnostics.csv'; "
           "png='%s/sphere.png'; cd_ref=%g; re=%g\" '%s/plot_sphere.gp'",
           o->output_dir, o->output_dir, cd, o->reynolds, dir);
  if (system(cmd) == 0)
    printf("plot: %s/sphere.png\n", o->output_dir);
  else
    printf("plot: skipped (gnuplot is not installed)\n");
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Steps at the CFL's dt for the free stream (1.5 U: the flow is faster beside the sphere), the
 * first two untimed; the median wall time of a step and the report per operator (each node
 * waiting for the queue). */
static fcl_status benchmark(sphere *s) {
  const int64_t steps = s->o->max_steps > 0 ? s->o->max_steps : 20;
  double *wall = malloc((size_t)steps * sizeof *wall);
  if (!wall) return FCL_ERR_OUT_OF_MEMORY;
  const double dt = s->o->cfl / (double)s->o->resolution / 1.5;
  fcl_status st = FCL_OK;
  for (int64_t k = -2; k < steps && st == FCL_OK; ++k) {
    if (k == 0) st = fcl_problem_set_timing(s->problem, false);
    MPI_Barrier(fcl_topology_comm(s->topo));
    const double t0 = MPI_Wtime();
    const fcl_step_info info = {.step = k + 2, .t = (double)(k + 2) * dt, .dt = dt};
    if (st == FCL_OK) st = fcl_problem_step(s->problem, &info);
    if (st == FCL_OK) st = fcl_queue_finish(s->q);
    double w = MPI_Wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &w, 1, MPI_DOUBLE, MPI_MAX, fcl_topology_comm(s->topo));
    if (k >= 0) wall[k] = w;
  }
  if (st == FCL_OK) st = fcl_problem_settle(s->problem); /* checks the steps deferred */
  if (st == FCL_OK) {
    qsort(wall, (size_t)steps, sizeof *wall, by_value);
    const fcl_domain *d = fcl_topology_domain(s->topo);
    const double points = (double)(d->resolution[0] * d->resolution[1] * d->resolution[2]);
    if (s->rank == 0)
      printf("step (median of %lld, dt %.4g): %.3f ms, %.2f ns per point\n", (long long)steps, dt,
             1e3 * wall[steps / 2], 1e9 * wall[steps / 2] / points);
    st = fcl_problem_report(s->problem, stdout);
  }
  free(wall);
  return st;
}

static void destroy(sphere *s) {
  if (s->csv) fclose(s->csv);
#if FLOWCL_ENABLE_HDF5
  fcl_io_series_destroy(&s->series);
#endif
  free(s->cd), free(s->cl), free(s->t);
  fcl_problem_destroy(&s->problem);
  fcl_analytics_destroy(&s->an);
  fcl_fd_destroy(&s->layer);
  fcl_fd_destroy(&s->stretch);
  fcl_advection_destroy(&s->adv);
  fcl_fd_destroy(&s->penalize);
  fcl_fd_destroy(&s->penalize_u);
  fcl_fd_destroy(&s->change);
  fcl_fd_destroy(&s->add_curl);
  fcl_field_destroy(&s->u_old);
  fcl_field_destroy(&s->du);
  fcl_field_destroy(&s->curl_du);
  fcl_spectral_destroy(&s->spectral);
  fcl_field_destroy(&s->chi);
  fcl_field_destroy(&s->u);
  fcl_field_destroy(&s->w);
  fcl_pool_release(&s->pool);
  fcl_allocator_release(&s->alloc);
  fcl_queue_release(&s->q);
  fcl_context_release(&s->ctx);
  fcl_topology_destroy(&s->topo);
}

fcl_status sphere_run(const sphere_options *o, MPI_Comm comm) {
  sphere s = {.o = o};
  fcl_advection_options ao = fcl_advection_default_options();
  fcl_status st = make_fields(&s, comm, &ao);
  if (st == FCL_OK) st = make_problem(&s, &ao);
  if (st == FCL_OK && s.rank == 0) {
    const fcl_domain *d = fcl_topology_domain(s.topo);
    printf("flowcl-sphere%s: Re = %g, %lld x %lld x %lld points (%lld per diameter), box %g x %g "
           "x %g, to t = %g\n",
           o->benchmark ? " benchmark" : "", o->reynolds, (long long)d->resolution[0],
           (long long)d->resolution[1], (long long)d->resolution[2], (long long)o->resolution,
           o->box[0], o->box[1], o->box[2], o->t_end);
  }
  if (st == FCL_OK && !o->benchmark) st = open_outputs(&s);
  if (st == FCL_OK && o->benchmark) {
    st = benchmark(&s);
    destroy(&s);
    return st;
  }
  /* --max-steps is the last step, as --t-end is the last time: a restart ends where the run it
   * continues would have */
  const bool done = o->max_steps > 0 && o->max_steps <= s.start.step; /* restarted there */
  fcl_simulation_options so = {.t_start = s.start.t,
                               .t_end = o->t_end,
                               .step_start = s.start.step,
                               .max_steps = o->max_steps > 0 ? o->max_steps - s.start.step : 0,
                               .dt = {.dt_max = 0.1, .cfl = o->cfl},
                               .measure = measure,
                               .diagnostics = diagnostics,
                               .diagnostics_every = 1,
                               .output = snapshot,
                               .output_every_t = o->snapshot_every,
                               .user = &s,
                               .progress = o->quiet ? NULL : stdout};
#if FLOWCL_ENABLE_HDF5
  if (o->checkpoint_every > 0) {
    so.checkpoint = checkpoint;
    so.checkpoint_every = o->checkpoint_every;
  }
#endif
  fcl_sim_state final = {0};
  if (st == FCL_OK && done)
    final = s.start;
  else if (st == FCL_OK)
    st = fcl_simulation_run(s.problem, &so, &final);
  fcl_diagnostics diag = {0}; /* the velocity stays divergence-free (Biot-Savart) */
  if (st == FCL_OK) st = fcl_analytics_compute(s.an, FCL_DIAG_DIVERGENCE | FCL_DIAG_GRAD_U, &diag);
  if (st == FCL_OK && s.rank == 0) {
    fflush(s.csv);
    printf("divergence: rms(div u) / max|grad u| = %.3g\n",
           diag.max_grad_u > 0 ? diag.divergence / diag.max_grad_u : 0.0);
    printf("done: %lld steps to t = %g\n", (long long) final.step, final.t);
    summarize(&s, final.t);
    char path[2048];
    snprintf(path, sizeof path, "%s/report.txt", o->output_dir);
    FILE *f = fopen(path, "w");
    st = fcl_problem_report(s.problem, f ? f : stdout);
    if (f) fclose(f);
    printf("outputs: %s/diagnostics.csv, %s/report.txt%s\n", o->output_dir, o->output_dir,
           o->snapshot_every > 0 ? ", flow.xdmf (ParaView)" : "");
    if (o->plot) plot(o);
  } else if (st == FCL_OK) {
    st = fcl_problem_report(s.problem, stdout);
  }
  destroy(&s);
  return st;
}
