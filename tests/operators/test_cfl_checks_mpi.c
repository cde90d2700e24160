/* When a CFL violation is reported, on 1 or 2 ranks (advection.h, problem.h):
 *   - FCL_CFL_CHECK_DEFERRED in a problem's run at a fixed dt over the bound: the run fails
 *     cfl_lag steps after the first step, naming it in the problem's numbering (step_start
 *     counted), also while the device is held back and the host runs ahead of it;
 *   - a violation in the last steps of a run is reported before fcl_simulation_run returns, and
 *     one before a diagnostics or checkpoint callback stops the run before the callback;
 *   - fcl_advection_step alone: exactly cfl_lag calls late for lags 1 and 3, every step checked
 *     (a single bad step among good ones is found), fcl_advection_settle reports the steps
 *     still pending, oldest first, and a settled object starts clean;
 *   - FCL_CFL_CHECK_NOW names the step it refuses, and cfl_lag out of range is refused;
 *   - a run within the bound passes, and the end of a run waits once for the fields' queue. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <string.h>

#include "fcl_test_gate.h"
#include "fcl_test_mpi.h"

#define PI 3.14159265358979323846
#define N 32

typedef fcl_test_mpi_env env;

static void init_u(void *user, const double *x, double *v) {
  (void)user;
  (void)x;
  v[0] = 1; /* max|u_x| = 1: dt = c dx is CFL c */
  v[1] = 0.5;
}

static void init_q(void *user, const double *x, double *v) {
  (void)user;
  v[0] = sin(x[0]) * cos(x[1]);
}

/* u and q on [0, 2 pi)^2, N^2, ghosts where an axis is split. */
typedef struct {
  fcl_topology *t;
  fcl_field *u, *q;
  double dx;
} box;

static box make_box(env *e, const fcl_advection_options *o) {
  box b = {0};
  fcl_domain d = fcl_domain_periodic(2, N, 2 * PI);
  int p[2] = {0, 0}, g[2];
  MPI_Dims_create(e->size, 2, p);
  for (int a = 0; a < 2; ++a) g[a] = p[a] > 1 ? fcl_advection_ghosts_needed(o) : 0;
  CHECK_OK(fcl_topology_create(MPI_COMM_WORLD, &d, p, g, &b.t));
  CHECK_OK(fcl_field_create(b.t, e->ctx, e->q, e->pool, "u", 2, FCL_FLOAT32, &b.u));
  CHECK_OK(fcl_field_create(b.t, e->ctx, e->q, e->pool, "q", 1, FCL_FLOAT32, &b.q));
  CHECK_OK(fcl_field_init(b.u, init_u, NULL));
  CHECK_OK(fcl_field_init(b.q, init_q, NULL));
  b.dx = 2 * PI / N;
  return b;
}

static void free_box(box *b) {
  fcl_field_destroy(&b->u);
  fcl_field_destroy(&b->q);
  fcl_topology_destroy(&b->t);
}

/* ---------------- in a problem's run ---------------- */

typedef struct {
  int64_t diagnostics, checkpoints; /* callback calls */
  int64_t last_step;                /* the state the last callback saw */
} calls;

static fcl_status on_diagnostics(void *user, const fcl_sim_state *s) {
  calls *c = user;
  ++c->diagnostics;
  c->last_step = s->step;
  return FCL_OK;
}

static fcl_status on_checkpoint(void *user, const fcl_sim_state *s) {
  calls *c = user;
  ++c->checkpoints;
  c->last_step = s->step;
  return FCL_OK;
}

typedef struct {
  double cfl;      /* the fixed dt, in CFL units */
  int lag;         /* cfl_lag (0: the default, 2) */
  int64_t start;   /* step_start */
  int64_t steps;   /* max_steps */
  bool diagnose;   /* diagnostics every step */
  bool checkpoint; /* checkpoint every step */
  bool held;       /* the device gated for 0.3 s: the host runs ahead */
} run_case;

/* Runs the case; returns the run's status, its message in why, the callbacks' calls in c. */
static fcl_status run_problem(env *e, const run_case *rc, char *why, size_t size, calls *c) {
  fcl_advection_options o = fcl_advection_default_options();
  o.cfl_check = FCL_CFL_CHECK_DEFERRED;
  o.cfl_lag = rc->lag;
  box b = make_box(e, &o);
  fcl_advection *adv = NULL;
  fcl_problem *p = NULL;
  fcl_operator op;
  CHECK_OK(fcl_advection_create(b.u, 1, &b.q, &o, &adv));
  CHECK_OK(fcl_problem_create("cfl", &p));
  CHECK_OK(fcl_problem_add_field(p, b.u, true));
  CHECK_OK(fcl_problem_add_field(p, b.q, true));
  CHECK_OK(fcl_advection_operator(adv, &op));
  CHECK_OK(fcl_problem_add_operator(p, &op));
  CHECK_OK(fcl_problem_setup(p));
  CHECK_OK(fcl_queue_finish(e->q));
  *c = (calls){0, 0, -1};
  fcl_simulation_options so = {.t_end = 1e9,
                               .step_start = rc->start,
                               .max_steps = rc->steps,
                               .dt = {.dt_max = rc->cfl * b.dx},
                               .diagnostics = rc->diagnose ? on_diagnostics : NULL,
                               .diagnostics_every = rc->diagnose,
                               .checkpoint = rc->checkpoint ? on_checkpoint : NULL,
                               .checkpoint_every = rc->checkpoint,
                               .user = c};
  fcl_test_gate *gate = rc->held ? fcl_test_gate_hold(e->ctx, e->q, 0.3, FCL_EVENT_COMPLETE) : NULL;
  fcl_status st = fcl_simulation_run(p, &so, NULL);
  snprintf(why, size, "%s", st == FCL_OK ? "" : fcl_last_error());
  fcl_test_gate_join(&gate);
  CHECK_OK(fcl_queue_finish(e->q));
  fcl_problem_destroy(&p);
  fcl_advection_destroy(&adv);
  free_box(&b);
  return st;
}

