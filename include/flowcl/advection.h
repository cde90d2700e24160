/** @file
 * flowcl advection: the remeshed particle method, one direction at a time.
 *
 * A directional substep along axis d over a time h puts one particle on every grid point of
 * every line along d, pushes it with the velocity component u_d (frozen over the substep),
 * interpolated along the line, with a Runge-Kutta scheme of order 2, 3 or 4, and remeshes the
 * particle's values onto the grid with a Lambda_{p,r} kernel (Cottet, Etancelin, Perignon,
 * Picard, ESAIM: M2AN 48, 2014): piecewise polynomials of degree 2r + 1 on the support
 * [-(p/2 + 1), p/2 + 1], interpolating, C^r, conserving the moments 0..p (their coefficients
 * are derived by tools/derive_remesh_formulas.py). Lambda_{2,1} is Monaghan's M'4.
 *
 * Remeshing is computed as a gather: every grid point sums the contributions of the particles
 * that can reach it (at most max_cfl points away plus the kernel's support), each weighted by
 * the kernel at its distance. That is the same sum the scatter of the classical method forms,
 * without atomics and in a fixed order, so a run repeated on the same device and ranks gives
 * the same bits. Across rank counts the results agree to rounding, not bitwise: an axis split
 * over ranks and one held whole run different kernels (ghosts or wrap-around), which the
 * compiler may round differently; the tests hold 2 and 4 ranks within 1e-13 of one rank
 * (values of order 1, doubles). Every advected component of every field shares one particle
 * push.
 * Particles reaching into a neighbour rank are handled the same way: along an axis split over
 * ranks, the kernel reads the velocity and the advected values in the ghosts, which hold the
 * neighbour's particles (one ghost exchange before the substep replaces the accumulation of
 * remeshed ghosts onto their owners). Along a periodic axis held whole by the rank, the line
 * wraps around in local memory and no ghosts are needed.
 * Walls are handled the same way: the ghosts beyond a wall hold the mirror images of the
 * particles next to it (each component with its own parity, fcl_field_set_component_bc), pushed
 * by the mirrored velocity, so a substep is the periodic one of the mirror image restricted to
 * the domain: the order of the scheme holds up to the wall, and for a component even about the
 * walls (Neumann) the trapezoidal sum (wall points weighing half) is conserved to rounding
 * (tests/operators/test_advection_mpi.c). The velocity's normal component must be Dirichlet at
 * each wall (no flow through it), else FCL_ERR_INVALID_ARGUMENT at creation and at each step; a
 * walled axis needs the ghosts of a split one.
 *
 * Kernels are generated with the codegen layer (one work-group per tile of lines, the lines of
 * velocity, displacements and values in local memory) for the fields' precision, and tuned
 * (fcl_tune, effort from FLOWCL_TUNE) over the tile width and the work-items per line.
 *
 * A substep is only valid while no particle moves more than max_cfl grid points:
 * fcl_advection_step checks dt max|u_d| / dx_d against it first and fails with
 * FCL_ERR_INVALID_ARGUMENT naming the step, the axis and the values, touching nothing (with
 * FCL_CFL_CHECK_DEFERRED the check comes cfl_lag steps later: see there). (The kernels also
 * clamp every displacement to max_cfl, so a call that skips the check cannot read outside the
 * lines.) */
#ifndef FLOWCL_ADVECTION_H
#define FLOWCL_ADVECTION_H

#include "flowcl/field.h"
#include "flowcl/problem.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The remeshing kernel Lambda_{p,r} (the file comment says what p and r are). */
typedef enum {
  FCL_REMESH_L2_1, /**< Lambda_{2,1} = M'4, support 4 */
  FCL_REMESH_L2_2, /**< Lambda_{2,2}, support 4, C^2 */
  FCL_REMESH_L4_2, /**< Lambda_{4,2}, support 6 */
  FCL_REMESH_L6_4, /**< Lambda_{6,4}, support 8 */
  FCL_REMESH_L8_4  /**< Lambda_{8,4}, support 10 */
} fcl_remesh_formula;

/** "L2_1", ... ; NULL for an unknown value. */
const char *fcl_remesh_formula_name(fcl_remesh_formula formula);
/** Parse "L2_1", "l4_2", "M4'"...; anything else is an error listing the names. */
fcl_status fcl_remesh_formula_parse(const char *text, fcl_remesh_formula *formula);

