/* The checks and waits that field.h promises, with the host ahead of the device: the field's
 * queue is held back by a barrier on a user event that a second thread completes, or fails,
 * after a delay (fcl_test_gate.h), so every call under test runs before the device's work.
 *   - a reduction started behind the gate is in flight and not done; a second start is
 *     FCL_ERR_INVALID_STATE; finish waits (one host sync) and gives the values fcl_field_reduce
 *     gives; a finish with none in flight is FCL_ERR_INVALID_STATE;
 *   - fcl_reduction_cancel and fcl_reduction_destroy wait for the reads in flight;
 *   - fcl_field_swap refuses either field while its exchange is begun and not ended, and
 *     swaps nothing then;
 *   - an expression with more than FCL_FIELD_EXPR_MAX_PARAMS parameters is refused;
 *   - ghost exchanges that need no message (one rank, every axis periodic; the local update on
 *     any number of ranks) return without waiting for the queue, and what is enqueued after
 *     them sees the ghosts;
 *   - fcl_field_ghost_statistics never blocks: behind the gate it counts the exchange's
 *     launches as pending, after it as done with device time. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fcl_test_gate.h"
#include "fcl_test_mpi.h"

#define PI 3.14159265358979323846
#define N 12

typedef fcl_test_mpi_env env;

static void init_two(void *user, const double *x, double *v) {
  (void)user;
  v[0] = sin(x[0]) * cos(x[1]) + 2 + x[2];
  v[1] = cos(x[0] + x[1]) - x[2];
}

static fcl_topology *box(void) {
  fcl_domain d = fcl_domain_periodic(3, N, 2 * PI);
  fcl_topology *t = NULL;
  CHECK_OK(fcl_topology_create(MPI_COMM_WORLD, &d, NULL, (int[]){2, 2, 2}, &t));
  return t;
}

static fcl_field *two(env *e, fcl_topology *t, fcl_queue *q, const char *name) {
  fcl_field *f = NULL;
  CHECK_OK(fcl_field_create(t, e->ctx, q, e->pool, name, 2, FCL_FLOAT32, &f));
  if (f) CHECK_OK(fcl_field_init(f, init_two, NULL));
  return f;
}

/* field.h: "a start already in flight is FCL_ERR_INVALID_STATE"; finish "Wait[s] for the device
 * part"; fcl_reduction_done: "whether the device has done its part"; "no start in flight is
 * FCL_ERR_INVALID_STATE". */
static void reduction_held(env *e, fcl_field *f) {
  double want[2], got[2] = {NAN, NAN};
  for (int c = 0; c < 2; ++c) CHECK_OK(fcl_field_reduce(f, c, FCL_REDUCE_MAX, &want[c]));
  fcl_reduction *r = NULL;
  CHECK_OK(fcl_reduction_create(f, FCL_REDUCE_MAX, &r));
  fcl_test_gate *gate = fcl_test_gate_hold(e->ctx, e->q, 1.0, FCL_EVENT_COMPLETE);
  if (!r || !gate) return;
  CHECK_OK(fcl_reduction_start(r));
  const bool done = fcl_reduction_done(r);
  CHECKF(!fcl_test_gate_opened(gate), "%s", "the gate opened before the reduction was polled");
  CHECKF(fcl_reduction_in_flight(r) && !done,
         "a reduction behind a closed gate: in flight %d, "
         "done %d (expected 1, 0)",
         fcl_reduction_in_flight(r), done);
  CHECK_STATUS(fcl_reduction_start(r), FCL_ERR_INVALID_STATE, "already in flight");
  const uint64_t s0 = fcl_count_host_syncs();
  CHECK_OK(fcl_reduction_finish(r, got));
  CHECKF(fcl_test_gate_opened(gate), "%s", "fcl_reduction_finish returned before the device ran");
  CHECKF(fcl_count_host_syncs() - s0 == 1, "finish made %llu host syncs (expected 1)",
         (unsigned long long)(fcl_count_host_syncs() - s0));
  for (int c = 0; c < 2; ++c)
    CHECKF(got[c] == want[c], "component %d: the held reduction gave %.9g, fcl_field_reduce %.9g",
           c, got[c], want[c]);
  CHECK(!fcl_reduction_in_flight(r));
  CHECK_STATUS(fcl_reduction_finish(r, got), FCL_ERR_INVALID_STATE, "no reduction in flight");
  fcl_test_gate_join(&gate);
  fcl_reduction_destroy(&r);
}

/* field.h: cancel "waits for its reads, keeps no result, and the reduction can start again";
 * destroy "waits for a read in flight" (the reads write the reduction's host memory). */
