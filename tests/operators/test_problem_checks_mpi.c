/* The checks that problem.h, fd.h and advection.h promise for a run, on 1 or 2 ranks:
 *   - dt_min: a step whose dt falls below it stops fcl_simulation_run with an error naming the
 *     step (problem.h), as does a failing measure or callback, with the callback's status;
 *   - fcl_problem_settle returns the first operator's failure, naming it, and settles the
 *     others all the same; a run settles before an output callback as before the others;
 *   - explicit diffusion refuses a dt above its stability bound also when the problem applies
 *     it (fcl_fd_enqueue_step, a step stepped by hand), touching nothing (fd.h); a custom kernel
 *     with more than FCL_FD_MAX_SCALARS scalars is refused;
 *   - the CFL check of a step given the velocity bound (fcl_advection_step_bounded, and the time
 *     loop's adaptive dt at a CFL above max_cfl) refuses the step, touching nothing. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_fields.h"

typedef fcl_test_mpi_env env;

/* ---------------- a host operator with a settle callback ---------------- */

typedef struct {
  int64_t applied;     /* apply calls */
  int64_t settled;     /* settle calls */
  int64_t fail_settle; /* settle fails once applied reaches this (0: never) */
  int64_t fail_apply;  /* apply fails at this call (0: never) */
} host_op;

/* Both fail with a bare status (no message recorded), as a caller's operator may. */
static fcl_status host_apply(void *data, const fcl_step_info *info) {
  (void)info;
  host_op *h = data;
  return ++h->applied == h->fail_apply ? FCL_ERR_CORRUPT : FCL_OK;
}

static fcl_status host_settle(void *data) {
  host_op *h = data;
  ++h->settled;
  return h->fail_settle && h->applied >= h->fail_settle ? FCL_ERR_CORRUPT : FCL_OK;
}

/* A problem over the scalar field s with the operators h[0 .. n - 1] (each reads and writes s). */
static fcl_problem *host_problem(fcl_field *s, host_op *h, int n) {
  static const char *const names[2] = {"first", "second"};
  fcl_problem *p = NULL;
  CHECK_OK(fcl_problem_create("checks", &p));
  CHECK_OK(fcl_problem_add_field(p, s, true));
  for (int i = 0; i < n; ++i) {
    fcl_operator op = {.name = names[i],
                       .data = &h[i],
                       .apply = host_apply,
                       .settle = host_settle,
                       .nuses = 1,
                       .uses = {{s, 0, true, true}}};
    CHECK_OK(fcl_problem_add_operator(p, &op));
  }
  CHECK_OK(fcl_problem_setup(p));
  return p;
}

/* ---------------- the time loop's failures ---------------- */

typedef struct {
  int64_t measured, diagnosed, output; /* calls */
  int64_t fast_from;                   /* measure: max|u| = 100 from this call on (1 before) */
  int64_t fail_at;                     /* the callback under test fails at this call */
  bool measure_fails;
  double dx;
} loop;

static fcl_status measure(void *user, fcl_dt_inputs *in) {
  loop *l = user;
  ++l->measured;
  if (l->measure_fails && l->measured == l->fail_at) return FCL_ERR_MPI;
  *in = (fcl_dt_inputs){.dim = 2, .dx = {l->dx, l->dx}};
  in->umax[0] = in->umax[1] = l->measured >= l->fast_from ? 100 : 1;
  return FCL_OK;
}

static fcl_status diagnostics(void *user, const fcl_sim_state *s) {
  (void)s;
  loop *l = user;
  return ++l->diagnosed == l->fail_at ? FCL_ERR_IO : FCL_OK; /* a bare status, no message */
}

static fcl_status output(void *user, const fcl_sim_state *s) {
  (void)s;
  ++((loop *)user)->output;
  return FCL_OK;
}

/* problem.h: dt_min "a bound below it stops the run with an error"; fcl_simulation_run: "a
 * failure stops the run with the status and a message naming the step"; a callback's "status
 * other than FCL_OK stops the run with that status". Steps count from step_start = 10. */
