/* Internal state of the finite-difference operators (operators/finite_differences). */
#ifndef FLOWCL_FD_IMPL_H
#define FLOWCL_FD_IMPL_H

#include "flowcl/codegen.h"
#include "flowcl/fd.h"
#include "flowcl/problem.h"
#include "str.h"

/* the scalars every custom kernel has besides dt: the step's time and index */
#define FCL__FD_T "t"
#define FCL__FD_STEP "step_index" /* not "step": OpenCL C has a step() function */

typedef struct {
  char name[32];
  const fcl_field *field; /* the component behind the name */
  int comp;
  fcl_mem *buffer; /* its buffer when last bound (fcl_field_swap changes the field's) */
} fcl__fd_bind;

struct fcl_fd {
  char *name;
  fcl_field *out; /* the field written (its queue, dtype and name) */
  int nuses;      /* the fields read and written, ghost widths read */
  fcl_field_use uses[FCL_OPERATOR_MAX_USES];
  fcl_field *scratch;  /* diffusion: the copy the stencil reads; stretching: stage values */
  fcl_field *scratch2; /* conservative stretching, RK3: the second stage */
  fcl_fd *lender;      /* the operator whose scratch and scratch2 these are (NULL: its own) */
  int borrowers;       /* operators using this one's scratch fields */
  bool released;       /* destroyed while borrowed from: freed with its last borrower */
  /* stretching that extrapolates its velocity: u^n, u_prev, u_mid (NULL: none). Its first stage
   * reads 3/2 u^n - 1/2 u_prev (arrays u, p) and writes it to u_mid (m), the later ones read
   * u_mid (m) */
  fcl_field *extrap[3];
  int order;
  double nu, max_dt;
  fcl_launcher *list; /* copies (diffusion) then the kernels */
  fcl_param_set *params;
  size_t nbinds; /* the arrays of every kernel of the list, by name */
  fcl__fd_bind binds[32];
  const char *dt_param; /* the kernel's time parameter (NULL: none) */
  double dt_scale;      /* dt_param = dt * dt_scale */
  int grow[3];          /* the next kernel also covers this many ghost layers on each side */
  bool irreversible;    /* a dt < 0 is refused (explicit diffusion) */
  /* custom kernels: the step's time "t" and index "step_index", then the user's named scalars */
  size_t nscalars;
  char scalars[FCL_FD_MAX_SCALARS + 2][32];
};

/* An array bound to the kernel: its name in the text and the field component behind it. */
typedef struct {
  const char *name;
  const fcl_field *field;
  int comp;
} fcl__fd_array;

/* The element of array at offset (di, dj, dk) from the interior point (i, j, k). */
void fcl__fd_element(char *buf, size_t size, const char *array, const fcl_field *f, int di, int dj,
                     int dk);
/* d array / d x_axis (order 2 or 4), scaled by 1 / dx, as text. */
void fcl__fd_derivative(char *buf, size_t size, const char *array, const fcl_field *f, int axis,
                        int order);
/* d^2 array / d x_axis^2 (order 2 or 4), scaled by 1 / dx^2, as text. */
void fcl__fd_second_derivative(char *buf, size_t size, const char *array, const fcl_field *f,
                               int axis, int order);
/* The largest stable dt of explicit diffusion with viscosity nu by centred second differences of
 * order 2 or 4 on f's grid, for schemes stable on the negative real axis down to -2 (forward
 * Euler, RK2; RK3 reaches -2.51). */
double fcl__fd_diffusion_max_dt(const fcl_field *f, double nu, int order);
/* Checks shared by the constructors: order 2 or 4, ghosts >= order / 2 on every axis (the
 * message names the field, not an argument number: the extrapolated stretching checks its
 * u_prev, argument 2, with it too). */
fcl_status fcl__fd_check_field(const fcl_field *f, int order);
/* Generate the kernel (arrays over the interior of `shape` grown by op->grow, which it resets;
 * the scalar dt_param if non-NULL and op's scalars; instructions text, whose failure is reported
 * as out of memory), tune it, build it, push it onto op->list and bind the arrays; the scalars
 * start at 0. */
fcl_status fcl__fd_add_kernel(fcl_fd *op, const char *name, const fcl_field *shape, size_t narrays,
                              const fcl__fd_array *arrays, const fcl__str *text, double bytes);
/* Push a built kernel onto op->list (which takes it, also on error) and bind its arrays, named
 * as in arrays, with every kernel's before (a name bound before keeps its buffer: the list's
 * kernels share their parameters, one buffer a name); the scalars restart at 0. */
fcl_status fcl__fd_push_kernel(fcl_fd *op, fcl_launcher *kernel, size_t narrays,
                               const fcl__fd_array *arrays);
/* The axes along which the plane-tile kernels can read periodic images instead of ghosts on t
 * (bit a for axis a; 7 on one rank of a periodic box): periodic and held whole by this rank, at
 * least 2 points. */
unsigned fcl__fd_planes_wraps(const fcl_topology *t);
/* The conservative stretching's stage out = alpha base + beta a + gamma dt F(a) (base NULL when
 * alpha = 0; letters name a, base ('-' for none) and out, as the list's other kernels do) as
 * plane-tile kernel (stretching_planes.c) over the interior grown by op->grow (reset once it is
 * built), bytes its bytes per launch, in *out_launcher.
 * An extrapolating operator's (op->extrap): the stage over u = extrap[0] stretches with
 * 3/2 u - 1/2 extrap[1] and writes it to extrap[2] (arrays u, p, m), a stage over u = extrap[2]
 * names its velocity m.
 * Along the axes of wrap (fcl__fd_planes_wraps, op->grow 0 there) the work-items read the
 * neighbours past a face at their periodic images, along the others the ghosts.
 * FCL_ERR_NOT_SUPPORTED, with no error set and op->grow kept for the generated kernel, where it
 * does not apply: fields of different padded shapes, a grid too small for the last tiles' halo
 * loads to stay inside the arrays (along the axes not wrapped), a device without work-groups
 * of 256 or the local memory of the tiles, a driver that cannot compile it (a warning), a
 * compiled kernel that takes fewer work-items. */
fcl_status fcl__fd_planes_stage(fcl_fd *op, const char *kernel, fcl_field *u, fcl_field *a,
                                fcl_field *base, fcl_field *out, const char *letters, double alpha,
                                double beta, double gamma, unsigned wrap, double bytes,
                                fcl_launcher **out_launcher);
/* Whether a GPU's streamed planes (32 planes of k per work-group, each array's planes carried in
 * registers) would carry some array of the kernel, an array read at several planes of k: tried
 * on a copy, mapped as the search's first GPU work-group shape (64 x 4). Only such a kernel is
 * offered the streamed choice. */
bool fcl__fd_streams_along_k(const fcl_kbuilder *kernel, size_t narrays,
                             const fcl__fd_array *arrays);
/* The checks both stretching forms share: 3D, 3-component u and w, one topology, precision
 * and queue, 2 ghosts. */
fcl_status fcl__fd_check_stretching(const fcl_field *u, const fcl_field *w);
/* A new operator with its list (the caller fills the rest). */
fcl_status fcl__fd_new(const char *name, fcl_fd **out);
/* Record that op reads (ghosts wide) and/or writes field; uses of one field merge. */
fcl_status fcl__fd_use(fcl_fd *op, fcl_field *field, int ghosts, bool read, bool written);
/* The common checks of an input/output pair: distinct, one topology, precision and queue. */
fcl_status fcl__fd_check_pair(const fcl_field *in, const fcl_field *out, const char *what);

#endif
