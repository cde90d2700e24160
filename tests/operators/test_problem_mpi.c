/* The problem layer and the time loop, on 1, 2 or 4 ranks:
 *   - a graph of finite-difference and custom operators: the description shows the ghost
 *     exchanges setup inserted (and only those the cycle of steps needs), and two steps give
 *     bit for bit what the same operators applied one by one (each refreshing its ghosts)
 *     give; an exchange begins before the operators between its field's last writer and its
 *     reader that leave the field alone (the same values);
 *   - setup errors name the operator and the field: read before written, a field the problem
 *     does not have, mixed precisions, too few ghosts; duplicate names;
 *   - the dt policy picks the smallest bound and names it; dt_min and bad policies are errors;
 *   - an operator's dt_fraction advances it by that share of the step; with per-node timing on
 *     a profiling queue, an operator listed twice gets each node's share of its device time;
 *   - the time loop lands on every output time and on the end time (a kernel integrating 1
 *     over the run returns the elapsed time), calls the callbacks at their cadence, stops at
 *     max_steps;
 *   - a run's output directory: created with its parents, an earlier run's diagnostics or
 *     checkpoints refused for a fresh run, removed with overwrite, kept for a restart; the
 *     diagnostics cut back to a restart's step (header kept, later rows dropped);
 *   - fcl_field_swap: two fields exchange their values, ghosts included, and what was built over
 *     them before follows (an fd kernel reading one's ghosts, a diffusion, a reduction, the
 *     field's own reduction, the analytics), giving bit for bit what the same objects built over fields set
 *     to the swapped values give; a problem's swap node (u_prev <- u) gives what a copy gives;
 *     fields that differ, or one whose exchange is in flight, cannot be swapped;
 *   - an operator reading periodic images along the axes a rank holds whole gets an exchange
 *     that leaves them out (their ghosts untouched, the others' filled), one reading every
 *     ghost a whole one;
 *   - with FFTs: the 2D Taylor-Green vortex through the vorticity solver (spectral
 *     Biot-Savart, remeshed advection, spectral diffusion, adaptive CFL step) converges to the
 *     exact decaying solution at second order as the grid and step are refined together. */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include <math.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include "op_fields.h"

typedef fcl_test_mpi_env env;

static void vort3(const double *x, double *w) {
  w[0] = cos(x[1]);
  w[1] = sin(x[2]);
  w[2] = cos(x[0] + x[1]);
}

/* The operators of the graph test, on fields u, w, s. */
typedef struct {
  fcl_fd *curl, *stretch, *scale, *norm;
} graph_ops;

static void graph_create(fcl_field *u, fcl_field *w, fcl_field *w2, fcl_field *s, graph_ops *g) {
  CHECK_OK(fcl_fd_curl_create(u, w2, 4, &g->curl));
  CHECK_OK(fcl_fd_stretching_create(u, w, 2, &g->stretch));
  fcl_fd_binding b[3] = {{"u0", u, 0, 0}, {"u1", u, 1, 0}, {"u2", u, 2, 0}};
  CHECK_OK(fcl_fd_kernel_create("scale_u", 3, b,
                                "u0[k, j, i] = (1 + dt) * u0[k, j, i]\n"
                                "u1[k, j, i] = (1 - dt) * u1[k, j, i]\n"
                                "u2[k, j, i] = u2[k, j, i] + dt * u0[k, j, i]",
                                24, &g->scale));
  CHECK_OK(fcl_fd_gradient_norm_create(u, s, 4, &g->norm));
}

static void graph_destroy(graph_ops *g) {
  fcl_fd_destroy(&g->curl);
  fcl_fd_destroy(&g->stretch);
  fcl_fd_destroy(&g->scale);
  fcl_fd_destroy(&g->norm);
}

static bool same_values(fcl_field *a, fcl_field *b) {
  const int64_t *n = fcl_topology_local_resolution(fcl_field_topology(a));
  const size_t bytes = (size_t)(n[0] * n[1] * n[2]) * fcl_dtype_size(fcl_field_dtype(a));
  char *x = malloc(bytes), *y = malloc(bytes);
  int same = 1;
  for (int c = 0; c < fcl_field_ncomp(a); ++c) {
    CHECK_OK(fcl_field_read(a, c, false, x));
    CHECK_OK(fcl_field_read(b, c, false, y));
    same = same && !memcmp(x, y, bytes);
  }
  free(x);
  free(y);
  int all;
  MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all;
}

static const char *const graph_names[4] = {"u", "w", "w2", "s"};

/* Two copies (r = 0: in a problem, r = 1: applied one by one) of the graph's fields u, w, w2, s
 * and operators. */
static void graph_setup(env *e, fcl_topology *t, fcl_field *f[2][4], graph_ops g[2]) {
  for (int r = 0; r < 2; ++r) {
    for (int i = 0; i < 4; ++i)
      f[r][i] = op_field(e, t, graph_names[i], i == 3 ? 1 : 3, FCL_FLOAT64,
                         i == 0   ? op_vel3
                         : i == 1 ? vort3
                                  : NULL);
    graph_create(f[r][0], f[r][1], f[r][2], f[r][3], &g[r]);
  }
}

static void graph_teardown(fcl_field *f[2][4], graph_ops g[2]) {
  for (int r = 0; r < 2; ++r) {
    graph_destroy(&g[r]);
    for (int i = 0; i < 4; ++i) fcl_field_destroy(&f[r][i]);
  }
}

