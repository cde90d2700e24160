/* The time step's inputs in one pass over the velocity (kernels/analytics.cl dt_stats): max |u_c|
 * per component and max |grad u| (differences of order 4), folded on the host and reduced over
 * the ranks in one MPI_Allreduce. Internal to operators/analytics. */
#ifndef FLOWCL_DT_STATS_H
#define FLOWCL_DT_STATS_H

#include "flowcl/field.h"

typedef struct fcl__dt_stats fcl__dt_stats;

/* For u (2 or 3 components, as many as the domain's dimensions, at least 2 ghosts per axis). */
fcl_status fcl__dt_stats_create(fcl_field *u, fcl__dt_stats **out);
/* Exchange u's ghosts, run the kernel, wait for its partials; umax[3] (0 past the dimension)
 * and the largest |grad u| over every rank. Collective. */
fcl_status fcl__dt_stats_measure(fcl__dt_stats *s, double *umax, double *grad_max);
void fcl__dt_stats_destroy(fcl__dt_stats **s);

#endif
