/* flowcl-sphere: the wake of a sphere by vortex penalization in a periodic box. */
#ifndef FLOWCL_SPHERE_H
#define FLOWCL_SPHERE_H

#include <flowcl/flowcl.h>
#include <stdio.h>

/* The run's options (sphere_options.c). Lengths are in diameters, velocities in U. */
typedef struct {
  double reynolds;          /* U D / nu */
  int64_t resolution;       /* grid points per diameter */
  double box[3];            /* box lengths along x (the flow), y, z */
  double center_x;          /* the sphere's centre from the inlet face (y, z: the box's middle) */
  double layer;             /* absorbing layer's width before the outflow face */
  double smoothing;         /* the mask's smoothing width, in grid spacings */
  double retraction;        /* the mask's radius shrunk by that many grid spacings */
  double lambda;            /* penalization factor */
  double t_end, cfl;        /* end time (D / U) and dt max|u| / dx */
  double snapshot_every;    /* > 0: HDF5/XDMF snapshots of the vorticity and the mask */
  int64_t max_steps;        /* > 0: stop there */
  int64_t checkpoint_every; /* > 0: a checkpoint every that many steps (the last two kept) */
  const char *restart;      /* a checkpoint file, or "latest" in output_dir; NULL: fresh */
  fcl_dtype dtype;
  const char *device; /* NULL: FLOWCL_DEVICE, else the first GPU, else the first device */
  const char *output_dir;
  bool quiet, overwrite, plot;
  bool spectral_curl; /* the vorticity's penalization takes the curl of u's change spectrally */
  bool benchmark;     /* time max_steps steps (default 20) instead of running to t_end */
} sphere_options;

/* 0: run; 1: --help printed; 2: bad options (a message on stderr from rank 0). */
int sphere_options_parse(int argc, char **argv, int rank, sphere_options *o);

/* The solver (sphere_solver.c): set up, run to t_end writing OUTPUT/diagnostics.csv (step, t,
 * dt, cd, cl_y, cl_z, the drag and lift coefficients 2 F / (U^2 pi D^2 / 4)), report.txt and
 * the snapshots (flow.xdmf),
 * and say what the run gave (mean drag over the second half, the Strouhal number of the lift
 * where it oscillates). Collective. */
fcl_status sphere_run(const sphere_options *o, MPI_Comm comm);

#endif
