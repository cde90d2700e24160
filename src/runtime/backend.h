/* The device backend table: what the runtime asks of a device API (not installed).
 *
 * Every object of the runtime's public API that belongs to a device API (platforms,
 * devices, contexts, queues, events, memory, programs and kernels) carries the table of the
 * backend that made it, and the runtime's public functions check their arguments, count host
 * syncs, then call through it. A backend fills one table (src/runtime/<name>/) and never sees
 * another's objects. docs/extending.md, "Adding a backend", says what each entry must do. */
#ifndef FLOWCL_SRC_RUNTIME_BACKEND_H
#define FLOWCL_SRC_RUNTIME_BACKEND_H

#include <stdatomic.h>

#include "flowcl/runtime.h"

typedef struct fcl__backend fcl__backend;
struct fcl__vkfft;        /* vkfft.h */
struct fcl__vkfft_config; /* vkfft.h */

/* A platform and a device: the backend's native handles; made once, never freed. */
struct fcl_platform {
  const fcl__backend *backend;
  void *native;
};
struct fcl_device {
  const fcl__backend *backend;
  void *native;
  fcl_platform *platform;
};

/* A queue: the backend's native queue (an OpenCL command queue, a CUDA stream) and its device. */
struct fcl_queue {
  const fcl__backend *backend;
  atomic_int refs;
  void *native;
  fcl_device *device;
  unsigned flags; /* FCL_QUEUE_* it was made with */
};

/* An event: the backend's native event (an OpenCL event, a CUDA event with its stream's
 * record). */
struct fcl_event {
  const fcl__backend *backend;
  atomic_int refs;
  void *native;
};

/* Memory: the backend's native allocation (an OpenCL buffer, a CUDA device pointer). */
struct fcl_mem {
  const fcl__backend *backend;
  atomic_int refs;
  void *native;
  size_t size;
  fcl_mem_kind kind;
  uint64_t serial; /* fcl__mem_serial's at creation: never reused (fcl_mem_serial) */
};
/* The next memory object's serial number (1, 2, ...; thread safe). */
uint64_t fcl__mem_serial(void);
/* A new memory object of backend b (one reference, a fresh serial), native not yet set; NULL
 * where out of memory. */
fcl_mem *fcl__mem_new(const fcl__backend *b, fcl_mem_kind kind, size_t size);

/* What a device API tells of its vendor's hardware beyond fcl_device_info (0 or -1: unknown). */
typedef struct {
  unsigned simd_width;    /* warp or wavefront width */
  int cc_major, cc_minor; /* NVIDIA's compute capability */
} fcl__device_vendor;

