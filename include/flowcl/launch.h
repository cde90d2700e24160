/** @file
 * flowcl launch layer: launchers, the execution engine of operators (HySoP's kernel launchers).
 *
 * A launcher is something that can be called on a queue after a wait list and returns an event:
 *   - kernel launcher: a kernel whose arguments are all fixed at creation, except parameters
 *     (a parameters map: name -> argument index and type) supplied per call;
 *   - iterative launcher: a kernel launcher some of whose parameters come from generators
 *     (range, list, callback); the kernel is enqueued once per generated value (cartesian
 *     product, the last iterated parameter varying fastest);
 *   - host launcher: a host callback (MPI exchanges, bookkeeping) as a step;
 *   - copy launcher: host->device, device->host, device->device copies, linear or rectangular;
 *   - list launcher: an ordered list of launchers run on one queue.
 * Plan once, call many: creating launchers checks everything (argument types against the
 * kernel's signature, parameters of a list agree in type); calling allocates nothing and calls
 * clSetKernelArg only for parameters whose value changed since the previous call.
 *
 * Parameters are passed in an fcl_param_set made for the launcher that is called (a list's set
 * holds the union of its members' parameters). Setting an unknown or mistyped parameter and
 * calling with a missing one are errors that name the parameter and the launcher.
 *
 * Statistics: on a profiling queue every launch's event is kept; fcl_launcher_statistics reads
 * the events that have completed (never waits) and folds them into count / total / min / max /
 * mean device time, and bandwidth when bytes per launch are known.
 * Tracing: FLOWCL_TRACE=pattern (a glob over launcher and kernel names, e.g. "advec*") logs every
 * matching launch with its sizes and argument values, at info level; no cost when unset.
 *
 * Launchers are not thread safe: one thread calls a given launcher at a time. */
#ifndef FLOWCL_LAUNCH_H
#define FLOWCL_LAUNCH_H

#include "flowcl/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The type of a launcher's argument or parameter value (the member of fcl_value it uses): a
 * scalar, whose value is the fcl_dtype's (FCL_TYPE_F32 == FCL_FLOAT32, so a scalar dtype
 * converts by a cast), a buffer or local memory. */
typedef enum {
  FCL_TYPE_I32 = FCL_INT32,   /**< int32_t for an OpenCL C int */
  FCL_TYPE_U32 = FCL_UINT32,  /**< uint32_t for a uint */
  FCL_TYPE_I64 = FCL_INT64,   /**< int64_t for a long */
  FCL_TYPE_U64 = FCL_UINT64,  /**< uint64_t for a ulong */
  FCL_TYPE_F32 = FCL_FLOAT32, /**< float */
  FCL_TYPE_F64 = FCL_FLOAT64, /**< double */
  FCL_TYPE_BUFFER = 64,       /**< an fcl_mem for a __global / __constant pointer (NULL allowed) */
  FCL_TYPE_LOCAL              /**< bytes of __local memory (fixed arguments only) */
} fcl_value_type;

/** "int", "uint", "long", "ulong", "float", "double", "buffer", "local". */
const char *fcl_value_type_name(fcl_value_type type);

/** A value of an fcl_value_type: the member of that type is the one set. */
typedef union {
  int32_t i32;        /**< FCL_TYPE_I32 */
  uint32_t u32;       /**< FCL_TYPE_U32 */
  int64_t i64;        /**< FCL_TYPE_I64 */
  uint64_t u64;       /**< FCL_TYPE_U64 */
  float f32;          /**< FCL_TYPE_F32 */
  double f64;         /**< FCL_TYPE_F64 */
  fcl_mem *buffer;    /**< FCL_TYPE_BUFFER (not retained) */
  size_t local_bytes; /**< FCL_TYPE_LOCAL */
} fcl_value;

/** A fixed kernel argument. */
typedef struct {
  unsigned index;      /**< the kernel argument's index */
  fcl_value_type type; /**< checked against the argument's declared type */
  fcl_value value;     /**< the value (the member of type) */
} fcl_arg;