static void reduction_cancel_and_destroy_wait(env *e, fcl_field *f) {
  for (int destroy = 0; destroy < 2; ++destroy) {
    const char *what = destroy ? "fcl_reduction_destroy" : "fcl_reduction_cancel";
    fcl_reduction *r = NULL;
    CHECK_OK(fcl_reduction_create(f, FCL_REDUCE_SUM, &r));
    fcl_test_gate *gate = fcl_test_gate_hold(e->ctx, e->q, 0.3, FCL_EVENT_COMPLETE);
    if (!r || !gate) return;
    CHECK_OK(fcl_reduction_start(r));
    if (destroy)
      fcl_reduction_destroy(&r);
    else
      fcl_reduction_cancel(r);
    CHECKF(fcl_test_gate_opened(gate), "%s returned while its read was in flight", what);
    fcl_test_gate_join(&gate);
    if (destroy) continue;
    double got[2], want[2];
    CHECK(!fcl_reduction_in_flight(r));
    CHECK_STATUS(fcl_reduction_finish(r, got), FCL_ERR_INVALID_STATE, "no reduction in flight");
    for (int c = 0; c < 2; ++c) CHECK_OK(fcl_field_reduce(f, c, FCL_REDUCE_SUM, &want[c]));
    CHECK_OK(fcl_reduction_start(r));
    CHECK_OK(fcl_reduction_finish(r, got));
    CHECK(got[0] == want[0] && got[1] == want[1]);
    fcl_reduction_destroy(&r);
  }
}

/* field.h, fcl_field_swap: "an exchange of either in flight (fcl_field_ghosts_begin without
 * _end) is FCL_ERR_INVALID_STATE". */
static void swap_refused_in_flight(env *e, fcl_field *a, fcl_field *b) {
  for (int side = 0; side < 2; ++side) {
    fcl_field *begun = side ? b : a;
    fcl_mem *const a0 = fcl_field_buffer(a, 0), *const b0 = fcl_field_buffer(b, 0);
    fcl_test_gate *gate = fcl_test_gate_hold(e->ctx, e->q, 0.2, FCL_EVENT_COMPLETE);
    CHECK_OK(fcl_field_ghosts_begin(begun));
    CHECK_STATUS(fcl_field_swap(a, b), FCL_ERR_INVALID_STATE, "in flight");
    CHECK_STATUS(fcl_field_swap(b, a), FCL_ERR_INVALID_STATE, "in flight");
    CHECKF(fcl_field_buffer(a, 0) == a0 && fcl_field_buffer(b, 0) == b0,
           "a refused swap (exchange of '%s' in flight) exchanged the buffers",
           fcl_field_name(begun));
    CHECK_OK(fcl_field_ghosts_end(begun));
    CHECK_OK(fcl_field_swap(a, b)); /* ended: allowed again, and back */
    CHECK_OK(fcl_field_swap(a, b));
    fcl_test_gate_join(&gate);
  }
}

/* Every ghost of component 0 holds the interior value it stands for (all axes periodic). */
static bool ghosts_wrap(const fcl_field *f) {
  const fcl_topology *t = fcl_field_topology(f);
  const size_t *p = fcl_field_padded_shape(f);
  const int *o = fcl_topology_origin(t), *gw = fcl_topology_ghosts(t),
            *procs = fcl_topology_procs(t);
  const int64_t *n = fcl_topology_local_resolution(t);
  float *host = malloc(p[0] * p[1] * p[2] * sizeof *host);
  if (!host || fcl_field_read(f, 0, true, host) != FCL_OK) {
    free(host);
    return false;
  }
  bool ok = true;
  for (int64_t k = -gw[2]; k < n[2] + gw[2]; ++k)
    for (int64_t j = -gw[1]; j < n[1] + gw[1]; ++j)
      for (int64_t i = -gw[0]; i < n[0] + gw[0]; ++i) {
        const int64_t at[3] = {i, j, k};
        int64_t src[3];
        bool mine = true; /* a ghost of a split axis comes from a neighbour: not checked here */
        for (int a = 0; a < 3; ++a) {
          src[a] = (at[a] % n[a] + n[a]) % n[a];
          mine = mine && (src[a] == at[a] || procs[a] == 1);
        }
        if (!mine) continue;
        const size_t g = ((size_t)(k + o[2]) * p[1] + (size_t)(j + o[1])) * p[0] +
                         (size_t)(i + o[0]);
        const size_t s = ((size_t)(src[2] + o[2]) * p[1] + (size_t)(src[1] + o[1])) * p[0] +
                         (size_t)(src[0] + o[0]);
        ok = ok && host[g] == host[s];
      }
  free(host);
  return ok;
}

/* field.h, ghost exchanges: "When every axis wraps (one rank, periodic) and the queue is in
 * order, the calls do not wait for the queue"; fcl_field_ghosts_update_local: "Never waits for
 * the queue on an in-order queue". On several ranks the full exchange sends messages, which
 * need the device's data: only the local update is promised not to wait there. */