static void check_graph(env *e) {
  fcl_topology *t = op_box(3, 16, 2);
  fcl_field *f[2][4];
  const char *const *names = graph_names;
  graph_ops g[2] = {{0}};
  graph_setup(e, t, f, g);
  fcl_problem *p = NULL;
  CHECK_OK(fcl_problem_create("graph", &p));
  for (int i = 0; i < 4; ++i) CHECK_OK(fcl_problem_add_field(p, f[0][i], i < 2));
  fcl_fd *order[4] = {g[0].curl, g[0].stretch, g[0].scale, g[0].norm};
  for (int o = 0; o < 4; ++o) {
    fcl_operator d;
    CHECK_OK(fcl_fd_operator(order[o], &d));
    CHECK_OK(fcl_problem_add_operator(p, &d));
  }
  CHECK_OK(fcl_problem_setup(p));
  char *text = NULL;
  CHECK_OK(fcl_problem_describe(p, &text));
  if (text) {
    /* u is current when a step starts (exchanged after the last write of the step before):
     * one exchange, between the write of scale_u and the read of the gradient norm */
    const char *want[] = {"0. ghosts(u) [first step only",
                          "1. fd.curl reads u(+2); writes w2",
                          "2. fd.stretching reads u(+2), w; writes w",
                          "3. scale_u reads u; writes u",
                          "4. ghosts(u) width 2 [inserted: read by 'fd.gradient_norm']",
                          "5. fd.gradient_norm reads u(+2); writes s",
                          "5 nodes per step"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; ++i)
      CHECKF(fcl_test_contains(text, want[i]), "description lacks '%s':\n%s", want[i], text);
    CHECKF(!fcl_test_contains(text, "6."), "an exchange too many:\n%s", text);
  }
  free(text);
  const double dt = 0.05;
  for (int s = 0; s < 2; ++s) {
    CHECK_OK(fcl_problem_step(p, &(fcl_step_info){.step = s, .t = s * dt, .dt = dt}));
    fcl_fd *ref[4] = {g[1].curl, g[1].stretch, g[1].scale, g[1].norm};
    for (int o = 0; o < 4; ++o) CHECK_OK(fcl_fd_apply(ref[o], dt));
  }
  for (int i = 0; i < 4; ++i)
    CHECKF(same_values(f[0][i], f[1][i]),
           "field '%s' differs from the operators applied one "
           "by one",
           names[i]);
  CHECK_OK(fcl_problem_report(p, e->rank == 0 ? stdout : stderr));
  CHECK(fcl_problem_num_nodes(p) == 5);
  fcl_node_stats ns;
  CHECK_OK(fcl_problem_node_statistics(p, 3, &ns));
  CHECKF(!strcmp(ns.name, "ghosts(u)") && ns.calls == 2 && ns.wall_s > 0 && ns.device_ns == 0,
         "node 4: '%s', %lld calls", ns.name, (long long)ns.calls);
  CHECK_OK(fcl_problem_node_statistics(p, 0, &ns));
  CHECK(!strcmp(ns.name, "fd.curl") && ns.calls == 2);
  CHECK_STATUS(fcl_problem_node_statistics(p, 5, &ns), FCL_ERR_INVALID_ARGUMENT, "node 5");
  /* the report says when its wall times are enqueue times (timing off), and not otherwise */
  for (int timed = 0; timed < 2; ++timed) {
    if (timed) CHECK_OK(fcl_problem_set_timing(p, true));
    char *report = NULL;
    size_t report_len = 0;
    FILE *mem = open_memstream(&report, &report_len);
    CHECK_OK(fcl_problem_report(p, mem));
    fclose(mem);
    if (e->rank == 0) {
      const bool says_off = strstr(report, "per-node timing is off") != NULL;
      CHECKF(says_off == !timed, "report with timing %s %s that timing is off:\n%s",
             timed ? "on" : "off", says_off ? "says" : "does not say", report);
    }
    free(report);
  }
  fcl_problem_destroy(&p);
  graph_teardown(f, g);
  fcl_topology_destroy(&t);
}

/* An operator that fails while *data is true (and touches nothing). */
static fcl_status fail_apply(void *data, const fcl_step_info *info) {
  (void)info;
  return *(bool *)data ? FCL_ERR_INVALID_ARGUMENT : FCL_OK;
}

/* Overlap: u's exchange begins before the operators that leave u alone (the curl of w, an
 * operator on s that can fail), after u's last writer, and ends before u's reader; steps equal
 * the operators applied one by one. A step that fails while the exchange is in flight completes
 * it, and the next step runs as usual (a failed step applied scale and curl: so does the
 * reference). (Left in flight, the exchange's requests would leak and its staging could be freed
 * under MPI; the retry alone would still match its messages pairwise, so this checks the path,
 * not the leak.) */
static void check_overlap(env *e) {
  fcl_topology *t = op_box(3, 16, 2);
  fcl_field *f[2][4];
  graph_ops g[2] = {{0}};
  fcl_fd *curl_w[2] = {NULL, NULL};
  graph_setup(e, t, f, g);
  for (int r = 0; r < 2; ++r) CHECK_OK(fcl_fd_curl_create(f[r][1], f[r][2], 4, &curl_w[r]));
  bool fail = false;
  fcl_operator failing = {.name = "fail_on_demand",
                          .data = &fail,
                          .apply = fail_apply,
                          .nuses = 1,
                          .uses = {{f[0][3], 0, true, false}}};
  fcl_problem *p = NULL;
  CHECK_OK(fcl_problem_create("overlap", &p));
  for (int i = 0; i < 4; ++i) CHECK_OK(fcl_problem_add_field(p, f[0][i], i != 2));
  fcl_fd *order[2][3] = {{g[0].scale, curl_w[0], g[0].norm}, {g[1].scale, curl_w[1], g[1].norm}};
  for (int o = 0; o < 3; ++o) {
    fcl_operator d;
    CHECK_OK(fcl_fd_operator(order[0][o], &d));
    CHECK_OK(fcl_problem_add_operator(p, &d));
    if (o == 1) CHECK_OK(fcl_problem_add_operator(p, &failing));
  }
  CHECK_OK(fcl_problem_setup(p));
  char *text = NULL;
  CHECK_OK(fcl_problem_describe(p, &text));
  if (text)
    CHECKF(fcl_test_contains(text, "4. ghosts(u) width 2 [inserted: read by 'fd.gradient_norm'; "
                                   "begun before node 2]"),
           "u's exchange does not begin before the curl of w:\n%s", text);
  free(text);
  const double dt = 0.05;
  for (int s = 0; s < 3; ++s) {
    fail = s == 1;
    fcl_status st = fcl_problem_step(p, &(fcl_step_info){.step = s, .t = s * dt, .dt = dt});
    if (s == 1)
      CHECK_STATUS(st, FCL_ERR_INVALID_ARGUMENT, "operator 'fail_on_demand' failed at step 1");
    else
      CHECK_OK(st);
    for (int o = 0; o < (s == 1 ? 2 : 3); ++o) CHECK_OK(fcl_fd_apply(order[1][o], dt));
  }
  for (int i = 0; i < 4; ++i)
    CHECKF(same_values(f[0][i], f[1][i]),
           "overlap: field '%s' differs from the operators applied one by one", graph_names[i]);
  fcl_problem_destroy(&p);
  for (int r = 0; r < 2; ++r) fcl_fd_destroy(&curl_w[r]);
  graph_teardown(f, g);
  fcl_topology_destroy(&t);
}

static fcl_status noop_apply(void *data, const fcl_step_info *info) {
  (void)data;
  (void)info;
  return FCL_OK;
}

static void coded(const double *x, double *v) { v[0] = x[0] + 10 * x[1] + 100 * x[2]; }

/* Periodic images: a writer of q, a reader of q's ghosts that takes periodic images along the
 * wrapping axes, a reader of every ghost. Setup inserts an exchange that leaves the wrapping
 * axes out before the first reader and a whole one before the second; after a step without the
 * second reader, every ghost (NaN before) along the leading axes this rank holds whole is still
 * NaN, and every ghost of the other axes (interior along the rest) holds its periodic image. */
