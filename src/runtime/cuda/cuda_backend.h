/* The CUDA backend's own declarations (not installed): its objects, its table's entries (one
 * file per kind of object), NVRTC compilation (nvrtc.c). */
#ifndef FLOWCL_SRC_RUNTIME_CUDA_CUDA_BACKEND_H
#define FLOWCL_SRC_RUNTIME_CUDA_CUDA_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda.h>
#include <pthread.h>

#include "../backend.h"
#include "../runtime_impl.h"
#include "flowcl/error.h"

enum { FCL__CUDA_RECT_WORDS = 5 }; /* rectangle copy word sizes: 1, 2, 4, 8, 16 bytes */

/* A device: its driver handle and ordinal, and its primary context while contexts hold it. */
typedef struct {
  CUdevice device;
  int ordinal;
  CUcontext primary; /* retained by the first fcl_context, released with the last */
  int contexts;
  CUstream callbacks;   /* where event callbacks wait (made on first use, with the context) */
  CUmodule rect_module; /* the rectangle copies (rect_copy.c), loaded on first use */
  CUfunction rect_copy[FCL__CUDA_RECT_WORDS];
  /* Links of the device the watchdog aborted and not yet released (link_watch.c), and the
   * first one's reason, both under queue.c's lock: while any, every host wait on the device
   * fails (fcl__cuda_waited). */
  int failed_links;
  char link_failure[256];
  /* Words for user events (user_words.c): pages of mapped page-locked memory made on first use
   * and freed with the primary context, the free words in a list. */
  struct fcl__cuda_word *free_words;
  struct fcl__cuda_word_page *word_pages;
  /* User events not yet set, and the memory whose freeing waits for them (deferred_free.c). */
  int user_events_pending;
  struct fcl__cuda_mem *deferred;
  /* Page-locked blocks that stage the caller's pageable memory (host_stage.c): every one made,
   * the free ones; freed with the primary context. */
  struct fcl__cuda_stage *stages, *free_stages;
} fcl__cuda_device;

/* A word of mapped page-locked memory that streams wait for (user events). Its value only grows:
 * a user event waits for the value after the one the word had when it took it, so a stream
 * still to reach a wait on the word's earlier event is not held by the next one. */
typedef struct fcl__cuda_word {
  struct fcl__cuda_word *next;
  volatile unsigned *host;
  CUdeviceptr device;
} fcl__cuda_word;
/* A free word of device's (its context current), or an error. Freeing page-locked memory waits
 * for the whole device, which a stream held by another user event might never reach: words go
 * back to the device's list instead (fcl__cuda_word_give), and the pages with the context
 * (fcl__cuda_words_free). */
fcl_status fcl__cuda_word_take(const fcl_device *device, fcl__cuda_word **out);
void fcl__cuda_word_give(const fcl_device *device, fcl__cuda_word *word);
void fcl__cuda_words_free(fcl__cuda_device *d);

/* After a host wait on device: FCL_OK, or the failure of its aborted links (their exchanges'
 * data are lost), else the wait's own error r (call names the wait). */
fcl_status fcl__cuda_waited(const fcl_device *device, CUresult r, const char *call);
/* A link of device aborted (why), or such a link released (queue.c). */
void fcl__cuda_device_link_failed(const fcl_device *device, const char *why);
void fcl__cuda_device_link_released(const fcl_device *device);

/* A rectangle (region r: bytes, rows, slices) between device addresses, rows and slices at the
 * given byte pitches, enqueued on q as a kernel (rect_copy.c); unload frees a device's kernels
 * (before its primary context goes). */
fcl_status fcl__cuda_rect_copy(fcl_queue *q, CUdeviceptr src, CUdeviceptr dst, const size_t *r,
                               size_t sr, size_t ss, size_t dr, size_t ds);
void fcl__cuda_rect_unload(fcl__cuda_device *d);