static void ghosts_do_not_wait(env *e, fcl_field *f) {
  for (int local = e->size > 1; local < 2; ++local) {
    const char *what = local ? "fcl_field_ghosts_update_local" : "fcl_field_ghosts_update";
    CHECK_OK(fcl_field_init(f, init_two, NULL)); /* ghosts 0 */
    fcl_test_gate *gate = fcl_test_gate_hold(e->ctx, e->q, 1.0, FCL_EVENT_COMPLETE);
    const uint64_t s0 = fcl_count_host_syncs();
    CHECK_OK(local ? fcl_field_ghosts_update_local(f) : fcl_field_ghosts_update(f));
    const uint64_t syncs = fcl_count_host_syncs() - s0;
    CHECKF(syncs == 0 && !fcl_test_gate_opened(gate),
           "%s waited for the queue (%llu host syncs, returned %s the gate opened)", what,
           (unsigned long long)syncs, fcl_test_gate_opened(gate) ? "after" : "before");
    CHECKF(ghosts_wrap(f), "%s: the ghosts read after it do not hold the wrapped values", what);
    fcl_test_gate_join(&gate);
  }
}

/* field.h, fcl_field_ghost_statistics: "Never blocks". On a profiling queue held by the gate,
 * a local update's launches are pending; once the gate opens they are done, with device time. */
static void ghost_statistics_do_not_wait(env *e, fcl_topology *t) {
  fcl_device *dev;
  fcl_queue *q = NULL;
  CHECK_OK(fcl_queue_device(e->q, &dev));
  CHECK_OK(fcl_queue_create(e->ctx, dev, FCL_QUEUE_PROFILING, &q));
  fcl_field *f = q ? two(e, t, q, "profiled") : NULL;
  if (f) CHECK_OK(fcl_queue_finish(q));
  fcl_test_gate *gate = f ? fcl_test_gate_hold(e->ctx, q, 1.0, FCL_EVENT_COMPLETE) : NULL;
  if (gate) {
    CHECK_OK(fcl_field_ghosts_update_local(f));
    fcl_launch_stats held = {0}, done = {0};
    const uint64_t s0 = fcl_count_host_syncs();
    CHECK_OK(fcl_field_ghost_statistics(f, &held));
    const uint64_t syncs = fcl_count_host_syncs() - s0;
    CHECKF(syncs == 0 && !fcl_test_gate_opened(gate) && held.pending > 0 && held.launches == 0,
           "behind the gate: %llu host syncs, returned %s the gate opened, %zu pending, %zu done",
           (unsigned long long)syncs, fcl_test_gate_opened(gate) ? "after" : "before", held.pending,
           held.launches);
    fcl_test_gate_join(&gate);
    CHECK_OK(fcl_queue_finish(q));
    CHECK_OK(fcl_field_ghost_statistics(f, &done));
    CHECKF(done.pending == 0 && done.launches == held.pending && done.total_ns > 0,
           "after the gate: %zu pending, %zu done (%zu were pending), %.0f ns", done.pending,
           done.launches, held.pending, done.total_ns);
  }
  fcl_field_destroy(&f);
  fcl_queue_release(&q);
}

/* field.h: expression parameters, "at most FCL_FIELD_EXPR_MAX_PARAMS". */
static void too_many_params(fcl_field *f) {
  char names[FCL_FIELD_EXPR_MAX_PARAMS + 1][8];
  const char *params[FCL_FIELD_EXPR_MAX_PARAMS + 1];
  for (int i = 0; i <= FCL_FIELD_EXPR_MAX_PARAMS; ++i) {
    snprintf(names[i], sizeof names[i], "p%d", i);
    params[i] = names[i];
  }
  fcl_field_expr *x = NULL;
  char most[32];
  snprintf(most, sizeof most, "at most %d", FCL_FIELD_EXPR_MAX_PARAMS);
  CHECK_STATUS(fcl_field_expr_create(f, "p0 * x", FCL_FIELD_EXPR_MAX_PARAMS + 1, params, &x),
               FCL_ERR_INVALID_ARGUMENT, most);
  CHECK(x == NULL);
  CHECK_OK(fcl_field_expr_create(f, "p0 * x", FCL_FIELD_EXPR_MAX_PARAMS, params, &x));
  fcl_field_expr_destroy(&x);
}

static void run_all(env *e) {
  fcl_topology *t = box();
  fcl_field *a = two(e, t, e->q, "a"), *b = two(e, t, e->q, "b");
  if (a && b) {
    reduction_held(e, a);
    reduction_cancel_and_destroy_wait(e, a);
    swap_refused_in_flight(e, a, b);
    ghosts_do_not_wait(e, a);
    ghost_statistics_do_not_wait(e, t);
    too_many_params(a);
  }
  fcl_field_destroy(&a);
  fcl_field_destroy(&b);
  fcl_topology_destroy(&t);
}

int main(int argc, char **argv) { return fcl_test_mpi_main(&argc, &argv, NULL, run_all); }