static void check_periodic_images(env *e) {
  fcl_topology *t = op_box(3, 16, 2);
  fcl_field *q = op_field(e, t, "q", 1, FCL_FLOAT32, coded);
  const int64_t *n = fcl_topology_local_resolution(t), *off = fcl_topology_offset(t);
  const int *origin = fcl_topology_origin(t), *procs = fcl_topology_procs(t);
  const size_t *pad = fcl_field_padded_shape(q), count = pad[0] * pad[1] * pad[2];
  float *v = malloc(count * sizeof *v), *interior = malloc(count * sizeof *v);
  const float nan32 = NAN;
  CHECK_OK(fcl_field_read(q, 0, false, interior));
  CHECK_OK(fcl_mem_fill(e->q, fcl_field_buffer(q, 0), &nan32, sizeof nan32, 0, count * sizeof nan32,
                        0, NULL, NULL));
  CHECK_OK(fcl_field_write(q, 0, false, interior));
  fcl_operator ops[3] = {
      {.name = "writer", .apply = noop_apply, .nuses = 1, .uses = {{.field = q, .written = true}}},
      {.name = "images",
       .apply = noop_apply,
       .nuses = 1,
       .uses = {{.field = q, .ghosts = 2, .read = true, .periodic_images = true}}},
      {.name = "every",
       .apply = noop_apply,
       .nuses = 1,
       .uses = {{.field = q, .ghosts = 2, .read = true}}}};
  for (int whole = 0; whole < 2; ++whole) {
    fcl_problem *p = NULL;
    CHECK_OK(fcl_problem_create("images", &p));
    CHECK_OK(fcl_problem_add_field(p, q, true));
    for (int o = 0; o < 2 + whole; ++o) CHECK_OK(fcl_problem_add_operator(p, &ops[o]));
    CHECK_OK(fcl_problem_setup(p));
    char *text = NULL;
    CHECK_OK(fcl_problem_describe(p, &text));
    const char *want[2] = {"2. ghosts(q) width 2, the wrapping axes left out [inserted: read by "
                           "'images']",
                           "4. ghosts(q) width 2 [inserted: read by 'every']"};
    for (int i = 0; i <= whole && text; ++i)
      CHECKF(fcl_test_contains(text, want[i]), "periodic images: no '%s' in\n%s", want[i], text);
    free(text);
    if (!whole) CHECK_OK(fcl_problem_step(p, &(fcl_step_info){.step = 0, .t = 0, .dt = 0.1}));
    fcl_problem_destroy(&p);
  }
  CHECK_OK(fcl_queue_finish(e->q));
  CHECK_OK(fcl_field_read(q, 0, true, v));
  int wrapping = 0; /* the leading axes this rank holds whole (periodic box) */
  while (wrapping < 3 && procs[wrapping] == 1) ++wrapping;
  const double h = 2 * PI / 16;
  int64_t bad = 0, checked[2] = {0, 0};
  for (size_t k = 0; k < pad[2]; ++k)
    for (size_t j = 0; j < pad[1]; ++j)
      for (size_t i = 0; i < pad[0]; ++i) {
        const int64_t l[3] = {(int64_t)i - origin[0], (int64_t)j - origin[1],
                              (int64_t)k - origin[2]};
        int axis = -1, outside = 0; /* a ghost of one axis, interior along the others */
        for (int a = 0; a < 3; ++a)
          if (l[a] < 0 || l[a] >= n[a]) axis = a, ++outside;
        if (outside != 1 || l[axis] < -2 || l[axis] >= n[axis] + 2) continue;
        const float got = v[(k * pad[1] + j) * pad[0] + i];
        double x[3];
        for (int a = 0; a < 3; ++a) x[a] = (double)(((l[a] + off[a]) % 16 + 16) % 16) * h;
        double want;
        coded(x, &want);
        const bool images = axis < wrapping;
        bad += images ? !isnan(got) : !(fabs(got - want) <= 1e-3);
        ++checked[images];
      }
  int64_t all = bad;
  MPI_Allreduce(&bad, &all, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  CHECKF(all == 0 && checked[0] + checked[1] > 0,
         "periodic images: %lld ghosts wrong (rank %d: %lld along the wrapping axes left NaN, "
         "%lld exchanged)",
         (long long)all, e->rank, (long long)checked[1], (long long)checked[0]);
  free(v);
  free(interior);
  fcl_field_destroy(&q);
  fcl_topology_destroy(&t);
}

/* A problem over fields, the given operator descriptions, expecting setup to fail with text. */
static void expect_setup_error(fcl_field **fields, const bool *state, int nfields,
                               const fcl_operator *ops, int nops, const char *text) {
  fcl_problem *p = NULL;
  CHECK_OK(fcl_problem_create("bad", &p));
  for (int i = 0; i < nfields; ++i) CHECK_OK(fcl_problem_add_field(p, fields[i], state[i]));
  for (int o = 0; o < nops; ++o) CHECK_OK(fcl_problem_add_operator(p, &ops[o]));
  CHECK_STATUS(fcl_problem_setup(p), FCL_ERR_INVALID_ARGUMENT, text);
  fcl_problem_destroy(&p);
}

static void check_setup_errors(env *e) {
  fcl_topology *t = op_box(3, 8, 2);
  fcl_field *u = op_field(e, t, "u", 3, FCL_FLOAT32, op_vel3);
  fcl_field *w = op_field(e, t, "w", 3, FCL_FLOAT32, NULL);
  fcl_field *x = op_field(e, t, "x", 1, FCL_FLOAT64, NULL);
  fcl_operator op = {.name = "mover",
                     .apply = noop_apply,
                     .nuses = 2,
                     .uses = {{u, 0, true, false}, {w, 0, true, true}}};
  fcl_field *uw[2] = {u, w};
  expect_setup_error(uw, (bool[]){true, false}, 2, &op, 1,
                     "operator 'mover' reads field 'w' before any operator writes it");
  expect_setup_error(uw, (bool[]){true, true}, 1, &op, 1,
                     "operator 'mover' uses field 'w', which is not a field of the problem");
  fcl_operator mixed = {.name = "mixer",
                        .apply = noop_apply,
                        .nuses = 2,
                        .uses = {{u, 0, true, false}, {x, 0, false, true}}};
  fcl_field *ux[2] = {u, x};
  expect_setup_error(ux, (bool[]){true, false}, 2, &mixed, 1,
                     "operator 'mixer' mixes precisions: field 'u' is float, field 'x' is double");
  fcl_operator wide = {
      .name = "wide", .apply = noop_apply, .nuses = 1, .uses = {{u, 3, true, true}}};
  expect_setup_error(uw, (bool[]){true, true}, 2, &wide, 1,
                     "operator 'wide' reads 3 ghosts of field 'u', whose topology has 2");
  fcl_problem *p = NULL;
  CHECK_OK(fcl_problem_create("dup", &p));
  CHECK_OK(fcl_problem_add_field(p, u, true));
  CHECK_STATUS(fcl_problem_add_field(p, u, true), FCL_ERR_INVALID_ARGUMENT, "already");
  CHECK_STATUS(fcl_problem_setup(p), FCL_ERR_INVALID_ARGUMENT, "no operators");
  CHECK_STATUS(fcl_problem_step(p, &(fcl_step_info){.dt = 1}), FCL_ERR_INVALID_ARGUMENT,
               "before setup");
  fcl_problem_destroy(&p);
  fcl_field_destroy(&u);
  fcl_field_destroy(&w);
  fcl_field_destroy(&x);
  fcl_topology_destroy(&t);
}

static void check_dt_policy(void) {
  fcl_dt_inputs in = {.umax = {2, 4, 1}, .dx = {0.1, 0.1, 0.05}, .dim = 3, .grad_u_max = 10};
  double dt;
  fcl_dt_limit l;
  fcl_dt_policy p = {.dt_max = 1, .cfl = 0.5};
  CHECK_OK(fcl_dt_policy_compute(&p, &in, INFINITY, &dt, &l));
  CHECKF(fabs(dt - 0.0125) < 1e-15 && l == FCL_DT_CFL, "cfl: dt %g (%s)", dt, fcl_dt_limit_name(l));
  p.lcfl = 0.1;
  CHECK_OK(fcl_dt_policy_compute(&p, &in, INFINITY, &dt, &l));
  CHECKF(fabs(dt - 0.01) < 1e-15 && l == FCL_DT_LCFL, "lcfl: dt %g (%s)", dt, fcl_dt_limit_name(l));
  CHECK_OK(fcl_dt_policy_compute(&p, &in, 0.005, &dt, &l));
  CHECK(dt == 0.005 && l == FCL_DT_OPERATOR);
  p.dt_max = 0.001;
  CHECK_OK(fcl_dt_policy_compute(&p, &in, 0.005, &dt, &l));
  CHECK(dt == 0.001 && l == FCL_DT_MAX);
  p = (fcl_dt_policy){.dt_max = 0.2};
  CHECK_OK(fcl_dt_policy_compute(&p, NULL, INFINITY, &dt, &l));
  CHECK(dt == 0.2 && l == FCL_DT_FIXED);
  p = (fcl_dt_policy){.dt_max = 1, .dt_min = 0.02, .cfl = 0.5};
  CHECK_STATUS(fcl_dt_policy_compute(&p, &in, INFINITY, &dt, &l), FCL_ERR_INVALID_ARGUMENT,
               "the cfl bound gives dt = 0.0125, below dt_min = 0.02");
  CHECK_STATUS(fcl_dt_policy_compute(&p, NULL, INFINITY, &dt, &l), FCL_ERR_INVALID_ARGUMENT,
               "measured inputs");
  in.umax[1] = NAN;
  p.dt_min = 0;
  CHECK_STATUS(fcl_dt_policy_compute(&p, &in, INFINITY, &dt, &l), FCL_ERR_INVALID_ARGUMENT,
               "max|u_1|");
  p = (fcl_dt_policy){.dt_max = 0};
  CHECK_STATUS(fcl_dt_policy_compute(&p, NULL, INFINITY, &dt, &l), FCL_ERR_INVALID_ARGUMENT,
               "dt_max");
}

/* ---------------- the time loop ---------------- */

typedef struct {
  int diagnostics, outputs, checkpoints;
  double output_t[8];
  fcl_analytics *an;
} loop_log;

static fcl_status on_diagnostics(void *user, const fcl_sim_state *s) {
  (void)s;
  ((loop_log *)user)->diagnostics++;
  return FCL_OK;
}
static fcl_status on_output(void *user, const fcl_sim_state *s) {
  loop_log *l = user;
  if (l->outputs < 8) l->output_t[l->outputs] = s->t;
  l->outputs++;
  return FCL_OK;
}
static fcl_status on_checkpoint(void *user, const fcl_sim_state *s) {
  (void)s;
  ((loop_log *)user)->checkpoints++;
  return FCL_OK;
}
static fcl_status measure(void *user, fcl_dt_inputs *in) {
  return fcl_analytics_dt_inputs(((loop_log *)user)->an, false, in);
}

static void unit_velocity(const double *x, double *v) {
  (void)x;
  v[0] = 1, v[1] = -0.5, v[2] = 0.25;
}

/* A kernel adding dt to every point of clock, and its description for a problem. */
static fcl_fd *clock_tick(fcl_field *clock, fcl_operator *d) {
  fcl_fd *tick = NULL;
  fcl_fd_binding b[1] = {{"c", clock, 0, 0}};
  CHECK_OK(fcl_fd_kernel_create("tick", 1, b, "c[k, j, i] = c[k, j, i] + dt", 16, &tick));
  *d = (fcl_operator){0};
  if (tick) CHECK_OK(fcl_fd_operator(tick, d));
  return tick;
}

static void check_time_loop(env *e) {
  fcl_topology *t = op_box(3, 16, 2);
  fcl_field *clock = op_field(e, t, "clock", 1, FCL_FLOAT64, NULL);
  fcl_field *u = op_field(e, t, "u", 3, FCL_FLOAT64, unit_velocity);
  fcl_operator d;
  fcl_fd *tick = clock_tick(clock, &d);
  fcl_problem *p = NULL;
  CHECK_OK(fcl_problem_create("clock", &p));
  CHECK_OK(fcl_problem_add_field(p, clock, true));
  CHECK_OK(fcl_problem_add_operator(p, &d));
  CHECK_OK(fcl_problem_setup(p));
  loop_log log = {0};
  fcl_simulation_options o = {.t_end = 1,
                              .dt = {.dt_max = 0.3},
                              .diagnostics = on_diagnostics,
                              .diagnostics_every = 1,
                              .output = on_output,
                              .output_every_t = 0.25,
                              .checkpoint = on_checkpoint,
                              .checkpoint_every = 2,
                              .user = &log};
  fcl_sim_state s;
  CHECK_OK(fcl_simulation_run(p, &o, &s));
  /* 0.25 limits every step (output times): 4 steps */
  CHECKF(
      s.step == 4 && s.t == 1 && log.outputs == 4 && log.diagnostics == 5 && log.checkpoints == 2,
      "fixed dt: %lld steps to t = %.17g, %d outputs, %d diagnostics, "
      "%d checkpoints",
      (long long)s.step, s.t, log.outputs, log.diagnostics, log.checkpoints);
  for (int i = 0; i < 4 && i < log.outputs; ++i)
    CHECKF(fabs(log.output_t[i] - 0.25 * (i + 1)) < 1e-15, "output %d at t = %.17g", i,
           log.output_t[i]);
  double c;
  CHECK_OK(fcl_field_reduce(clock, 0, FCL_REDUCE_MAX, &c));
  CHECKF(fabs(c - 1) < 1e-14, "the clock kernel integrated %.17g over t in [0, 1]", c);
  /* adaptive: cfl 0.5 with max|u| = 1 and dx = 2 pi / 16; then max_steps */
  CHECK_OK(fcl_analytics_create(u, NULL, e->pool, &log.an));
  o = (fcl_simulation_options){.t_start = 1,
                               .t_end = 3,
                               .step_start = 4,
                               .dt = {.dt_max = 1, .cfl = 0.5},
                               .measure = measure,
                               .user = &log,
                               .progress = e->rank == 0 ? stdout : NULL,
                               .progress_every_s = 1e-9};
  CHECK_OK(fcl_simulation_run(p, &o, &s));
  const double h = 2 * PI / 16, steps = ceil(2 / (0.5 * h));
  CHECKF(s.step == 4 + (int64_t)steps && s.t == 3 && s.limit == FCL_DT_END,
         "cfl: %lld steps to t = %.17g (%s)", (long long)s.step, s.t, fcl_dt_limit_name(s.limit));
  CHECK_OK(fcl_field_reduce(clock, 0, FCL_REDUCE_MAX, &c));
  CHECKF(fabs(c - 3) < 1e-13, "the clock kernel integrated %.17g over t in [0, 3]", c);
  o.max_steps = 2;
  o.t_start = 3;
  o.t_end = 10;
  CHECK_OK(fcl_simulation_run(p, &o, &s));
  CHECK(s.step == 6 && fabs(s.t - (3 + 2 * 0.5 * h)) < 1e-12 && s.limit == FCL_DT_CFL);
  o.measure = NULL;
  CHECK_STATUS(fcl_simulation_run(p, &o, &s), FCL_ERR_INVALID_ARGUMENT, "measure");
  /* parts of a step: the clock ticks 1/2 then 1/4 of dt */
  fcl_problem *parts = NULL;
  CHECK_OK(fcl_problem_create("parts", &parts));
  CHECK_OK(fcl_problem_add_field(parts, clock, true));
  d.dt_fraction = 1.5;
  CHECK_STATUS(fcl_problem_add_operator(parts, &d), FCL_ERR_INVALID_ARGUMENT, "dt_fraction 1.5");
  d.dt_fraction = 0.5;
  CHECK_OK(fcl_problem_add_operator(parts, &d));
  d.dt_fraction = 0.25;
  CHECK_OK(fcl_problem_add_operator(parts, &d));
  CHECK_OK(fcl_problem_setup(parts));
  double before, after;
  CHECK_OK(fcl_field_reduce(clock, 0, FCL_REDUCE_MAX, &before));
  CHECK_OK(fcl_problem_step(parts, &(fcl_step_info){.dt = 1}));
  CHECK_OK(fcl_field_reduce(clock, 0, FCL_REDUCE_MAX, &after));
  CHECKF(fabs(after - before - 0.75) < 1e-13, "parts of a step: the clock moved %.17g",
         after - before);
  char *text = NULL;
  CHECK_OK(fcl_problem_describe(parts, &text));
  CHECKF(text && fcl_test_contains(text, "tick (dt x 0.5)") &&
             fcl_test_contains(text, "tick (dt x 0.25)"),
         "description: %s", text ? text : "");
  free(text);
  fcl_problem_destroy(&parts);
  fcl_analytics_destroy(&log.an);
  fcl_problem_destroy(&p);
  fcl_fd_destroy(&tick);
  fcl_field_destroy(&clock);
  fcl_field_destroy(&u);
  fcl_topology_destroy(&t);
}

/* A custom kernel with the caller's named scalars and the time loop's t and step: the problem
 * layer sets t and step before every call, the caller sets the rest between runs, and nothing
 * is built after creation. A dt < 0 runs a custom kernel backward; diffusion refuses it. */
static void check_step_parameters(env *e) {
  fcl_topology *t = op_box(3, 8, 2);
  fcl_field *s = op_field(e, t, "s", 1, FCL_FLOAT64, NULL);
  fcl_fd_binding b[1] = {{"s", s, 0, 0}};
  const char *names[] = {"amp", "omega"};
  fcl_fd *op = NULL;
  CHECK_OK(fcl_fd_kernel_create_with_scalars(
      "forced", 1, b, 2, names, "s[k, j, i] = s[k, j, i] + amp * dt * cos(omega * t) + step_index",
      16, &op));
  if (!op) goto out;
  fcl_operator d;
  CHECK_OK(fcl_fd_operator(op, &d));
  fcl_problem *p = NULL;
  CHECK_OK(fcl_problem_create("forced", &p));
  CHECK_OK(fcl_problem_add_field(p, s, true));
  CHECK_OK(fcl_problem_add_operator(p, &d));
  CHECK_OK(fcl_problem_setup(p));
  const uint64_t built = fcl_count_programs_built();
  fcl_simulation_options o = {.t_end = 10, .max_steps = 5, .dt = {.dt_max = 0.125}};
  fcl_sim_state st;
  double want = 0, got = NAN;
  for (int run = 0; run < 2; ++run) {
    const double amp = run ? -0.5 : 2, omega = run ? 1 : 3;
    CHECK_OK(fcl_fd_set_scalar(op, "amp", amp));
    CHECK_OK(fcl_fd_set_scalar(op, "omega", omega));
    o.t_start = 0.625 * run, o.step_start = 5 * run;
    CHECK_OK(fcl_simulation_run(p, &o, &st));
    for (int n = 5 * run; n < 5 * run + 5; ++n) want += amp * 0.125 * cos(omega * 0.125 * n) + n;
  }
  CHECK_OK(fcl_field_reduce(s, 0, FCL_REDUCE_MAX, &got));
  CHECKF(fcl_test_close(got, want, 64, 0, false),
         "forced kernel: %.17g after 10 steps, "
         "expected %.17g from t, step_index, amp and omega",
         got, want);
  CHECKF(fcl_count_programs_built() == built,
         "setting scalars and stepping built %llu "
         "programs",
         (unsigned long long)(fcl_count_programs_built() - built));
  CHECK_STATUS(fcl_fd_set_scalar(op, "phase", 1), FCL_ERR_NOT_FOUND, "t, step_index, amp, omega");
  CHECK_STATUS(fcl_fd_set_scalar(op, "amp", NAN), FCL_ERR_INVALID_ARGUMENT, "finite");
  /* backward: the kernel with amp = 1, omega = 0 at step 0 adds dt, here -0.25 */
  CHECK_OK(fcl_fd_set_scalar(op, "amp", 1));
  CHECK_OK(fcl_fd_set_scalar(op, "omega", 0));
  CHECK_OK(fcl_fd_set_scalar(op, "step_index", 0));
  CHECK_OK(fcl_fd_apply(op, -0.25));
  CHECK_OK(fcl_field_reduce(s, 0, FCL_REDUCE_MAX, &got));
  CHECKF(fcl_test_close(got, want - 0.25, 64, 0, false), "dt < 0: %.17g, expected %.17g", got,
         want - 0.25);
  fcl_fd *diff = NULL;
  CHECK_OK(fcl_fd_diffusion_create(s, 0.01, 2, e->pool, &diff));
  CHECK_STATUS(fcl_fd_apply(diff, -0.01), FCL_ERR_INVALID_ARGUMENT, "not reversible");
  fcl_fd_destroy(&diff);
  /* names */
  fcl_fd *bad = NULL;
  CHECK_STATUS(fcl_fd_kernel_create_with_scalars("x", 1, b, 1, (const char *[]){"dt"},
                                                 "s[k, j, i] = 1", 8, &bad),
               FCL_ERR_INVALID_ARGUMENT, "taken");
  CHECK_STATUS(fcl_fd_kernel_create_with_scalars("x", 1, b, 1, (const char *[]){"s"},
                                                 "s[k, j, i] = 1", 8, &bad),
               FCL_ERR_INVALID_ARGUMENT, "binding");
  CHECK_STATUS(fcl_fd_kernel_create_with_scalars("x", 1, b, 2, (const char *[]){"a", "a"},
                                                 "s[k, j, i] = a", 8, &bad),
               FCL_ERR_INVALID_ARGUMENT, "twice");
  CHECK_STATUS(fcl_fd_kernel_create_with_scalars("x", 1, b, 1, (const char *[]){"2a"},
                                                 "s[k, j, i] = 1", 8, &bad),
               FCL_ERR_INVALID_ARGUMENT, "not a name");
  CHECK_STATUS(fcl_fd_kernel_create("x", 1, b, "s[k, j, i] = amp", 8, &bad),
               FCL_ERR_INVALID_ARGUMENT, "amp");
  fcl_problem_destroy(&p);
out:
  fcl_fd_destroy(&op);
  fcl_field_destroy(&s);
  fcl_topology_destroy(&t);
}

/* The step's bound: an explicit diffusion's own bound B, or 2 B listed for half of each step
 * (the operator then advances dt / 2); the least over the operators. */
static void check_max_dt(env *e) {
  fcl_topology *t = op_box(3, 8, 2);
  fcl_field *s = op_field(e, t, "s", 1, FCL_FLOAT64, NULL);
  fcl_fd *slow = NULL, *fast = NULL;
  CHECK_OK(fcl_fd_diffusion_create(s, 0.01, 2, e->pool, &slow));
  CHECK_OK(fcl_fd_diffusion_create(s, 0.03, 2, e->pool, &fast));
  if (!slow || !fast) goto out;
  const double b = fcl_fd_max_dt(slow); /* 3 times fast's */
  for (int half = 0; half < 2; ++half) {
    fcl_problem *p = NULL;
    fcl_operator d;
    CHECK_OK(fcl_problem_create("bounds", &p));
    CHECK_OK(fcl_problem_add_field(p, s, true));
    CHECK_OK(fcl_fd_operator(slow, &d));
    d.dt_fraction = half ? 0.5 : 0;
    CHECK_OK(fcl_problem_add_operator(p, &d));
    CHECK_OK(fcl_problem_add_operator(p, &d));
    CHECK_OK(fcl_problem_setup(p));
    const double want = half ? 2 * b : b;
    CHECKF(fcl_test_close(fcl_problem_max_dt(p), want, 4, 0, false),
           "max dt %.17g listed for %s, expected %.17g", fcl_problem_max_dt(p),
           half ? "half steps" : "whole steps", want);
    fcl_problem_destroy(&p);
  }
  fcl_problem *p = NULL;
  fcl_operator d;
  CHECK_OK(fcl_problem_create("bounds", &p));
  CHECK_OK(fcl_problem_add_field(p, s, true));
  CHECK_OK(fcl_fd_operator(slow, &d));
  d.dt_fraction = 0.5;
  CHECK_OK(fcl_problem_add_operator(p, &d));
  CHECK_OK(fcl_fd_operator(fast, &d));
  CHECK_OK(fcl_problem_add_operator(p, &d));
  CHECK_OK(fcl_problem_setup(p));
  CHECKF(fcl_test_close(fcl_problem_max_dt(p), b / 3, 4, 0, false),
         "max dt %.17g, expected the faster operator's %.17g", fcl_problem_max_dt(p), b / 3);
  fcl_problem_destroy(&p);
out:
  fcl_fd_destroy(&slow);
  fcl_fd_destroy(&fast);
  fcl_field_destroy(&s);
  fcl_topology_destroy(&t);
}

/* Per-node timing on a profiling queue: an operator listed twice gets each node's own share of
 * its kernels' device time (the two shares fit in the launchers' total, which also holds the
 * untimed step; neither node gets the whole), and the calls of the timed steps only. How the
 * shares split is not checked: on an oversubscribed CPU one kernel can take most of the time. */
static void check_node_timing(env *e) {
  fcl_device *dev;
  fcl_queue *q = NULL;
  CHECK_OK(fcl_queue_device(e->q, &dev));
  CHECK_OK(fcl_queue_create(e->ctx, dev, FCL_QUEUE_PROFILING, &q));
  fcl_topology *t = op_box(3, 32, 0);
  fcl_field *clock = NULL;
  CHECK_OK(fcl_field_create(t, e->ctx, q, e->pool, "clock", 1, FCL_FLOAT64, &clock));
  fcl_operator d = {0};
  fcl_fd *tick = clock ? clock_tick(clock, &d) : NULL;
  fcl_problem *p = NULL;
  CHECK_OK(fcl_problem_create("timing", &p));
  CHECK_OK(fcl_problem_add_field(p, clock, true));
  d.dt_fraction = 0.5;
  CHECK_OK(fcl_problem_add_operator(p, &d));
  CHECK_OK(fcl_problem_add_operator(p, &d));
  CHECK_OK(fcl_problem_setup(p));
  CHECK_OK(fcl_problem_step(p, &(fcl_step_info){.dt = 1})); /* untimed */
  CHECK_OK(fcl_problem_set_timing(p, true));
  for (int s = 1; s <= 3; ++s) CHECK_OK(fcl_problem_step(p, &(fcl_step_info){.step = s, .dt = 1}));
  fcl_node_stats n0, n1;
  fcl_launch_stats all;
  CHECK_OK(fcl_problem_node_statistics(p, 0, &n0));
  CHECK_OK(fcl_problem_node_statistics(p, 1, &n1));
  CHECK_OK(fcl_launcher_statistics(fcl_fd_launcher(tick), &all));
  CHECKF(n0.calls == 3 && n1.calls == 3 && n0.device_ns > 0 && n1.device_ns > 0 &&
             n0.device_ns + n1.device_ns <= all.total_ns * (1 + 1e-9) &&
             n0.device_ns < all.total_ns && n1.device_ns < all.total_ns,
         "timed nodes: %lld and %lld calls, %.0f + %.0f ns of the launcher's %.0f ns (%zu "
         "launches)",
         (long long)n0.calls, (long long)n1.calls, n0.device_ns, n1.device_ns, all.total_ns,
         all.launches);
  fcl_problem_destroy(&p);
  fcl_fd_destroy(&tick);
  fcl_field_destroy(&clock);
  fcl_topology_destroy(&t);
  fcl_queue_release(&q);
}

#if FLOWCL_ENABLE_FFTW || FLOWCL_ENABLE_VKFFT
/* ---------------- 2D Taylor-Green through the vorticity solver ---------------- */

#define NU 0.05
static void tg_w0(const double *x, double *w) { w[0] = 2 * sin(x[0]) * sin(x[1]); }
static void tg_exact(const double *x, double *w, const void *p) {
  w[0] = 2 * sin(x[0]) * sin(x[1]) * exp(-2 * NU * *(const double *)p);
}

/* Relative max error of the vorticity at t_end on an n^2 grid, CFL 0.5. */
static double taylor_green_2d(env *e, int64_t n, double t_end) {
  fcl_advection_options ao = fcl_advection_default_options();
  ao.formula = FCL_REMESH_L4_2;
  const int g = fcl_advection_ghosts_needed(&ao);
  fcl_domain dom = fcl_domain_periodic(2, n, 2 * PI);
  fcl_topology *t = NULL;
  CHECK_OK(fcl_topology_create(MPI_COMM_WORLD, &dom, (int[]){1, 0}, (int[]){2, g}, &t));
  fcl_field *w = op_field(e, t, "omega", 1, FCL_FLOAT64, tg_w0);
  fcl_field *u = op_field(e, t, "u", 2, FCL_FLOAT64, NULL);
  fcl_spectral *sp = NULL;
  fcl_advection *adv = NULL;
  loop_log log = {0};
  CHECK_OK(fcl_spectral_create(w, FCL_FFT_AUTO, e->pool, &sp));
  CHECK_OK(fcl_advection_create(u, 1, &w, &ao, &adv));
  CHECK_OK(fcl_analytics_create(u, w, e->pool, &log.an));
  fcl_problem *p = NULL;
  CHECK_OK(fcl_problem_create("taylor-green-2d", &p));
  CHECK_OK(fcl_problem_add_field(p, w, true));
  CHECK_OK(fcl_problem_add_field(p, u, false));
  fcl_operator op;
  if (sp) {
    CHECK_OK(fcl_spectral_biot_savart_operator(sp, w, u, &op));
    CHECK_OK(fcl_problem_add_operator(p, &op));
  }
  if (adv) {
    CHECK_OK(fcl_advection_operator(adv, &op));
    CHECK_OK(fcl_problem_add_operator(p, &op));
  }
  if (sp) {
    CHECK_OK(fcl_spectral_diffusion_operator(sp, w, NU, &op));
    CHECK_OK(fcl_problem_add_operator(p, &op));
  }
  CHECK_OK(fcl_problem_setup(p));
  /* the first step's velocity is computed from omega before it is measured */
  if (sp) CHECK_OK(fcl_spectral_biot_savart(sp, w, u));
  fcl_simulation_options o = {
      .t_end = t_end, .dt = {.dt_max = 1, .cfl = 0.5}, .measure = measure, .user = &log};
  fcl_sim_state s = {0};
  CHECK_OK(fcl_simulation_run(p, &o, &s));
  const double err = op_rel_error(w, tg_exact, &s.t);
  if (e->rank == 0)
    printf("2D Taylor-Green, %lld^2: %lld steps to t = %g, relative error %.3e\n", (long long)n,
           (long long)s.step, s.t, err);
  fcl_problem_destroy(&p);
  fcl_analytics_destroy(&log.an);
  fcl_advection_destroy(&adv);
  fcl_spectral_destroy(&sp);
  fcl_field_destroy(&w);
  fcl_field_destroy(&u);
  fcl_topology_destroy(&t);
  return err;
}

static void check_taylor_green_2d(env *e) {
  double err[3];
  for (int r = 0; r < 3; ++r) err[r] = taylor_green_2d(e, 32 << r, 1.0);
  for (int r = 0; r < 2; ++r) {
    const double rate = log2(err[r] / err[r + 1]);
    CHECKF(rate >= 1.7, "2D Taylor-Green: errors %.3g -> %.3g, rate %.2f (want >= 1.7)", err[r],
           err[r + 1], rate);
  }
}
#endif

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  CHECKF(f != NULL, "cannot write %s", path);
  if (f) fputs(text, f), fclose(f);
}