/* The run's message must hold every text. */
static void expect(const char *why, const char *const *texts, int n, const char *what) {
  for (int i = 0; i < n; ++i)
    CHECKF(fcl_test_contains(why, texts[i]), "%s: the message lacks \"%s\": %s", what, texts[i],
           why);
}

static void check_runs(env *e) {
  char why[2048];
  calls c;
  /* 60 steps at CFL 1.6: the first step is reported lag steps after it, host ahead or not */
  for (int held = 0; held < 2; ++held) {
    const run_case rc = {.cfl = 1.6, .steps = 60, .held = held};
    CHECK_STATUS(run_problem(e, &rc, why, sizeof why, &c), FCL_ERR_INVALID_ARGUMENT,
                 "exceeds max_cfl");
    const char *t[] = {"operator 'advection' failed at step 2",
                       "advection, step 0 (deferred check, at step 2)", "= 1.6"};
    expect(why, t, 3, held ? "CFL 1.6, device held back" : "CFL 1.6");
  }
  { /* a lag of 1, and the problem's numbering from step_start */
    const run_case rc = {.cfl = 1.6, .lag = 1, .start = 100, .steps = 60};
    CHECK_STATUS(run_problem(e, &rc, why, sizeof why, &c), FCL_ERR_INVALID_ARGUMENT,
                 "exceeds max_cfl");
    const char *t[] = {"failed at step 101", "advection, step 100 (deferred check, at step 101)"};
    expect(why, t, 2, "lag 1 from step 100");
  }
  { /* a single step: only the end of the run can report it */
    const run_case rc = {.cfl = 1.6, .steps = 1, .held = true};
    CHECK_STATUS(run_problem(e, &rc, why, sizeof why, &c), FCL_ERR_INVALID_ARGUMENT,
                 "exceeds max_cfl");
    const char *t[] = {"problem 'cfl': operator 'advection'",
                       "advection, step 0 (deferred check, settled after step 0)"};
    expect(why, t, 2, "one step");
  }
  { /* diagnostics every step: only the one at t_start runs */
    const run_case rc = {.cfl = 1.6, .steps = 60, .diagnose = true, .held = true};
    CHECK_STATUS(run_problem(e, &rc, why, sizeof why, &c), FCL_ERR_INVALID_ARGUMENT,
                 "advection, step 0 (deferred check, settled after step 0)");
    CHECKF(c.diagnostics == 1 && c.last_step == 0,
           "diagnostics ran %lld times, last at step %lld, after a violation at step 0",
           (long long)c.diagnostics, (long long)c.last_step);
  }
  { /* a checkpoint every step: none is written */
    const run_case rc = {.cfl = 1.6, .steps = 60, .checkpoint = true};
    CHECK_STATUS(run_problem(e, &rc, why, sizeof why, &c), FCL_ERR_INVALID_ARGUMENT,
                 "advection, step 0 (deferred check, settled after step 0)");
    CHECKF(c.checkpoints == 0, "%lld checkpoints written after a violation at step 0",
           (long long)c.checkpoints);
  }
  { /* within the bound: the run passes, also with the device held back */
    const run_case rc = {.cfl = 0.9, .steps = 12, .held = true};
    CHECK_OK(run_problem(e, &rc, why, sizeof why, &c));
  }
}

static fcl_status apply_nothing(void *data, const fcl_step_info *info) {
  (void)data;
  (void)info;
  return FCL_OK;
}

