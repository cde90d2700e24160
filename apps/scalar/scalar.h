/* flowcl-scalar: a passive scalar at high Schmidt number in the ABC (Arnold-Beltrami-Childress)
 * flow, the multi-scale vortex method: the velocity on one grid, the scalar on a grid refined
 * 1, 2 or 4 times per axis, advected by the velocity interpolated to it (transfer.h). The box is
 * [0, 2 pi)^3, periodic; time in turnover times 1 / (k u'), k = 1 and u' = 1 the rms of one
 * velocity component at t = 0. */
#ifndef FLOWCL_SCALAR_H
#define FLOWCL_SCALAR_H

#include <flowcl/flowcl.h>
#include <stdbool.h>

typedef struct {
  int64_t resolution; /* velocity points per axis */
  int refinement;     /* the scalar's grid: refinement x resolution points per axis */
  int substeps;       /* scalar advection steps per velocity step (refined grids) */
  double viscosity;   /* nu */
  double schmidt;     /* Sc = nu / kappa */
  double t_end;
  double dt_max;
  double cfl; /* dt max|u_d| / dx_d <= cfl per scalar substep, dx the scalar's spacing */
  int64_t max_steps;
  int64_t diagnostics_every;
  double snapshot_every; /* 0: none */
  fcl_dtype dtype;
  const char *device;
  const char *output_dir;
  bool overwrite, quiet;
} scalar_options;

/* Parse argv (prints usage or the error on rank 0); 0: run, 1: done (help), 2: bad input. */
int scalar_parse(int argc, char **argv, int rank, scalar_options *o);
/* Run it; the final state in *final and the time loop's wall time in *seconds. Collective. */
fcl_status scalar_run(const scalar_options *o, MPI_Comm comm, fcl_sim_state *final,
                      double *seconds);

#endif
