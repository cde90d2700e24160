/* flowcl-convection: free-slip Rayleigh-Benard convection.
 * mpirun -n P flowcl-convection [options]; flowcl-convection --help lists them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "convection.h"

/* Draw OUTPUT/convection.png with python3-matplotlib; a missing plotter is a note. */
static void plot(const convection_options *o) {
  struct stat s;
  const char *dir = stat(CONVECTION_SOURCE_DIR "/plot_convection.py", &s) == 0
                        ? CONVECTION_SOURCE_DIR
                        : CONVECTION_INSTALL_DIR;
  if (strpbrk(o->output_dir, "'\"\\$`") || strpbrk(dir, "'\"\\$`")) {
    printf("plot: skipped (quotes or shell characters in '%s')\n", o->output_dir);
    return;
  }
  char cmd[4096];
  snprintf(cmd, sizeof cmd,
           "python3 -c 'import matplotlib' >/dev/null 2>&1 && python3 '%s/plot_convection.py' "
           "'%s/diagnostics.csv' '%s/convection.png'",
           dir, o->output_dir, o->output_dir);
  if (system(cmd) == 0)
    printf("plot: %s/convection.png\n", o->output_dir);
  else
    printf("plot: skipped (python3-matplotlib is not installed)\n");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  convection_options o;
  int parsed = convection_parse(argc, argv, rank, &o);
  if (parsed) {
    MPI_Finalize();
    return parsed == 1 ? 0 : 2;
  }
  if (rank == 0 && !o.quiet)
    printf("flowcl-convection: %dD, Ra = %g, Pr = %g, aspect %g, %lld x %lld%s points, %s, to "
           "t = %g\n",
           o.dim, o.rayleigh, o.prandtl, o.aspect, (long long)o.resolution,
           (long long)convection_horizontal_points(&o), o.dim == 3 ? " x same" : "",
           fcl_dtype_cl_name(o.dtype), o.t_end);
  fcl_sim_state final = {0};
  fcl_status st = convection_run(&o, MPI_COMM_WORLD, &final);
  if (st != FCL_OK) {
    /* the library's message where it failed (the app's own checks print theirs) */
    if (rank == 0 && fcl_last_status() == st)
      fprintf(stderr, "flowcl-convection: %s\n", fcl_last_error());
    MPI_Finalize();
    return 1;
  }
  if (rank == 0) {
    printf("done: %lld steps to t = %g; outputs in %s\n", (long long) final.step, final.t,
           o.output_dir);
    if (!o.no_plot) plot(&o);
  }
  MPI_Finalize();
  return 0;
}
