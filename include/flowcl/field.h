/** @file
 * flowcl fields: a domain, its MPI cartesian decomposition, and discrete fields living on one
 * OpenCL device per rank, kept consistent by ghost exchanges.
 *
 * Axes are numbered x = 0 (contiguous), y = 1, z = 2. A field's local storage is C-ordered with
 * x fastest over the local grid, its ghosts and a padding: interior point (i, j, k) is element
 * ((k + oz) * py + j + oy) * px + i + ox, with the origin o (fcl_topology_origin) and the padded
 * extents p = n + 2 o. The origin is the ghost width, except along x where rows start aligned
 * (a multiple of 32 elements) when the local rows are at least 256 points long: a GPU then loads
 * each row's interior in whole memory transactions. FLOWCL_ROW_ALIGN=on aligns wherever x has
 * ghosts, off never (default auto). The ghost layers next to the interior (the ghost width) are
 * what exchanges fill; the padding beyond them holds nothing. Vector fields keep one buffer per
 * component.
 *
 * Grids: on a periodic axis the N points are x_i = origin + i * L / N (the point at origin + L is
 * point 0 again); on a bounded axis they are x_i = origin + i * L / (N - 1), both walls included.
 * Ghosts beyond a wall mirror the interior about the wall point: u(-m) = u(m) for Neumann,
 * u(-m) = -u(m) for homogeneous Dirichlet (which expects u = 0 on the wall).
 *
 * MPI: functions marked Collective must be called by every rank of the topology's communicator
 * in the same order. Objects are not thread safe. */
#ifndef FLOWCL_FIELD_H
#define FLOWCL_FIELD_H

#include <mpi.h>

#include "flowcl/array.h"
#include "flowcl/launch.h"
#include "flowcl/tune.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Boundary condition of a face of the domain (the file comment says what the ghosts hold). */
typedef enum {
  FCL_BC_PERIODIC,  /**< the axis wraps around (both faces) */
  FCL_BC_DIRICHLET, /**< homogeneous Dirichlet, u = 0 on the wall: ghosts u(-m) = -u(m) */
  FCL_BC_NEUMANN    /**< homogeneous Neumann: ghosts u(-m) = u(m) */
} fcl_bc;

/** The physical domain: a plain description, checked by fcl_domain_check. Axes at or beyond dim
 * are ignored. bc[axis][0] is the lower face, bc[axis][1] the upper one; periodic must be set on
 * both faces of an axis or on neither. */
typedef struct {
  int dim; /**< 1, 2 or 3 */
  /** Coordinates of the lower corner, and the domain's length per axis. @{ */
  double origin[3], length[3];
  /** @} */
  int64_t resolution[3]; /**< grid points per axis */
  fcl_bc bc[3][2];       /**< bc[axis][0] lower face, bc[axis][1] upper face */
} fcl_domain;

/** A periodic box of dim axes, resolution n and length L on every axis. */
fcl_domain fcl_domain_periodic(int dim, int64_t n, double length);
/** FCL_ERR_INVALID_ARGUMENT naming the first wrong entry. */
fcl_status fcl_domain_check(const fcl_domain *domain);
/** Grid spacing along axis. */
double fcl_domain_spacing(const fcl_domain *domain, int axis);
/** The domain on a grid factor times finer along each of its axes: N points become factor N on a
 * periodic axis and factor (N - 1) + 1 on a bounded one, so that the old points stay grid points
 * (fine point factor g is point g). A plain computation: factor >= 1 is the caller's check. */
fcl_domain fcl_domain_refine(const fcl_domain *domain, int factor);

/** A domain decomposed over the ranks of a communicator (opaque; not thread safe). */
typedef struct fcl_topology fcl_topology;

/** Decompose the domain over comm (duplicated; the caller keeps comm). procs[axis] = 0 lets MPI
 * choose (MPI_Dims_create); procs NULL chooses every axis. ghosts[axis] is the ghost width
 * (NULL: none). Uneven divisions are fine: the first N mod P ranks of an axis get one more
 * point. Every rank must own at least as many points as the ghost width of that axis.
 * Collective. Destroy *out with fcl_topology_destroy. */
fcl_status fcl_topology_create(MPI_Comm comm, const fcl_domain *domain, const int *procs,
                               const int *ghosts, fcl_topology **out);
/** Collective (frees the communicator). Accepts NULL. */
void fcl_topology_destroy(fcl_topology **topo);

