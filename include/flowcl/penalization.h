/** @file
 * flowcl penalization: Brinkman penalization of a velocity, or of a vorticity through its
 * velocity, by an obstacle's mask, implicit in time (operators/penalization).
 *
 * d u / dt = lambda chi (u_s - u), chi in [0, 1] the mask (1 inside the solid), u_s the solid's
 * velocity and lambda the penalization factor (large: 1e4 to 1e8), integrated exactly stable
 * by backward Euler at every point:
 *     u <- (u + lambda dt chi u_s) / (1 + lambda dt chi),
 * so that inside the solid u reaches u_s to within 1 / (1 + lambda dt) in one step and the
 * fluid (chi = 0) is untouched. One generated kernel (fcl_fd_kernel_create) per operator. */
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

#ifdef __cplusplus
}
#endif
#endif /* FLOWCL_PENALIZATION_H */