/** Fixed arguments: argument i set to v (fcl_arg_local: to bytes of local memory). @{ */
static inline fcl_arg fcl_arg_i32(unsigned i, int32_t v) {
  fcl_arg a = {i, FCL_TYPE_I32, {.i32 = v}};
  return a;
}
static inline fcl_arg fcl_arg_u32(unsigned i, uint32_t v) {
  fcl_arg a = {i, FCL_TYPE_U32, {.u32 = v}};
  return a;
}
static inline fcl_arg fcl_arg_i64(unsigned i, int64_t v) {
  fcl_arg a = {i, FCL_TYPE_I64, {.i64 = v}};
  return a;
}
static inline fcl_arg fcl_arg_u64(unsigned i, uint64_t v) {
  fcl_arg a = {i, FCL_TYPE_U64, {.u64 = v}};
  return a;
}
static inline fcl_arg fcl_arg_f32(unsigned i, float v) {
  fcl_arg a = {i, FCL_TYPE_F32, {.f32 = v}};
  return a;
}
static inline fcl_arg fcl_arg_f64(unsigned i, double v) {
  fcl_arg a = {i, FCL_TYPE_F64, {.f64 = v}};
  return a;
}
static inline fcl_arg fcl_arg_buffer(unsigned i, fcl_mem *v) {
  fcl_arg a = {i, FCL_TYPE_BUFFER, {.buffer = v}};
  return a;
}
static inline fcl_arg fcl_arg_local(unsigned i, size_t bytes) {
  fcl_arg a = {i, FCL_TYPE_LOCAL, {.local_bytes = bytes}};
  return a;
}
/** @} */

/** One entry of a parameters map: the parameter called name is kernel argument index. */
typedef struct {
  const char *name;    /**< the parameter's name (copied by the launcher) */
  unsigned index;      /**< the kernel argument it sets */
  fcl_value_type type; /**< its type, checked against the argument's declared type */
} fcl_param_spec;

/** Where and how large: queue NULL and work_dim 0 mean "give it at call time / configure later". */
typedef struct {
  fcl_queue *queue;  /**< default queue of the calls (retained by the launcher) */
  unsigned work_dim; /**< 1 to 3 */
  size_t global[3];  /**< global work size per dimension (the first work_dim) */
  size_t local[3];   /**< all zero: the driver chooses */
  /** bytes read + written per launch, for bandwidth statistics; 0 = unknown */
  size_t bytes_per_launch;
} fcl_launch_config;

/** Something that can be called on a queue after a wait list and returns an event: a kernel,
 * an iterated kernel, a host step, a copy or a list of launchers (opaque; not thread safe). */
typedef struct fcl_launcher fcl_launcher;
/** Values for the parameters of a launcher's call (opaque; made for one launcher). */
typedef struct fcl_param_set fcl_param_set;

/** A kernel launcher over kernel kernel_name of a built program. Every kernel argument is either
 * in args (set once, here, with its type checked against the kernel's signature) or in params
 * (set per call); one that is neither, or both, is an error naming it. The launcher owns its
 * own cl_kernel. */
fcl_status fcl_launcher_create_kernel(fcl_program *program, const char *name,
                                      const char *kernel_name, size_t num_args, const fcl_arg *args,
                                      size_t num_params, const fcl_param_spec *params,
                                      const fcl_launch_config *config, fcl_launcher **out);

/** Generators of iterated parameter values. */
typedef enum {
  FCL_GENERATOR_RANGE,   /**< start, start + step, ... up to stop (excluded) */
  FCL_GENERATOR_LIST,    /**< values[0 .. count - 1] */
  FCL_GENERATOR_CALLBACK /**< values from fn(user, i, &value) until it returns false */
} fcl_generator_kind;
/** Callback generator: write value number i (of the parameter's type) to *value and return true,
 * or return false when there are no more. */