static bool exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

static void check_run_dir(env *e) {
  MPI_Comm comm = MPI_COMM_WORLD;
  char dir[700], csv[760], chk[760], text[256] = "";
  snprintf(dir, sizeof dir, "%s/a/b", e->dir);
  snprintf(csv, sizeof csv, "%s/diagnostics.csv", dir);
  snprintf(chk, sizeof chk, "%s/run_000000007.chk.h5", dir);
  int removed = -1, dropped = -1;
  /* a fresh run creates the directory and its parents */
  CHECK_OK(fcl_run_dir_prepare(comm, dir, "run", "diagnostics.csv", true, false, &removed));
  CHECK(exists(dir) && removed == 0);
  CHECK_STATUS(
      fcl_run_dir_prepare(comm, "/proc/flowcl-no-such/out", "run", NULL, true, false, NULL),
      FCL_ERR_IO, "cannot create the output directory");
  /* an earlier run's files: refused, kept for a restart, removed with overwrite */
  if (e->rank == 0) write_file(csv, "step,t\n1,0.1\n2,0.2\n3,0.3\n# note\n4,0.4\n");
  MPI_Barrier(comm);
  CHECK_STATUS(fcl_run_dir_prepare(comm, dir, "run", "diagnostics.csv", true, false, NULL),
               FCL_ERR_INVALID_ARGUMENT, "holds an earlier run (diagnostics.csv, 0 checkpoint");
  if (e->rank == 0) write_file(chk, "not really a checkpoint");
  MPI_Barrier(comm);
  CHECK_STATUS(fcl_run_dir_prepare(comm, dir, "run", NULL, true, false, NULL),
               FCL_ERR_INVALID_ARGUMENT, "1 checkpoint(s)");
  CHECK_OK(fcl_run_dir_prepare(comm, dir, "other", NULL, true, false, NULL)); /* not its name */
  CHECK_OK(fcl_run_dir_prepare(comm, dir, "run", "diagnostics.csv", false, false, &removed));
  CHECK(removed == 0 && exists(chk));
  /* a restart from step 2: the rows after it go, the header and comments stay */
  CHECK_OK(fcl_run_dir_keep_rows(comm, csv, 2, &dropped));
  CHECKF(dropped == 2, "dropped %d rows, not 2", dropped);
  FILE *f = fopen(csv, "r");
  size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
  if (f) fclose(f);
  text[n] = '\0';
  CHECKF(!strcmp(text, "step,t\n1,0.1\n2,0.2\n# note\n"), "kept: '%s'", text);
  MPI_Barrier(comm);
  CHECK_OK(fcl_run_dir_prepare(comm, dir, "run", "diagnostics.csv", true, true, &removed));
  CHECKF(removed == 1 && !exists(chk), "overwrite removed %d checkpoint(s)", removed);
  snprintf(csv, sizeof csv, "%s/none.csv", dir);
  CHECK_OK(fcl_run_dir_keep_rows(comm, csv, 5, &dropped)); /* no rows yet */
  CHECK(dropped == 0);
  MPI_Barrier(comm);
}