/** The domain (a copy owned by the topology). */
const fcl_domain *fcl_topology_domain(const fcl_topology *topo);
MPI_Comm fcl_topology_comm(const fcl_topology *topo); /**< the cartesian communicator */
/** This process's rank in the topology's communicator, and the number of ranks. @{ */
int fcl_topology_rank(const fcl_topology *topo);
int fcl_topology_size(const fcl_topology *topo);
/** @} */
/** Per axis (3 entries; axes beyond dim: 1 process, 1 point, offset 0, no ghosts): processes,
 * this rank's coordinates, its points, the global index of its point 0, ghost widths (arrays
 * owned by the topology). @{ */
const int *fcl_topology_procs(const fcl_topology *topo);
const int *fcl_topology_coords(const fcl_topology *topo);
const int64_t *fcl_topology_local_resolution(const fcl_topology *topo);
const int64_t *fcl_topology_offset(const fcl_topology *topo); /**< global index of local point 0 */
const int *fcl_topology_ghosts(const fcl_topology *topo);
/** @} */
/** Per axis, the index in a field's padded storage of local interior point 0 (>= the ghost
 * width; see the file comment). */
const int *fcl_topology_origin(const fcl_topology *topo);
/** The ranks before (side 0) and after (side 1) along axis; MPI_PROC_NULL beyond a wall. */
int fcl_topology_neighbour(const fcl_topology *topo, int axis, int side);
/** Global index of a local interior index along axis (the inverse: local = global - offset,
 * inside when 0 <= local < local resolution). */
int64_t fcl_topology_global_index(const fcl_topology *topo, int axis, int64_t local);
/** The rank owning global point (i, j, k). */
int fcl_topology_owner(const fcl_topology *topo, const int64_t *global);

/** One device per rank: ranks of one node take distinct GPUs in node-local rank order (modulo
 * their number); without a GPU, the first CPU device (PoCL). spec non-NULL and non-empty, else
 * FLOWCL_DEVICE when set, narrows the choice to the devices it matches, among which the ranks
 * spread the same way (fcl_device_select_nth; a spec naming no device is FCL_ERR_NOT_FOUND with
 * the list of devices). Collective. */
fcl_status fcl_topology_select_device(const fcl_topology *topo, const char *spec,
                                      fcl_device_entry *out);
/** The same choice for the ranks of comm, before any topology exists (fcl_device_select_nth with
 * the rank's node-local index). Collective. */
fcl_status fcl_comm_select_device(MPI_Comm comm, const char *spec, fcl_device_entry *out);

/** A discrete field of one or more components on a topology, with ghosts (opaque; not thread
 * safe). */
typedef struct fcl_field fcl_field;

/** A field of ncomp components (1: scalar, dim: vector) of dtype FCL_FLOAT32 or FCL_FLOAT64 on the
 * topology, with storage from pool (a buffer pool of the queue's context), zero-filled. The
 * topology must outlive the field; the storage goes back to pool when the field is destroyed,
 * and the field retains the context and queue. The ghost exchange is planned here (pinned
 * staging, device buffers, list launchers). Collective over the topology's communicator where
 * the topology has several ranks (the exchange's staging window or device link is set up with
 * the peers); not collective on one rank. Destroy *out with fcl_field_destroy. */
fcl_status fcl_field_create(fcl_topology *topo, fcl_context *context, fcl_queue *queue,
                            fcl_pool *pool, const char *name, int ncomp, fcl_dtype dtype,
                            fcl_field **out);
/** Destroy the field (waits for its queue; the storage goes back to the pool); accepts NULL;
 * sets *field = NULL. Collective where fcl_field_create was (the shared staging window or the
 * last plan's device link is freed with the peers), and before MPI_Finalize. */
void fcl_field_destroy(fcl_field **field);

/** The field's name (copied at creation). */
const char *fcl_field_name(const fcl_field *field);
/** Number of components (1: scalar, dim: vector). */
int fcl_field_ncomp(const fcl_field *field);
/** FCL_FLOAT32 or FCL_FLOAT64. */
fcl_dtype fcl_field_dtype(const fcl_field *field);
/** The field's topology (not owned by the field). */
fcl_topology *fcl_field_topology(const fcl_field *field);
fcl_context *fcl_field_context(const fcl_field *field); /**< not retained for the caller */
/** The pool given to fcl_field_create (retained by the field; not for the caller): operators on
 * the field take their work buffers from it. */