typedef bool (*fcl_generator_fn)(void *user, size_t i, fcl_value *value);
/** The values of one iterated parameter (fcl_generator_range, _list, _callback make one). */
typedef struct {
  const char *param;       /**< name of the iterated parameter (one of the launcher's params) */
  fcl_generator_kind kind; /**< which of the members below give the values */
  /** range: start, start+step, ... < stop (> stop for step < 0) @{ */
  int64_t start, stop, step;
  /** @} */
  const fcl_value *values; /**< list */
  size_t count;            /**< list: number of values */
  fcl_generator_fn fn;     /**< callback */
  void *user;              /**< callback: its first argument */
} fcl_generator;

/** A range generator of param: start, start + step, ... < stop (> stop for step < 0). */
static inline fcl_generator fcl_generator_range(const char *param, int64_t start, int64_t stop,
                                                int64_t step) {
  fcl_generator g = {param, FCL_GENERATOR_RANGE, start, stop, step, NULL, 0, NULL, NULL};
  return g;
}
/** A list generator of param: values[0 .. count - 1] (not copied: they must outlive the
 * launcher). */
static inline fcl_generator fcl_generator_list(const char *param, const fcl_value *values,
                                               size_t count) {
  fcl_generator g = {param, FCL_GENERATOR_LIST, 0, 0, 0, values, count, NULL, NULL};
  return g;
}
/** A callback generator of param: fn(user, i, &value) for i = 0, 1, ... until it returns false. */
static inline fcl_generator fcl_generator_callback(const char *param, fcl_generator_fn fn,
                                                   void *user) {
  fcl_generator g = {param, FCL_GENERATOR_CALLBACK, 0, 0, 0, NULL, 0, fn, user};
  return g;
}

/** An iterative launcher: like a kernel launcher, with the generated parameters set for every
 * generated combination and the kernel enqueued each time. On an out-of-order queue a barrier
 * is enqueued after the launches (its event is the call's event) unless enqueue_barrier is
 * false, in which case the call returns no event (NULL). */
fcl_status fcl_launcher_create_iterative(fcl_program *program, const char *name,
                                         const char *kernel_name, size_t num_args,
                                         const fcl_arg *args, size_t num_params,
                                         const fcl_param_spec *params, size_t num_generators,
                                         const fcl_generator *generators, bool enqueue_barrier,
                                         const fcl_launch_config *config, fcl_launcher **out);

/** A host step: fn(user, queue) runs on the calling thread once every earlier step of the call
 * has completed; its failure status stops the call. */
typedef fcl_status (*fcl_host_fn)(void *user, fcl_queue *queue);
/** A host launcher calling fn(user, queue) as a host step (see fcl_host_fn). */
fcl_status fcl_launcher_create_host(const char *name, fcl_host_fn fn, void *user,
                                    fcl_launcher **out);
/** A host step that only enqueues commands on the queue it is given, or on one whose order
 * follows it (e.g. a ghost exchange of a field of that queue, which orders its own waits):
 * called in a list on an in-order queue, it runs as soon as the earlier steps are enqueued,
 * without waiting for them (a host step waits for the queue: one host sync); the call's wait
 * list becomes a barrier before it, and its event a marker after it. On an out-of-order queue,
 * or without a queue, it waits like a host step. */
fcl_status fcl_launcher_create_host_enqueue(const char *name, fcl_host_fn fn, void *user,
                                            fcl_launcher **out);

/** Copy steps: byte counts and offsets (host pointers must outlive the calls). Host to device,
 * device to host, device to device. @{ */
fcl_status fcl_launcher_create_copy_h2d(const char *name, const void *src, fcl_mem *dst,
                                        size_t dst_offset, size_t bytes, fcl_launcher **out);
fcl_status fcl_launcher_create_copy_d2h(const char *name, fcl_mem *src, size_t src_offset,
                                        void *dst, size_t bytes, fcl_launcher **out);
fcl_status fcl_launcher_create_copy_d2d(const char *name, fcl_mem *src, size_t src_offset,
                                        fcl_mem *dst, size_t dst_offset, size_t bytes,
                                        fcl_launcher **out);
