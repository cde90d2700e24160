/* flowcl-convection: free-slip Rayleigh-Benard convection (Boussinesq), the vortex method with
 * walls. Units: the layer's height H and the thermal diffusion time H^2 / kappa. The vertical
 * axis is the first one (axis 0, "x" in the output files): walls along it are whole on every
 * rank, which the spectral solvers need (fft.h). */
#ifndef FLOWCL_CONVECTION_H
#define FLOWCL_CONVECTION_H

#include <flowcl/flowcl.h>
#include <stdbool.h>

typedef struct {
  int dim;            /* 2 or 3 */
  double rayleigh;    /* Ra */
  double prandtl;     /* Pr */
  double aspect;      /* horizontal period over the height (each horizontal axis) */
  int64_t resolution; /* points along the vertical, both plates included */
  int refinement;     /* theta's grid refines the velocity's this many times per axis (1, 2, 4) */
  double t_end;       /* end time */
  double dt_max;      /* largest step (and the step while the flow is slow) */
  double cfl;         /* dt max|u_d| / dx_d <= cfl */
  double amplitude;   /* of the initial temperature perturbation */
  int64_t max_steps;  /* 0: no limit */
  int64_t diagnostics_every;
  double snapshot_every; /* 0: no snapshots */
  fcl_dtype dtype;
  const char *device;
  const char *output_dir;
  bool overwrite, quiet, no_plot;
} convection_options;

/* Parse argv (prints usage or the error on rank 0); 0: run, 1: done (help), 2: bad input. */
int convection_parse(int argc, char **argv, int rank, convection_options *o);
/* Points along each horizontal axis: the aspect ratio times the vertical intervals. */
int64_t convection_horizontal_points(const convection_options *o);
/* Run it; the final state in *final. Collective. */
fcl_status convection_run(const convection_options *o, MPI_Comm comm, fcl_sim_state *final);

#endif
