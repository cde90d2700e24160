/* Statistics of the velocity, and of the vorticity, in one pass on the device (kernels/
 * analytics.cl field_stats): max |u_c| per component and max |grad u| (differences of order 4)
 * for the dt measure; with the vorticity, also the energy, the enstrophy, max |w| and the
 * divergence's norm. Partials per work-group folded on the host, reduced over the ranks.
 * Internal to operators/analytics (which runs it on GPUs). */
#ifndef FLOWCL_ONE_PASS_H
#define FLOWCL_ONE_PASS_H

#include "flowcl/analytics.h"

typedef struct fcl__one_pass fcl__one_pass;

/* For u (as many components as the domain's dimensions, 2 ghosts per axis) and w (NULL: the
 * dt measure's maxima only; else 3 components in 3D, 1 in 2D, on u's topology and precision);
 * the partials' buffer from pool. */
fcl_status fcl__one_pass_create(fcl_field *u, fcl_field *w, fcl_pool *pool, fcl__one_pass **out);
/* Exchange u's ghosts, run the kernel, wait for its partials: d->umax (0 past the dimension),
 * d->max_grad_u and, with w, d->energy, d->enstrophy, d->max_vorticity and d->divergence as
 * fcl_analytics_compute defines them. Collective. */
fcl_status fcl__one_pass_measure(fcl__one_pass *s, fcl_diagnostics *d);
void fcl__one_pass_destroy(fcl__one_pass **s);

#endif