/** @} */
/** Rectangular copy steps of rect (copied): host to device, device to host, device to
 * device. @{ */
fcl_status fcl_launcher_create_copy_rect_h2d(const char *name, const void *src, fcl_mem *dst,
                                             const fcl_rect *rect, fcl_launcher **out);
fcl_status fcl_launcher_create_copy_rect_d2h(const char *name, fcl_mem *src, void *dst,
                                             const fcl_rect *rect, fcl_launcher **out);
fcl_status fcl_launcher_create_copy_rect_d2d(const char *name, fcl_mem *src, fcl_mem *dst,
                                             const fcl_rect *rect, fcl_launcher **out);
/** @} */

/** An empty list launcher. */
fcl_status fcl_launcher_create_list(const char *name, fcl_launcher **out);
/** Append a launcher to a list; the list takes ownership (destroys it). NULL is ignored. A list
 * pushed into a list is flattened into it. A parameter whose type differs from the same-named
 * parameter of earlier members is an error (and the launcher is not taken). */
fcl_status fcl_launcher_list_push(fcl_launcher *list, fcl_launcher *launcher);
/** A kernel (or iterative) launcher as a one-element list of the given name; the list takes
 * ownership of the launcher. */
fcl_status fcl_launcher_as_list(fcl_launcher *launcher, const char *name, fcl_launcher **list);
/** Number of members of a list (0 for a launcher that is not a list). */
size_t fcl_launcher_list_size(const fcl_launcher *list);
/** Member i of a list (owned by the list). */
fcl_launcher *fcl_launcher_list_get(const fcl_launcher *list, size_t i);

/** Give the launcher other buffers where it holds fixed ones: each fixed buffer argument of a
 * kernel, each end of a copy (a list: of every member) that is old[i] becomes now[i], all in one
 * pass, so that swapping two buffers is one call (old {a, b}, now {b, a}). Parameters are given
 * per call and are not touched. What follows fcl_field_swap for the launchers an object built
 * on fcl_field_buffer. */
fcl_status fcl_launcher_rebind(fcl_launcher *launcher, size_t n, fcl_mem *const *old,
                               fcl_mem *const *now);

/** Destroy a launcher (a list: with its members); accepts NULL; sets *launcher = NULL. */
void fcl_launcher_destroy(fcl_launcher **launcher);

/** The launcher's name (copied at creation; "(unnamed)" for NULL). */
const char *fcl_launcher_name(const fcl_launcher *launcher);
/** Whether a global size / a queue is configured (the call needs no more). Lists: every member.
 * @{ */
bool fcl_launcher_global_size_configured(const fcl_launcher *launcher);
bool fcl_launcher_queue_configured(const fcl_launcher *launcher);
/** @} */
/** Set the default queue and/or the work sizes of a kernel or iterative launcher (queue NULL
 * keeps the queue; work_dim 0 keeps the sizes; local NULL lets the driver choose). */
fcl_status fcl_launcher_configure(fcl_launcher *launcher, fcl_queue *queue, unsigned work_dim,
                                  const size_t *global, const size_t *local);

/** Work sizes computed per call from the parameter values (values[i] is the value of
 * parameter i of fcl_launcher_param, as given for this call). fn writes work_dim (1-3), global
 * and local (local all zero: the driver chooses); a zero global size means "nothing to do" and
 * the call only waits for its wait list. Replaces any configured global size. destroy (may be
 * NULL) is called on user when the launcher is destroyed or the function replaced. */
typedef fcl_status (*fcl_work_size_fn)(void *user, const fcl_value *values, unsigned *work_dim,
                                       size_t global[3], size_t local[3]);
/** Compute the work sizes of a kernel or iterative launcher with fn(user, ...) at every call
 * (fcl_work_size_fn says how); another launcher is FCL_ERR_INVALID_ARGUMENT. */
fcl_status fcl_launcher_set_work_size_fn(fcl_launcher *launcher, fcl_work_size_fn fn, void *user,
                                         void (*destroy)(void *user));

