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
  fcl_launcher *buoyancy;            /* b in slot 0, omega in the next 3 (2D: 1) */
  fcl_param_set *buoyancy_params;    /* dt g */
  fcl_param_set *diffuse_params, *derivative_params, *diffuse_biot_savart_params;
  fcl_param_set *biot_savart_params; /* the mean velocity (fcl_spectral_set_mean_velocity) */
  double mean[3];                    /* that velocity */
  unsigned walled;                   /* bit a: axis a has walls */
};

/* Wall parities (parity.c): bit a set where component comp of f is odd (Dirichlet) about the
 * walls of axis a; a derivative along a walled axis flips its bit. The checks below refuse
 * output fields whose conditions are not those the operator's result has (the transform would
 * extend or restrict them wrongly), naming the argument. */
unsigned fcl__spectral_parity(const fcl_spectral *s, const fcl_field *f, int comp);
/* Component comp of f (argument pos, name) must have parity want. */
fcl_status fcl__spectral_check_parity(const fcl_spectral *s, const fcl_field *f, int comp,
                                      unsigned want, int pos, const char *name);
/* The parities of the curl of v (a vector of dim components; 2D: one), into out; an error
 * naming v (argument pos, name) where v's components are not those of a field with a curl
 * (its two terms would differ). */
fcl_status fcl__spectral_curl_parity(const fcl_spectral *s, const fcl_field *v, int pos,
                                     const char *name, unsigned out[3]);

/* Run a launcher over the slots (nothing on an empty rank). */
fcl_status fcl__spectral_run(fcl_spectral *s, fcl_launcher *launcher, const fcl_param_set *set);
/* The field must have ncomp components (pos, name: its argument's position and name). */
fcl_status fcl__spectral_check_ncomp(const fcl_field *f, int ncomp, int pos, const char *name);
/* A real kernel parameter of the plan's precision. */
fcl_status fcl__spectral_set_real(fcl_spectral *s, fcl_param_set *set, const char *name,
                                  double value);

#endif
