/** @file
 * flowcl penalization: Brinkman penalization of a velocity, or of a vorticity through its
 * velocity, by an obstacle's mask, implicit in time (operators/penalization).
 *
 * d u / dt = lambda chi (u_s - u), chi in [0, 1] the mask (1 inside the solid), u_s the solid's
 * velocity and lambda the penalization factor (large: 1e4 to 1e8), integrated exactly stable
 * by backward Euler at every point:
 *     u <- (u + lambda dt chi u_s) / (1 + lambda dt chi),
 * so that inside the solid u reaches u_s to within 1 / (1 + lambda dt) in one step and the
 * fluid (chi = 0) is untouched. One generated kernel (fcl_fd_kernel_create) per operator.
 *
 * What a flow past an obstacle in a periodic box needs with it: masks of a sphere or a cylinder
 * (fcl_mask_sphere, fcl_mask_cylinder), the force on the obstacle (fcl_penalization_force), an
 * absorbing layer before the outflow (fcl_absorbing_layer_create) and, in spectral.h, the free
 * stream of Biot-Savart (fcl_spectral_set_mean_velocity). */
#ifndef FLOWCL_PENALIZATION_H
#define FLOWCL_PENALIZATION_H

#include "flowcl/fd.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Penalize every component of u (on mask's topology, precision and queue; mask a scalar)
 * towards solid_velocity[c] (NULL: at rest) with factor lambda > 0. The result is an fcl_fd:
 * fcl_fd_apply(op, dt), fcl_fd_operator, fcl_fd_destroy. u and mask must outlive it. */
fcl_status fcl_penalization_create(fcl_field *u, fcl_field *mask, const double *solid_velocity,
                                   double lambda, fcl_fd **out);
/** Penalize the vorticity w through the velocity u (vortex methods): u is penalized as above
 * and w receives the curl of u's change, w <- w + curl(u_new - u) (differences of order 4; the
 * change is a work field from pool whose ghosts are exchanged between the two kernels, so
 * applying it is Collective). 2D: u two components, w a scalar; 3D: both vectors; 2 ghosts. */
fcl_status fcl_penalization_vorticity_create(fcl_field *u, fcl_field *w, fcl_field *mask,
                                             const double *solid_velocity, double lambda,
                                             fcl_pool *pool, fcl_fd **out);

/** The force the fluid exerted on the obstacle during the last application of op, a vorticity
 * penalization (fcl_penalization_vorticity_create) applied over dt: the momentum the implicit
 * step removed from the fluid per unit time, F = -(1/dt) integral of (u_new - u_old) dV (the
 * integral of lambda chi (u_s - u_new) dV, density 1), force[dim]. The drag and lift
 * coefficients follow as 2 F / (U^2 A). dt is the time over which the removed slip built up: in
 * a step that opens with the penalization, the previous step's dt (the slip is what that step's
 * advection and diffusion left in the body). Collective (a reduction
 * over ranks; waits for the device). Another kind of operator: FCL_ERR_INVALID_ARGUMENT. */
fcl_status fcl_penalization_force(fcl_fd *op, double dt, double *force);

/** Fill mask (a scalar field) with the indicator of a sphere (3D; a disc in 2D) of the given
 * diameter centred at center[dim]: 1 inside, 0 outside, smoothed across the surface within
 * smoothing of it, chi = (1 - sin(pi (r - D / 2) / (2 smoothing))) / 2 for |r - D / 2| <
 * smoothing (compact: no tail far from the body that a large lambda would penalize; the
 * volume grows by 3 (D / 2) smoothing^2 (1 - 8 / pi^2) / (D / 2)^3 relatively), or sharp
 * (chi = 1 where r <= D / 2) for smoothing 0; smoothing must be below D / 2. Distances are
 * not wrapped across periodic faces: the obstacle must lie inside the box. On the field's
 * queue (waits for it); not collective. */
fcl_status fcl_mask_sphere(fcl_field *mask, const double *center, double diameter,
                           double smoothing);
/** The same for a cylinder of the given diameter whose axis runs along axis (0, 1 or 2)
 * through center[3] (3D fields only). */
fcl_status fcl_mask_cylinder(fcl_field *mask, const double *center, int axis, double diameter,
                             double smoothing);

/** An absorbing layer before the outflow of a periodic box (the wake of an obstacle would
 * otherwise re-enter the box upstream): each application multiplies every component of w by
 * a profile of the coordinate along axis that is 1 up to start, falls as a half cosine to 0 at
 * end and is 0 beyond (a profile field from pool, made here and owned by the operator). The
 * result is an fcl_fd: fcl_fd_apply(op, dt) (dt is not used), fcl_fd_operator, fcl_fd_destroy.
 * w must outlive it. */
fcl_status fcl_absorbing_layer_create(fcl_field *w, int axis, double start, double end,
                                      fcl_pool *pool, fcl_fd **out);

#ifdef __cplusplus
}
#endif
#endif /* FLOWCL_PENALIZATION_H */