/** How the velocity is interpolated along a line at a particle. */
typedef enum {
  FCL_INTERP_LINEAR, /**< velocity interpolated linearly between grid points */
  FCL_INTERP_KERNEL  /**< with the remeshing kernel itself (its order) */
} fcl_interp;

/** The order of the directional substeps of a step. */
typedef enum {
  FCL_SPLIT_STRANG,      /**< X(dt/2) Y(dt/2) Z(dt) Y(dt/2) X(dt/2): second order */
  FCL_SPLIT_FIRST_ORDER, /**< X(dt) Y(dt) Z(dt) */
  /** X(dt) Y(dt) Z(dt) on even steps, Z(dt) Y(dt) X(dt) on odd ones: the first-order errors of
   * a pair of steps cancel, so second order over a run, with 3 substeps where Strang takes 5.
   * The parity is the problem's step index (fcl_step_info.step: a restart keeps it), or the
   * count of fcl_advection_step calls made on the object. */
  FCL_SPLIT_ALTERNATING
} fcl_splitting;

/** How fcl_advection_step learns max|u_d| for its CFL check (the time loop's adaptive dt gives it
 * the bound it measured, and then none of these runs). */
typedef enum {
  /** A reduction of every velocity component before the step: one host wait and one
   * MPI_Allreduce per step. */
  FCL_CFL_CHECK_NOW,
  /** Without waiting for the step's own reduction: each step starts a reduction of the velocity
   * it starts from, and checks the one started cfl_lag steps earlier (the host waits for it,
   * which also bounds how far the host runs ahead of the device to cfl_lag steps). A violation
   * is therefore reported at most cfl_lag steps late, naming the step that broke the bound;
   * the steps in between have run (the kernels clamp every displacement, so nothing is read out
   * of bounds, but their values are wrong). fcl_advection_settle checks every step still
   * pending: the problem layer calls it before a diagnostics, output or checkpoint callback
   * and before fcl_simulation_run returns, so no violation goes unreported. */
  FCL_CFL_CHECK_DEFERRED,
  /** None: velocity_bound, the user's statement that max|u_d| <= velocity_bound on every axis,
   * is checked against instead. A bound below the true maximum voids the check. */
  FCL_CFL_CHECK_BOUND
} fcl_cfl_check;

/** How the substeps along a strided axis (y, z: lines whose points are rows or planes apart)
 * are computed. */
typedef enum {
  /** FLOWCL_ADVECTION_STRIDED names tiles or walk; unset or auto: walk on GPUs in 3D, tiles
   * on other devices and in 2D. */
  FCL_ADV_STRIDED_AUTO,
  /** A work-group holds a tile of adjacent lines (or segments of them) in local memory. */
  FCL_ADV_STRIDED_TILES,
  /** Each work-item walks one line (or a segment of it) with the values its points need in
   * registers, adjacent work-items on adjacent lines: a work-group reads whole rows, where a
   * tile reads the few adjacent lines local memory holds. Where it does not apply, tiles: more
   * than 8 components per kernel, a reach whose windows pass 128 values (long max_cfl or
   * formulas), a device or compiled kernel without work-groups of 128. */
  FCL_ADV_STRIDED_WALK
} fcl_adv_strided;

/** How an advection is made (fcl_advection_default_options, then changes; NULL options to
 * fcl_advection_create: the defaults). */
typedef struct {
  fcl_remesh_formula formula; /**< the remeshing kernel */
  int rk_order;               /**< 2, 3 or 4 (0: 2) */
  fcl_interp interp;          /**< the velocity's interpolation */
  fcl_splitting splitting;    /**< the substeps of a step */
  double max_cfl;             /**< largest dt max|u_d| / dx_d a step may take (0: 1) */
  fcl_cfl_check cfl_check;    /**< default FCL_CFL_CHECK_NOW */
  double velocity_bound;      /**< > 0 with FCL_CFL_CHECK_BOUND, ignored otherwise */
  /** Points of a rank's line one work-group remeshes at most: the line is halved while longer
   * and even (0: halved only while a tile of lines does not fit the device's local memory,
   * down to 64 points). Each segment is read with its halos, copied aside first (an array of
   * 2 (S + C) points per segment and line, per component and axis); every point sums the same
   * particles, and shorter segments read more halo. */
  int64_t max_segment;
  fcl_adv_strided strided; /**< default FCL_ADV_STRIDED_AUTO */
  /** FCL_CFL_CHECK_DEFERRED: how many steps late a violation is reported at most, from 1 to
   * FCL_CFL_MAX_LAG (0: 2); ignored by the other checks. */
  int cfl_lag;
} fcl_advection_options;

