/** @file
 * flowcl codegen layer: a kernel builder in the style of loopy, generating OpenCL C.
 *
 * A kernel is described by
 *   - parameters: named integers (sizes), passed as `int` kernel arguments unless fixed;
 *   - arguments: global arrays (dtype, shape in the parameters, C order: last index fastest)
 *     and scalars; arrays no instruction writes are `const`; all are `restrict` (arguments must
 *     not alias);
 *   - temporaries: private or local, declared here or by the instruction that assigns them
 *     (`<float> t = ...` or `<> t = ...` for a type inferred from the expression);
 *   - domains: "{ [i,j]: 0 <= i < n and 1 <= j < m - 1 }" (rectangular: each iname between two
 *     expressions in the parameters; `<` and `<=` both accepted);
 *   - instructions, one per line (or separated by ';'), in OpenCL C expression syntax:
 *       out[i, j] = a[i, j] + alpha * sum(k, m[i, k] * x[k])   {id=mv, dep=init*, priority=2}
 *     attributes: id, id_prefix (a unique id made from it: the prefix, else prefix_0,
 *     prefix_1, ...), dep (':'-separated, fnmatch wildcards), inames (':'-separated; a leading
 *     '+' adds to the inferred ones), if (scalar variables that must all be true), priority;
 *     reductions sum/max/min(iname, expr); substitution rules `name(a, b) := expr` are inlined.
 *     An array access or a rule's use may carry a tag, `a$near[i]`, `rule$near(x)` (a rule's
 *     tag goes to the untagged accesses of its body): transformations may select the tagged
 *     accesses (add_prefetch "a$near"); a tag on a plain name or a function is an error.
 *     Complex values: arrays and temporaries of FCL_COMPLEX64/FCL_COMPLEX128 (OpenCL float2/
 *     double2 holding real and imaginary parts) take + - * / between themselves and with reals
 *     (C99's promotions: a real becomes (x, 0), cfloat meets cdouble as cdouble), unary -,
 *     conj, real, imag, abs, exp, complex(re, im), sum reductions and the branches of ?:;
 *     any other use of a complex operand is an error naming the operation. Instructions on
 *     complex values are not vectorized (vec unrolls them); complex scalar arguments cannot
 *     be launcher parameters (FCL_ERR_NOT_SUPPORTED at build).
 *     Without dep, an instruction depends on the single writer of each variable it reads.
 *     Domains must be added before the instructions that use their inames.
 * Transformations: tag_inames ("i:g.0, j:l.0"; tags g.N, l.N, l.auto, unr, ilp, vec, for),
 * split_iname, align_iname, fix_parameters, assume, prioritize_loops, add_prefetch.
 * Generation gives readable OpenCL C (reqd_work_group_size, work sizes in a comment); build
 * gives a launcher whose parameters are the kernel's arguments (arrays as buffers, scalars,
 * non-fixed integer parameters) and whose work sizes follow the parameter values of each call.
 *
 * Semantics kept simple and documented: loops are entered in the order of their priority (then
 * of creation); `ilp` is an unrolled loop kept innermost (reduction storage is not duplicated);
 * `vec` vectorizes an instruction (vloadN/vstoreN along the contiguous axis) when every access
 * allows it, and unrolls it otherwise (a private temporary that an instruction over the vec
 * iname writes with one storage for every lane holds one lane at a time: every instruction over
 * that iname is then unrolled, readers in their writer's lane loop; guards on its lanes: one
 * branch on the work-item ids
 * between the vector statements and unrolled ones, unless the kernel has barriers, which a
 * branch on the local id may not contain). When the lanes' positions are known modulo the
 * width (global arrays whose last extent is a multiple of it, by fix_parameters or assume, and
 * an aligned vector iname, see align_iname), accesses read aligned blocks instead: a shifted
 * access (u[i - 1]) is shuffled from two blocks, and guarded lanes take no scalar path: blocks
 * that may leave the row are loaded under a test of their position and only the lanes inside
 * are stored. Barriers are inserted between a local write and its
 * readers, around prefetches, and at the end of a loop that writes and reads local memory.
 *
 * Errors name the offending instruction ("insn 'mv' (out[i] = ...): unknown name 'q'") or
 * transformation. A builder is not thread safe; copies are independent. */
#ifndef FLOWCL_CODEGEN_H
#define FLOWCL_CODEGEN_H

#include "flowcl/array.h"
#include "flowcl/launch.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most dimensions of a kernel argument array (fcl_kbuilder_arg_shape). */
#define FCL_KB_MAX_DIMS 4

/** Where a temporary lives. */
typedef enum {
  FCL_TEMP_PRIVATE, /**< one per work-item (registers) */
  FCL_TEMP_LOCAL    /**< one per work-group, in local memory */
} fcl_temp_scope;

/** A kernel description and its transformations (opaque; not thread safe; copies are
 * independent). */
