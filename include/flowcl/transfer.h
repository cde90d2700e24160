/** @file
 * flowcl grid transfers: a field's values carried to the same domain on a grid r times finer
 * (interpolation) or coarser (restriction), for multi-scale problems: a scalar on a finer grid
 * than the velocity that advects it (the velocity interpolated to the scalar's grid), restricted
 * back where a coarse operator needs it (a buoyancy source). Planned once (FFTW style: create,
 * then apply as often as needed).
 *
 * Grids (field.h): the fine domain is the coarse one with every axis refined by one factor r
 * (2 to 8): N points become r N on a periodic axis and r (N - 1) + 1 on a bounded one, so fine
 * point r g is coarse point g (fcl_domain_refine gives the fine domain).
 *
 * Interpolation (coarse to fine) is the tensor product of cubic Lagrange interpolants through
 * the 4 coarse points around each fine one: fourth order, exact at the coarse points, a cubic
 * polynomial reproduced exactly. Restriction (fine to coarse) weighs the fine points r g + m,
 * |m| < r, by (r - |m|) / r^2 per axis (full weighting): second order (a mode of wavenumber k
 * is multiplied by (sin(k h r / 2) / (r sin(k h / 2)))^2 per axis, h the fine spacing), a
 * periodic field's mean kept to rounding, the fine grid's Nyquist mode removed for even r.
 * Near a wall both read the source's mirror ghosts (field.h): values consistent with the
 * component's condition (an odd, Dirichlet, component interpolates to 0 on the wall).
 *
 * Ghosts: the source field's topology needs ghost width 2 on every axis to interpolate from it,
 * r - 1 to restrict from it. The two fields must share their communicator's ranks and their
 * decomposition's process grid; each rank's destination points must lie within its source
 * points and ghosts (true when every process count divides the coarse points of its axis,
 * checked at creation). Functions are Collective over the topology (ghost exchanges). */
#ifndef FLOWCL_TRANSFER_H
#define FLOWCL_TRANSFER_H

#include "flowcl/field.h"
#include "flowcl/problem.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A planned transfer from one field to another (opaque; not thread safe). */
typedef struct fcl_transfer fcl_transfer;

/** Plan dst = from's values on dst's grid: interpolation when dst's grid is finer, restriction
 * when it is coarser. Errors (FCL_ERR_INVALID_ARGUMENT, naming the fields): from and dst the
 * same field; a different number of components, precision, context or queue; domains that are
 * not one a refinement of the other by one factor 2 to 8 on every axis (origin, length and
 * conditions equal, per component too); different ranks or process grids; too few ghosts on
 * from's topology; a rank whose points the source does not cover (the verdict is the same on
 * every rank). Both fields must outlive the transfer. Collective. */
fcl_status fcl_transfer_create(fcl_field *from, fcl_field *dst, fcl_transfer **out);
/** The refinement factor r, and whether the transfer interpolates (to a finer grid). @{ */
int fcl_transfer_factor(const fcl_transfer *t);
bool fcl_transfer_interpolates(const fcl_transfer *t);
/** @} */
/** Refresh from's ghosts, then enqueue the transfer of every component on dst's queue.
 * Collective. */
fcl_status fcl_transfer_apply(fcl_transfer *t);
/** The transfer as a problem operator (fcl_problem_add_operator): reads from with its ghosts
 * (the problem exchanges them), writes dst. */
fcl_status fcl_transfer_operator(fcl_transfer *t, fcl_operator *out);
/** Accepts NULL; sets *t = NULL. */
void fcl_transfer_destroy(fcl_transfer **t);

#ifdef __cplusplus
}
#endif

#endif /* FLOWCL_TRANSFER_H */