static void run_failures(fcl_field *s, double dx) {
  for (int what = 0; what < 3; ++what) {
    host_op h = {0};
    fcl_problem *p = host_problem(s, &h, 1);
    loop l = {
        .dx = dx, .fast_from = what == 0 ? 4 : 1000, .fail_at = 3, .measure_fails = what == 1};
    fcl_simulation_options o = {.t_end = 1e9,
                                .step_start = 10,
                                .max_steps = 20,
                                .dt = {.dt_max = 1, .dt_min = 0.01, .cfl = 0.5},
                                .measure = measure,
                                .diagnostics = what == 2 ? diagnostics : NULL,
                                .diagnostics_every = what == 2,
                                .user = &l};
    fcl_sim_state final = {0};
    const fcl_status st = fcl_simulation_run(p, &o, &final);
    /* dt_min and the measure fail before step 12 (the third), the diagnostics after step 11
     * (its call at t_start is the first) */
    static const char *const name[3] = {"dt below dt_min", "a failing measure",
                                        "a failing diagnostics callback"};
    static const fcl_status want[3] = {FCL_ERR_INVALID_ARGUMENT, FCL_ERR_MPI, FCL_ERR_IO};
    static const char *const text[3] = {"below dt_min", "the measure callback failed",
                                        "the diagnostics callback failed"};
    static const char *const step[3] = {"step 13", "step 12", "step 11"};
    const int64_t steps = what == 0 ? 3 : 2;
    CHECK_STATUS(st, want[what], text[what]);
    CHECKF(fcl_test_contains(fcl_last_error(), step[what]), "%s: the message does not name %s: %s",
           name[what], step[what], fcl_last_error());
    CHECKF(h.applied == steps && final.step == 10 + steps,
           "%s: %lld steps applied, final step %lld (expected %lld and %lld)", name[what],
           (long long)h.applied, (long long) final.step, (long long)steps, (long long)(10 + steps));
    fcl_problem_destroy(&p);
  }
}

/* problem.h, fcl_problem_settle: "The first failure is returned, naming the operator and the
 * step checked; the other operators are settled all the same"; a run settles "before a
 * diagnostics, output or checkpoint callback". */
static void settle_order(fcl_field *s) {
  host_op h[2] = {{.fail_settle = 1}, {.fail_settle = 1}};
  fcl_problem *p = host_problem(s, h, 2);
  CHECK_OK(fcl_problem_step(p, &(fcl_step_info){.step = 4, .dt = 0.1}));
  /* an earlier call's error (setup twice) is not passed off as the operators' */
  CHECK_STATUS(fcl_problem_setup(p), FCL_ERR_INVALID_ARGUMENT, "already set up");
  CHECK_STATUS(fcl_problem_settle(p), FCL_ERR_CORRUPT,
               "problem 'checks': operator 'first': failed without a message");
  CHECKF(h[0].settled == 1 && h[1].settled == 1,
         "a failing settle: the operators were settled %lld and %lld times (expected 1 and 1)",
         (long long)h[0].settled, (long long)h[1].settled);
  h[1].fail_apply = 2;
  CHECK_STATUS(fcl_problem_setup(p), FCL_ERR_INVALID_ARGUMENT, "already set up");
  CHECK_STATUS(fcl_problem_step(p, &(fcl_step_info){.step = 5, .dt = 0.1}), FCL_ERR_CORRUPT,
               "operator 'second' failed at step 5");
  CHECKF(fcl_test_contains(fcl_last_error(), "failed without a message"),
         "a bare failure of apply reported with another call's message: %s", fcl_last_error());
  fcl_problem_destroy(&p);

  /* output every 0.1 with steps of 0.05: the settle that fails after step 3 stops the run
   * before its output (the one after step 1 ran) */
  host_op late = {.fail_settle = 4};
  p = host_problem(s, &late, 1);
  loop l = {0};
  fcl_simulation_options o = {
      .t_end = 1, .dt = {.dt_max = 0.05}, .output = output, .output_every_t = 0.1, .user = &l};
  CHECK_STATUS(fcl_simulation_run(p, &o, NULL), FCL_ERR_CORRUPT, "operator 'first'");
  CHECKF(l.output == 1 && late.applied == 4,
         "a settle failing after step 3: %lld outputs, %lld steps (expected 1 and 4)",
         (long long)l.output, (long long)late.applied);
  fcl_problem_destroy(&p);
}

