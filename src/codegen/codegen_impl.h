/* Kernel builder internals shared by the codegen files (not installed).
 *
 * The builder keeps what the user gave, already parsed: expressions are small trees (expr.c),
 * inames carry their bounds and tag, a split iname becomes "derived" (its value is an
 * expression of the two new inames, printed where it is used), instructions keep their parsed
 * left and right sides. Generation (schedule.c, emit.c) works on a read-only builder. */
#ifndef FLOWCL_SRC_CODEGEN_IMPL_H
#define FLOWCL_SRC_CODEGEN_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "flowcl/codegen.h"
#include "str.h"

/* ----- expressions (expr.c) ----- */
typedef enum {
  E_NUM,       /* text: the literal as written */
  E_VAR,       /* text: the name */
  E_UNARY,     /* text: operator; kids[0] */
  E_BINARY,    /* text: operator; kids[0], kids[1] */
  E_TERNARY,   /* kids: cond, then, else */
  E_CALL,      /* text: function name; kids: arguments */
  E_SUBSCRIPT, /* text: array name; kids: indices */
  E_CAST,      /* text: type name; kids[0] */
  E_REDUCE     /* text: "sum", "max" or "min"; iname: the reduction iname; kids[0]: body */
} fcl__expr_kind;

typedef struct fcl__expr {
  fcl__expr_kind kind;
  char *text;
  char *iname;
  struct fcl__expr **kids;
  size_t nkids;
  int id;    /* reductions: accumulator number, set by the emitter */
  char *tag; /* "a$tag[i]", "rule$tag(x)": a tagged array access or rule use (else NULL) */
} fcl__expr;

/* Parse an expression; on failure NULL with *err (static text) and *pos (offset). */
fcl__expr *fcl__expr_parse(const char *text, const char **err, size_t *pos);
/* Parse a prefix of text (stops at an unmatched ',' ')' '}' or the end); *end: where it stopped. */
fcl__expr *fcl__expr_parse_prefix(const char *text, const char **end, const char **err);
fcl__expr *fcl__expr_new(fcl__expr_kind kind, const char *text, size_t nkids);
fcl__expr *fcl__expr_num(int64_t value);
fcl__expr *fcl__expr_binary(const char *op, fcl__expr *a, fcl__expr *b);
fcl__expr *fcl__expr_clone(const fcl__expr *e);
void fcl__expr_free(fcl__expr *e);
/* Replace every variable named name by a copy of value (in place). */
void fcl__expr_substitute(fcl__expr *e, const char *name, const fcl__expr *value);
bool fcl__expr_uses(const fcl__expr *e, const char *name);
bool fcl__expr_is_float_literal(const fcl__expr *e);
/* Fold integer constants, drop "+ 0" and "* 1" (index arithmetic only); returns the new root. */
fcl__expr *fcl__expr_fold(fcl__expr *e);

/* Printing: the callback (may be NULL) may print a node itself and return true (variables that
 * are derived inames, fixed parameters, prefetched arrays, vector loads...). */
typedef bool (*fcl__print_hook)(void *user, fcl__str *out, const fcl__expr *e);
void fcl__expr_print(fcl__str *out, const fcl__expr *e, fcl__print_hook hook, void *user);
/* Plain text of an expression (malloc'd). */
char *fcl__expr_text(const fcl__expr *e);

/* Integer evaluation: lookup(name) gives a variable's value (false: unknown). */
typedef bool (*fcl__lookup)(void *user, const char *name, int64_t *value);
bool fcl__expr_eval(const fcl__expr *e, fcl__lookup lookup, void *user, int64_t *value);