/** The launcher's parameters (name, type); for lists, the union over the members: their number,
 * and the name (owned by the launcher) and type of parameter i (either may be NULL; i out of
 * range: FCL_ERR_INVALID_ARGUMENT). @{ */
size_t fcl_launcher_num_params(const fcl_launcher *launcher);
fcl_status fcl_launcher_param(const fcl_launcher *launcher, size_t i, const char **name,
                              fcl_value_type *type);
/** @} */

/** Call: enqueue everything on queue (NULL: the launcher's default queue; lists need a queue or
 * members with one), the first command waiting on the wait list. params may be NULL when the
 * launcher has no parameters. event (may be NULL) receives the event of the last command; an
 * empty list waits for the wait list and returns NULL. */
fcl_status fcl_launcher_call(fcl_launcher *launcher, fcl_queue *queue, const fcl_param_set *params,
                             unsigned num_wait, fcl_event *const *wait, fcl_event **event);

/** A value set for the parameters of launcher (for a list: of all its members). Build it once;
 * set values between calls. The set must not outlive the launcher. */
fcl_status fcl_param_set_create(const fcl_launcher *launcher, fcl_param_set **out);
/** Destroy a parameter set; accepts NULL; sets *set = NULL. */
void fcl_param_set_destroy(fcl_param_set **set);
/** Set by name; the type must be the parameter's type. Unknown names (FCL_ERR_NOT_FOUND) and
 * wrong types (FCL_ERR_INVALID_ARGUMENT) are errors that list the parameters. @{ */
fcl_status fcl_param_set_i32(fcl_param_set *set, const char *name, int32_t value);
fcl_status fcl_param_set_u32(fcl_param_set *set, const char *name, uint32_t value);
fcl_status fcl_param_set_i64(fcl_param_set *set, const char *name, int64_t value);
fcl_status fcl_param_set_u64(fcl_param_set *set, const char *name, uint64_t value);
fcl_status fcl_param_set_f32(fcl_param_set *set, const char *name, float value);
fcl_status fcl_param_set_f64(fcl_param_set *set, const char *name, double value);
fcl_status fcl_param_set_buffer(fcl_param_set *set, const char *name, fcl_mem *value);
/** @} */
/** Faster path for hot loops: the slot of a name once, then set by slot. @{ */
fcl_status fcl_param_set_slot(const fcl_param_set *set, const char *name, size_t *slot);
fcl_status fcl_param_set_value(fcl_param_set *set, size_t slot, fcl_value_type type,
                               fcl_value value);
/** @} */

/** Device-time statistics of a launcher's launches (fcl_launcher_statistics). */
typedef struct {
  size_t launches; /**< completed launches folded in */
  /** Device time of the counted launches, ns: total, shortest, longest, mean. @{ */
  double total_ns, min_ns, max_ns, mean_ns;
  /** @} */
  size_t pending;       /**< launches whose events have not completed yet */
  double bytes;         /**< bytes moved by the counted launches (0 when unknown) */
  double bandwidth_gbs; /**< bytes / total time, GB/s (0 when unknown) */
} fcl_launch_stats;

/** Fold the completed events into the statistics (never blocks) and return them. For a list:
 * the members' launches together. */
fcl_status fcl_launcher_statistics(fcl_launcher *launcher, fcl_launch_stats *stats);
/** Forget the statistics and the kept events. */
fcl_status fcl_launcher_reset_statistics(fcl_launcher *launcher);
/** Adds the launches of s into sum: launches, total time, pending and bytes add up, the
 * shortest and longest are over both (of those with launches), mean and bandwidth follow. A
 * zeroed sum starts a total. */
void fcl_launch_stats_add(fcl_launch_stats *sum, const fcl_launch_stats *s);
/** Bytes per launch for bandwidth statistics (kernel, iterative and copy launchers). */
fcl_status fcl_launcher_set_bytes_per_launch(fcl_launcher *launcher, size_t bytes);

#ifdef __cplusplus
}
#endif
#endif /* FLOWCL_LAUNCH_H */