/* ---------------- operators' bounds inside a problem ---------------- */

/* The interior of a component (nx * ny * nz values; ghosts change when a step refreshes them). */
static size_t interior(fcl_field *f) {
  const int64_t *n = fcl_topology_local_resolution(fcl_field_topology(f));
  return (size_t)(n[0] * n[1] * n[2]);
}

static double *read_interior(fcl_field *f, int comp) {
  double *host = malloc(interior(f) * sizeof *host);
  if (host) CHECK_OK(fcl_field_read(f, comp, false, host));
  return host;
}

static bool unchanged(fcl_field *f, int comp, const double *before) {
  double *after = read_interior(f, comp);
  const bool same = before && after && !memcmp(before, after, interior(f) * sizeof *after);
  free(after);
  return same;
}

static void wave(const double *x, double *v) { v[0] = sin(x[0]) * cos(2 * x[1]); }

/* fd.h: diffusion's stability bound "is checked at every apply", also the problem's
 * (fcl_fd_enqueue_step): a step stepped by hand over the bound is refused, naming the step. */
static void diffusion_bound_in_a_problem(env *e) {
  fcl_topology *t = op_box(2, 16, 1);
  fcl_field *f = op_field(e, t, "f", 1, FCL_FLOAT64, wave);
  fcl_fd *diff = NULL;
  fcl_problem *p = NULL;
  fcl_operator op;
  CHECK_OK(fcl_fd_diffusion_create(f, 0.1, 2, e->pool, &diff));
  CHECK_OK(fcl_fd_operator(diff, &op));
  CHECK_OK(fcl_problem_create("diffusion", &p));
  CHECK_OK(fcl_problem_add_field(p, f, true));
  CHECK_OK(fcl_problem_add_operator(p, &op));
  CHECK_OK(fcl_problem_setup(p));
  const double bound = fcl_fd_max_dt(diff);
  double *before = read_interior(f, 0);
  CHECK_STATUS(fcl_problem_step(p, &(fcl_step_info){.step = 7, .dt = 1.5 * bound}),
               FCL_ERR_INVALID_ARGUMENT, "stability bound");
  CHECKF(fcl_test_contains(fcl_last_error(), "failed at step 7"),
         "the refusal does not name the step: %s", fcl_last_error());
  CHECKF(unchanged(f, 0, before), "%s", "a refused diffusion step changed the field");
  CHECK_OK(fcl_problem_step(p, &(fcl_step_info){.step = 7, .dt = bound}));
  free(before);
  /* fd.h: a custom kernel's scalars, "Most named scalars of a custom kernel" */
  char names[FCL_FD_MAX_SCALARS + 1][8], most[32];
  const char *scalars[FCL_FD_MAX_SCALARS + 1];
  for (int i = 0; i <= FCL_FD_MAX_SCALARS; ++i) {
    snprintf(names[i], sizeof names[i], "s%d", i);
    scalars[i] = names[i];
  }
  snprintf(most, sizeof most, "at most %d", FCL_FD_MAX_SCALARS);
  const fcl_fd_binding b = {"f", f, 0, 0};
  fcl_fd *custom = NULL;
  CHECK_STATUS(fcl_fd_kernel_create_with_scalars("many", 1, &b, FCL_FD_MAX_SCALARS + 1, scalars,
                                                 "f[k, j, i] = s0 * f[k, j, i]", 16, &custom),
               FCL_ERR_INVALID_ARGUMENT, most);
  CHECK_OK(fcl_fd_kernel_create_with_scalars("many", 1, &b, FCL_FD_MAX_SCALARS, scalars,
                                             "f[k, j, i] = s0 * f[k, j, i]", 16, &custom));
  fcl_fd_destroy(&custom);
  fcl_problem_destroy(&p);
  fcl_fd_destroy(&diff);
  fcl_field_destroy(&f);
  fcl_topology_destroy(&t);
}

static void velocity(const double *x, double *v) {
  (void)x;
  v[0] = 1; /* max|u_x| = 1: dt = c dx is CFL c */
  v[1] = 0.5;
}