typedef struct fcl_kbuilder fcl_kbuilder;

/** An empty kernel named name (a C identifier). */
fcl_status fcl_kbuilder_create(const char *name, fcl_kbuilder **out);
/** An independent copy (transform variants without touching the original). */
fcl_status fcl_kbuilder_copy(const fcl_kbuilder *kb, fcl_kbuilder **out);
void fcl_kbuilder_destroy(fcl_kbuilder **kb);          /**< accepts NULL; sets *kb = NULL */
const char *fcl_kbuilder_name(const fcl_kbuilder *kb); /**< the kernel's name (owned by kb) */

/** Declarations. Names are C identifiers, unique across parameters, arguments, temporaries
 * and inames. shape: comma-separated expressions in the parameters ("nz, ny, nx"); NULL or ""
 * for a scalar temporary. A global array is indexed in int, or in long where its extents are
 * constants (or fixed parameters) whose product exceeds INT_MAX: an array whose shape has a
 * parameter left free, or a one-dimensional array, must hold fewer than 2^31 elements (its index
 * expression is the caller's, in int). @{ */
fcl_status fcl_kbuilder_add_param(fcl_kbuilder *kb, const char *name);
fcl_status fcl_kbuilder_add_array(fcl_kbuilder *kb, const char *name, fcl_dtype dtype,
                                  const char *shape);
fcl_status fcl_kbuilder_add_scalar(fcl_kbuilder *kb, const char *name, fcl_dtype dtype);
fcl_status fcl_kbuilder_add_temporary(fcl_kbuilder *kb, const char *name, fcl_dtype dtype,
                                      fcl_temp_scope scope, const char *shape);
fcl_status fcl_kbuilder_add_domain(fcl_kbuilder *kb, const char *domain);
/** @} */
/** Instructions and substitution rules, one per line or ';'-separated. All or nothing: on an
 * error none of the text's instructions is added. */
fcl_status fcl_kbuilder_add_instructions(fcl_kbuilder *kb, const char *text);

/** A block of raw OpenCL C, run like an instruction once per point of its inames and scheduled
 * by the same rules: writes and reads list what the code writes and reads ("out[i, j], t" and
 * "u[i, j], u[i, j + 1], alpha"; reads may be NULL), as variables or array accesses (a bare
 * array name stands for the whole array); a reader of what the block writes depends on it, the
 * block on the single writer of what it reads, unless attributes ("{id=b, dep=init, inames=i:j,
 * if=flag, priority=1}", braces optional, NULL for none) say otherwise. Its inames are those of
 * the accesses listed, plus inames=. In the code, inames, parameters, scalar arguments and
 * temporaries are used by name (derived and fixed ones are defined for it as constants) and
 * arrays are flat pointers in C order (out[i * m + j]). The code is not checked: a syntax error
 * appears when the kernel is built. It is never vectorized; an array it reads cannot be
 * streamed (stream_iname). Errors name the block by its first line. */
fcl_status fcl_kbuilder_add_c_block(fcl_kbuilder *kb, const char *code, const char *writes,
                                    const char *reads, const char *attributes);

/* Transformations (each checked at once; on error the builder is unchanged). */
/** "i:g.0, j:l.0, k:unr"; tagging an iname twice with different tags is an error. */
fcl_status fcl_kbuilder_tag_inames(fcl_kbuilder *kb, const char *tags);
/** iname -> iname_outer * factor + iname_inner (NULL tags: sequential). The inner iname ranges
 * over [0, factor); the last outer block is guarded unless the extent is known divisible. */
fcl_status fcl_kbuilder_split_iname(fcl_kbuilder *kb, const char *iname, int64_t factor,
                                    const char *outer_tag, const char *inner_tag);
/** Start the loop over an unsplit iname at its constant lower bound rounded down to a multiple
 * of alignment; a guard keeps the domain's bound. Splitting it afterwards with a vec inner
 * iname then gives aligned vector accesses (aligned blocks when the arrays' last extents are
 * known multiples of the width; otherwise lanes all inside the domain take one vector
 * statement, the few partial vectors at the edges a scalar path). */
fcl_status fcl_kbuilder_align_iname(fcl_kbuilder *kb, const char *iname, int64_t alignment);
/** Carry the loads of array along the sequential loop over iname (a leaf tagged for or unr) in
 * private registers: accesses that differ by a constant step along the loop (u[k - 1, j, i],
 * u[k, j, i], u[k + 1, j, i] along k) share a window of registers, loaded once each (a prologue
 * before the loop, the newest offset each iteration) and rotated after their readers. The
 * readers' other inames must be work-item inames, plus at most one vec or ilp iname (the
 * registers then hold a value per lane). The array must not be written in the loop, and is not
 * also prefetched; the iname is no longer split or retagged. An error when no accesses reuse
 * each other. */
