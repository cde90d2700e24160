/* flowcl-tgv: the vortex-method solver of the Taylor-Green vortex, its diagnostics and outputs.
 *
 * Fields on [0, 2 pi)^3, slabs along z (the FFTs' decomposition): the vorticity w (state) and
 * the velocity u = Biot-Savart(w). A step is the problem (second-order splitting)
 *     u_mid = 3/2 u^n - 1/2 u^(n-1)   (velocity extrapolated to mid-step)
 *     stretching (w . grad) u_mid over dt/2 (4th-order differences, RK)
 *     advection of w by u_mid (remeshed particles, directional splitting)
 *     stretching over dt/2
 *     diffusion nu lap w (spectral, exact)
 *     u <- Biot-Savart(w)
 * or, first order (--time-splitting lie), advection, stretching and diffusion with u^n. dt
 * comes from the CFL and Lagrangian CFL bounds measured on u. */
#ifndef FLOWCL_TGV_SOLVER_H
#define FLOWCL_TGV_SOLVER_H

#include <stdio.h>

#include "tgv_options.h"

typedef struct tgv tgv;

/* Device, fields, operators and problem (and the restart, when asked). Collective. */
fcl_status tgv_create(const tgv_options *options, MPI_Comm comm, tgv **out);
void tgv_destroy(tgv **t);

/* Run to the end time (or max steps): diagnostics rows, snapshots, checkpoints. Collective. */
fcl_status tgv_run(tgv *t, fcl_sim_state *final);
/* Benchmark: warm-up steps, then `steps` timed steps (median wall time per step) and the
 * per-operator statistics against the copy bandwidth measured in the same run; prints a table
 * on rank 0 and writes the JSON if asked. Collective. */
fcl_status tgv_benchmark(tgv *t, int64_t steps);

/* The peak of -dE/dt seen so far and its time (mid-interval). */
void tgv_peak_dissipation(const tgv *t, double *value, double *time);
/* Time, energy and enstrophy of the last diagnostics row. */
void tgv_last_diagnostics(const tgv *t, double *time, double *energy, double *enstrophy);
/* Write the per-operator statistics to out (rank 0 prints). Collective. */
fcl_status tgv_report(tgv *t, FILE *out);
/* The name of the device of this rank. */
const char *tgv_device_name(const tgv *t);
/* The FFT backend and, on several ranks, the transport of its transposes ("vkfft (slabs, staged
 * transport)"). */
const char *tgv_fft_description(const tgv *t);

#endif
