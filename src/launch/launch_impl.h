/* Launcher layout shared by the launch layer's files (not installed). */
#ifndef FLOWCL_SRC_LAUNCH_IMPL_H
#define FLOWCL_SRC_LAUNCH_IMPL_H

#include "flowcl/launch.h"

typedef enum { L_KERNEL, L_ITERATIVE, L_HOST, L_COPY, L_LIST } fcl__launcher_kind;

/* A parameter of a launcher's table (for a list: the union of its members'). */
typedef struct {
  char *name;
  fcl_value_type type;
} fcl__param_decl;

/* A kernel argument fed from a parameter, with the value it was last set to. */
typedef struct {
  size_t decl; /* position in the launcher's own table; SIZE_MAX when generated (iterated) */
  fcl_value_type type;
  unsigned index;
  size_t size;
  bool has_last;
  fcl_value last;
} fcl__param_arg;

typedef struct {
  size_t arg; /* which fcl__param_arg it drives */
  fcl_generator gen;
  size_t count; /* values per cycle (known for range and list; SIZE_MAX for callbacks) */
} fcl__iterated;

typedef enum { COPY_H2D, COPY_D2H, COPY_D2D } fcl__copy_kind;

typedef struct {
  fcl__copy_kind kind;
  bool rect;
  const void *src_host;
  void *dst_host;
  fcl_mem *src, *dst;
  size_t src_offset, dst_offset, bytes;
  fcl_rect r;
} fcl__copy;

struct fcl_param_set {
  const fcl_launcher *owner;
  size_t count;
  const fcl__param_decl *decls; /* the owner's table */
  fcl_value *values;
  bool *set;
};

struct fcl_launcher {
  fcl__launcher_kind kind;
  char *name;
  bool trace;
  /* statistics */
  fcl_event **events;
  size_t num_events, cap_events;
  fcl_launch_stats stats;
  size_t bytes_per_launch;
  /* the parameter table: own parameters, or the union for lists */
  size_t num_decls;
  fcl__param_decl *decls;
  /* kernel and iterative */
  fcl_program *program;
  fcl_kernel *kernel; /* fixed arguments set */
  char *kernel_name;
  fcl_queue *queue;
  unsigned work_dim;
  size_t global[3], local[3];
  bool has_local;
  size_t num_param_args;
  fcl__param_arg *param_args;
  size_t num_iterated;
  fcl__iterated *iterated;
  bool barrier;
  fcl_work_size_fn size_fn; /* per-call work sizes, with its scratch of own-order values */
  void *size_user;
  void (*size_destroy)(void *user);
  fcl_value *size_values;
  fcl_arg *fixed; /* kept for tracing and fcl_launcher_rebind */
  size_t num_fixed;
  /* host */
  fcl_host_fn host_fn;
  void *host_user;
  bool host_enqueues; /* fn only enqueues on the queue: a list need not wait before it */
  /* copy */
  fcl__copy copy;
  /* list: members and, per member, the map from its table to the list's */
  fcl_launcher **steps;
  size_t **maps;
  size_t num_steps, cap_steps;
};

/* Common to every kind (launcher.c). */
fcl_status fcl__launcher_new(fcl__launcher_kind kind, const char *name, fcl_launcher **out);
/* Keep event for statistics when queue profiles (retains it). */
void fcl__launcher_record(fcl_launcher *l, fcl_queue *queue, fcl_event *event);
/* Add a parameter to a table, or find the same-named one; a type clash is an error. */
fcl_status fcl__decl_add(fcl_launcher *l, const char *name, fcl_value_type type, size_t *pos);

/* Calls with parameter values already resolved: values[map ? map[j] : j] for own decl j. */
fcl_status fcl__kernel_call(fcl_launcher *l, fcl_queue *q, unsigned num_wait,
                            fcl_event *const *wait, const fcl_value *values, const bool *set,
                            const size_t *map, fcl_event **event);
fcl_status fcl__copy_call(fcl_launcher *l, fcl_queue *q, unsigned num_wait, fcl_event *const *wait,
                          fcl_event **event);
void fcl__kernel_destroy(fcl_launcher *l);
void fcl__list_destroy(fcl_launcher *l);
fcl_status fcl__list_call(fcl_launcher *l, fcl_queue *q, unsigned num_wait, fcl_event *const *wait,
                          const fcl_value *values, const bool *set, fcl_event **event);

/* Tracing (trace.c). */
bool fcl__trace_matches(const char *launcher_name, const char *kernel_name);
void fcl__trace_launch(const fcl_launcher *l, unsigned work_dim, const size_t *global,
                       const size_t *local, const fcl_value *values, const size_t *map);

size_t fcl__value_size(fcl_value_type type);
/* The OpenCL C spelling(s) a parameter type must match ("float"); NULL for buffers/local. */
bool fcl__value_type_matches(fcl_value_type type, const fcl_kernel_arg_info *arg);

#endif
