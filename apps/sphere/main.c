/* flowcl-sphere: the wake of a sphere, flowcl's second validated flow.
 * mpirun -n P flowcl-sphere [options]; flowcl-sphere --help lists them. */
#include "sphere.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  sphere_options o;
  int rc = sphere_options_parse(argc, argv, rank, &o);
  if (rc == 0) {
    fcl_status st = sphere_run(&o, MPI_COMM_WORLD);
    if (st != FCL_OK && rank == 0)
      fprintf(stderr, "flowcl-sphere: failed (%s)%s%s\n", fcl_status_name(st),
              *fcl_last_error() ? ": " : "", fcl_last_error());
    rc = st == FCL_OK ? 0 : 1;
  } else {
    rc = rc == 1 ? 0 : 2;
  }
  int worst;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