fcl_pool *fcl_field_pool(const fcl_field *field);
/** The field's queue (retained by the field; not for the caller). */
fcl_queue *fcl_field_queue(const fcl_field *field);
/** Padded local shape {px, py, pz} (n + 2 origin per axis) and the buffer of a component (owned by the field; NULL for
 * a comp out of range). @{ */
const size_t *fcl_field_padded_shape(const fcl_field *field);
fcl_mem *fcl_field_buffer(const fcl_field *field, int comp);
/** @} */
/** Set the wall conditions of component comp along a bounded axis, lower and upper face (each
 * FCL_BC_DIRICHLET or FCL_BC_NEUMANN; the domain's until set). A vector at a free-slip wall has
 * a Dirichlet normal component and Neumann tangential ones, its curl the reverse; a scalar
 * takes the domain's. The ghost exchanges mirror each component with its own sign, and FFT
 * plans (flowcl/fft.h) extend it with its own parity. The exchanges are planned again: none may
 * be in flight (FCL_ERR_INVALID_STATE); a failure leaves the field as it was. Errors: a
 * periodic axis, a face that is not a wall condition. Collective where fcl_field_create was. */
fcl_status fcl_field_set_component_bc(fcl_field *field, int comp, int axis, fcl_bc lower,
                                      fcl_bc upper);
/** The condition of component comp on face side (0 lower, 1 upper) of axis (FCL_BC_PERIODIC on
 * a periodic axis, and for arguments out of range). */
fcl_bc fcl_field_component_bc(const fcl_field *field, int comp, int axis, int side);

/** Exchange the values of a and b, ghosts included, by exchanging their buffers (no copy): a
 * time level's history (u_prev <- u before u is overwritten) at no cost. Names stay. They must
 * share topology, components, precision, context, queue and component wall conditions
 * (FCL_ERR_INVALID_ARGUMENT). What
 * flowcl built over either field follows at its next use: ghost exchanges, reductions,
 * transposes, the fd, advection and analytics operators; a launcher the caller built on
 * fcl_field_buffer does not (fcl_launcher_rebind). Every rank swaps the same fields; an exchange
 * of either in flight (fcl_field_ghosts_begin without _end) is FCL_ERR_INVALID_STATE; commands
 * already enqueued keep the buffers they were given. */
fcl_status fcl_field_swap(fcl_field *a, fcl_field *b);

/** Linear index in the padded buffer of local interior point (i, j, k). */
size_t fcl_field_index(const fcl_field *field, int64_t i, int64_t j, int64_t k);

/** values[ncomp] at the coordinates x[3] of a grid point (x[axis] = 0 beyond dim). */
typedef void (*fcl_field_init_fn)(void *user, const double *x, double *values);
/** Set the interior from fn at every local grid point (blocking); ghosts are set to 0. Not
 * collective. */
fcl_status fcl_field_init(fcl_field *field, fcl_field_init_fn fn, void *user);
/** Set a component's interior on the device from an OpenCL C expression of the grid point's
 * coordinates x, y, z (e.g. "sin(x) * cos(y)"), with a kernel generated by the codegen layer
 * in the field's precision; ghosts are left as they were. Errors as fcl_field_expr_create's.
 * Not collective; enqueued on the field's queue. */
fcl_status fcl_field_init_expr(fcl_field *field, int comp, const char *expression);

/** An expression compiled once and evaluated many times: the coordinates x, y, z, the time t and
 * the caller's named parameters (in the field's precision), e.g.
 *   "amp * sin(x) * cos(3.141592653589793 * t / period)"  with params {"amp", "period"}.
 * Built for field's layout (topology, precision, padding): it evaluates into any component of
 * any field of that layout. Parameters are 0 until set; setting one allocates and builds
 * nothing, so evaluating with a new t costs a kernel launch and no program build (a per-step
 * velocity or forcing). Names: letters, digits and '_', not x, y, z, t, i, j, k, u; at most
 * FCL_FIELD_EXPR_MAX_PARAMS. fcl_field_init_expr is the one-shot form. */
