/* flowcl-tgv --benchmark: timed steps, the per-operator report, the copy bandwidth, the step's
 * floor, the JSON. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tgv_impl.h"

static fcl_status time_step(void *user, const fcl_sim_state *s) {
  (void)s;
  tgv *t = user;
  TRY(fcl_queue_finish(t->q));
  const double now = MPI_Wtime();
  if (t->nstep_wall < t->cap_step_wall) t->step_wall[t->nstep_wall++] = now - t->last_wall;
  t->last_wall = now;
  return FCL_OK;
}

/* Called before the first step and after each: the host syncs (fcl_count_host_syncs) of the
 * step just taken; nothing else runs between steps. syncs_steps < 0: not started. */
static fcl_status count_syncs(void *user, const fcl_sim_state *s) {
  (void)s;
  tgv *t = user;
  const uint64_t now = fcl_count_host_syncs();
  if (t->syncs_steps >= 0 && (int64_t)(now - t->syncs_last) > t->syncs_max)
    t->syncs_max = (int64_t)(now - t->syncs_last);
  ++t->syncs_steps;
  t->syncs_last = now;
  return FCL_OK;
}

static const char *splitting_name(fcl_splitting s) {
  return s == FCL_SPLIT_STRANG ? "strang" : s == FCL_SPLIT_ALTERNATING ? "alternating" : "first";
}