/* What the swap test builds over fields a (3 components), b (3) and c (1): c = a_0 one point
 * along x (ghosts read) - b_1, a reduction of a, the analytics of (a, b). */
typedef struct {
  fcl_fd *diff, *diffuse; /* diffuse: explicit diffusion of a, its stencil on a copy of a */
  fcl_reduction *max;
  fcl_analytics *an;
} swap_users;

static void swap_users_create(env *e, fcl_field *a, fcl_field *b, fcl_field *c, swap_users *s) {
  fcl_fd_binding bind[3] = {{"a0", a, 0, 2}, {"b1", b, 1, 0}, {"c", c, 0, 0}};
  CHECK_OK(fcl_fd_kernel_create("diff", 3, bind, "c[k, j, i] = a0[k, j, i + 1] - b1[k, j, i]", 24,
                                &s->diff));
  CHECK_OK(fcl_fd_diffusion_create(a, 0.01, 4, e->pool, &s->diffuse));
  CHECK_OK(fcl_reduction_create(a, FCL_REDUCE_MAX, &s->max));
  CHECK_OK(fcl_analytics_create(a, b, e->pool, &s->an));
}

static void swap_users_destroy(swap_users *s) {
  fcl_fd_destroy(&s->diff);
  fcl_fd_destroy(&s->diffuse);
  fcl_reduction_destroy(&s->max);
  fcl_analytics_destroy(&s->an);
}

