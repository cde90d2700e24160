/* Struct layouts shared by the runtime's source files (not installed). */
#ifndef FLOWCL_SRC_RUNTIME_IMPL_H
#define FLOWCL_SRC_RUNTIME_IMPL_H

#include <pthread.h>
#include <stdatomic.h>

#include "backend.h"
#include "flowcl/runtime.h"

typedef struct fcl__memo_entry fcl__memo_entry;

struct fcl_context {
  const fcl__backend *backend;
  atomic_int refs;
  void *native; /* an OpenCL context, a CUDA primary context */
  unsigned num_devices;
  fcl_device **devices;
  void *native_devices;      /* the backend's own list of them (OpenCL: cl_device_id[]) */
  pthread_mutex_t memo_lock; /* recursive: a creator may use the context */
  fcl__memo_entry *memo;     /* newest first */
  /* References to this context held by memoized objects (a program retains its context): when
   * only those remain, the memo is destroyed, which breaks the cycle. */
  atomic_int memo_refs;
};

/* A context object of backend with its memo ready (refs 1; native and devices unset), and its
 * freeing (context.c). */
fcl_status fcl__context_new(const fcl__backend *backend, fcl_context **out);
void fcl__context_free(fcl_context *c);

/* Destroys every memoized object (context_memo.c). */
void fcl__context_memo_destroy_all(fcl_context *context);

/* Argument metadata of one kernel, shared by every fcl_kernel of that name. */
typedef struct {
  char *name;
  char *type_name;
  fcl_arg_kind kind;
  size_t size;
} fcl__arg_meta;

typedef struct {
  char *name;
  unsigned num_args; /* OpenCL's clGetKernelInfo writes a cl_uint here: the same type */
  fcl__arg_meta *args;
} fcl__kernel_meta;

struct fcl_program {
  atomic_int refs;
  fcl_context *context;
  void *native; /* the backend's program (an OpenCL program, a CUDA module) */
  char *source; /* the text compiled: the prelude, then the caller's source; NULL for binary /
                 * IL programs */
  char *origin;
  char *options; /* of the last build, FLOWCL_BUILD_OPTIONS included */
  bool from_cache;
  bool built_in; /* built-in kernels: ready at creation, nothing to build */
  char **logs;   /* one per context device, from the last build */
  size_t num_kernels;
  fcl__kernel_meta *kernels; /* filled after a successful build */
  pthread_mutex_t lock;      /* guards lazily read binaries */
  unsigned char **binaries;  /* one per context device, read on demand */
  size_t *binary_sizes;
};

/* What a launch needs to know of one argument's current value (kept for capture). */
typedef struct {
  enum {
    FCL__UNSET,
    FCL__VALUE,
    FCL__BUFFER,
    FCL__LOCAL,
    FCL__IMAGE,
    FCL__SAMPLER,
    FCL__QUEUE
  } how;
  size_t size;             /* value bytes, or local bytes */
  unsigned char value[32]; /* by-value bytes up to 32 */
  unsigned char *big;      /* larger by-value arguments */
  void *native;            /* the backend's buffer (or OpenCL image) */
} fcl__arg_value;

struct fcl_kernel {
  const fcl__backend *backend;
  void *native; /* an OpenCL kernel, a CUDA function */
  fcl_program *program;
  const fcl__kernel_meta *meta;
  fcl__arg_value *values;
};

/* Argument index of k exists and is of kind want (or of an unknown kind; a __constant pointer
 * passes for FCL_ARG_GLOBAL), else FCL_ERR_INVALID_ARGUMENT naming it and what it is. */
fcl_status fcl__kernel_check_kind(const fcl_kernel *k, unsigned index, fcl_arg_kind want);

/* Kernel metadata: read from the driver after a build, or parsed from a cache entry. */
fcl_status fcl__program_load_meta(fcl_program *program, const char *cached_meta);
/* meta->args from serialized metadata (the cache's) for the kernel meta->name; false when it
 * is not there. */
bool fcl__program_meta_parse(const char *text, fcl__kernel_meta *meta);
/* Serialized metadata of a built program (malloc'd text) for the cache. */
char *fcl__program_meta_serialize(const fcl_program *program);
void fcl__program_meta_free(fcl_program *program);

/* Binary cache (program_cache.c). */
typedef struct {
  unsigned char *binary;
  size_t binary_size;
  char *log;
  char *meta;
} fcl__cache_entry;

bool fcl__cache_enabled(void);
/* 64 hex chars + NUL into key: hash of source, options, included headers, device identity and
 * flowcl version. */
fcl_status fcl__cache_key(const char *source, const char *options, const fcl_device *device,
                          char key[65]);
/* true when a valid entry was found; a corrupt one is logged, removed and reported missing. */
bool fcl__cache_load(const char *key, fcl__cache_entry *entry);
/* Write-then-rename; failures are logged (the cache is an optimisation), never fatal. */
void fcl__cache_store(const char *key, const fcl__cache_entry *entry);
void fcl__cache_entry_free(fcl__cache_entry *entry);
/* Wait for the cross-process lock of key (a lock file beside the entries); its descriptor, or
 * -1 when the cache has no directory to hold it (then nothing is locked). Hold it from the
 * cache lookup until the entry is stored. */
int fcl__cache_lock(const char *key);
void fcl__cache_unlock(int fd);
/* false (with the reason in *why) when a driver's binary is known to be incomplete: such a binary
 * is neither cached nor loaded, since the driver may abort on it (program_binary_check.c). */
bool fcl__binary_complete(const unsigned char *binary, size_t size, const char **why);

/* Index of a device in the context, or -1. */
int fcl__context_device_index(const fcl_context *context, const fcl_device *device);

/* Size in bytes of an OpenCL C by-value type name ("float4" -> 16), 0 when unknown. */
size_t fcl__cl_type_size(const char *type_name);

/* A program object with its bookkeeping (source copied after the prelude when non-NULL);
 * program.c. */
fcl_status fcl__program_new(fcl_context *context, const char *source, const char *origin,
                            fcl_program **out);

/* Shared by the program functions of the runtime and of its backends (program.c): the caller's
 * options with FLOWCL_BUILD_OPTIONS and the backend's own (malloc'd); every device's build log
 * read into p->logs; the logs shown (warnings, or debug when only the NVIDIA compiler's notes);
 * FCL_ERR_BUILD_FAILED for the last error of a failed "what" (build, compilation, link), with
 * the logs, the options and the source's origin. */
char *fcl__program_full_options(const fcl_context *context, const char *options);
void fcl__program_collect_logs(fcl_program *p);
/* Writes p's source and options under $FLOWCL_SAVE_PROGRAMS when set (program_save.c). */
void fcl__program_save(const fcl_program *p, const char *options);
void fcl__program_show_warnings(const fcl_program *p, const char *when);
fcl_status fcl__program_build_failure(fcl_program *p, const char *what, const char *options);

/* counters.c: one more program built, compiled from source, one more host wait (fcl_count_*). */
void fcl__count_program_built(void);
void fcl__count_program_compiled(void);
void fcl__count_host_sync(void);

#endif