/* Makes device's primary context current on the calling thread (every entry that calls the
 * driver on a device's objects does first: flowcl's threads never set one). */
fcl_status fcl__cuda_current(const fcl_device *device);

/* User events a command runs after (retained): those not complete when it, or an earlier
 * command of its queue, waited for them, directly or through another command's event. CUDA
 * cannot drop the commands behind a user event that fails, so they run; their events end in
 * its error instead (fcl__cuda_gates_failed). */
typedef struct {
  fcl_event **events;
  unsigned count, capacity;
} fcl__cuda_gates;
/* The first failure among g's user events (their negative status), else 0. */
int fcl__cuda_gates_failed(const fcl__cuda_gates *g);
/* Release g's user events. */
void fcl__cuda_gates_clear(fcl__cuda_gates *g);
/* A command waits for the wait list: g (its queue's) drops its completed user events and takes
 * the list's user events and those the list's events ran after (gates.c). */
fcl_status fcl__cuda_gates_wait(fcl__cuda_gates *g, unsigned num_wait, fcl_event *const *wait);
/* to takes from's user events that are not complete. */
fcl_status fcl__cuda_gates_copy(const fcl__cuda_gates *from, fcl__cuda_gates *to);
/* FCL_OK, or FCL_ERR_CUDA with the failure of one of g's user events (what: the command or
 * commands that ran after it). */
fcl_status fcl__cuda_gates_report(const fcl__cuda_gates *g, const char *what);

/* A queue: its stream and what its commands run after (under lock). */
typedef struct {
  CUstream stream;
  pthread_mutex_t lock;
  fcl__cuda_gates gates;
} fcl__cuda_queue;
static inline CUstream fcl__cuda_stream(const fcl_queue *q) {
  return ((const fcl__cuda_queue *)q->native)->stream;
}
/* Wait on the host until q's stream is idle (call names the wait): FCL_OK, or the failure of
 * an aborted link of its device (fcl__cuda_waited) or of a user event its commands ran after. */
fcl_status fcl__cuda_queue_sync(fcl_queue *q, const char *call);

/* An event: the CUDA event recorded after its command (end) and, on a profiling queue, one
 * recorded before it (start); the device whose context made them; the user events its command
 * ran after. */
typedef struct fcl__cuda_callback fcl__cuda_callback;
typedef struct {
  CUevent start, end;
  const fcl_device *device;
  fcl__cuda_gates gates;
  /* A user event (fcl_user_event_create) has no CUDA event: a word the device reads, which
   * streams wait for until it reaches target (cuStreamWaitValue32), set to target by the host;
   * its status, and the callbacks to call when it is set. */
  bool user;
  fcl__cuda_word *word;
  unsigned target;
  int status;
  fcl__cuda_callback *callbacks;
  pthread_mutex_t lock;
} fcl__cuda_event;
void fcl__cuda_event_free(fcl__cuda_event *e);

/* Around every enqueue on q (queue.c): before makes q's context current, makes the stream wait
 * for the wait list and, when an event is wanted or q profiles, makes *ev (its start recorded
 * on a profiling queue); after records *ev's end after the command and turns it into *event
 * (event NULL: freed). */
fcl_status fcl__cuda_before(fcl_queue *q, unsigned num_wait, fcl_event *const *wait,
                            bool want_event, fcl__cuda_event **ev);
fcl_status fcl__cuda_after(fcl_queue *q, fcl__cuda_event *ev, fcl_event **event);

/* Memory: a device pointer; for pinned and registered memory also the host's address. A map of
 * device memory goes through a host copy (maps: the open ones). */
