/* Helpers of the operator tests: periodic boxes of [0, 2 pi)^dim, fields set from analytic
 * functions, and the relative error of a field against an exact solution over all ranks. */
#ifndef FLOWCL_OP_FIELDS_H
#define FLOWCL_OP_FIELDS_H

#include "fcl_test_mpi.h"

#define PI 3.14159265358979323846

typedef void (*values_fn)(const double *x, double *v);
typedef void (*exact_fn)(const double *x, double *v, const void *p);

/* [0, 2 pi)^dim, n points per axis, ghosts on every axis, over MPI_COMM_WORLD. */
fcl_topology *op_box(int dim, int64_t n, int ghosts);
/* A field of the environment's context, set from fn (NULL: zero). */
fcl_field *op_field(fcl_test_mpi_env *e, fcl_topology *t, const char *name, int ncomp,
                    fcl_dtype dtype, values_fn fn);
/* A smooth 3D velocity (not divergence-free) and its gradient g[i][j] = d_j u_i. */
void op_vel3(const double *x, double *v);
void op_vel3_gradient(const double *x, double g[3][3]);
/* max over the grid and components of |f - exact| / max |exact|. Collective. */
double op_rel_error(fcl_field *f, exact_fn exact, const void *p);

#endif