/* Affine forms: constant + sum coef[k] * symbol[k]. */
#define FCL__AFFINE_MAX 24
typedef struct {
  int64_t constant;
  size_t n;
  const char *sym[FCL__AFFINE_MAX];
  int64_t coef[FCL__AFFINE_MAX];
} fcl__affine;
/* expand(name) may replace a variable by an expression (derived inames; NULL: keep). */
typedef const fcl__expr *(*fcl__expand)(void *user, const char *name);
bool fcl__affine_of(const fcl__expr *e, fcl__expand expand, void *user, fcl__affine *out);
int64_t fcl__affine_coef(const fcl__affine *a, const char *sym);
void fcl__affine_add(fcl__affine *a, const char *sym, int64_t coef);

/* ----- the builder ----- */
typedef enum {
  TAG_NONE, /* sequential loop ("for" or untagged) */
  TAG_G,
  TAG_L,
  TAG_L_AUTO,
  TAG_UNR,
  TAG_ILP,
  TAG_VEC
} fcl__tag_kind;

typedef struct {
  char *name;
  fcl__expr *lo, *hi; /* lo <= iname < hi, in the parameters */
  fcl__expr *min;     /* align_iname: the domain's own lower bound, kept as a guard (or NULL) */
  fcl__tag_kind tag;
  int axis;     /* g.N / l.N */
  bool derived; /* split: value = lo + outer * factor + inner */
  size_t outer, inner;
  int64_t factor;
  fcl__expr *value; /* derived: the value expression */
  int priority;     /* position in prioritize_loops (-1: none) */
  bool streamed;    /* stream_iname: carries registers (no longer split or retagged) */
} fcl__iname;

typedef enum { V_PARAM, V_ARRAY, V_SCALAR, V_TEMP } fcl__var_kind;

typedef struct {
  char *name;
  fcl__var_kind kind;
  fcl_dtype dtype;
  bool auto_type;       /* temporary typed from its first assignment */
  fcl_temp_scope scope; /* temporaries */
  size_t ndim;
  fcl__expr *shape[FCL_KB_MAX_DIMS];
  bool fixed; /* parameters: fix_parameters */
  int64_t value;
  int64_t modulus; /* parameters: assume "p mod k = 0" */
  int64_t lower;   /* parameters: assume "p >= c" (INT64_MIN: none) */
  bool written;
} fcl__var;

typedef struct {
  char *id;
  char *text; /* as written, for messages */
  fcl__expr *lhs, *rhs;
  char **inames; /* the loops it lives in (not its reduction inames) */
  size_t ninames;
  bool inames_given; /* "inames=" without '+' */
  char **deps;       /* dep= patterns, then resolved ids */
  size_t ndeps;
  bool deps_given;
  char **after; /* ids a transformation orders it after, on top of its deps (given or
                            inferred): stream_iname keeps a loop whole after its prologue */
  size_t nafter;
  char **conds; /* if= */
  size_t nconds;
  int priority;
  bool carried; /* stream_iname's rotations: the value is for the next iteration, so
                            the single-writer rule does not count them as writers */
  char *code;   /* a C block's OpenCL C (NULL: an assignment); its rhs is then a call named
                   "C block" whose arguments are what it reads, lhs its first write */
  fcl__expr *more_writes; /* a C block: what it writes besides lhs (a call's arguments; NULL) */
} fcl__insn;

/* Free what an instruction owns (kbuilder.c). */
void fcl__insn_free(fcl__insn *in);
/* Whether instruction in writes the variable name (a C block may write several). */
bool fcl__insn_writes(const fcl__insn *in, const char *name);

typedef struct {
  char *name;
  char **args;
  size_t nargs;
  fcl__expr *body;
} fcl__rule;

typedef struct {
  char *array;  /* the global array */
  char *tag;    /* only the accesses with this '$' tag read the copy (NULL: every access) */
  char *fetch;  /* the local copy */
  char **sweep; /* inames whose range the footprint covers */
  size_t nsweep;
  int pad; /* extra elements per row of the local copy */
} fcl__prefetch;