/* Run them all: c, the reduction's three maxima, the field's own maximum of a_2, diagnostics. */
static void swap_users_run(fcl_field *a, swap_users *s, double *max, fcl_diagnostics *d) {
  CHECK_OK(fcl_fd_apply(s->diff, 0));
  CHECK_OK(fcl_reduction_start(s->max));
  CHECK_OK(fcl_reduction_finish(s->max, max));
  CHECK_OK(fcl_field_reduce(a, 2, FCL_REDUCE_MAX, max + 3));
  *d = (fcl_diagnostics){0};
  CHECK_OK(fcl_analytics_compute(s->an, FCL_DIAG_ALL, d));
}

/* The step of the swap test, one field each: m = 3/2 u - 1/2 p, then p <- u by a swap (or
 * a copy), then u = m + dt. */
static void history_problem(env *e, fcl_field *u, fcl_field *p, fcl_field *m, bool swap,
                            fcl_problem **out, fcl_fd *ops[3]) {
  fcl_fd_binding bind[3] = {{"u", u, 0, 0}, {"p", p, 0, 0}, {"m", m, 0, 0}};
  CHECK_OK(fcl_fd_kernel_create("extrapolate", 3, bind,
                                "m[k, j, i] = 1.5 * u[k, j, i] - 0.5 * p[k, j, i]", 24, &ops[0]));
  CHECK_OK(fcl_fd_kernel_create("copy", 2, bind, "p[k, j, i] = u[k, j, i]", 16, &ops[1]));
  fcl_fd_binding next[2] = {{"u", u, 0, 0}, {"m", m, 0, 0}};
  CHECK_OK(fcl_fd_kernel_create("advance", 2, next, "u[k, j, i] = m[k, j, i] + dt", 16, &ops[2]));
  CHECK_OK(fcl_problem_create(swap ? "swapped" : "copied", out));
  CHECK_OK(fcl_problem_add_field(*out, u, true));
  CHECK_OK(fcl_problem_add_field(*out, p, true));
  CHECK_OK(fcl_problem_add_field(*out, m, false));
  fcl_operator op;
  CHECK_OK(fcl_fd_operator(ops[0], &op));
  CHECK_OK(fcl_problem_add_operator(*out, &op));
  if (swap)
    CHECK_OK(fcl_field_swap_operator(u, p, &op));
  else
    CHECK_OK(fcl_fd_operator(ops[1], &op));
  CHECK_OK(fcl_problem_add_operator(*out, &op));
  CHECK_OK(fcl_fd_operator(ops[2], &op));
  CHECK_OK(fcl_problem_add_operator(*out, &op));
  CHECK_OK(fcl_problem_setup(*out));
  (void)e;
}