fcl_status fcl_kbuilder_stream_iname(fcl_kbuilder *kb, const char *iname, const char *array);
/** "n=128, m=64": the parameters become constants and leave the kernel's arguments. */
fcl_status fcl_kbuilder_fix_parameters(fcl_kbuilder *kb, const char *values);
/** "n mod 16 = 0 and n >= 1": facts about parameters (divisibility removes remainder guards). */
fcl_status fcl_kbuilder_assume(fcl_kbuilder *kb, const char *assumptions);
/** "k, j": loops nest in this order (outermost first) where instructions share them. */
fcl_status fcl_kbuilder_prioritize_loops(fcl_kbuilder *kb, const char *order);
/** A prefetch (fcl_kbuilder_add_prefetch), given with designated initializers:
 * (fcl_prefetch){.array = "u", .sweep = "i_inner, j_inner", .pad = 1}. A struct and not three
 * string arguments, whose order changed before 0.2 and which a swap passes silently. */
typedef struct {
  /** The array read through the local copy: "u", or "u$tag" for only the accesses written with
   * that tag (u$tag[i], or inside a rule used as rule$tag(...)), the others reading global
   * memory. */
  const char *array;
  const char *sweep;      /**< the sweep inames, "i_inner, j_inner" (constant extents) */
  const char *fetch_name; /**< the local array's name; NULL: "<array>_fetch" */
  int pad;                /**< extra elements per row of the local array, 0 to 64 */
} fcl_prefetch;
/** Prefetch the footprint of prefetch.array over the sweep inames into a local array; the
 * accesses of the array it selects read the local copy. The accesses must be translates of
 * each other, affine in the inames, and the sweep inames of constant extent. */
fcl_status fcl_kbuilder_add_prefetch(fcl_kbuilder *kb, fcl_prefetch prefetch);

/** Non-fixed parameters, in kernel-argument order: their number, and the name of parameter i
 * (owned by kb; NULL out of range). @{ */
size_t fcl_kbuilder_num_params(const fcl_kbuilder *kb);
const char *fcl_kbuilder_param_name(const fcl_kbuilder *kb, size_t i);
/** @} */
/** Arguments (arrays and scalars) in declaration order, with their kind, dtype and rank: their
 * number, and the name (owned by kb), kind, dtype and whether an instruction writes it of
 * argument i (outputs may be NULL). @{ */
size_t fcl_kbuilder_num_args(const fcl_kbuilder *kb);
fcl_status fcl_kbuilder_arg(const fcl_kbuilder *kb, size_t i, const char **name, bool *is_array,
                            fcl_dtype *dtype, bool *written);
/** @} */
/** Shape of array argument i for the given parameter values (order of fcl_kbuilder_param_name). */
fcl_status fcl_kbuilder_arg_shape(const fcl_kbuilder *kb, size_t i, const int64_t *param_values,
                                  size_t *ndim, size_t shape[FCL_KB_MAX_DIMS]);

/** Human-readable description: parameters, arguments, temporaries, domains and tags,
 * instructions with ids, inames and dependencies, transformations applied (malloc'd). */
fcl_status fcl_kbuilder_describe(const fcl_kbuilder *kb, char **text);
/** OpenCL C source of the kernel (malloc'd). Checks the whole kernel first. */
fcl_status fcl_kbuilder_generate(const fcl_kbuilder *kb, char **source);
/** Work sizes for the given parameter values (order of fcl_kbuilder_param_name). */
fcl_status fcl_kbuilder_work_size(const fcl_kbuilder *kb, const int64_t *param_values,
                                  unsigned *work_dim, size_t global[3], size_t local[3]);
/** Generate, build (options as fcl_program_build) and wrap as a kernel launcher named after
 * the kernel. Its parameters are every kernel argument by name: arrays (FCL_TYPE_BUFFER),
 * scalars (their type) and non-fixed integer parameters (FCL_TYPE_I32). queue may be NULL. A
 * call whose array argument is smaller than the array's shape for the call's sizes is refused
 * before launching (FCL_ERR_INVALID_ARGUMENT); the buffer of an fcl_array over a pool block
 * counts the array's bytes, not the block's. */
fcl_status fcl_kbuilder_build(const fcl_kbuilder *kb, fcl_context *context, const char *options,
                              fcl_queue *queue, fcl_launcher **out);
/** The same as an iterative launcher (flowcl/launch.h): each call launches the kernel once per
 * combination of the generators' values, the last varying fastest. Generators iterate scalar
 * arguments only (a domain's parameters set the work size); the iterated scalars are not
 * parameters of the launcher's calls. */
fcl_status fcl_kbuilder_build_iterative(const fcl_kbuilder *kb, fcl_context *context,
                                        const char *options, fcl_queue *queue,
                                        size_t num_generators, const fcl_generator *generators,
                                        bool enqueue_barrier, fcl_launcher **out);

#ifdef __cplusplus
}
#endif
#endif /* FLOWCL_CODEGEN_H */