typedef struct fcl__cuda_mapping {
  struct fcl__cuda_mapping *next;
  void *staging;
  size_t offset, bytes;
  unsigned flags;
} fcl__cuda_mapping;
typedef struct fcl__cuda_mem {
  CUdeviceptr ptr;
  void *host;
  bool registered;
  bool opened; /* another process's memory, opened by cuIpcOpenMemHandle (mem_share.c) */
  const fcl_device *device;
  fcl__cuda_mapping *maps;
  fcl_mem_kind kind;
  struct fcl__cuda_mem *next_deferred;
} fcl__cuda_mem;
/* Free cm's memory and cm now (mem.c). */
void fcl__cuda_mem_free(fcl__cuda_mem *cm);
/* Freeing device or page-locked memory waits for the whole device (cuMemFree, cuMemFreeHost),
 * and a stream held by a user event does not finish before the event is set, maybe by the
 * thread that frees: while a device has user events not yet set, frees wait in a list
 * (deferred_free.c). hold counts them (+1 made, -1 set or released unset); free_later keeps cm
 * for later where any is pending (false: free it now); free_deferred frees the list once none
 * is, or at once with force (the last context going). */
void fcl__cuda_hold(const fcl_device *device, int delta);
bool fcl__cuda_user_events_pending(const fcl_device *device);
bool fcl__cuda_free_later(fcl__cuda_mem *cm);
void fcl__cuda_free_deferred(const fcl_device *device, bool force);

/* Non-blocking transfers with the caller's pageable memory (host_stage.c). The driver stages
 * pageable memory itself after waiting for the stream (CUDA's "API synchronization behavior"),
 * so such a transfer would wait for every command before it, and behind a user event that the
 * calling thread sets later, forever. They go through page-locked blocks instead. rows: where
 * the caller's bytes lie (depth slices of height rows of width bytes from host, pitches in
 * bytes), packed in the block. */
typedef struct {
  unsigned char *host;
  size_t width, height, depth, row_pitch, slice_pitch;
} fcl__cuda_rows;
typedef struct fcl__cuda_stage fcl__cuda_stage;
/* Whether the caller's rows are page-locked (copied by the device without staging). */
bool fcl__cuda_rows_pinned(const fcl_device *device, const fcl__cuda_rows *rows);
/* A free block of device's holding rows packed (made if none; the context current) at *block;
 * a write's rows copied into it now. */
fcl_status fcl__cuda_stage_take(const fcl_device *device, const fcl__cuda_rows *rows, bool write,
                                fcl__cuda_stage **stage, void **block);
/* Enqueued on stream after the copy that uses the block: a read's rows copied out of it, then
 * the block freed for the next take, by a host function (a read's failure: as cancelled below,
 * its rows not copied out; a write's: the block stays taken). */
fcl_status fcl__cuda_stage_give(fcl__cuda_stage *stage, bool read, CUstream stream);
/* Instead of fcl__cuda_stage_give where the copy failed to enqueue (or a part of it): the block
 * is free again once the stream has passed what was enqueued (an event; nothing copied out),
 * or, where no event can be recorded, stays taken until the device's blocks are freed. */
void fcl__cuda_stage_cancel(fcl__cuda_stage *stage, CUstream stream);
/* fcl_host_alloc and fcl_host_free: a block lent to the caller, and given back. */
fcl_status fcl__cuda_host_alloc(fcl_context *context, size_t bytes, void **host);
void fcl__cuda_host_free(fcl_context *context, void *host);
/* Every block of device, with its last context (current): after the device is idle, or left
 * where a user event is pending. */
void fcl__cuda_stages_free(const fcl_device *device);

/* A program: the cubin and the module loaded from it, the compiler's log, the module's
 * functions in the order of the program's kernel metadata. */
typedef struct {
  unsigned char *image;
  size_t size;
  CUmodule module;
  char *log;
  fcl_build_status status;
  CUfunction *functions;
  unsigned num_functions;
} fcl__cuda_program;
/* The function of p's kernel called name (NULL: none). */
CUfunction fcl__cuda_program_function(const fcl_program *p, const char *name);
/* A kernel's name and parameters from its symbol (signature.c): *name and *args malloc'd
 * (names "", OpenCL's type names, kinds, by-value sizes). A symbol of C linkage gives the name
 * alone; FCL_ERR_NOT_SUPPORTED: a mangling not read here. */
