/* An expression as a user's operator of a problem, on 1 and 2 ranks, through the public API
 * only: the operator's apply evaluates an fcl_field_expr and its launcher callback returns
 * fcl_field_expr_launcher. After STEPS steps on a profiling queue, the operator's node
 * statistics show STEPS calls, device time and the bytes the evaluations wrote, STEPS times this
 * rank's interior points times the element size (counted here from the topology; the split is
 * uneven, so the ranks' counts differ), the launcher's statistics STEPS launches, and the
 * report a device time and a bandwidth for the operator rather than "-". A third operator
 * reads v with a ghost, so the problem exchanges v's ghosts before it, begun early before a
 * second operator that leaves v alone: with per-node timing, that node shows STEPS calls and
 * the device time of exactly the field's exchange kernels of those steps, less an exchange
 * made by hand between two steps (fcl_field_ghost_statistics around each), and a line in the
 * report. */
#include <math.h>
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fcl_test_mpi.h"

typedef fcl_test_mpi_env env;

enum { STEPS = 5 };

/* The operator: field[0] = the expression at the step's time. */
typedef struct {
  fcl_field_expr *expr;
  fcl_field *field;
} expr_op;

static fcl_status expr_apply(void *data, const fcl_step_info *info) {
  expr_op *o = data;
  fcl_status st = fcl_field_expr_set(o->expr, "t", info->t);
  return st == FCL_OK ? fcl_field_expr_eval(o->expr, o->field, 0) : st;
}

static fcl_status nothing(void *data, const fcl_step_info *info) {
  (void)data;
  (void)info;
  return FCL_OK; /* what matters is the exchange before the reader */
}

static fcl_launcher *expr_launcher(void *data, int index) {
  return index == 0 ? fcl_field_expr_launcher(((expr_op *)data)->expr) : NULL;
}

/* The report's line of the operator shows numbers in its device and GB/s columns. */
static void check_report_line(const char *report, const char *name) {
  const char *line = strstr(report, name);
  double wall, share, device_ms, gbs;
  CHECKF(line &&
             sscanf(line + strlen(name), "%lf %lf%% %lf %lf", &wall, &share, &device_ms, &gbs) == 4,
         "the report has no device time and bandwidth for '%s':\n%s", name, report);
}