/** Largest fcl_advection_options.cfl_lag. */
#define FCL_CFL_MAX_LAG 8

/** Defaults: Lambda_{4,2}, RK2, linear interpolation, Strang splitting, max_cfl 1. */
fcl_advection_options fcl_advection_default_options(void);

/** A planned advection of fields by a velocity (opaque; not thread safe). */
typedef struct fcl_advection fcl_advection;

/** Plan the advection of nfields fields (every component of each) by velocity (dim components),
 * all on one topology, precision and queue. Every axis must be periodic; an axis split over
 * ranks needs ghosts of at least fcl_advection_ghosts_needed on it. Generates, builds and
 * tunes the kernels; the segments' halo buffers, where lines are cut, come from the velocity's
 * pool (fcl_field_pool). The fields must outlive the operator. Not collective (the tuner runs per
 * rank); fails on every rank alike for the same input. Destroy *out with
 * fcl_advection_destroy. */
fcl_status fcl_advection_create(fcl_field *velocity, int nfields, fcl_field *const *fields,
                                const fcl_advection_options *options, fcl_advection **out);
void fcl_advection_destroy(fcl_advection **adv); /**< accepts NULL */

/** Ghost width an axis split over ranks needs for these options (the velocity's reach). */
int fcl_advection_ghosts_needed(const fcl_advection_options *options);

/** One split step over dt (the splitting of the options), after the CFL check the options
 * choose (cfl_check). Enqueued on the fields' queue; with FCL_CFL_CHECK_NOW it waits for the
 * velocity's reduction (one host wait); with FCL_CFL_CHECK_DEFERRED it waits only for the
 * reduction of the step cfl_lag steps earlier (no wait while the device keeps up). Errors name
 * the step: fcl_step_info.step in a problem, otherwise the count of earlier step calls on adv
 * (0 for the first). Collective. */
fcl_status fcl_advection_step(fcl_advection *adv, double dt);
/** FCL_CFL_CHECK_DEFERRED: wait for the reductions of the steps not yet checked and check them,
 * oldest first; the first violation is the error (it names its step), and every pending check
 * is consumed either way. Nothing pending (or another cfl_check): FCL_OK at once. A check still
 * pending when adv is destroyed is lost: settle after the last step. Collective. */
fcl_status fcl_advection_settle(fcl_advection *adv);
/** The same with the velocity bound known by the caller (umax[d] >= max|u_d|, e.g. from the
 * adaptive time step's reductions): no reduction, nothing blocks. A bound below the true
 * maximum voids the check (the kernels still clamp). */
fcl_status fcl_advection_step_bounded(fcl_advection *adv, double dt, const double *umax);
/** One directional substep along axis over dt, without the CFL check (the kernels clamp).
 * Along an axis split over ranks it first exchanges the ghosts of the velocity and of the
 * fields (Collective then; else not collective). */
fcl_status fcl_advection_direction(fcl_advection *adv, int axis, double dt);

/** The launcher of a direction (statistics: time and bytes of its kernels). */
fcl_launcher *fcl_advection_launcher(const fcl_advection *adv, int axis);
/** Bytes the kernels of one split step read and write (for effective bandwidth). */
double fcl_advection_step_bytes(const fcl_advection *adv);

/** The operator's description for a problem (flowcl/problem.h): reads the velocity, reads and
 * writes the advected fields; each step is fcl_advection_step_bounded with the time loop's
 * measured velocity bound when it has one, else fcl_advection_step; its settle callback is
 * fcl_advection_settle. The exchanges between
 * directional substeps stay inside the operator (they are part of the splitting). adv must
 * outlive the problem. */
fcl_status fcl_advection_operator(fcl_advection *adv, fcl_operator *out);

#ifdef __cplusplus
}
#endif
#endif /* FLOWCL_ADVECTION_H */