struct fcl__backend {
  const char *name; /* "opencl" */
  /* Platforms and devices. count and get enumerate the backend's platforms (get: index below
   * the count; the object made once and kept); platform_info fills what fcl_platform_info holds
   * but id (set); platform_device gives its index-th device (FCL_ERR_NOT_FOUND past the last);
   * device_info fills fcl_device_info but id and platform (set; the rest zeroed);
   * device_vendor the vendor's attributes it can read (info: the device's). */
  fcl_status (*platform_count)(unsigned *count);
  fcl_status (*platform_get)(unsigned index, fcl_platform **platform);
  fcl_status (*platform_info)(const fcl_platform *p, fcl_platform_info *info);
  fcl_status (*platform_device)(const fcl_platform *p, unsigned index, fcl_device **device);
  fcl_status (*device_info)(const fcl_device *d, fcl_device_info *info);
  fcl_status (*device_vendor)(const fcl_device *d, const fcl_device_info *info,
                              fcl__device_vendor *out);
  /* Contexts. create fills c->native, c->devices (flowcl's, in the API's order), c->num_devices
   * and c->native_devices for devices of this backend (checked); destroy frees them. */
  fcl_status (*context_create)(fcl_device *const *devices, unsigned num_devices, fcl_context *c);
  void (*context_destroy)(fcl_context *c);
  /* Queues. create fills q->native (and nothing else) for device, flags already validated;
   * destroy releases the native queue. finish blocks the host (the caller counts the sync). */
  fcl_status (*queue_create)(const fcl_context *context, const fcl_device *device, unsigned flags,
                             fcl_queue *q);
  void (*queue_destroy)(fcl_queue *q);
  fcl_status (*queue_flush)(fcl_queue *q);
  fcl_status (*queue_finish)(fcl_queue *q);
  /* A marker (barrier: also holding back later commands) after the wait list. */
  fcl_status (*queue_marker)(fcl_queue *q, bool barrier, unsigned num_wait, fcl_event *const *wait,
                             fcl_event **event);
  /* Events. Every enqueue entry takes flowcl's wait list (already checked: num_wait events, none
   * NULL, all of this backend) and, when event is not NULL, makes *event (fcl__event_new).
   * release frees the native event; wait blocks the host (the caller counts the sync) and
   * reports an event that ended in error by index; status is FCL_EVENT_* or a negative code. */
  void (*event_release)(fcl_event *e);
  fcl_status (*events_wait)(unsigned n, fcl_event *const *events);
  fcl_status (*event_status)(const fcl_event *e, int *status);
  fcl_status (*event_on_complete)(fcl_event *e, fcl_event_callback callback, void *user);
  fcl_status (*user_event_create)(const fcl_context *context, fcl_event **event);
  fcl_status (*user_event_set)(fcl_event *e, int status); /* FCL_EVENT_COMPLETE or < 0 */
  fcl_status (*event_profile)(const fcl_event *e, fcl_event_times *times);
  /* Programs. prelude: the kernel vocabulary in the backend's language, put before every
   * source (its last line restarts the line numbering); build_options: always passed to the
   * compiler (OpenCL: argument metadata). create_source makes p->native from p->source (the
   * prelude, then the caller's text); create_binaries from one binary per given device;
   * destroy releases it. build compiles p->native for every device of the context (the caller
   * turns a failure into FCL_ERR_BUILD_FAILED with the logs); load replaces p->native by a
   * program built from one binary per context device (nothing changed on failure);
   * build_log is a device's log (malloc'd, NULL when none); binaries fills one malloc'd binary
   * and its size per context device; build_status a device's; load_meta fills p->kernels and
   * p->num_kernels (cached_meta: the cache's copy of the argument metadata, for binaries that
   * lost theirs). */
  const char *prelude;
  const char *build_options;
  fcl_status (*program_create_source)(fcl_program *p);
  fcl_status (*program_create_binaries)(fcl_program *p, unsigned n, fcl_device *const *devices,
                                        const size_t *sizes, const unsigned char *const *binaries);
  void (*program_destroy)(fcl_program *p);
  fcl_status (*program_build)(fcl_program *p, const char *options);
  fcl_status (*program_load)(fcl_program *p, const size_t *sizes,
                             const unsigned char *const *binaries, const char *options);
  char *(*program_build_log)(const fcl_program *p, unsigned device_index);
  fcl_status (*program_binaries)(fcl_program *p, size_t *sizes, unsigned char **binaries);
  fcl_status (*program_build_status)(const fcl_program *p, const fcl_device *d,
                                     fcl_build_status *status);
  fcl_status (*program_load_meta)(fcl_program *p, const char *cached_meta);
  /* VkFFT plans (vkfft.h; NULL where the backend has no VkFFT build): the plan's backend
   * object, its launch on a queue of this backend, its freeing, and the local memory VkFFT's
   * kernels take on a device of the backend. */
  fcl_status (*vkfft_plan)(fcl_queue *queue, const struct fcl__vkfft_config *config,
                           const char *what, struct fcl__vkfft **out);
  fcl_status (*vkfft_append)(struct fcl__vkfft *plan, fcl_queue *queue, fcl_mem *input,
                             fcl_mem *buffer, int direction, const char *what);
  void (*vkfft_destroy)(struct fcl__vkfft *plan);
  fcl_status (*vkfft_local_mem)(const fcl_device *d, size_t *bytes);
  /* Kernels. create fills k->native with the kernel called name of a built program (k->meta and
   * k->values set); destroy releases it. set_arg gives argument index a by-value (how FCL__VALUE:
   * size bytes at value), a buffer (FCL__BUFFER: value is the fcl_mem, NULL for a NULL
   * pointer; the backend records its native handle in k->values[index].native) or local memory
   * (FCL__LOCAL: size bytes), the kind already checked. enqueue launches k (work sizes checked,
   * FCL_LAUNCH_G_TIMES_L applied); work_group_info fills what fcl_kernel_work_group_info holds. */
  fcl_status (*kernel_create)(fcl_program *p, const char *name, fcl_kernel *k);
  void (*kernel_destroy)(fcl_kernel *k);
  fcl_status (*kernel_set_arg)(fcl_kernel *k, unsigned index, int how, size_t size,
                               const void *value);
  fcl_status (*kernel_enqueue)(fcl_kernel *k, fcl_queue *q, unsigned dim, const size_t *global,
                               const size_t *local, const size_t *offset, unsigned num_wait,
                               fcl_event *const *wait, fcl_event **event);
  fcl_status (*kernel_work_group_info)(const fcl_kernel *k, const fcl_device *d,
                                       fcl_kernel_work_group_info *info);
  /* Memory. create fills m->native (kind, size set; host as fcl_mem_create says); destroy
   * releases it. The transfers get ranges already checked; a blocking one has been counted as a
   * host sync. */
  fcl_status (*mem_create)(fcl_context *context, fcl_mem *m, void *host);
  void (*mem_destroy)(fcl_mem *m);
  /* Host memory that non-blocking transfers use without staging (fcl_host_alloc); NULL: malloc
   * and free (a backend whose transfers of any host memory do not wait). */
  fcl_status (*host_alloc)(fcl_context *context, size_t bytes, void **host);
  void (*host_free)(fcl_context *context, void *host);
  fcl_status (*mem_write)(fcl_queue *q, fcl_mem *dst, size_t offset, size_t bytes, const void *host,
                          bool blocking, unsigned num_wait, fcl_event *const *wait,
                          fcl_event **event);
  fcl_status (*mem_read)(fcl_queue *q, const fcl_mem *src, size_t offset, size_t bytes, void *host,
                         bool blocking, unsigned num_wait, fcl_event *const *wait,
                         fcl_event **event);
  fcl_status (*mem_copy)(fcl_queue *q, const fcl_mem *src, size_t src_offset, fcl_mem *dst,
                         size_t dst_offset, size_t bytes, unsigned num_wait, fcl_event *const *wait,
                         fcl_event **event);
  fcl_status (*mem_fill)(fcl_queue *q, fcl_mem *dst, const void *pattern, size_t pattern_size,
                         size_t offset, size_t bytes, unsigned num_wait, fcl_event *const *wait,
                         fcl_event **event);
  /* Make m exist on q's device now, blocking (contents undefined afterwards); NULL where memory
   * exists once created (no wait, no host sync counted). */
  fcl_status (*mem_commit)(fcl_queue *q, fcl_mem *m);
  /* Rectangles: write (host to dst), read (src to host), copy (src to dst). */
  fcl_status (*mem_rect)(fcl_queue *q, const fcl_mem *src, fcl_mem *dst, void *host,
                         const fcl_rect *rect, bool blocking, unsigned num_wait,
                         fcl_event *const *wait, fcl_event **event);
  fcl_status (*mem_map)(fcl_queue *q, fcl_mem *m, unsigned flags, size_t offset, size_t bytes,
                        unsigned num_wait, fcl_event *const *wait, void **host);
  fcl_status (*mem_unmap)(fcl_queue *q, fcl_mem *m, void *host, unsigned num_wait,
                          fcl_event *const *wait, fcl_event **event);
  /* Memory shared between processes (fcl_mem_share; NULL where the backend cannot share):
   * share writes FCL_MEM_SHARE_BYTES for a device allocation m; open_shared fills m->native (m
   * zeroed but backend, refs, kind and serial) and m->size from another process's share. */
  fcl_status (*mem_share)(const fcl_mem *m, unsigned char *share);
  fcl_status (*mem_open_shared)(fcl_context *context, fcl_mem *m, const unsigned char *share);
  /* Links (fcl_link; NULL where the backend has none). supported says why not; id makes a
   * group's id; create fills l->native (context, ranks and rank set) and blocks until the group
   * has joined; exchange enqueues the checked messages as one group on q; destroy frees
   * l->native, abort: at once. */
  fcl_status (*link_supported)(const fcl_device *d);
  fcl_status (*link_id)(const fcl_device *d, unsigned char *id);
  fcl_status (*link_create)(fcl_link *l, const unsigned char *id);
  fcl_status (*link_exchange)(fcl_link *l, fcl_queue *q, unsigned n, const fcl_link_message *msg);
  void (*link_destroy)(fcl_link *l, bool abort);
};

/* A link: the backend's native group (an NCCL communicator), its context and place. */
struct fcl_link {
  const fcl__backend *backend;
  void *native;
  fcl_context *context; /* retained */
  int ranks, rank;
  double timeout; /* fcl_link_timeout's, when it was made */
};

/* A queue object around a native queue of backend (refs 1). */
fcl_status fcl__queue_new(const fcl__backend *backend, fcl_device *device, unsigned flags,
                          fcl_queue **out);

/* An event object around a native event of backend (refs 1, taking over native's reference)
 * into *out; on failure native is released through the backend. */
fcl_status fcl__event_new(const fcl__backend *backend, void *native, fcl_event **out);

/* num_wait events in wait, none NULL and all of one backend, else an error naming argument
 * pos, the wait list called name. */
fcl_status fcl__check_waits(unsigned num_wait, fcl_event *const *wait, int pos, const char *name);

extern const fcl__backend fcl__opencl_backend;
#if FLOWCL_HAVE_CUDA
extern const fcl__backend fcl__cuda_backend;
#endif

/* The backends built, in the order their platforms are numbered (backends.c). */
extern const fcl__backend *const fcl__backends[];
extern const size_t fcl__num_backends;

#endif