static void run(env *e) {
  fcl_device *dev;
  fcl_queue *q = NULL;
  CHECK_OK(fcl_queue_device(e->q, &dev));
  CHECK_OK(fcl_queue_create(e->ctx, dev, FCL_QUEUE_PROFILING, &q));
  const fcl_dtype dt = e->fp64 ? FCL_FLOAT64 : FCL_FLOAT32;
  fcl_domain d = fcl_domain_periodic(3, 12, 1.0);
  d.resolution[0] = 21; /* 11 and 10 points on 2 ranks */
  fcl_topology *t = NULL;
  CHECK_OK(fcl_topology_create(MPI_COMM_WORLD, &d, (int[]){e->size, 1, 1}, (int[]){1, 1, 1}, &t));
  fcl_field *v = NULL;
  if (t) CHECK_OK(fcl_field_create(t, e->ctx, q, e->pool, "v", 1, dt, &v));
  expr_op op = {NULL, v};
  if (v)
    CHECK_OK(fcl_field_expr_create(v, "amp * sin(x + t)", 1, (const char *[]){"amp"}, &op.expr));
  fcl_problem *p = NULL;
  if (!op.expr) goto out;
  CHECK_OK(fcl_problem_create("expression operator", &p));
  CHECK_OK(fcl_problem_add_field(p, v, false));
  const fcl_operator desc = {.name = "forcing",
                             .data = &op,
                             .apply = expr_apply,
                             .launcher = expr_launcher,
                             .nuses = 1,
                             .uses = {{v, 0, false, true}}};
  CHECK_OK(fcl_problem_add_operator(p, &desc));
  const fcl_operator idle = {.name = "idle", .apply = nothing, .nuses = 0},
                     reader = {.name = "reader",
                               .apply = nothing,
                               .nuses = 1,
                               .uses = {{v, 1, true, false}}};
  CHECK_OK(fcl_problem_add_operator(p, &idle));
  CHECK_OK(fcl_problem_add_operator(p, &reader));
  CHECK_OK(fcl_problem_setup(p));
  char *graph = NULL;
  CHECK_OK(fcl_problem_describe(p, &graph));
  CHECKF(graph && strstr(graph, "begun before node"), "the exchange is not begun early:\n%s",
         graph ? graph : "");
  free(graph);
  for (int s = 0; s < STEPS; ++s)
    CHECK_OK(fcl_problem_step(p, &(fcl_step_info){.step = s, .t = 0.1 * s, .dt = 0.1}));
  char *report = NULL;
  size_t report_len = 0;
  FILE *mem = open_memstream(&report, &report_len);
  CHECK_OK(fcl_problem_report(p, mem)); /* finishes the queue first */
  fclose(mem);
  if (e->rank == 0) check_report_line(report, "forcing");
  free(report);
  const int64_t *n = fcl_topology_local_resolution(t);
  const double bytes = (double)STEPS * (double)(n[0] * n[1] * n[2]) * (double)fcl_dtype_size(dt);
  CHECK(fcl_problem_num_nodes(p) == 4); /* forcing, idle, ghosts(v), reader */
  fcl_node_stats ns;
  CHECK_OK(fcl_problem_node_statistics(p, 0, &ns));
  CHECKF(!strcmp(ns.name, "forcing") && ns.calls == STEPS && ns.device_ns > 0 && ns.bytes == bytes,
         "rank %d: node '%s': %lld calls, %.0f ns, %.0f bytes; expected %d calls, device time "
         "and %.0f bytes (%d x %lld x %lld x %lld points x %zu)",
         e->rank, ns.name, (long long)ns.calls, ns.device_ns, ns.bytes, STEPS, bytes, STEPS,
         (long long)n[0], (long long)n[1], (long long)n[2], fcl_dtype_size(dt));
  fcl_launch_stats ls;
  CHECK_OK(fcl_launcher_statistics(fcl_field_expr_launcher(op.expr), &ls));
  CHECKF(ls.launches == STEPS && ls.pending == 0 && ls.bytes == bytes,
         "rank %d: launcher: %zu launches (%zu pending), %.0f bytes", e->rank, ls.launches,
         ls.pending, ls.bytes);
  CHECK(fcl_field_expr_launcher(NULL) == NULL);
  /* the exchange's kernels, node by node */
  CHECK_OK(fcl_problem_set_timing(p, true));
  fcl_launch_stats g0, g1, h0 = {0}, h1 = {0};
  CHECK_OK(fcl_field_ghost_statistics(v, &g0));
  for (int s = STEPS; s < 2 * STEPS; ++s) {
    CHECK_OK(fcl_problem_step(p, &(fcl_step_info){.step = s, .t = 0.1 * s, .dt = 0.1}));
    if (s != STEPS + 1) continue;
    /* an exchange outside the problem's nodes: the field's, not the node's */
    CHECK_OK(fcl_queue_finish(q));
    CHECK_OK(fcl_field_ghost_statistics(v, &h0));
    CHECK_OK(fcl_field_ghosts_update(v));
    CHECK_OK(fcl_queue_finish(q));
    CHECK_OK(fcl_field_ghost_statistics(v, &h1));
  }
  report = NULL;
  mem = open_memstream(&report, &report_len);
  CHECK_OK(fcl_problem_report(p, mem));
  fclose(mem);
  if (e->rank == 0) check_report_line(report, "ghosts(v)");
  free(report);
  CHECK_OK(fcl_field_ghost_statistics(v, &g1));
  CHECK_OK(fcl_problem_node_statistics(p, 2, &ns));
  const double by_hand = h1.total_ns - h0.total_ns, nodes_ns = g1.total_ns - g0.total_ns - by_hand,
               nodes_bytes = g1.bytes - g0.bytes - (h1.bytes - h0.bytes);
  CHECKF(!strcmp(ns.name, "ghosts(v)") && ns.calls == STEPS && g1.pending == 0 && by_hand > 0 &&
             ns.device_ns > 0 && fabs(ns.device_ns - nodes_ns) <= 1e-9 * nodes_ns &&
             fabs(ns.bytes - nodes_bytes) <= 1e-9 * nodes_bytes,
         "rank %d: node '%s': %lld calls, %.0f ns, %.0f bytes; the field's exchange kernels "
         "in those steps: %.0f ns, %.0f bytes (%.0f ns more by hand, %zu pending)",
         e->rank, ns.name, (long long)ns.calls, ns.device_ns, ns.bytes, nodes_ns, nodes_bytes,
         by_hand, g1.pending);
  CHECK(fcl_field_ghost_statistics(NULL, &g1) != FCL_OK);
  CHECK(fcl_field_ghost_statistics(v, NULL) != FCL_OK);
out:
  fcl_problem_destroy(&p);
  fcl_field_expr_destroy(&op.expr);
  fcl_field_destroy(&v);
  fcl_topology_destroy(&t);
  fcl_queue_release(&q);
}

int main(int argc, char **argv) { return fcl_test_mpi_main(&argc, &argv, NULL, run); }