static void p_init(const double *x, double *v) { v[0] = cos(x[0]) * sin(2 * x[2]); }
static void u_init(const double *x, double *v) { v[0] = sin(x[0] + x[1]) + 0.5; }

static void check_swap(env *e) {
  fcl_topology *t = op_box(3, 16, 2);
  /* a and b to be swapped; ra and rb set to the values they hold after it */
  fcl_field *a = op_field(e, t, "a", 3, FCL_FLOAT64, op_vel3);
  fcl_field *b = op_field(e, t, "b", 3, FCL_FLOAT64, vort3);
  fcl_field *ra = op_field(e, t, "ra", 3, FCL_FLOAT64, vort3);
  fcl_field *rb = op_field(e, t, "rb", 3, FCL_FLOAT64, op_vel3);
  fcl_field *c = op_field(e, t, "c", 1, FCL_FLOAT64, NULL);
  fcl_field *rc = op_field(e, t, "rc", 1, FCL_FLOAT64, NULL);
  swap_users s = {0}, r = {0};
  swap_users_create(e, a, b, c, &s);
  swap_users_create(e, ra, rb, rc, &r);
  double max[4], want[4];
  fcl_diagnostics d, dw;
  swap_users_run(a, &s, max, &d); /* every object bound to the buffers before the swap */
  CHECK_OK(fcl_field_swap(a, b));
  swap_users_run(a, &s, max, &d);
  swap_users_run(ra, &r, want, &dw);
  CHECKF(same_values(c, rc), "%s",
         "c = a_0 (x + dx) - b_1 after the swap differs from the reference");
  CHECKF(same_values(a, ra) && same_values(b, rb), "%s", "the swap did not exchange the values");
  for (int i = 0; i < 4; ++i)
    CHECKF(max[i] == want[i], "maximum %d after the swap: %.17g, expected %.17g", i, max[i],
           want[i]);
  CHECKF(d.energy == dw.energy && d.enstrophy == dw.enstrophy && d.max_grad_u == dw.max_grad_u &&
             d.divergence == dw.divergence,
         "analytics after the swap: energy %.17g enstrophy %.17g max|grad u| %.17g divergence "
         "%.17g, expected %.17g %.17g %.17g %.17g",
         d.energy, d.enstrophy, d.max_grad_u, d.divergence, dw.energy, dw.enstrophy, dw.max_grad_u,
         dw.divergence);
  /* the diffusion's copy of a into its scratch (a copy launcher) follows the swap too */
  CHECK_OK(fcl_fd_apply(s.diffuse, 0.01));
  CHECK_OK(fcl_fd_apply(r.diffuse, 0.01));
  CHECKF(same_values(a, ra), "%s", "a diffusion built before the swap diffused the old buffers");
  CHECK_OK(fcl_field_swap(a, b)); /* and both pairs back: the kernels follow again */
  CHECK_OK(fcl_field_swap(rb, ra));
  CHECK_OK(fcl_fd_apply(s.diff, 0));
  CHECK_OK(fcl_fd_apply(r.diff, 0));
  CHECKF(same_values(a, ra) && same_values(c, rc), "%s", "swapped back");
  CHECK_STATUS(fcl_field_swap(a, c), FCL_ERR_INVALID_ARGUMENT, "differ in");
  CHECK_OK(fcl_field_ghosts_begin(b)); /* not while an exchange is in flight */
  CHECK_STATUS(fcl_field_swap(a, b), FCL_ERR_INVALID_STATE, "in flight");
  CHECK_OK(fcl_field_ghosts_end(b));
  fcl_operator op;
  CHECK_STATUS(fcl_field_swap_operator(a, a, &op), FCL_ERR_INVALID_ARGUMENT, "with itself");
  CHECK_STATUS(fcl_field_swap_operator(a, c, &op), FCL_ERR_INVALID_ARGUMENT, "differ in");
  swap_users_destroy(&s);
  swap_users_destroy(&r);
  fcl_field *f[2][3];
  fcl_problem *p[2] = {NULL, NULL};
  fcl_fd *ops[2][3] = {{NULL}};
  for (int k = 0; k < 2; ++k) {
    f[k][0] = op_field(e, t, "u", 1, FCL_FLOAT64, u_init);
    f[k][1] = op_field(e, t, "u_prev", 1, FCL_FLOAT64, p_init);
    f[k][2] = op_field(e, t, "u_mid", 1, FCL_FLOAT64, NULL);
    history_problem(e, f[k][0], f[k][1], f[k][2], k == 0, &p[k], ops[k]);
    for (int64_t n = 0; n < 3; ++n) {
      fcl_step_info info = {.step = n, .t = 0.1 * (double)n, .dt = 0.1};
      CHECK_OK(fcl_problem_step(p[k], &info));
    }
  }
  for (int i = 0; i < 3; ++i)
    CHECKF(same_values(f[0][i], f[1][i]), "the swap node and the copy differ in %s",
           fcl_field_name(f[0][i]));
  for (int k = 0; k < 2; ++k) {
    fcl_problem_destroy(&p[k]);
    for (int i = 0; i < 3; ++i) {
      fcl_fd_destroy(&ops[k][i]);
      fcl_field_destroy(&f[k][i]);
    }
  }
  fcl_field *all[] = {a, b, ra, rb, c, rc};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) fcl_field_destroy(&all[i]);
  fcl_topology_destroy(&t);
}

static void run(env *e) {
  check_dt_policy();
  check_run_dir(e);
  check_setup_errors(e);
  if (!e->fp64) {
    fcl_test_skip_part(NULL, "the double-precision cases (no cl_khr_fp64)");
    return;
  }
  check_graph(e);
  check_overlap(e);
  check_time_loop(e);
  check_step_parameters(e);
  check_max_dt(e);
  check_node_timing(e);
  check_swap(e);
  check_periodic_images(e);
#if FLOWCL_ENABLE_FFTW || FLOWCL_ENABLE_VKFFT
  check_taylor_green_2d(e);
#endif
}

int main(int argc, char **argv) { return fcl_test_mpi_main(&argc, &argv, "problem", run); }
