/* Internal structures of the field layer (src/field). */
#ifndef FLOWCL_FIELD_IMPL_H
#define FLOWCL_FIELD_IMPL_H

#include "comm_impl.h" /* fcl__mpi_error, FCL_MPI_TRY */
#include "flowcl/field.h"

struct fcl_topology {
  fcl_domain domain;
  MPI_Comm comm; /* cartesian, ours */
  int rank, size;
  int procs[3], coords[3], ghosts[3];
  int origin[3]; /* where the interior starts in a field's padded storage (>= ghosts) */
  int neighbour[3][2];
  int64_t local[3], offset[3];
};

/* Rows a reduction work-group takes at a time (kernels/field.cl reduce_stats, REDUCE_ROWS). */
enum { FCL__REDUCE_ROWS = 8 };

/* A ghost exchange plan (ghosts.c). */
typedef struct fcl__ghost_plan fcl__ghost_plan;

struct fcl_field {
  char *name;
  fcl_topology *topo;
  fcl_context *context;
  fcl_queue *queue;
  fcl_pool *pool; /* the storage's at creation; operators' work buffers too */
  int ncomp;
  fcl_dtype dtype;
  size_t itemsize;
  fcl_bc bc[3][3][2]; /* [comp][axis][side]: the domain's, or fcl_field_set_component_bc's */
  size_t padded[3];   /* px, py, pz */
  fcl_array *comp[3];
  fcl_program *program; /* kernels/field.cl for the dtype */
  fcl__ghost_plan *ghosts;
  fcl__ghost_plan *local; /* the ghosts this rank fills alone (no exchange) */
  fcl__ghost_plan *accumulate;
  void *reduce;     /* reduce.c state, made on first use */
  void *transposes; /* transpose.c: launchers writing into this field, made on first use */
};

/* FCL_ERR_INVALID_ARGUMENT unless 0 <= comp < ncomp (pos: the argument's position). */
fcl_status fcl__field_check_comp(const fcl_field *field, int comp, int pos);

/* Per-axis integer helpers. */
static inline size_t fcl__field_count(const int64_t *n) { return (size_t)(n[0] * n[1] * n[2]); }

/* The plan of every ghost (accumulate false, local false), of the ghosts this rank fills alone
 * (local: the axes not split across ranks), or of the accumulation (accumulate true); its
 * device staging from pool. */
fcl_status fcl__ghost_plan_create(fcl_field *field, fcl_pool *pool, bool accumulate, bool local,
                                  fcl__ghost_plan **out);
void fcl__ghost_plan_destroy(fcl__ghost_plan **plan);
/* Whether the plan's exchange was begun and not ended. */
bool fcl__ghost_plan_begun(const fcl__ghost_plan *plan);
/* The plan's launchers read and write now[i] where they used old[i] (fcl_field_swap). */
fcl_status fcl__ghost_plan_rebind(fcl__ghost_plan *plan, size_t n, fcl_mem *const *old,
                                  fcl_mem *const *now);
void fcl__reduce_state_free(void *state);
void fcl__transpose_cache_free(fcl_field *field);

#endif