fcl_status fcl__cuda_signature(const char *symbol, char **name, unsigned *num_args,
                               fcl__arg_meta **args);
/* The names of the n parameters of kernel from the definition in source, when its parameter
 * list spells n of them (a macro standing for several leaves the names ""). */
void fcl__cuda_arg_names(const char *source, const char *kernel, fcl__arg_meta *args, unsigned n);

/* device.c */
fcl_status fcl__cuda_platform_count(unsigned *count);
fcl_status fcl__cuda_platform_get(unsigned index, fcl_platform **platform);
fcl_status fcl__cuda_platform_info(const fcl_platform *p, fcl_platform_info *info);
fcl_status fcl__cuda_platform_device(const fcl_platform *p, unsigned index, fcl_device **device);
fcl_status fcl__cuda_device_info(const fcl_device *d, fcl_device_info *info);
fcl_status fcl__cuda_device_vendor(const fcl_device *d, const fcl_device_info *info,
                                   fcl__device_vendor *out);
/* context.c */
fcl_status fcl__cuda_context_create(fcl_device *const *devices, unsigned num_devices,
                                    fcl_context *c);
void fcl__cuda_context_destroy(fcl_context *c);
/* queue.c */
fcl_status fcl__cuda_queue_create(const fcl_context *context, const fcl_device *device,
                                  unsigned flags, fcl_queue *q);
void fcl__cuda_queue_destroy(fcl_queue *q);
fcl_status fcl__cuda_queue_flush(fcl_queue *q);
fcl_status fcl__cuda_queue_finish(fcl_queue *q);
fcl_status fcl__cuda_queue_marker(fcl_queue *q, bool barrier, unsigned num_wait,
                                  fcl_event *const *wait, fcl_event **event);
/* mem.c */
fcl_status fcl__cuda_mem_create(fcl_context *context, fcl_mem *m, void *host);
void fcl__cuda_mem_destroy(fcl_mem *m);
fcl_status fcl__cuda_mem_write(fcl_queue *q, fcl_mem *dst, size_t offset, size_t bytes,
                               const void *host, bool blocking, unsigned num_wait,
                               fcl_event *const *wait, fcl_event **event);
fcl_status fcl__cuda_mem_read(fcl_queue *q, const fcl_mem *src, size_t offset, size_t bytes,
                              void *host, bool blocking, unsigned num_wait, fcl_event *const *wait,
                              fcl_event **event);
fcl_status fcl__cuda_mem_copy(fcl_queue *q, const fcl_mem *src, size_t src_offset, fcl_mem *dst,
                              size_t dst_offset, size_t bytes, unsigned num_wait,
                              fcl_event *const *wait, fcl_event **event);
fcl_status fcl__cuda_mem_fill(fcl_queue *q, fcl_mem *dst, const void *pattern, size_t pattern_size,
                              size_t offset, size_t bytes, unsigned num_wait,
                              fcl_event *const *wait, fcl_event **event);
fcl_status fcl__cuda_mem_rect(fcl_queue *q, const fcl_mem *src, fcl_mem *dst, void *host,
                              const fcl_rect *rect, bool blocking, unsigned num_wait,
                              fcl_event *const *wait, fcl_event **event);
fcl_status fcl__cuda_mem_map(fcl_queue *q, fcl_mem *m, unsigned flags, size_t offset, size_t bytes,
                             unsigned num_wait, fcl_event *const *wait, void **host);
fcl_status fcl__cuda_mem_share(const fcl_mem *m, unsigned char *share);
fcl_status fcl__cuda_mem_open_shared(fcl_context *context, fcl_mem *m, const unsigned char *share);
fcl_status fcl__cuda_mem_unmap(fcl_queue *q, fcl_mem *m, void *host, unsigned num_wait,
                               fcl_event *const *wait, fcl_event **event);
