/** @file
 * flowcl spectral operators (operators/spectral) on periodic domains and on domains with
 * homogeneous walls along some axes (fft.h: each component extended odd or even about the walls
 * by its own condition, fcl_field_set_component_bc).
 *
 * An fcl_spectral owns an FFT plan (flowcl/fft.h) with one spectral slot per component and the
 * pointwise kernels of kernels/spectral.cl. Every call transforms, applies one kernel and
 * transforms back; results are exact for band-limited data up to rounding. Input and output
 * may be the same field where a function says so. Fields must be on the topology, precision and
 * queue the fcl_spectral was made for. All functions are Collective over the topology.
 *
 * Walls: the result of each operator has known conditions at the walls (Poisson keeps its
 * input's, a derivative along a walled axis turns Dirichlet into Neumann and back, the curl of a
 * free-slip velocity has Dirichlet tangential components and a Neumann normal one); an output
 * component set otherwise is FCL_ERR_INVALID_ARGUMENT naming it, before anything runs. Free-slip
 * walls (no penetration, no stress) are what Biot-Savart gives: with the vorticity's tangential
 * components Dirichlet and its normal one Neumann, the velocity's normal component vanishes at the
 * wall. A mean velocity (fcl_spectral_set_mean_velocity) through a wall is refused at the call.
 * Poisson with Neumann walls solves for zero mean, as on a periodic axis. */
#ifndef FLOWCL_SPECTRAL_H
#define FLOWCL_SPECTRAL_H

#include "flowcl/fft.h"
#include "flowcl/problem.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Spectral operators over one FFT plan (opaque; not thread safe). */
typedef struct fcl_spectral fcl_spectral;

/** Plan the spectral operators for fields like `like` (its dim sets the slots: 3 in 2D, 6 in
 * 3D, room for the vorticity and the velocity of the fused pass below), on the given FFT
 * backend (FCL_FFT_AUTO: see fft.h); slots come from pool. Destroy *out with
 * fcl_spectral_destroy. */
fcl_status fcl_spectral_create(const fcl_field *like, fcl_fft_backend backend, fcl_pool *pool,
                               fcl_spectral **out);
void fcl_spectral_destroy(fcl_spectral **spectral); /**< accepts NULL */
/** The FFT plan underneath (its backend, layout and slots). */
fcl_fft *fcl_spectral_fft(const fcl_spectral *spectral);

/** Poisson: lap(psi) = -rhs with zero mean, component by component (psi and rhs have the same
 * number of components; psi may be rhs). */
fcl_status fcl_spectral_poisson(fcl_spectral *spectral, const fcl_field *rhs, fcl_field *psi);
/** Biot-Savart: the divergence-free velocity whose curl is omega, u = curl(psi) with
 * lap(psi) = -omega, in one spectral pass. 3D: omega and u are vectors; 2D: omega is a scalar
 * and u a 2-vector. */
fcl_status fcl_spectral_biot_savart(fcl_spectral *spectral, const fcl_field *omega, fcl_field *u);
/** Exact diffusion of omega over dt (in place), then u = Biot-Savart of the diffused omega, in
 * one spectral pass: the forward transforms of omega serve both, so a 3D call does 3 forward
 * and 6 backward transforms where fcl_spectral_diffuse then fcl_spectral_biot_savart do 12
 * (on several ranks, 9 all-to-all transposes instead of 12). Same result up to rounding. */
fcl_status fcl_spectral_diffuse_biot_savart(fcl_spectral *spectral, fcl_field *omega, double nu,
                                            double dt, fcl_field *u);
/** The uniform velocity (dim components; NULL: none) that every later Biot-Savart of the plan,
 * alone or fused with diffusion and in their operators, adds to the velocity of the vorticity:
 * the free stream of a flow past an obstacle, U + curl(psi). It is the velocity's mean over the
 * periodic box (the zero mode, which Biot-Savart otherwise leaves at 0); it costs nothing per
 * call. Non-finite components: FCL_ERR_INVALID_ARGUMENT. */
fcl_status fcl_spectral_set_mean_velocity(fcl_spectral *spectral, const double *velocity);
/** Leray projection of a vector field onto divergence-free fields, in place. */
fcl_status fcl_spectral_project(fcl_spectral *spectral, fcl_field *u);
/** Exact diffusion of every component over dt: d f / dt = nu lap(f), in place. */
fcl_status fcl_spectral_diffuse(fcl_spectral *spectral, fcl_field *f, double nu, double dt);
/** d^order f[comp] / d x_axis^order into df[dcomp] (df may be f). */
fcl_status fcl_spectral_derivative(fcl_spectral *spectral, const fcl_field *f, int comp, int axis,
                                   int order, fcl_field *df, int dcomp);
/** Curl: 3D vector u -> vector w; 2D vector u -> scalar w (may not be u). */
fcl_status fcl_spectral_curl(fcl_spectral *spectral, const fcl_field *u, fcl_field *w);

/** Buoyancy (Boussinesq): omega += dt curl(b g), the vorticity source of the force b g per unit
 * mass over a step (b a scalar such as a temperature or a density anomaly; g[dim], e.g. Ra Pr
 * along the upward axis in Rayleigh-Benard units). One forward transform of b and of omega's
 * components, one backward of omega's. With walls, g must be normal to them (omega's
 * conditions, a free-slip vorticity's, must be those of the source: else
 * FCL_ERR_INVALID_ARGUMENT naming the component). Errors: b not a scalar, omega not dim == 3 ?
 * 3 : 1 components or b itself, g or dt not finite. */
fcl_status fcl_spectral_buoyancy(fcl_spectral *spectral, const fcl_field *b, const double *g,
                                 double dt, fcl_field *omega);

/** Descriptions for a problem (flowcl/problem.h): Biot-Savart (reads omega, writes u), exact
 * diffusion of f over each step's dt, Leray projection of u. Each allocates a small state that
 * the problem frees (fcl_problem_add_operator frees it even when it fails); spectral and the
 * fields must outlive the problem. @{ */
fcl_status fcl_spectral_biot_savart_operator(fcl_spectral *spectral, fcl_field *omega, fcl_field *u,
                                             fcl_operator *out);
fcl_status fcl_spectral_diffusion_operator(fcl_spectral *spectral, fcl_field *f, double nu,
                                           fcl_operator *out);
fcl_status fcl_spectral_project_operator(fcl_spectral *spectral, fcl_field *u, fcl_operator *out);
/** @} */
/** fcl_spectral_buoyancy over each step's dt (g copied): reads b, reads and writes omega. */
fcl_status fcl_spectral_buoyancy_operator(fcl_spectral *spectral, fcl_field *b, const double *g,
                                          fcl_field *omega, fcl_operator *out);
/** The fused pass (fcl_spectral_diffuse_biot_savart) over each step's dt: reads and writes omega,
 * writes u. */
fcl_status fcl_spectral_diffuse_biot_savart_operator(fcl_spectral *spectral, fcl_field *omega,
                                                     double nu, fcl_field *u, fcl_operator *out);

#ifdef __cplusplus
}
#endif
#endif /* FLOWCL_SPECTRAL_H */
