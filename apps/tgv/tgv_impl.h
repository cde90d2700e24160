/* flowcl-tgv's solver state, shared by its set-up and time loop (tgv_solver.c) and its
 * benchmark (tgv_benchmark.c). */
#ifndef FLOWCL_TGV_IMPL_H
#define FLOWCL_TGV_IMPL_H

#include "tgv_solver.h"

#define TRY(call)                                                                                  \
  do {                                                                                             \
    fcl_status s_ = (call);                                                                        \
    if (s_ != FCL_OK) return s_;                                                                   \
  } while (0)

struct tgv {
  tgv_options opt;
  double nu;
  int rank, size;
  fcl_topology *topo;
  fcl_device_info info;
  fcl_context *ctx;
  fcl_queue *q;
  fcl_allocator *alloc;
  fcl_pool *pool;
  fcl_field *w, *u;
  fcl_field *u_mid, *u_prev; /* second-order splitting: u^(n+1/2) ~ 3/2 u^n - 1/2 u^(n-1) */
  fcl_fd *extrapolate;       /* u_mid, where stretch_first does not make it */
  fcl_spectral *spectral;
  fcl_advection *adv;
  fcl_fd *stretch;
  fcl_fd *stretch_first; /* the first half that also extrapolates u_mid (GPUs, one rank) */
  fcl_fd *diffuse;       /* --diffusion fd */
  fcl_analytics *an;
  fcl_problem *problem;
  fcl_sim_state start; /* t and step of the first step (restart) */
  FILE *csv;           /* rank 0 */
#if FLOWCL_ENABLE_HDF5
  fcl_io_series *series;
#endif
  /* the last diagnostics rows' times and energies, newest first (rows of them): -dE/dt over the
   * two intervals between them spans a pair of steps, a whole period of the alternating
   * directions; checkpoints carry them, with the peak */
  double row_t[3], row_energy[3];
  int rows;
  double last_enstrophy;
  double peak_eps, peak_t;
  int64_t csv_last_step; /* rank 0: the last row a restart found in the file (-1: none) */
  double *step_wall;     /* benchmark: wall seconds per step */
  int64_t nstep_wall, cap_step_wall;
  double last_wall;
  uint64_t syncs_last;            /* benchmark: the host-sync counter at the previous step */
  int64_t syncs_max, syncs_steps; /* most host syncs in one step, steps counted */
};

/* The time loop's options for a run (end, cadences and callbacks from the options). */
fcl_simulation_options tgv__loop_options(tgv *t);

#endif
