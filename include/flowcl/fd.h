/** @file
 * flowcl grid operators: centred finite differences of order 2 or 4 on the fields' grids
 * (periodic or not: they read the ghosts, which fcl_fd_apply refreshes first), and custom
 * kernels; one generated and tuned kernel each (codegen layer), planned at creation and only
 * enqueued by fcl_fd_apply / fcl_fd_enqueue.
 *
 *   gradient     g = grad f[comp] (dim components);
 *   divergence   s = div u;
 *   grad norm    s = |grad u|, the Frobenius norm of the velocity gradient at every point;
 *   curl         w = curl u (3D: vector w; 2D: scalar w = d u_y / dx - d u_x / dy);
 *   diffusion    f <- f + nu dt lap(f), explicit Euler, every component; the stability bound
 *                nu dt / dx^2 <= 1 / (2 dim) (order 2) or 3 / (8 dim) (order 4), on the finest
 *                axis, is checked at every apply;
 *   stretching   w <- w + the integral over dt of d w / dt = (w . grad) u with u frozen, 3D;
 *                the gradient formulation (w_j d_j u_i) is a pointwise linear system, integrated
 *                in registers by RK2 (midpoint), RK3 (SSP) or RK4 with one ghost exchange; the
 *                conservative one (d_j (u_i w_j)) takes one kernel per RK stage.
 *
 * Ghost widths: order / 2 on every axis of the fields' topology (the stencil's reach).
 * Functions are Collective over the topology (ghost exchanges). */
#ifndef FLOWCL_FD_H
#define FLOWCL_FD_H

#include "flowcl/field.h"
#include "flowcl/problem.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A grid operator: finite differences or a custom kernel, planned once (opaque; not thread
 * safe). Every fcl_fd_*_create below gives one; destroy it with fcl_fd_destroy. */
typedef struct fcl_fd fcl_fd;

/** w = curl u, centred differences of order 2 or 4 (u and w distinct fields of one topology,
 * precision and queue). */
fcl_status fcl_fd_curl_create(fcl_field *u, fcl_field *w, int order, fcl_fd **out);
/** Explicit diffusion of every component of f with viscosity nu > 0; the scratch copy the
 * stencil needs (one component) comes from pool. */
fcl_status fcl_fd_diffusion_create(fcl_field *f, double nu, int order, fcl_pool *pool,
                                   fcl_fd **out);
/** Vortex stretching of w by u, gradient formulation, differences of order 4, RK order 2-4. */
fcl_status fcl_fd_stretching_create(fcl_field *u, fcl_field *w, int rk_order, fcl_fd **out);
/** The conservative formulation d w_i / dt = d_j (u_i w_j) (equal for divergence-free u and w;
 * conserves the sum of w to rounding on a periodic grid), differences of order 4, RK2
 * (midpoint) or RK3 (SSP). Every stage reads the previous one's neighbours: the stage values
 * (1 or 2 vector fields from pool) have their ghosts exchanged between the stage kernels, so
 * applying it is Collective, with the problem layer too. On GPUs the stages run as plane-tile
 * kernels (a tile of a plane with its halos in local memory, the z neighbours in registers;
 * work-groups of 32 x 8), elsewhere, or where a device does not take them, as generated and
 * tuned kernels; FLOWCL_STRETCHING_KERNEL = auto (default), planes or generated chooses, and
 * another value is an error naming it. Both give the same values to rounding. On a rank that
 * holds every axis whole and periodic, the plane-tile kernels read the periodic images of the
 * interior instead of ghosts: the operator then reads no ghost of u or w (its uses say 0, so a
 * problem exchanges none for it) and fills none of the stage values. */
fcl_status fcl_fd_stretching_conservative_create(fcl_field *u, fcl_field *w, int rk_order,
                                                 fcl_pool *pool, fcl_fd **out);
/** The same with diffusion in the right side: d w_i / dt = d_j (u_i w_j) + nu lap w_i, nu > 0,
 * the Laplacian by fourth-order differences of the values the fluxes read (no pass of its own,
 * no byte more). Explicit: fcl_fd_max_dt gives the stable bound 3 / (8 nu sum_a 1 / dx_a^2),
 * which the problem layer's dt policy takes, and a larger dt (or dt < 0) is refused. Its stages
 * take the kernels as above. */
fcl_status fcl_fd_stretching_diffusion_create(fcl_field *u, fcl_field *w, double nu, int rk_order,
                                              fcl_pool *pool, fcl_fd **out);
/** The first half of a Strang step of `stretching` (made over the mid-step velocity u_mid by
 * either constructor above) that also extrapolates that velocity: its first stage stretches with
 * u_mid = 3/2 u - 1/2 u_prev computed where it reads the velocity, and writes u_mid for its later
 * stages, the step's other operators and the second half (`stretching` itself): one pass over
 * memory less than an extrapolation kernel ahead of it (u and u_prev read, u_mid written in the
 * stage that reads w). It shares the stage values of `stretching`; either may be destroyed
 * first (the values go with the last of the two). Only where the plane-tile kernels read
 * periodic images (a GPU, FLOWCL_STRETCHING_KERNEL not generated, one rank holding every axis,
 * all periodic): elsewhere FCL_ERR_NOT_SUPPORTED, and an extrapolation kernel
 * (fcl_fd_kernel_create) ahead of `stretching` does the same. u, u_prev, u_mid and w are four
 * fields of one topology, precision and queue. */