static int compare(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Runs `steps` steps after s, each timed by time_step; *median_ms: their median (the slowest
 * rank's). */
static fcl_status timed_steps(tgv *t, fcl_simulation_options *o, fcl_sim_state *s, int64_t steps,
                              double *median_ms) {
  o->t_start = s->t;
  o->step_start = s->step;
  o->max_steps = steps;
  t->nstep_wall = 0;
  t->last_wall = MPI_Wtime();
  TRY(fcl_simulation_run(t->problem, o, s));
  qsort(t->step_wall, (size_t)t->nstep_wall, sizeof *t->step_wall, compare);
  double median = t->nstep_wall ? t->step_wall[t->nstep_wall / 2] : 0, all;
  MPI_Allreduce(&median, &all, 1, MPI_DOUBLE, MPI_MAX, fcl_topology_comm(t->topo));
  *median_ms = 1e3 * all;
  return FCL_OK;
}

/* GB/s of a device copy of the vorticity's first component (read and write), median of 11. */
static double copy_gbs(tgv *t) {
  const size_t *p = fcl_field_padded_shape(t->w);
  const size_t bytes = p[0] * p[1] * p[2] * fcl_dtype_size(t->opt.dtype);
  double ns[11];
  int n = 0;
  for (int r = -1; r < 11; ++r) {
    fcl_event *ev = NULL;
    if (fcl_mem_copy(t->q, fcl_field_buffer(t->w, 0), 0, fcl_field_buffer(t->w, 1), 0, bytes, 0,
                     NULL, &ev) != FCL_OK)
      break;
    fcl_events_wait(1, &ev);
    fcl_event_times times;
    if (r >= 0 && fcl_event_profile(ev, &times) == FCL_OK)
      ns[n++] = (double)(times.end_ns - times.start_ns);
    fcl_event_release(&ev);
  }
  if (!n) return 0;
  qsort(ns, (size_t)n, sizeof *ns, compare);
  return 2.0 * (double)bytes / ns[n / 2];
}

/* Milliseconds of one forward and one backward transform of one component by the FFT alone (in
 * place in slot 0, whose contents the benchmark no longer needs), medians of 11. Collective. */
static fcl_status fft_ms(tgv *t, double *forward, double *backward) {
  fcl_fft *fft = fcl_spectral_fft(t->spectral);
  double f[11], b[11];
  for (int r = -1; r < 11; ++r) {
    TRY(fcl_queue_finish(t->q));
    double t0 = MPI_Wtime();
    TRY(fcl_fft_forward_inplace(fft, 0));
    TRY(fcl_queue_finish(t->q));
    double t1 = MPI_Wtime();
    TRY(fcl_fft_backward_inplace(fft, 0));
    TRY(fcl_queue_finish(t->q));
    if (r >= 0) {
      f[r] = t1 - t0;
      b[r] = MPI_Wtime() - t1;
    }
  }
  qsort(f, 11, sizeof *f, compare);
  qsort(b, 11, sizeof *b, compare);
  double local[2] = {1e3 * f[5], 1e3 * b[5]}, all[2];
  MPI_Allreduce(local, all, 2, MPI_DOUBLE, MPI_MAX, fcl_topology_comm(t->topo));
  *forward = all[0];
  *backward = all[1];
  return FCL_OK;
}

/* The transforms per call of the spectral operators this app adds (by their names). */
static void transforms(const char *node, int *forward, int *backward) {
  static const struct {
    const char *name;
    int forward, backward;
  } table[] = {
      {"diffusion_biot_savart", 3, 6}, {"biot_savart", 3, 3}, {"spectral_diffusion", 3, 3}};
  *forward = *backward = 0;
  for (size_t i = 0; i < sizeof table / sizeof *table; ++i)
    if (!strcmp(node, table[i].name)) {
      *forward = table[i].forward;
      *backward = table[i].backward;
    }
}

/* A node's floor in ms: its kernels' bytes at the copy bandwidth (a spectral node's pointwise
 * kernel included), its transforms at the bare FFT's time; 0 for the rest (ghost exchanges: on
 * one rank the kernels could wrap instead). */
static double node_floor_ms(const fcl_node_stats *ns, double gbs, double fwd_ms, double bwd_ms) {
  if (!strncmp(ns->name, "ghosts(", 7)) return 0; /* one GPU exchanges none: the floor's ghosts */
  const double calls = ns->calls ? (double)ns->calls : 1;
  int nf, nb;
  transforms(ns->name, &nf, &nb);
  double ms = nf * fwd_ms + nb * bwd_ms;
  if (ns->device_ns > 0 && ns->bytes > 0 && gbs > 0) ms += 1e3 * ns->bytes / calls / (gbs * 1e9);
  return ms;
}

/* The dt measure's floor in ms: one read of u (an adaptive dt; a fixed one measures nothing). */
static double measure_floor_ms(const tgv *t, double gbs) {
  if (t->opt.dt_fixed > 0 || gbs <= 0) return 0;
  const int64_t *n = fcl_topology_local_resolution(t->topo);
  const double bytes = 3.0 * (double)n[0] * (double)n[1] * (double)n[2] *
                       (double)fcl_dtype_size(t->opt.dtype);
  return 1e3 * bytes / (gbs * 1e9);
}

/* Rank 0: each kernel of the finite-difference operators (a node may hold several: the
 * stretching's stages), its mean device time per launch and its fraction of the copy bandwidth. */
static fcl_status print_kernels(tgv *t, double gbs) {
  fcl_fd *const ops[] = {t->extrapolate, t->stretch_first, t->stretch, t->diffuse};
  printf("  %-36s %9s %9s %9s\n", "kernel", "launches", "ms", "of copy");
  for (size_t o = 0; o < sizeof ops / sizeof *ops; ++o) {
    const fcl_launcher *list = fcl_fd_launcher(ops[o]);
    for (size_t i = 0; list && i < fcl_launcher_list_size(list); ++i) {
      fcl_launcher *k = fcl_launcher_list_get(list, i);
      fcl_launch_stats st;
      TRY(fcl_launcher_statistics(k, &st));
      if (st.launches && st.bandwidth_gbs > 0)
        printf("  %-36s %9zu %9.3f %9.2f\n", fcl_launcher_name(k), st.launches, st.mean_ns * 1e-6,
               gbs > 0 ? st.bandwidth_gbs / gbs : 0);
    }
  }
  return FCL_OK;
}

/* Rank 0's nodes: floor, wall time per call, their ratio; the step against the sum. */
static double print_floor(tgv *t, double step_ms, double gbs, double fwd_ms, double bwd_ms) {
  fcl_problem *p = t->problem;
  printf("floor: each node's kernel bytes at the copy bandwidth, its transforms at the bare "
         "FFT's time (forward %.3f ms, backward %.3f ms per component); ghosts 0; the dt "
         "measure one read of u\n",
         fwd_ms, bwd_ms);
  printf("  %-36s %9s %9s %10s\n", "node", "floor ms", "wall ms", "wall/floor");
  double total = 0;
  for (int n = 0; n < fcl_problem_num_nodes(p); ++n) {
    fcl_node_stats ns;
    if (fcl_problem_node_statistics(p, n, &ns) != FCL_OK) break;
    const double floor = node_floor_ms(&ns, gbs, fwd_ms, bwd_ms),
                 wall = 1e3 * ns.wall_s / (ns.calls ? (double)ns.calls : 1);
    total += floor;
    if (floor > 0)
      printf("  %-36s %9.3f %9.3f %10.2f\n", ns.name, floor, wall, wall / floor);
    else
      printf("  %-36s %9.3f %9.3f %10s\n", ns.name, floor, wall, "-");
  }
  const double measure = measure_floor_ms(t, gbs);
  if (measure > 0) printf("  %-36s %9.3f %9s %10s\n", "dt measure", measure, "-", "-");
  total += measure;
  printf("  %-36s %9.3f %9.3f %10.2f\n", "step (with the dt measure)", total, step_ms,
         total > 0 ? step_ms / total : 0);
  return total;
}

fcl_status tgv_benchmark(tgv *t, int64_t steps) {
  fcl_simulation_options o = tgv__loop_options(t);
  o.diagnostics = time_step;
  o.diagnostics_every = 1;
  o.output = o.checkpoint = NULL;
  o.output_every_t = 0;
  o.checkpoint_every = 0;
  o.progress = NULL;
  o.t_end = 1e9;
  o.max_steps = 3; /* warm-up: the first steps fill caches and pools */
  fcl_sim_state s;
  t->cap_step_wall = steps;
  t->step_wall = calloc((size_t)steps, sizeof *t->step_wall);
  if (!t->step_wall) return FCL_ERR_OUT_OF_MEMORY;
  t->last_wall = MPI_Wtime();
  TRY(fcl_simulation_run(t->problem, &o, &s));
  fcl_problem *p = t->problem;
  /* host syncs per step, as a run makes them: no per-node timing, no diagnostics */
  o.diagnostics = count_syncs;
  o.t_start = s.t;
  o.step_start = s.step;
  o.max_steps = 5;
  t->syncs_steps = -1;
  t->syncs_max = 0;
  TRY(fcl_simulation_run(p, &o, &s));
  /* the step as a run takes it: no node waits for the queue (each step ends with one) */
  double run_ms, timed_ms;
  o.diagnostics = time_step;
  TRY(timed_steps(t, &o, &s, steps, &run_ms));
  /* per-node timing, for the report and the floor: each node waits for the queue */
  TRY(fcl_problem_set_timing(p, true));
  TRY(timed_steps(t, &o, &s, steps, &timed_ms));
  const double gbs = copy_gbs(t);
  /* capacity: the device memory that the run's pool holds at its peak, per local grid point */
  fcl_pool_stats ps;
  TRY(fcl_pool_statistics(t->pool, &ps));
  const int64_t *nl = fcl_topology_local_resolution(t->topo);
  const double points = (double)nl[0] * (double)nl[1] * (double)nl[2];
  const double per_point = (double)ps.high_water_bytes / points;
  if (t->rank == 0) {
    printf("flowcl-tgv benchmark: %lld^2 x %lld, %s, %s, %s splitting, %s diffusion, %d rank(s), "
           "device %s, FFT %s\n",
           (long long)t->opt.resolution, (long long)t->opt.resolution * t->opt.z_periods,
           fcl_dtype_cl_name(t->opt.dtype), fcl_remesh_formula_name(t->opt.formula),
           splitting_name(t->opt.splitting), tgv_diffusion_name(t->opt.diffusion), t->size,
           t->info.name, tgv_fft_description(t));
    printf("  step (median of %lld, with the dt measure): %.3f ms; with each node waiting for "
           "the queue (the table below): %.3f ms; copy bandwidth %.1f GB/s\n",
           (long long)steps, run_ms, timed_ms, gbs);
    printf("  device memory (rank 0's pool at its peak): %.3f GiB, %.1f bytes per grid point "
           "(the FFT library's own work buffers not counted)\n",
           (double)ps.high_water_bytes / (1 << 30), per_point);
  }
  TRY(fcl_problem_report(p, stdout));
  if (t->rank == 0) TRY(print_kernels(t, gbs));
  if (t->rank == 0)
    printf("  host syncs per step (most of %lld steps, %s dt, no diagnostics): %lld\n",
           (long long)t->syncs_steps, t->opt.dt_fixed > 0 ? "fixed" : "adaptive",
           (long long)t->syncs_max);
  double fwd_ms, bwd_ms, floor_ms = 0;
  TRY(fft_ms(t, &fwd_ms, &bwd_ms));
  if (t->rank == 0) floor_ms = print_floor(t, run_ms, gbs, fwd_ms, bwd_ms);
  if (t->opt.json && t->rank == 0) {
    FILE *f = fopen(t->opt.json, "w");
    if (!f) {
      fprintf(stderr, "flowcl-tgv: cannot write %s: %s\n", t->opt.json, strerror(errno));
      return FCL_ERR_IO;
    }
    fprintf(f,
            "{\"benchmark\": \"flowcl-tgv\", \"device\": \"%s\", \"results\": [\n"
            "  {\"name\": \"step\", \"value\": %.6f, \"unit\": \"ms\", \"resolution\": %lld, "
            "\"z_periods\": %d, \"precision\": \"%s\", \"formula\": \"%s\", \"splitting\": "
            "\"%s\", \"diffusion\": "
            "\"%s\", \"ranks\": %d, "
            "\"node_timed_ms\": %.6f},\n"
            "  {\"name\": \"copy_bandwidth\", \"value\": %.2f, \"unit\": \"GB/s\"},\n"
            "  {\"name\": \"pool_high_water\", \"value\": %.0f, \"unit\": \"bytes\", "
            "\"bytes_per_point\": %.2f},\n"
            "  {\"name\": \"floor\", \"value\": %.6f, \"unit\": \"ms\", \"step_over_floor\": "
            "%.4f, \"fft_forward_ms\": %.6f, \"fft_backward_ms\": %.6f, "
            "\"dt_measure_floor_ms\": %.6f},\n"
            "  {\"name\": \"host_syncs_per_step\", \"value\": %lld, \"unit\": \"waits\", "
            "\"dt\": \"%s\"}",
            t->info.name, run_ms, (long long)t->opt.resolution, t->opt.z_periods,
            fcl_dtype_cl_name(t->opt.dtype), fcl_remesh_formula_name(t->opt.formula),
            splitting_name(t->opt.splitting), tgv_diffusion_name(t->opt.diffusion), t->size,
            timed_ms, gbs, (double)ps.high_water_bytes, per_point, floor_ms,
            floor_ms > 0 ? run_ms / floor_ms : 0, fwd_ms, bwd_ms, measure_floor_ms(t, gbs),
            (long long)t->syncs_max, t->opt.dt_fixed > 0 ? "fixed" : "adaptive");
    /* per node of the step, rank 0's statistics: wall time per call, and the kernels' device
     * time and bandwidth against the copy bandwidth when the node has launchers */
    for (int n = 0; n < fcl_problem_num_nodes(p); ++n) {
      fcl_node_stats ns;
      if (fcl_problem_node_statistics(p, n, &ns) != FCL_OK) break;
      const double calls = ns.calls ? (double)ns.calls : 1;
      fprintf(f, ",\n  {\"name\": \"%s\", \"value\": %.6f, \"unit\": \"ms\"", ns.name,
              1e3 * ns.wall_s / calls);
      if (ns.device_ns > 0 && ns.bytes > 0)
        fprintf(f, ", \"device_ms\": %.6f, \"bandwidth_gbs\": %.2f, \"fraction_of_copy\": %.6g",
                1e-6 * ns.device_ns / calls, ns.bytes / ns.device_ns,
                ns.bytes / ns.device_ns / gbs);
      const double floor = node_floor_ms(&ns, gbs, fwd_ms, bwd_ms);
      if (floor > 0)
        fprintf(f, ", \"floor_ms\": %.6f, \"over_floor\": %.4f", floor,
                1e3 * ns.wall_s / calls / floor);
      fprintf(f, "}");
    }
    fprintf(f, "\n]}\n");
    fclose(f);
  }
  return FCL_OK;
}