/* link.c (built where nccl.h was found) */
typedef struct fcl__cuda_watched fcl__cuda_watched;
/* A link's state: its communicator (NULL once aborted), the lock of every use of it (an
 * exchange's calls, the watch's abort), its exchanges not yet seen complete, and why it was
 * aborted. */
typedef struct fcl__cuda_link {
  struct ncclComm *comm;
  pthread_mutex_t lock;
  const fcl_device *device;
  double timeout; /* seconds an exchange may take from its enqueue; 0: no limit */
  fcl__cuda_watched *pending, *spare;
  int64_t oldest_ns; /* the first pending exchange's enqueue (0: none), read without the lock */
  bool counted;      /* in its device's failed_links */
  char failure[256];
  char trouble[200];           /* an error NCCL or CUDA reported, not yet acted on (the watch's) */
  struct fcl__cuda_link *next; /* the watch's list */
} fcl__cuda_link;
fcl_status fcl__cuda_link_supported(const fcl_device *d);
fcl_status fcl__cuda_link_id(const fcl_device *d, unsigned char *id);
fcl_status fcl__cuda_link_create(fcl_link *l, const unsigned char *id);
fcl_status fcl__cuda_link_exchange(fcl_link *l, fcl_queue *q, unsigned n,
                                   const fcl_link_message *msg);
void fcl__cuda_link_destroy(fcl_link *l, bool abort);
/* Whether NCCL reports an error of cl's communicator (why says which). */
bool fcl__cuda_link_failed(fcl__cuda_link *cl, char *why, size_t size);
/* Aborts cl's communicator: its exchanges on the device end, cl->comm is NULL after. */
void fcl__cuda_link_abort(fcl__cuda_link *cl);
/* link_watch.c: the watchdog. add starts watching cl (cl->timeout set). With cl's lock held:
 * prepare takes an event for the next exchange before its group is enqueued (so that a
 * failure comes before anything is), exchange records it on stream after the group, unprepare
 * gives it back unused (a failed record aborts cl: its group is enqueued and cannot be watched).
 * drain (cl's lock not held, its device's context current) waits until cl's exchanges completed
 * (FCL_OK), the watch aborted cl (its reason) or CUDA reports an error of their stream. remove stops watching (the watch no longer touches cl
 * after it); forget frees what the watch kept of cl and, if it aborted cl, clears the failure
 * from its device's waits. */
fcl_status fcl__cuda_watch_add(fcl__cuda_link *cl);
fcl_status fcl__cuda_watch_prepare(fcl__cuda_link *cl, fcl__cuda_watched **w);
fcl_status fcl__cuda_watch_exchange(fcl__cuda_link *cl, fcl__cuda_watched *w, CUstream stream);
void fcl__cuda_watch_unprepare(fcl__cuda_link *cl, fcl__cuda_watched *w);
fcl_status fcl__cuda_watch_drain(fcl__cuda_link *cl);
void fcl__cuda_watch_remove(fcl__cuda_link *cl);
void fcl__cuda_watch_forget(fcl__cuda_link *cl);
/* program.c */
fcl_status fcl__cuda_program_create_source(fcl_program *p);
fcl_status fcl__cuda_program_create_binaries(fcl_program *p, unsigned n, fcl_device *const *devices,
                                             const size_t *sizes,
                                             const unsigned char *const *binaries);
void fcl__cuda_program_destroy(fcl_program *p);
fcl_status fcl__cuda_program_build(fcl_program *p, const char *options);
fcl_status fcl__cuda_program_load(fcl_program *p, const size_t *sizes,
                                  const unsigned char *const *binaries, const char *options);
char *fcl__cuda_program_build_log(const fcl_program *p, unsigned device_index);
fcl_status fcl__cuda_program_binaries(fcl_program *p, size_t *sizes, unsigned char **binaries);
fcl_status fcl__cuda_program_build_status(const fcl_program *p, const fcl_device *d,
                                          fcl_build_status *status);
