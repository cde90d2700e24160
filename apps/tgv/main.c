/* flowcl-tgv: the Taylor-Green vortex at Re = 1600 (or any), flowcl's main job.
 * mpirun -n P flowcl-tgv [options]; flowcl-tgv --help lists them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tgv_options.h"
#include "tgv_solver.h"

/* The directory holding plot_tgv.py, plot_tgv.gp and reference/ (source tree or installed). */
static const char *data_dir(void) {
  struct stat s;
  if (!stat(TGV_SOURCE_DIR "/plot_tgv.py", &s)) return TGV_SOURCE_DIR;
  return TGV_INSTALL_DIR;
}

/* Draw OUTPUT/tgv.png with python3-matplotlib, else gnuplot; a missing plotter is a note. */
static void plot(const tgv_options *o) {
  char cmd[4096], png[1024];
  const char *dir = data_dir();
  if (strpbrk(o->output_dir, "'\"\\$`") || strpbrk(dir, "'\"\\$`")) {
    printf("plot: skipped (quotes or shell characters in '%s')\n", o->output_dir);
    return;
  }
  snprintf(png, sizeof png, "%s/tgv.png", o->output_dir);
  snprintf(cmd, sizeof cmd,
           "python3 -c 'import matplotlib' >/dev/null 2>&1 && python3 "
           "'%s/plot_tgv.py' '%s/diagnostics.csv' '%s/reference/tgv_re1600_dairay2017.csv' "
           "'%s' %g %lld",
           dir, o->output_dir, dir, png, o->reynolds, (long long)o->resolution);
  if (system(cmd) == 0) {
    printf("plot: %s (matplotlib)\n", png);
    return;
  }
  snprintf(cmd, sizeof cmd,
           "command -v gnuplot >/dev/null 2>&1 && gnuplot -e \"csv='%s/"
           "diagnostics.csv'; ref='%s/reference/tgv_re1600_dairay2017.csv'; png='%s'; re=%g; "
           "n=%lld\" '%s/plot_tgv.gp'",
           o->output_dir, dir, png, o->reynolds, (long long)o->resolution, dir);
  if (system(cmd) == 0)
    printf("plot: %s (gnuplot)\n", png);
  else
    printf("plot: skipped (neither python3-matplotlib nor gnuplot is installed)\n");
}

/* What the autotuner measured since the last call (rank 0's kernels): the first run on a GPU
 * tunes them, later runs reuse the remembered choices and print nothing. */
static void report_tuning(int rank) {
  static size_t shown;
  static double shown_s;
  size_t n = 0;
  double s = 0;
  fcl_tune_totals(&n, &s);
  if (rank != 0 || n == shown) return;
  char dir[1024] = "";
  if (fcl_program_cache_dir(dir, sizeof dir) != FCL_OK) fcl_clear_error();
  printf("tuning: %zu kernel(s) measured in %.1f s, remembered in %s/tune: later runs reuse "
         "them (FLOWCL_TUNE=estimate: no tuning)\n",
         n - shown, s - shown_s, dir[0] ? dir : "(no cache)");
  shown = n;
  shown_s = s;
}

static int run(const tgv_options *o, int rank) {
  tgv *t = NULL;
  fcl_status st = tgv_create(o, MPI_COMM_WORLD, &t);
  if (st == FCL_OK && rank == 0 && !o->benchmark)
    printf("flowcl-tgv: %lld^3, Re = %g, %s, %s advection, %s stretching, %s diffusion, to t = "
           "%g on %s, FFT %s\n",
           (long long)o->resolution, o->reynolds, fcl_dtype_cl_name(o->dtype),
           fcl_remesh_formula_name(o->formula),
           o->stretching == TGV_STRETCH_GRADIENT ? "gradient" : "conservative",
           tgv_diffusion_name(o->diffusion), o->t_end, tgv_device_name(t), tgv_fft_description(t));
  if (st == FCL_OK) report_tuning(rank);
  fcl_sim_state final = {0};
  if (st == FCL_OK && o->benchmark)
    st = tgv_benchmark(t, o->max_steps ? o->max_steps : 20);
  else if (st == FCL_OK)
    st = tgv_run(t, &final);
  if (st == FCL_OK) report_tuning(rank);
  if (st == FCL_OK && !o->benchmark) {
    char path[1024];
    snprintf(path, sizeof path, "%s/report.txt", o->output_dir);
    FILE *f = rank == 0 ? fopen(path, "w") : NULL;
    st = tgv_report(t, f ? f : stdout);
    if (f) fclose(f);
    double peak, at;
    tgv_peak_dissipation(t, &peak, &at);
    if (rank == 0) {
      printf("done: %lld steps to t = %g; peak -dE/dt (over 2 steps) %.6g at t = %.3f (DNS, Re "
             "1600: 0.0128565 at 8.98)\n",
             (long long) final.step, final.t, peak, at);
      printf("outputs: %s/diagnostics.csv, %s/report.txt%s\n", o->output_dir, o->output_dir,
             o->snapshot_every > 0 ? ", vorticity.xdmf (ParaView)" : "");
      if (o->plot) plot(o);
    }
  }
  if (st != FCL_OK && rank == 0) /* the message, unless the solver printed its own */
    fprintf(stderr, "flowcl-tgv: failed (%s)%s%s\n", fcl_status_name(st),
            *fcl_last_error() ? ": " : "", fcl_last_error());
  tgv_destroy(&t);
  return st == FCL_OK ? 0 : 1;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  tgv_options o;
  int rc = tgv_options_parse(argc, argv, rank, &o);
  if (rc == 0)
    rc = run(&o, rank);
  else if (rc == 1)
    rc = 0;
  int worst;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