struct fcl_kbuilder {
  char *name;
  fcl__var *vars;
  size_t nvars;
  fcl__iname *inames;
  size_t ninames;
  char **domains; /* as written */
  size_t ndomains;
  fcl__insn *insns;
  size_t ninsns;
  fcl__rule *rules;
  size_t nrules;
  fcl__prefetch *prefetches;
  size_t nprefetches;
  char **history; /* transformations applied, for the description */
  size_t nhistory;
  size_t next_insn;
};

/* Strip leading and trailing blanks in place (kbuilder.c). */
char *fcl__trim(char *s);
/* Lookups (kbuilder.c). */
fcl__var *fcl__kb_var(const fcl_kbuilder *kb, const char *name);
fcl__iname *fcl__kb_iname(const fcl_kbuilder *kb, const char *name);
size_t fcl__kb_iname_index(const fcl_kbuilder *kb, const char *name);
fcl__insn *fcl__kb_insn(const fcl_kbuilder *kb, const char *id);
fcl_status fcl__kb_history(fcl_kbuilder *kb, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Integer value of a parameter expression when every parameter in it is fixed. */
bool fcl__kb_const(const fcl_kbuilder *kb, const fcl__expr *e, int64_t *value);
/* Value with the given (non-fixed) parameter values (order of fcl_kbuilder_param). */
bool fcl__kb_eval(const fcl_kbuilder *kb, const fcl__expr *e, const int64_t *values,
                  int64_t *value);
/* The expansion callback for affine forms: derived inames become their value expressions. */
const fcl__expr *fcl__kb_expand(void *kb, const char *name);
/* Leaf inames (not derived) an expression depends on, appended to list without repeats. */
void fcl__kb_leaf_inames(const fcl_kbuilder *kb, const fcl__expr *e, char **list, size_t *n,
                         size_t cap);
/* Leaf inames of every reduction in e (appended, up to FCL__MAX_LEAVES). */
void fcl__kb_reduction_leaves(const fcl_kbuilder *kb, const fcl__expr *e, char **list, size_t *n);
/* Whether hi - lo of an iname is a multiple of factor under the assumptions. */
bool fcl__kb_divisible(const fcl_kbuilder *kb, const fcl__expr *lo, const fcl__expr *hi,
                       int64_t factor);
/* Complex types: FCL_COMPLEX64/128 are float2/double2 holding (real, imaginary). */
static inline bool fcl__dtype_complex(fcl_dtype t) {
  return t == FCL_COMPLEX64 || t == FCL_COMPLEX128;
}
/* The type of a complex type's parts (other types: themselves). */
static inline fcl_dtype fcl__dtype_real_part(fcl_dtype t) {
  return t == FCL_COMPLEX64 ? FCL_FLOAT32 : t == FCL_COMPLEX128 ? FCL_FLOAT64 : t;
}
/* Type of an expression (temporaries typed automatically use their assignment). */
fcl_dtype fcl__kb_type_of(const fcl_kbuilder *kb, const fcl__expr *e);
/* Whether floating literals without suffix are float (no double anywhere). */
bool fcl__kb_literals_float(const fcl_kbuilder *kb);
/* "insn 'id' (text)" for error messages. */
const char *fcl__insn_label(const fcl__insn *insn, char *buf, size_t size);

/* "g.0", "unr", ... */
const char *fcl__tag_text(const fcl__iname *in, char *buf, size_t size);

/* Prefetch footprints (prefetch.c): the local box of an array that the sweep inames touch. */
#define FCL__MAX_LEAVES 16
typedef struct {
  size_t index; /* which prefetch */
  const fcl__var *array;
  size_t ndim;
  int64_t box[FCL_KB_MAX_DIMS];       /* extent of the box per dimension */
  int64_t stride[FCL_KB_MAX_DIMS];    /* element strides in the local copy (last row padded) */
  int64_t size;                       /* elements of the local copy */
  fcl__expr *base[FCL_KB_MAX_DIMS];   /* global index of the box corner, per dimension */
  int64_t shift[FCL_KB_MAX_DIMS];     /* access constant minus this = offset in the box */
  const char *sweep[FCL__MAX_LEAVES]; /* sweep leaf inames */
  size_t nsweep;
  const char *loops[FCL__MAX_LEAVES]; /* sequential inames the copy lives in */
  size_t nloops;
} fcl__prefetch_plan;
fcl_status fcl__prefetch_plan_make(const fcl_kbuilder *kb, size_t index, fcl__prefetch_plan *plan);
void fcl__prefetch_plan_free(fcl__prefetch_plan *plan);
/* The prefetch of an array (SIZE_MAX: none). */
size_t fcl__kb_prefetch_of(const fcl_kbuilder *kb, const char *array);
/* The prefetch that access e (a subscript) reads from, honouring the prefetch's tag. */
size_t fcl__kb_prefetch_of_access(const fcl_kbuilder *kb, const fcl__expr *e);
/* Offset of an access inside the local copy, as an expression (NULL on failure). */
fcl__expr *fcl__prefetch_offset(const fcl_kbuilder *kb, const fcl__prefetch_plan *plan,
                                const fcl__expr *access);

/* Schedule items (schedule.c): instructions and prefetch copies with their loops. */
typedef struct {
  const fcl__insn *insn;          /* NULL: the copy of a prefetch */
  const fcl__prefetch_plan *plan; /* prefetch copies */
  const char *id;
  const char *leaves[FCL__MAX_LEAVES]; /* leaf inames it runs over (not its reductions) */
  size_t nleaves;
  const char *loops[FCL__MAX_LEAVES]; /* the sequential ones, outermost first */
  size_t nloops;
  size_t *deps; /* items it depends on */
  size_t ndeps;
  const char *vec; /* vectorized over this iname (NULL: not) */
  bool vec_lanes;  /* vec: some guards depend on the lane */
  bool vec_blocks; /* vec: accesses read aligned blocks (emit.c) */
} fcl__item;
/* Dependencies: explicit dep= patterns, the single-writer rule, prefetch copies before their
 * readers. Errors name the instruction and the pattern. */
fcl_status fcl__items_resolve_deps(const fcl_kbuilder *kb, fcl__item *items, size_t n);
/* An order of items respecting dependencies (priority first, then staying in the open loops,
 * then the order given); a cycle is an error naming its instructions. */
fcl_status fcl__items_schedule(const fcl_kbuilder *kb, const fcl__item *items, size_t n,
                               size_t *order);

/* Hardware axes (emit.c): local sizes (constants), group counts (expressions). */
typedef struct {
  unsigned dim;
  int64_t local[3];
  fcl__expr *groups[3]; /* owned; NULL: 1 */
} fcl__axes;
fcl_status fcl__kb_axes(const fcl_kbuilder *kb, fcl__axes *axes);
/* The axes after l.auto is resolved (what the generated kernel uses). */
fcl_status fcl__kb_prepared_axes(const fcl_kbuilder *kb, fcl__axes *axes);
void fcl__axes_free(fcl__axes *axes);

/* builtins.c: whether name is an OpenCL C built-in function an instruction may call. */
bool fcl__cl_builtin_function(const char *name);
/* builtins.c: the number of arguments of a complex function (conj, real, imag: 1; complex: 2),
 * 0 for other names. */
int fcl__complex_function_arity(const char *name);
/* builtins.c: whether name is a constant an instruction may use without declaring it: OpenCL C's
 * M_* and limit macros (INFINITY, FLT_MAX, ...), true and false. */
bool fcl__cl_builtin_constant(const char *name);
/* builtins.c: the first name that expression text uses as a variable, an array or a function
 * and that is none of known[n], a built-in constant or function, or a complex function: what a
 * builder declaring only known[n] refuses as unknown. true with the name in unknown[size] (cut
 * to fit) and *called telling whether it is called; false when every name is known or the text
 * does not parse (the builder then reports the syntax error). */
bool fcl__expr_unknown_name(const char *text, size_t n, const char *const *known, char *unknown,
                            size_t size, bool *called);

#endif
