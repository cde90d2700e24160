/** @file
 * flowcl autotuner: pick the fastest variant of a generated kernel per device and problem size,
 * and remember it (FFTW's planner and wisdom, for kernel builders).
 *
 * A space of choices is a list of axes (tile widths, work-group shapes, vector widths,
 * unrolling...), each a list of integers whose first value is the heuristic default. An apply
 * function turns one choice (one value per axis) into a variant by transforming a copy of the
 * base builder; it may refuse a choice (return an error) and the variant is skipped.
 *
 * Effort, as FFTW's planner flags, from the options or FLOWCL_TUNE (flowcl's operators ask for
 * FCL_TUNE_AUTO: measure on GPUs and accelerators, the first time a kernel and size class is
 * seen there, then remembered; estimate on CPUs, where building the variants costs more than
 * they save):
 *   none        the default choice, nothing built or timed, nothing remembered;
 *   estimate    a remembered result if there is one, else the first choice (from the default
 *               on) that builds, without timing;
 *   measure     the default, then each axis varied in turn around the best so far;
 *   exhaustive  every combination.
 * measure and exhaustive run each variant on random inputs, compare its outputs with those of
 * the first variant that ran (a variant that disagrees is rejected), time it with profiling
 * events (median of repeats after a warm-up) and keep the fastest within the time budget. Their
 * inputs are full-size copies of the kernel's arrays on the device: where those would take more
 * than an eighth of the device's memory (a 1024^3 grid on one GPU, beside its fields), the
 * search is an estimate instead (logged at info; fcl_tune_result.effort says so). An estimate
 * puts nothing on the device.
 *
 * Results are kept in the cache directory (FLOWCL_CACHE_DIR, see fcl_program_cache_dir) under
 * "tune/", keyed by the base kernel's source, the axes, the build options, the device and
 * driver, and the problem size class (each parameter rounded up to a power of two). A result
 * measured at an effort at least the one asked for is reused without timing anything. Entries
 * are written atomically (temporary file + rename) and carry a checksum; a corrupted entry is
 * logged, ignored and rewritten. fcl_tune is thread safe for distinct builders. */
#ifndef FLOWCL_TUNE_H
#define FLOWCL_TUNE_H

#include "flowcl/codegen.h"

#ifdef __cplusplus
extern "C" {
#endif

/** How hard fcl_tune searches (FFTW's planner flags; the file comment says more). */
typedef enum {
  FCL_TUNE_AUTO = -2,    /**< FLOWCL_TUNE, else measure (within FCL_TUNE_AUTO_BUDGET_S unless the
                          * options give a budget) on GPUs and accelerators, estimate on CPUs */
  FCL_TUNE_DEFAULT = -1, /**< FLOWCL_TUNE, else measure */
  FCL_TUNE_NONE = 0,     /**< the default choice, nothing built or timed, nothing remembered */
  FCL_TUNE_ESTIMATE,     /**< a remembered result, else the first choice that builds, untimed */
  FCL_TUNE_MEASURE,      /**< the default, then each axis varied in turn around the best so far */
  FCL_TUNE_EXHAUSTIVE    /**< every combination */
} fcl_tune_effort;

/** Seconds that FCL_TUNE_AUTO spends measuring one kernel's variants before it keeps the best so
 * far (FLOWCL_TUNE=measure has no such limit). A search cut short so is remembered at estimate
 * effort: auto reuses it, an explicit measure searches in full. */
#define FCL_TUNE_AUTO_BUDGET_S 3.0

/** "none", "estimate", "measure", "exhaustive". */
const char *fcl_tune_effort_name(fcl_tune_effort effort);
/** Parse one of those names (case-insensitive); anything else is an error naming it. */
fcl_status fcl_tune_effort_parse(const char *text, fcl_tune_effort *effort);
/** FLOWCL_TUNE's effort, the one place it is read: *set false when it is unset or empty (effort
 * untouched); a value that is not a name is an error naming it. */
fcl_status fcl_tune_effort_from_env(fcl_tune_effort *effort, bool *set);

/** Most axes of a tuning space. */
#define FCL_TUNE_MAX_AXES 8

/** One axis of choices: its values, the first the heuristic default. */
typedef struct {
  const char *name;      /**< for messages and the description of the choice */
  size_t count;          /**< number of values */
  const int64_t *values; /**< values[0]: the heuristic default */
} fcl_tune_axis;

/** Transform kb (a fresh copy of the base) for choice[a] = the value of axis a. Returning
 * FCL_ERR_NOT_SUPPORTED (or any error) skips the choice (outside the device's limits...). */
typedef fcl_status (*fcl_tune_apply_fn)(void *user, fcl_kbuilder *kb, const int64_t *choice);

/** How fcl_tune runs (options is required; param_values when the kernel has parameters). */
typedef struct {
  fcl_tune_effort effort;      /**< FCL_TUNE_DEFAULT: FLOWCL_TUNE, else measure */
  double budget_s;             /**< stop timing new variants after this (0: no limit) */
  unsigned repeats;            /**< timed runs per variant (0: 5) */
  const char *build_options;   /**< for every variant (NULL: none) */
  const int64_t *param_values; /**< the problem size (order of fcl_kbuilder_param_name) */
} fcl_tune_options;

/** What fcl_tune chose and what it did to choose. */
typedef struct {
  int64_t choice[FCL_TUNE_MAX_AXES]; /**< the chosen value of each axis */
  size_t num_axes;                   /**< number of axes (entries of choice) */
  fcl_tune_effort effort;            /**< the effort used */
  bool from_cache;                   /**< reused a remembered result: nothing was timed */
  size_t tried;                      /**< variants generated */
  size_t timed;                      /**< variants verified and timed */
  size_t rejected;  /**< refused, failed to build or run, or disagreed with the first */
  double median_ns; /**< the chosen variant's median time (0 when not timed) */
} fcl_tune_result;

/** Tune base on device (of context) over the axes. result receives the choice; best (may be
 * NULL) a new builder with the choice applied (the caller destroys it). Fails when no choice
 * gives a valid variant, with the reason of the default's failure. */
fcl_status fcl_tune(const fcl_kbuilder *base, size_t num_axes, const fcl_tune_axis *axes,
                    fcl_tune_apply_fn apply, void *user, fcl_context *context,
                    const fcl_device *device, const fcl_tune_options *options,
                    fcl_tune_result *result, fcl_kbuilder **best);

/** What fcl_tune timed in this process so far: the tunings that measured variants (not those
 * served by a remembered result or done at estimate) and the wall time they took (s). A main
 * job prints it once, so a user sees what the first run on a device paid and a later run
 * does not. Either pointer may be NULL. */
void fcl_tune_totals(size_t *tunings, double *wall_s);

#ifdef __cplusplus
}
#endif
#endif /* FLOWCL_TUNE_H */