fcl_status fcl_fd_stretching_extrapolated_create(fcl_field *u, fcl_field *u_prev,
                                                 fcl_fd *stretching, fcl_fd **out);

/** g = grad f[comp], order 2 or 4 (g: dim components). */
fcl_status fcl_fd_gradient_create(fcl_field *f, int comp, fcl_field *g, int order, fcl_fd **out);
/** s = div u (u: dim components, s: scalar). */
fcl_status fcl_fd_divergence_create(fcl_field *u, fcl_field *s, int order, fcl_fd **out);
/** s = sqrt(sum_ij (d_j u_i)^2) (u: dim components, s: scalar). */
fcl_status fcl_fd_gradient_norm_create(fcl_field *u, fcl_field *s, int order, fcl_fd **out);

/** An array of a custom kernel: a field component under a name, read up to `ghosts` points
 * away from the interior point. */
typedef struct {
  const char *name; /**< the array's name in the instructions */
  fcl_field *field; /**< the field (must outlive the operator) */
  int comp;         /**< its component */
  int ghosts;       /**< how far from the interior point it is read (0: the point only) */
} fcl_fd_binding;

/** A custom kernel over the interior of the bound fields (one topology, precision and queue):
 * instructions in the codegen syntax (flowcl/codegen.h) with the inames k, j, i of the
 * interior point, bound arrays indexed relative to it, "a[k, j, i + 1]" (offsets are integers
 * within the binding's ghosts; 2D fields use k = 0), and the scalars dt (fcl_fd_apply's), t (the
 * time at the start of the step) and step_index (its index, a 64-bit integer; not "step",
 * OpenCL C's step() stays callable), which the problem
 * layer sets before every call (fcl_fd_enqueue_step). E.g.
 *   s[k, j, i] = sqrt(w0[k, j, i] * w0[k, j, i] + w1[k, j, i] * w1[k, j, i])
 * Instructions run in the order of their dependencies, not of the text: an instruction that
 * reads an array another one writes runs after that write (the codegen rule). To read a value
 * before overwriting it, say so: "e[k, j, i] = p[k, j, i]  {id=r, dep=}" then
 * "p[k, j, i] = u[k, j, i]  {dep=r}".
 * What is written, and read, is found from the instructions. bytes_per_point: bytes moved per
 * interior point, for bandwidth statistics. The name (copied) names the operator; its kernel is
 * the name with non-alphanumerics replaced by '_'. Errors name the offending subscript or
 * instruction. A custom kernel is reversible: it accepts a dt < 0 (what it computes with it is
 * the caller's to judge). */
fcl_status fcl_fd_kernel_create(const char *name, size_t nbindings, const fcl_fd_binding *bindings,
                                const char *instructions, double bytes_per_point, fcl_fd **out);

/** Most named scalars of a custom kernel. */
#define FCL_FD_MAX_SCALARS 16
/** The same with the caller's own named scalars (in the fields' precision), e.g. amplitudes or
 * periods that change between calls: scalars[0 .. nscalars - 1] are names (letters, digits,
 * '_'; not i, j, k, dt, t, step_index nor a binding's) that the instructions use like dt,
 *   v[k, j, i] = omega * cos(3.141592653589793 * t / period) * x[k, j, i]
 * Set them with fcl_fd_set_scalar before a call (0 until set); the kernel is compiled once. */
fcl_status fcl_fd_kernel_create_with_scalars(const char *name, size_t nbindings,
                                             const fcl_fd_binding *bindings, size_t nscalars,
                                             const char *const *scalars, const char *instructions,
                                             double bytes_per_point, fcl_fd **out);
/** Set a scalar of a custom kernel for the next calls: one of its own, or t or step_index (which
 * fcl_fd_enqueue_step sets from the time loop). Unknown names: FCL_ERR_NOT_FOUND listing the
 * operator's scalars. Non-finite values are refused. Allocates nothing, builds nothing. */
fcl_status fcl_fd_set_scalar(fcl_fd *op, const char *name, double value);

/** Apply over dt (curl ignores it). Refreshes the ghosts of the fields read with ghosts, then
 * enqueues the kernels on the fields' queue. A dt < 0 integrates backward where the operator is
 * reversible (stretching, custom kernels) and is refused by explicit diffusion, which is not.
 * Collective. */
fcl_status fcl_fd_apply(fcl_fd *op, double dt);
/** The same without the ghost refresh: the caller guarantees the ghosts are current (the
 * problem layer's entry). Not collective, except for operators that say otherwise. */
fcl_status fcl_fd_enqueue(fcl_fd *op, double dt);
/** fcl_fd_enqueue with the time loop's step: sets a custom kernel's t and step_index first (the
 * problem layer's apply). */
fcl_status fcl_fd_enqueue_step(fcl_fd *op, const fcl_step_info *info);
/** The operator's description for a problem (flowcl/problem.h): its fields and ghost widths,
 * fcl_fd_enqueue as apply. op must outlive the problem. */
fcl_status fcl_fd_operator(fcl_fd *op, fcl_operator *out);
void fcl_fd_destroy(fcl_fd **op); /**< accepts NULL */

/** The operator's kernels (statistics: time and bytes). */
fcl_launcher *fcl_fd_launcher(const fcl_fd *op);
/** Largest stable dt of a diffusion operator (infinity for the others). */
double fcl_fd_max_dt(const fcl_fd *op);

#ifdef __cplusplus
}
#endif
#endif /* FLOWCL_FD_H */