#define FCL_FIELD_EXPR_MAX_PARAMS 16
/** An expression compiled for a field layout (opaque), as described above. */
typedef struct fcl_field_expr fcl_field_expr;
/** Compile expression with the parameter names params[nparams] for field's layout. An
 * expression naming anything but x, y, z, t, its parameters, OpenCL C's built-in functions and
 * constants (M_PI, INFINITY, ...) is refused with FCL_ERR_INVALID_ARGUMENT quoting the
 * expression, the unknown name and the parameters; one that does not compile otherwise is an
 * error carrying the build log. Destroy *out with fcl_field_expr_destroy. */
fcl_status fcl_field_expr_create(const fcl_field *field, const char *expression, size_t nparams,
                                 const char *const *params, fcl_field_expr **out);
/** Set t or a parameter for the next evaluations; unknown names: FCL_ERR_NOT_FOUND listing them. */
fcl_status fcl_field_expr_set(fcl_field_expr *expr, const char *name, double value);
/** Enqueue field[comp] = the expression on the interior, on the field's queue (no wait; ghosts
 * are left as they were). Not collective. */
fcl_status fcl_field_expr_eval(fcl_field_expr *expr, fcl_field *field, int comp);
/** The launcher of the evaluations (owned by expr, valid until it is destroyed; NULL for NULL):
 * for statistics, e.g. the launcher callback of an fcl_operator whose apply evaluates expr, so
 * that the problem's report shows its device time and bytes. On a profiling queue,
 * fcl_launcher_statistics counts every evaluation with its device time and the bytes it writes,
 * nx * ny * nz local interior points times the element size (it reads no array). */
fcl_launcher *fcl_field_expr_launcher(const fcl_field_expr *expr);
void fcl_field_expr_destroy(fcl_field_expr **expr); /**< accepts NULL */
/** Blocking copies between a component and C-ordered host data of the field's dtype: the local
 * interior (nx * ny * nz elements) or, with ghosts, the whole padded array. Not collective. @{ */
fcl_status fcl_field_read(const fcl_field *field, int comp, bool with_ghosts, void *host);
fcl_status fcl_field_write(fcl_field *field, int comp, bool with_ghosts, const void *host);
/** @} */

/** Ghost exchange, split in two for overlap: begin completes every axis but the last and posts
 * the last one's messages; end receives them and unpacks. Axes are chained (x, then y over x's
 * ghosts, then z over both), which fills edges and corners. The leading axes that are periodic
 * and held by one rank are filled on the device by wrapping indices (other periodic axes held
 * by one rank by copies on the device); walls fill their ghosts by mirroring. On return, the
 * messages are complete and the device work is enqueued on the field's queue: what is enqueued
 * after it there sees the ghosts. When every axis wraps (one rank, periodic) and the queue is
 * in order, the calls do not wait for the queue: finish it before reading the buffer by other
 * means than the field's queue. Nothing is allocated by these calls. Collective. @{ */
fcl_status fcl_field_ghosts_begin(fcl_field *field);
fcl_status fcl_field_ghosts_end(fcl_field *field);
/** @} */
fcl_status fcl_field_ghosts_update(fcl_field *field); /**< begin + end */
/** As fcl_field_ghosts_begin and fcl_field_ghosts_update, without the leading axes that wrap
 * (periodic and held whole by this rank, from x on: x on slabs and pencils, x and y on slabs
 * split along z): their ghosts, and the edges and corners they share with the other axes, are
 * left as they are. For readers that take periodic images along those axes instead of their
 * ghosts (fcl_field_use.periodic_images); fcl_field_ghosts_end ends either begin. On one rank
 * of a periodic box nothing is left to do. Collective. @{ */
fcl_status fcl_field_ghosts_begin_unwrapped(fcl_field *field);
fcl_status fcl_field_ghosts_update_unwrapped(fcl_field *field);
/** @} */
/** The ghosts this rank fills alone, as fcl_field_ghosts_update fills them: those of the axes
 * not split across ranks (wrapped, copied, mirrored). The ghosts of split axes are left as they
 * are, and the edges and corners they share with the others are not valid after it. For
 * operators that compute a field's ghost layers along split axes themselves (redundantly, from
 * wider ghosts of their inputs) and so need no exchange. Never waits for the queue on an
 * in-order queue; not collective. */
fcl_status fcl_field_ghosts_update_local(fcl_field *field);
/** The reverse: every ghost value is added to the point it stands for (its owner's interior; the
 * mirror point behind a wall, with the sign of the boundary condition), axes in reverse order;
 * ghosts are left as they were. What remeshing needs. Collective. */