typedef struct {
  fcl_field *u;
} measured;

static fcl_status measure_u(void *user, fcl_dt_inputs *in) {
  fcl_field *u = ((measured *)user)->u;
  const fcl_domain *d = fcl_topology_domain(fcl_field_topology(u));
  *in = (fcl_dt_inputs){.dim = 2};
  for (int a = 0; a < 2; ++a) {
    in->dx[a] = fcl_domain_spacing(d, a);
    const fcl_status st = fcl_field_reduce(u, a, FCL_REDUCE_NORM_LINF, &in->umax[a]);
    if (st != FCL_OK) return st;
  }
  return FCL_OK;
}

/* advection.h: a step "fails with FCL_ERR_INVALID_ARGUMENT naming the axis and the values,
 * touching nothing" when dt max|u_d| / dx_d passes max_cfl; fcl_advection_step_bounded checks
 * the caller's bound, and the time loop's adaptive dt hands its measured one (problem.h). */
static void bounded_cfl_check(env *e) {
  fcl_advection_options o = fcl_advection_default_options();
  fcl_topology *t = op_box(2, 32, fcl_advection_ghosts_needed(&o));
  fcl_field *u = op_field(e, t, "u", 2, FCL_FLOAT64, velocity);
  fcl_field *q = op_field(e, t, "q", 1, FCL_FLOAT64, wave);
  const double dx = 2 * PI / 32;
  fcl_advection *adv = NULL;
  CHECK_OK(fcl_advection_create(u, 1, &q, &o, &adv));
  double *before = read_interior(q, 0);
  const double umax[2] = {1, 0.5};
  CHECK_STATUS(fcl_advection_step_bounded(adv, 1.5 * dx, umax), FCL_ERR_INVALID_ARGUMENT,
               "exceeds max_cfl");
  CHECKF(unchanged(q, 0, before), "%s", "a refused bounded step changed the field");
  /* the time loop at CFL 1.5 over max_cfl 1: refused at the first step */
  fcl_problem *p = NULL;
  fcl_operator op;
  CHECK_OK(fcl_advection_operator(adv, &op));
  CHECK_OK(fcl_problem_create("adaptive", &p));
  CHECK_OK(fcl_problem_add_field(p, u, true));
  CHECK_OK(fcl_problem_add_field(p, q, true));
  CHECK_OK(fcl_problem_add_operator(p, &op));
  CHECK_OK(fcl_problem_setup(p));
  measured m = {u};
  fcl_simulation_options so = {.t_end = 1,
                               .max_steps = 5,
                               .dt = {.dt_max = 1, .cfl = 1.5},
                               .measure = measure_u,
                               .user = &m};
  CHECK_STATUS(fcl_simulation_run(p, &so, NULL), FCL_ERR_INVALID_ARGUMENT, "exceeds max_cfl");
  CHECKF(fcl_test_contains(fcl_last_error(), "failed at step 0"),
         "the refusal does not name step 0: %s", fcl_last_error());
  CHECKF(unchanged(q, 0, before), "%s", "a refused adaptive step changed the field");
  CHECK_OK(fcl_advection_step_bounded(adv, 0.9 * dx, umax)); /* within the bound */
  free(before);
  fcl_problem_destroy(&p);
  fcl_advection_destroy(&adv);
  fcl_field_destroy(&u);
  fcl_field_destroy(&q);
  fcl_topology_destroy(&t);
}

static void run_all(env *e) {
  fcl_topology *t = op_box(2, 16, 0);
  fcl_field *s = op_field(e, t, "s", 1, FCL_FLOAT32, NULL);
  if (s) {
    run_failures(s, 2 * PI / 16);
    settle_order(s);
  }
  fcl_field_destroy(&s);
  fcl_topology_destroy(&t);
  if (!e->fp64) {
    fcl_test_skip_part(NULL, "diffusion and advection in double precision (no cl_khr_fp64)");
    return;
  }
  diffusion_bound_in_a_problem(e);
  bounded_cfl_check(e);
}

int main(int argc, char **argv) { return fcl_test_mpi_main(&argc, &argv, NULL, run_all); }
