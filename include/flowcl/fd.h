/* flowcl finite-difference operators: centred differences of order 2 or 4 on the fields' grids
 * (periodic or not: they read the ghosts, which every apply refreshes first), one generated and
 * tuned kernel each (codegen layer), planned at creation and only enqueued by fcl_fd_apply.
 *
 *   curl         w = curl u (3D: vector w; 2D: scalar w = d u_y / dx - d u_x / dy);
 *   diffusion    f <- f + nu dt lap(f), explicit Euler, every component; the stability bound
 *                nu dt / dx^2 <= 1 / (2 dim) (order 2) or 3 / (8 dim) (order 4), on the finest
 *                axis, is checked at every apply;
 *   stretching   w <- w + the integral over dt of d w / dt = (w . grad) u with u frozen, 3D;
 *                the gradient formulation (w_j d_j u_i) is a pointwise linear system, integrated
 *                in registers by RK2 (midpoint), RK3 (SSP) or RK4 with one ghost exchange.
 *
 * Ghost widths: order / 2 on every axis of the fields' topology (the stencil's reach).
 * Functions are Collective over the topology (ghost exchanges). */
#ifndef FLOWCL_FD_H
#define FLOWCL_FD_H

#include "flowcl/field.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fcl_fd fcl_fd;

/* w = curl u, centred differences of order 2 or 4 (u and w distinct fields of one topology,
 * precision and queue). */
fcl_status fcl_fd_curl_create(fcl_field *u, fcl_field *w, int order, fcl_fd **out);
/* Explicit diffusion of every component of f with viscosity nu > 0; the scratch copy the
 * stencil needs (one component) comes from pool. */
fcl_status fcl_fd_diffusion_create(fcl_field *f, double nu, int order, fcl_pool *pool,
                                   fcl_fd **out);
/* Vortex stretching of w by u, gradient formulation, differences of order 4, RK order 2-4. */
fcl_status fcl_fd_stretching_create(fcl_field *u, fcl_field *w, int rk_order, fcl_fd **out);

/* Apply over dt (curl ignores it). Refreshes the input's ghosts, then enqueues the kernels on
 * the fields' queue. Collective. */
fcl_status fcl_fd_apply(fcl_fd *op, double dt);
void fcl_fd_destroy(fcl_fd **op); /* accepts NULL */

/* The operator's kernels (statistics: time and bytes). */
fcl_launcher *fcl_fd_launcher(const fcl_fd *op);
/* Largest stable dt of a diffusion operator (infinity for the others). */
double fcl_fd_max_dt(const fcl_fd *op);

#ifdef __cplusplus
}
#endif
#endif /* FLOWCL_FD_H */
