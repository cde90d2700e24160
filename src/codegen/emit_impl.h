/* The OpenCL C emitter's private parts, shared by its three files: emit_axes.c (the working
 * copy, hardware axes, loop order), emit_vector.c (which instructions vectorize, aligned vector
 * blocks) and emit.c (printing, the kernel's statements). */
#ifndef FLOWCL_SRC_CODEGEN_EMIT_IMPL_H
#define FLOWCL_SRC_CODEGEN_EMIT_IMPL_H

#include <string.h>

#include "codegen_impl.h"

/* An aligned block of a vectorized access (emit_vector.c). */
struct vblock {
  char *key; /* pointer to the block's first element: "array + linear index" */
  char *name;
  char *guard; /* position test, or NULL */
  fcl_dtype dtype;
};

typedef struct {
  fcl_kbuilder *kb; /* working copy: l.auto resolved, reductions numbered */
  fcl__str out;
  fcl__axes axes;
  size_t *rank; /* per iname: position in the creation order of leaves */
  fcl__prefetch_plan *plans;
  fcl__item *items;
  size_t nitems;
  bool literals_float;
  int depth;
  /* printing a vectorized instruction */
  const char *vec;
  int vec_width;
  int vec_lane;    /* >= 0: print the vector iname as this lane (its lower bound + lane) */
  bool vec_blocks; /* print accesses along it from the aligned blocks below */
  struct vblock *blocks;
  size_t nblocks;
  int next_acc;
  bool complex_used[2]; /* helpers needed: cfloat, cdouble (emit_complex.c) */
} emitter;

static inline const char *type_name(fcl_dtype t) { return fcl_dtype_cl_name(t); }

static inline bool in_list(const char *const *list, size_t n, const char *name) {
  for (size_t i = 0; i < n; ++i)
    if (!strcmp(list[i], name)) return true;
  return false;
}

static inline size_t leaves_of_name(const fcl_kbuilder *kb, const char *name, char **list,
                                    size_t n) {
  fcl__expr v = {.kind = E_VAR, .text = (char *)name};
  fcl__kb_leaf_inames(kb, &v, list, &n, FCL__MAX_LEAVES);
  return n;
}

static inline bool is_hw(const fcl__iname *in) { return in->tag == TAG_G || in->tag == TAG_L; }

/* emit_axes.c */
void fcl__emit_sort_loops(const emitter *em, const char **loops, size_t n,
                          const char *vec_unrolled);
fcl_status fcl__emit_prepare(const fcl_kbuilder *kb, emitter *em);
void fcl__emit_free(emitter *em);

/* emit.c: printing */
void fcl__emit_print(emitter *em, const fcl__expr *e);
void fcl__emit_print_to(emitter *em, fcl__str *out, const fcl__expr *e);
void fcl__emit_print_index(emitter *em, fcl__expr *e);
fcl__expr *fcl__emit_linear_index(const fcl_kbuilder *kb, const fcl__var *v,
                                  const fcl__expr *access);
bool fcl__emit_depends_on(const emitter *em, const fcl__expr *e, const char *leaf);

/* emit_complex.c */
/* Print a node with complex operands or value (false: not such a node, print it as usual). */
bool fcl__emit_complex_node(emitter *em, fcl__str *out, const fcl__expr *e);
/* Print e converted to type t where t is complex and e is real or of the other precision. */
void fcl__emit_print_as(emitter *em, fcl__str *out, const fcl__expr *e, fcl_dtype t);
bool fcl__emit_involves_complex(const emitter *em, const fcl__insn *in);
/* The helper functions the printed code called, before the kernel. */
void fcl__emit_complex_helpers(emitter *em, fcl__str *out);

/* emit_vector.c */
int64_t fcl__emit_vec_width(const emitter *em, const char *v);
bool fcl__emit_block_offset(const emitter *em, const fcl__expr *e, const char *v, int64_t w,
                            int64_t *r, fcl__affine *f);
bool fcl__emit_collect_blocks(emitter *em, const fcl__expr *e, bool lanes);
void fcl__emit_free_blocks(emitter *em);
void fcl__emit_print_block_lanes(emitter *em, const fcl__expr *e);
void fcl__emit_print_pointer(emitter *em, const fcl__expr *e);
bool fcl__emit_guarded_derived(const emitter *em, const fcl__iname *d);
bool fcl__emit_has_guard(const emitter *em, const fcl__iname *d);
bool fcl__emit_can_vectorize(const emitter *em, const fcl__item *it, const char *v, bool *lanes);
void fcl__emit_item_loops(const emitter *em, fcl__item *it, const char *vec_tagged);

#endif
