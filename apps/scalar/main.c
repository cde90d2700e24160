/* flowcl-scalar: a multi-scale passive scalar in the ABC flow.
 * mpirun -n P flowcl-scalar [options]; flowcl-scalar --help lists them. */
#include <stdio.h>

#include "scalar.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  scalar_options o;
  int parsed = scalar_parse(argc, argv, rank, &o);
  if (parsed) {
    MPI_Finalize();
    return parsed == 1 ? 0 : 2;
  }
  if (rank == 0 && !o.quiet)
    printf("flowcl-scalar: velocity %lld^3, scalar %lld^3, nu = %g, Sc = %g, %s, to t = %g\n",
           (long long)o.resolution, (long long)(o.resolution * o.refinement), o.viscosity,
           o.schmidt, fcl_dtype_cl_name(o.dtype), o.t_end);
  fcl_sim_state final = {0};
  double seconds = 0;
  fcl_status st = scalar_run(&o, MPI_COMM_WORLD, &final, &seconds);
  if (st != FCL_OK) {
    /* the library's message where it failed (the app's own checks print theirs) */
    if (rank == 0 && fcl_last_status() == st)
      fprintf(stderr, "flowcl-scalar: %s\n", fcl_last_error());
    MPI_Finalize();
    return 1;
  }
  if (rank == 0)
    printf("done: %lld steps to t = %g in %.3f s (%.3f ms per step); outputs in %s\n",
           (long long) final.step, final.t, seconds,
           final.step ? 1e3 * seconds / (double) final.step : 0.0, o.output_dir);
  MPI_Finalize();
  return 0;
}