/* The end of a run waits once for the queue that u and q share, not once per field. */
static void check_end_wait(env *e) {
  fcl_advection_options o = fcl_advection_default_options();
  box b = make_box(e, &o);
  fcl_problem *p = NULL;
  fcl_operator op = {.name = "nothing", .apply = apply_nothing, .nuses = 2};
  op.uses[0] = (fcl_field_use){.field = b.u, .ghosts = 0, .read = true, .written = false};
  op.uses[1] = (fcl_field_use){.field = b.q, .ghosts = 0, .read = true, .written = true};
  CHECK_OK(fcl_problem_create("end", &p));
  CHECK_OK(fcl_problem_add_field(p, b.u, true));
  CHECK_OK(fcl_problem_add_field(p, b.q, true));
  CHECK_OK(fcl_problem_add_operator(p, &op));
  CHECK_OK(fcl_problem_setup(p));
  fcl_simulation_options so = {.t_end = 1, .max_steps = 3, .dt = {.dt_max = 0.1}};
  const uint64_t s0 = fcl_count_host_syncs();
  CHECK_OK(fcl_simulation_run(p, &so, NULL));
  const uint64_t syncs = fcl_count_host_syncs() - s0;
  CHECKF(syncs == 1, "the end of a run over 2 fields on one queue waited %llu times",
         (unsigned long long)syncs);
  fcl_problem_destroy(&p);
  free_box(&b);
}

/* ---------------- fcl_advection_step alone ---------------- */

/* Steps with dt[i] (CFL units) until one fails: its index, or -1; its message in why. */
static int64_t step_until_error(fcl_advection *adv, const double *cfl, int n, double dx, char *why,
                                size_t size) {
  for (int i = 0; i < n; ++i)
    if (fcl_advection_step(adv, cfl[i] * dx) != FCL_OK) {
      snprintf(why, size, "%s", fcl_last_error());
      return i;
    }
  return -1;
}

static void check_steps(env *e) {
  char why[1024], want[128];
  const double cfl[10] = {0.5, 0.5, 0.5, 0.5, 0.5, 1.6, 0.5, 0.5, 0.5, 0.5};
  for (int lag = 1; lag <= 3; lag += 2) {
    fcl_advection_options o = fcl_advection_default_options();
    o.cfl_check = FCL_CFL_CHECK_DEFERRED;
    o.cfl_lag = lag;
    box b = make_box(e, &o);
    fcl_advection *adv = NULL;
    CHECK_OK(fcl_advection_create(b.u, 1, &b.q, &o, &adv));
    if (adv) {
      /* the single bad step 5 is found lag calls later */
      const int64_t at = step_until_error(adv, cfl, 10, b.dx, why, sizeof why);
      CHECKF(at == 5 + lag, "lag %d: a bad step 5 reported at call %lld: %s", lag, (long long)at,
             at < 0 ? "(none)" : why);
      snprintf(want, sizeof want, "advection, step 5 (deferred check, at step %d)", 5 + lag);
      CHECKF(fcl_test_contains(why, want), "lag %d: \"%s\" not in: %s", lag, want, why);
      CHECK_OK(fcl_advection_settle(adv)); /* the good steps still pending */
      /* settling reports the oldest bad step pending and consumes every check (the failed
       * call took no step: the next is step 5 + lag) */
      CHECK_OK(fcl_advection_step(adv, 1.6 * b.dx));
      if (lag == 3) {
        CHECK_OK(fcl_advection_step(adv, 2.0 * b.dx));
        CHECK_STATUS(fcl_advection_settle(adv), FCL_ERR_INVALID_ARGUMENT,
                     "advection, step 8 (deferred check, settled after step 9): dt * max|u_x| "
                     "/ dx = ");
      } else {
        CHECK_STATUS(fcl_advection_settle(adv), FCL_ERR_INVALID_ARGUMENT,
                     "advection, step 6 (deferred check, settled after step 6)");
      }
      CHECK_OK(fcl_advection_settle(adv)); /* nothing pending: clean */
      CHECK_OK(fcl_advection_step(adv, 0.5 * b.dx));
      CHECK_OK(fcl_advection_settle(adv));
      fcl_advection_destroy(&adv);
    }
    free_box(&b);
  }
  /* FCL_CFL_CHECK_NOW names the step it refuses, before it */
  fcl_advection_options o = fcl_advection_default_options();
  box b = make_box(e, &o);
  fcl_advection *adv = NULL;
  CHECK_OK(fcl_advection_create(b.u, 1, &b.q, &o, &adv));
  if (adv) {
    CHECK_OK(fcl_advection_step(adv, 0.5 * b.dx));
    CHECK_STATUS(fcl_advection_step(adv, 1.6 * b.dx), FCL_ERR_INVALID_ARGUMENT,
                 "advection, step 1: dt * max|u_x|");
    CHECK_OK(fcl_advection_settle(adv)); /* nothing deferred */
    fcl_advection_destroy(&adv);
  }
  for (int lag = -1; lag <= FCL_CFL_MAX_LAG + 1; lag += FCL_CFL_MAX_LAG + 2) {
    o.cfl_lag = lag;
    CHECK_STATUS(fcl_advection_create(b.u, 1, &b.q, &o, &adv), FCL_ERR_INVALID_ARGUMENT, "cfl_lag");
  }
  free_box(&b);
}

static void run(env *e) {
  check_runs(e);
  check_end_wait(e);
  check_steps(e);
}

int main(int argc, char **argv) { return fcl_test_mpi_main(&argc, &argv, NULL, run); }