fcl_status fcl_field_ghosts_accumulate(fcl_field *field);
/** Device-time statistics of the field's ghost exchanges so far, every kind above together: the
 * launches of their kernels and copies on the device (wrapping, mirroring, packing, unpacking,
 * copies to and from host staging), folded as fcl_launcher_statistics folds them, on a
 * profiling queue (FCL_QUEUE_PROFILING; zeros on another). Not counted: the messages between
 * ranks (MPI's, or a device link's), so the exchange's time less these is theirs and the
 * host's. They restart from zero where the exchanges are planned again
 * (fcl_field_set_component_bc). Never blocks; not collective. */
fcl_status fcl_field_ghost_statistics(fcl_field *field, fcl_launch_stats *stats);

/** What a reduction of a component's interior computes. */
typedef enum {
  FCL_REDUCE_MIN,       /**< min u */
  FCL_REDUCE_MAX,       /**< max u */
  FCL_REDUCE_SUM,       /**< sum u */
  FCL_REDUCE_NORM_L2,   /**< sqrt(sum u^2 * cell volume) */
  FCL_REDUCE_NORM_LINF, /**< max |u| */
  FCL_REDUCE_INTEGRAL   /**< sum u * cell volume (periodic: exact for trigonometric data) */
} fcl_reduce_op;
/** Reduce a component's interior over the whole domain: on the device per rank (double
 * accumulation), then MPI_Allreduce. Every rank gets the result. Cell volume: the product of
 * the spacings (walls count for half, trapezoidal rule, on bounded axes). Collective. */
fcl_status fcl_field_reduce(fcl_field *field, int comp, fcl_reduce_op op, double *result);

/** A reduction of every component of a field, made once and run many times: one device pass
 * per component, one host wait and one MPI_Allreduce for all of them (fcl_field_reduce waits
 * and reduces once per component). Between start and finish the host is free: start enqueues
 * the device part on the field's queue; finish waits for it (no wait when it is done already),
 * combines over ranks and writes results[0 .. ncomp - 1]; finish is Collective. One start in
 * flight at a time; the reduction is independent of the field's own (fcl_field_reduce may run
 * meanwhile). The field must outlive it. */
typedef struct fcl_reduction fcl_reduction;
/** A reduction op of every component of field (nothing enqueued yet); destroy *out with
 * fcl_reduction_destroy. Not collective. */
fcl_status fcl_reduction_create(fcl_field *field, fcl_reduce_op op, fcl_reduction **out);
/** Enqueue the device part (no wait); a start already in flight is FCL_ERR_INVALID_STATE. Not
 * collective. */
fcl_status fcl_reduction_start(fcl_reduction *reduction);
/** Wait for the device part, combine over ranks into results[ncomp]; no start in flight is
 * FCL_ERR_INVALID_STATE. Collective. */
fcl_status fcl_reduction_finish(fcl_reduction *reduction, double *results);
/** Whether a start awaits its finish; whether the device has done its part (a finish would not
 * wait). @{ */
bool fcl_reduction_in_flight(const fcl_reduction *reduction);
bool fcl_reduction_done(const fcl_reduction *reduction);
/** @} */
/** Drop a start without its finish (an error path): waits for its reads, keeps no result, and
 * the reduction can start again. Not collective. Accepts NULL. */
void fcl_reduction_cancel(fcl_reduction *reduction);
void fcl_reduction_destroy(
    fcl_reduction **reduction); /**< accepts NULL; waits for a read in flight */

/** Local transpose: dst's axes are src's axes permuted, dst(axis a) = src(axis perm[a]), on the
 * interior of one component, on the device (a generated kernel, tuned by FLOWCL_TUNE). perm is
 * a permutation of {0, .., dim - 1}; dst must be a field of the permuted shape and the same
 * dtype (typically on a topology built for it). Not collective. */
fcl_status fcl_field_transpose(const fcl_field *src, int src_comp, const int *perm, fcl_field *dst,
                               int dst_comp);

/** Copy a component between two fields of one domain on different topologies of the same
 * communicator and context (e.g. blocks to pencils), interiors only, device to device through an
 * all-to-all on the transport FLOWCL_TRANSPORT chooses; returns once dst is written.
 * Collective. */
fcl_status fcl_field_redistribute(const fcl_field *src, int src_comp, fcl_field *dst, int dst_comp);

#ifdef __cplusplus
}
#endif
#endif /* FLOWCL_FIELD_H */
