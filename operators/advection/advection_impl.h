/* Internal state of the advection operator (operators/advection). */
#ifndef FLOWCL_ADVECTION_IMPL_H
#define FLOWCL_ADVECTION_IMPL_H

#include "flowcl/advection.h"
#include "remesh_formulas.h"
#include "str.h"

enum { FCL__ADV_MAX_COMPS = 64 };

/* The reach of the kernels along a line, in grid points. */
typedef struct {
  int support; /* S: the remeshing kernel's half-width */
  int cfl;     /* C: ceil(max_cfl), the farthest a particle moves */
  int interp;  /* I: points beyond a position the interpolation reads (1 linear, S kernel) */
  int hp;      /* particles a point gathers from on each side: S + C */
  int hu;      /* velocity points read beyond the line on each side: S + 2 C + I */
} fcl__adv_reach;

fcl__adv_reach fcl__adv_reach_of(const fcl_advection_options *opt);

/* What one directional kernel is generated for. */
typedef struct {
  int axis;
  int64_t n[3]; /* local interior points per axis */
  size_t padded[3];
  int origin[3]; /* interior point 0 in the padded storage (fcl_topology_origin) */
  bool wrap;     /* periodic axis held whole: the line wraps; else read the ghosts */
  fcl_dtype dtype;
  const fcl__remesh_formula *formula;
  fcl_advection_options opt;
  fcl__adv_reach reach;
  int first_comp, ncomp; /* arrays q<first_comp> .. q<first_comp + ncomp - 1> */
  int64_t seg; /* points of a line a work-group remeshes (a divisor of n[axis]); 0: whole lines */
} fcl__adv_kernel_spec;

/* v as a literal of dtype's precision, in buf. */
const char *fcl__adv_lit(char buf[40], double v, fcl_dtype dtype);
/* Lambda_{p,r}(x) as an expression of x, piecewise in |x|: only the pieces |x| in [lo, hi] can
 * reach are tested (0 beyond the support). */
void fcl__adv_weight_expr(fcl__str *t, const fcl__adv_kernel_spec *s, int lo, int hi);

/* Generate, tune and build the kernel of spec on queue's device (launcher parameters: u,
 * q<c>..., cdt = h / dx). Where it cuts the lines in segments, *halo (else NULL) is the kernel
 * to run before it, copying the segments' halos into arrays h<c> of *halo_elements each
 * (parameters q<c>, h<c>), which the remeshing kernel then reads too. */
fcl_status fcl__adv_kernel_build(const fcl__adv_kernel_spec *spec, fcl_context *context,
                                 fcl_queue *queue, fcl_launcher **out, fcl_launcher **halo,
                                 size_t *halo_elements);
/* The kernel copying the halos of spec's segments (s->seg points each) into arrays h<c> of
 * *elements each, [b][sg * 2 hp + k][a] (k < hp: the hp points before segment sg, the others
 * after it), which the remeshing kernel reads instead of its neighbours' points. */
fcl_status fcl__adv_halo_build(const fcl__adv_kernel_spec *spec, fcl_context *context,
                               fcl_queue *queue, fcl_launcher **out, size_t *elements);
/* The walking kernel of spec along a strided axis (advection_walk.c), as fcl__adv_kernel_build
 * gives: *out, with *halo where it cuts the lines in segments. FCL_ERR_NOT_SUPPORTED where it
 * does not apply (more than 8 components, windows over 128 values or a text too long, segments
 * shorter than the reach, no work-groups of 128 on the device or for the compiled kernel). */
fcl_status fcl__adv_walk_build(const fcl__adv_kernel_spec *spec, fcl_context *context,
                               fcl_queue *queue, fcl_launcher **out, fcl_launcher **halo,
                               size_t *halo_elements);
/* Whether a tile of `tile` lines of spec fits `local` bytes of local memory, in segments if
 * need be. */
bool fcl__adv_fits(const fcl__adv_kernel_spec *spec, int tile, bool shared, size_t local);

/* A step whose velocity bound is being reduced (FCL_CFL_CHECK_DEFERRED) or reduced now. */
typedef struct {
  fcl_reduction *umax; /* max|u_d| of the velocity the step started from */
  double dt;           /* the step's dt and index */
  int64_t step;
} fcl__adv_pending;

struct fcl_advection {
  fcl_field *velocity;
  int nfields;
  fcl_field **fields;
  int ncomp; /* advected components in all */
  int dim;
  fcl_advection_options opt;
  fcl__adv_reach reach;
  bool wrap[3];
  double dx[3];
  fcl_launcher *dir[3]; /* per axis: list of the kernels (chunks of components) */
  fcl_param_set *params[3];
  double bytes[3]; /* per substep along the axis */
  /* max|u_d| for the CFL check, made on first use: FCL_CFL_CHECK_NOW uses slot 0,
   * FCL_CFL_CHECK_DEFERRED a ring of cfl_lag slots, one per step not yet checked */
  fcl__adv_pending pending[FCL_CFL_MAX_LAG];
  int64_t deferred;       /* deferred checks started: the next step's slot is deferred % cfl_lag */
  int64_t last;           /* the index of the last step a deferred check started for */
  int64_t calls;          /* split steps taken */
  bool problem_refreshes; /* as a problem's operator: the problem keeps the velocity's ghosts */
  fcl_array *halo[3][FCL__ADV_MAX_COMPS]; /* per axis cut in segments: component c's halos */
};

#endif