fcl_status fcl__cuda_program_load_meta(fcl_program *p, const char *cached_meta);
/* kernel.c */
fcl_status fcl__cuda_kernel_create(fcl_program *p, const char *name, fcl_kernel *k);
void fcl__cuda_kernel_destroy(fcl_kernel *k);
fcl_status fcl__cuda_kernel_set_arg(fcl_kernel *k, unsigned index, int how, size_t size,
                                    const void *value);
fcl_status fcl__cuda_kernel_enqueue(fcl_kernel *k, fcl_queue *q, unsigned dim, const size_t *global,
                                    const size_t *local, const size_t *offset, unsigned num_wait,
                                    fcl_event *const *wait, fcl_event **event);
fcl_status fcl__cuda_kernel_work_group_info(const fcl_kernel *k, const fcl_device *d,
                                            fcl_kernel_work_group_info *info);
/* vkfft.c (with VkFFT) */
struct fcl__vkfft;
struct fcl__vkfft_config;
fcl_status fcl__cuda_vkfft_plan(fcl_queue *queue, const struct fcl__vkfft_config *config,
                                const char *what, struct fcl__vkfft **out);
fcl_status fcl__cuda_vkfft_append(struct fcl__vkfft *plan, fcl_queue *queue, fcl_mem *input,
                                  fcl_mem *buffer, int direction, const char *what);
void fcl__cuda_vkfft_destroy(struct fcl__vkfft *plan);
fcl_status fcl__cuda_vkfft_local_mem(const fcl_device *d, size_t *bytes);
/* event.c */
void fcl__cuda_event_release(fcl_event *e);
fcl_status fcl__cuda_events_wait(unsigned n, fcl_event *const *events);
fcl_status fcl__cuda_event_status(const fcl_event *e, int *status);
fcl_status fcl__cuda_event_profile(const fcl_event *e, fcl_event_times *times);
fcl_status fcl__cuda_event_on_complete(fcl_event *e, fcl_event_callback callback, void *user);
fcl_status fcl__cuda_user_event_create(const fcl_context *context, fcl_event **event);
fcl_status fcl__cuda_user_event_set(fcl_event *e, int status);

/* The CUDA prelude (kernels/prelude_cuda.h, embedded at build time). */
extern const char fcl__prelude_cuda[];

/* What one NVRTC compilation made: the image (a cubin, or PTX text with its NUL) and the
 * compiler's log (NULL when empty), both malloc'd. */
typedef struct {
  char *image;
  size_t size;
  char *log;
} fcl__nvrtc_output;

/* Compiles source (prelude_length bytes of prelude, then the program's text) called name for
 * compute capability cc_major.cc_minor: a cubin, or PTX when ptx. options are OpenCL-style build
 * options: -D macros become #define lines between the prelude and the text (numbered from 1
 * again), -I and NVRTC's own --options pass, OpenCL's -cl- switches with a CUDA meaning are
 * translated (-cl-nv-maxrregcount=N, -cl-fast-relaxed-math, ...), its math hints are dropped;
 * anything else is FCL_ERR_INVALID_ARGUMENT naming it. Errors: FCL_ERR_BUILD_FAILED when NVRTC
 * rejects the text (out->log says why), FCL_ERR_CUDA for NVRTC's own failures. out is filled
 * either way; free it with fcl__nvrtc_output_free. */
fcl_status fcl__nvrtc_compile(const char *source, size_t prelude_length, const char *name,
                              const char *options, int cc_major, int cc_minor, bool ptx,
                              fcl__nvrtc_output *out);
void fcl__nvrtc_output_free(fcl__nvrtc_output *out);
/* NVRTC's version (part of a cached binary's key). */
fcl_status fcl__nvrtc_version(int *major, int *minor);

#endif
