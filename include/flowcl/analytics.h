/** @file
 * flowcl analytics: the flow's global diagnostics and the inputs of the adaptive time step
 * (operators/analytics).
 *
 * Every quantity is reduced over the whole domain (on the device per rank, then MPI) and
 * returned on every rank. Averages are over the domain's volume (the product of its lengths),
 * so that the Taylor-Green vortex at t = 0 has energy 1/8 and enstrophy 3/8. Derivatives are
 * centred differences of order 4 (fcl_fd operators), so u's topology needs 2 ghosts. */
#ifndef FLOWCL_ANALYTICS_H
#define FLOWCL_ANALYTICS_H

#include "flowcl/fd.h"
#include "flowcl/pool.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The quantities of fcl_analytics_compute, as bits. */
typedef enum {
  FCL_DIAG_ENERGY = 1 << 0,        /**< <|u|^2> / 2 */
  FCL_DIAG_ENSTROPHY = 1 << 1,     /**< <|w|^2> / 2 (needs w) */
  FCL_DIAG_MAX_VORTICITY = 1 << 2, /**< max |w| (needs w) */
  FCL_DIAG_UMAX = 1 << 3,          /**< max |u_d| per axis */
  FCL_DIAG_GRAD_U = 1 << 4,        /**< max |grad u|, Frobenius norm */
  FCL_DIAG_DIVERGENCE = 1 << 5,    /**< sqrt(<(div u)^2>) */
  FCL_DIAG_ALL = (1 << 6) - 1      /**< every quantity above */
} fcl_diag_flags;

/** The diagnostics of a flow, each filled in by the fcl_diag_flags of its name. */
typedef struct {
  /** FCL_DIAG_ENERGY, FCL_DIAG_ENSTROPHY, FCL_DIAG_MAX_VORTICITY, FCL_DIAG_UMAX (umax[d] per
   * axis), FCL_DIAG_GRAD_U (max_grad_u), FCL_DIAG_DIVERGENCE. @{ */
  double energy, enstrophy, max_vorticity, umax[3], max_grad_u, divergence;
  /** @} */
} fcl_diagnostics;

/** The reductions and work field that compute a flow's diagnostics (opaque; not thread safe). */
typedef struct fcl_analytics fcl_analytics;

/** Diagnostics of velocity u (dim components) and vorticity w (3 components in 3D, 1 in 2D;
 * NULL: none, and the vorticity quantities are errors), on one topology, precision and queue;
 * one scalar work field, and on GPUs the one-pass kernel's partials, from pool. The fields must
 * outlive the object. Destroy *out with
 * fcl_analytics_destroy. */
fcl_status fcl_analytics_create(fcl_field *u, fcl_field *w, fcl_pool *pool, fcl_analytics **out);
void fcl_analytics_destroy(fcl_analytics **an); /**< accepts NULL */

/** The quantities of `what` (fcl_diag_flags) into d; the others are left as they were.
 * Blocking. Collective. */
fcl_status fcl_analytics_compute(fcl_analytics *an, unsigned what, fcl_diagnostics *d);
/** The inputs of a time-step policy (flowcl/problem.h): max|u_d|, spacings, and max|grad u|
 * (differences of order 4) when with_gradient, all in one pass over u (one kernel, one wait,
 * one MPI_Allreduce). Collective. */
fcl_status fcl_analytics_dt_inputs(fcl_analytics *an, bool with_gradient, fcl_dt_inputs *in);

#ifdef __cplusplus
}
#endif
#endif /* FLOWCL_ANALYTICS_H */
