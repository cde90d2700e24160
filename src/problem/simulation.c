/* The time loop: dt policy, steps, callbacks at their cadence, progress line on rank 0. */
#include <math.h>
#include <stdio.h>

#include "check.h"
#include "problem_impl.h"

static fcl_status check_options(const fcl_simulation_options *o) {
  if (!(isfinite(o->t_start) && isfinite(o->t_end) && o->t_end >= o->t_start))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "simulation: t_start = %g, t_end = %g (need "
                     "finite t_end >= t_start)",
                     o->t_start, o->t_end);
  if ((o->dt.cfl > 0 || o->dt.lcfl > 0) && !o->measure)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "simulation: an adaptive dt (cfl %g, lcfl %g) "
                     "needs the measure callback",
                     o->dt.cfl, o->dt.lcfl);
  if (o->max_steps < 0 || o->diagnostics_every < 0 || o->checkpoint_every < 0 ||
      !(o->output_every_t >= 0) || !(o->progress_every_s >= 0))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "simulation: negative max_steps, cadence or "
                                               "progress interval");
  if ((o->diagnostics_every && !o->diagnostics) || (o->checkpoint_every && !o->checkpoint) ||
      (o->output_every_t > 0 && !o->output))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "simulation: a cadence is set without its "
                                               "callback");
  return FCL_OK;
}

/* The run stops at a step of the problem's numbering: the status, with a message naming what
 * failed and the step, then the failure's own message (what the caller's callback returned
 * without recording one says so: the last error is cleared before each callback). */
static fcl_status stopped(const fcl_problem *p, fcl_status st, const char *what, int64_t step,
                          double t) {
  char why[1024];
  snprintf(why, sizeof why, "%s",
           fcl_last_status() != FCL_OK ? fcl_last_error() : "failed without a message");
  return FCL_ERROR(st, "problem '%s': %s step %lld (t = %g): %s", p->name, what, (long long)step, t,
                   why);
}

/* A callback of the loop (name: "diagnostics", ...) with the state s; after a step (taken),
 * its failure names that step (s->step - 1), else the first one (s->step). */
static fcl_status call_back(const fcl_problem *p, fcl_sim_callback fn, const char *name, void *user,
                            const fcl_sim_state *s, bool taken) {
  fcl_clear_error();
  const fcl_status st = fn(user, s);
  if (st == FCL_OK) return FCL_OK;
  char what[64];
  snprintf(what, sizeof what, "the %s callback failed %s", name, taken ? "after" : "before");
  return stopped(p, st, what, taken ? s->step - 1 : s->step, s->t);
}

static void hms(char *buf, size_t size, double s) {
  if (!isfinite(s) || s < 0) s = 0;
  const long t = lround(s);
  snprintf(buf, size, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
}

fcl_status fcl_simulation_run(fcl_problem *p, const fcl_simulation_options *o,
                              fcl_sim_state *final) {
  FCL_CHECK_NULL(p, 1);
  FCL_CHECK_NULL(o, 2);
  if (!p->ready)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "problem '%s': run after setup", p->name);
  FCL_TRY(check_options(o));
  int rank;
  MPI_Comm_rank(fcl__problem_comm(p), &rank);
  FILE *progress = rank == 0 ? o->progress : NULL;
  const double every = o->progress_every_s > 0 ? o->progress_every_s : 2.0;
  /* a time within this of a target is the target (rounding of the sums of dt) */
  const double eps = 1e-12 * fmax(1, fabs(o->t_end));
  fcl_sim_state s = {.step = o->step_start, .t = o->t_start};
  if (o->diagnostics && o->diagnostics_every)
    FCL_TRY(call_back(p, o->diagnostics, "diagnostics", o->user, &s, false));
  const double wall0 = MPI_Wtime();
  double last_print = wall0;
  int64_t taken = 0;
  fcl_status st = FCL_OK;
  while (st == FCL_OK && s.t < o->t_end - eps && (o->max_steps <= 0 || taken < o->max_steps)) {
    fcl_dt_inputs in = {0};
    const bool adaptive = o->dt.cfl > 0 || o->dt.lcfl > 0;
    if (adaptive) {
      fcl_clear_error();
      st = o->measure(o->user, &in);
      if (st != FCL_OK) {
        st = stopped(p, st, "the measure callback failed before", s.step, s.t);
        break;
      }
    }
    double dt = 0;
    st = fcl_dt_policy_compute(&o->dt, adaptive ? &in : NULL, fcl_problem_max_dt(p), &dt, &s.limit);
    if (st != FCL_OK) {
      st = stopped(p, st, "no dt for", s.step, s.t);
      break;
    }
    /* land exactly on the end time and on output times */
    double target = o->t_end;
    if (o->output_every_t > 0)
      target = fmin(target, (floor((s.t + eps) / o->output_every_t) + 1) * o->output_every_t);
    if (s.t + dt > target - eps) {
      dt = target - s.t;
      s.limit = FCL_DT_END;
    }
    const fcl_step_info info = {
        .step = s.step, .t = s.t, .dt = dt, .umax = adaptive && o->dt.cfl > 0 ? in.umax : NULL};
    st = fcl_problem_step(p, &info);
    if (st != FCL_OK) break;
    s.dt = dt;
    s.t = fabs(s.t + dt - target) <= eps ? target : s.t + dt;
    ++s.step;
    ++taken;
    const bool diagnose = o->diagnostics_every && taken % o->diagnostics_every == 0;
    const bool output = o->output_every_t > 0 && s.t == target && target <= o->t_end &&
                        fabs(remainder(s.t, o->output_every_t)) <= eps;
    const bool checkpoint = o->checkpoint_every && taken % o->checkpoint_every == 0;
    /* the callbacks see the fields only once every deferred check of them has passed */
    if (diagnose || output || checkpoint) {
      char when[96];
      snprintf(when, sizeof when, " (settled after step %lld, t = %g)", (long long)(s.step - 1),
               s.t);
      st = fcl__problem_settle(p, when);
    }
    if (st == FCL_OK && diagnose)
      st = call_back(p, o->diagnostics, "diagnostics", o->user, &s, true);
    if (st == FCL_OK && output) st = call_back(p, o->output, "output", o->user, &s, true);
    if (st == FCL_OK && checkpoint)
      st = call_back(p, o->checkpoint, "checkpoint", o->user, &s, true);
    const double now = MPI_Wtime();
    if (progress && (now - last_print >= every || s.t >= o->t_end - eps)) {
      const double rate = taken / fmax(now - wall0, 1e-9);
      const double left = o->t_end > s.t && s.t > o->t_start
                              ? (now - wall0) * (o->t_end - s.t) / (s.t - o->t_start)
                              : 0;
      char eta[32];
      hms(eta, sizeof eta, left);
      fprintf(progress, "step %8lld  t %10.5f  dt %.3e (%s)  %8.2f steps/s  ETA %s\n",
              (long long)s.step, s.t, s.dt, fcl_dt_limit_name(s.limit), rate, eta);
      fflush(progress);
      last_print = now;
    }
  }
  if (st == FCL_OK) {
    char when[96] = " (settled at the end of the run, before any step)";
    if (taken)
      snprintf(when, sizeof when, " (settled at the end of the run, after step %lld, t = %g)",
               (long long)(s.step - 1), s.t);
    st = fcl__problem_settle(p, when);
  }
  if (st == FCL_OK) st = fcl__problem_finish(p);
  if (final) *final = s;
  return st;
}
