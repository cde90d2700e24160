/* Internal state of the spectral operators (operators/spectral): an FFT plan, the kernels of
 * kernels/spectral.cl for its precision, and one launcher per kernel over the plan's slots. */
#ifndef FLOWCL_SPECTRAL_IMPL_H
#define FLOWCL_SPECTRAL_IMPL_H

#include "flowcl/spectral.h"

struct fcl_spectral {
  fcl_fft *fft;
  fcl_program *program;
  fcl_topology *topo;
  fcl_queue *queue;
  int dim;
  fcl_dtype dtype;
  bool empty; /* this rank holds no spectral values (fftw-mpi's split can leave none) */
  fcl_launcher *poisson, *biot_savart, *project, *diffuse, *derivative, *curl;
  fcl_launcher *diffuse_biot_savart; /* omega in slots 0..dim-1 (2D: 0), u in the next dim */
  fcl_param_set *diffuse_params, *derivative_params, *diffuse_biot_savart_params;
  fcl_param_set *biot_savart_params; /* the mean velocity (fcl_spectral_set_mean_velocity) */
};

/* Run a launcher over the slots (nothing on an empty rank). */
fcl_status fcl__spectral_run(fcl_spectral *s, fcl_launcher *launcher, const fcl_param_set *set);
/* The field must have ncomp components (pos, name: its argument's position and name). */
fcl_status fcl__spectral_check_ncomp(const fcl_field *f, int ncomp, int pos, const char *name);
/* A real kernel parameter of the plan's precision. */
fcl_status fcl__spectral_set_real(fcl_spectral *s, fcl_param_set *set, const char *name,
                                  double value);

#endif
