/** @file
 * flowcl runtime layer: platforms, devices, contexts, queues, events, programs (with an on-disk
 * binary cache), kernels with typed arguments, launch capture, device characterization.
 *
 * Its objects (fcl_platform, fcl_device, fcl_context, fcl_queue, fcl_event, fcl_mem,
 * fcl_program, fcl_kernel) are opaque; contexts, queues, events, memory and programs are
 * reference counted. A function never takes over the caller's reference unless it says so.
 * flowcl/opencl.h converts between them and OpenCL's handles.
 *
 * Thread safety: device queries, fcl_context and fcl_program functions are thread safe once the
 * object is built. An fcl_kernel holds argument values (as cl_kernel does) and is NOT thread
 * safe: give each thread its own fcl_kernel (fcl_kernel_create is cheap; the argument metadata
 * is shared through the program). */
#ifndef FLOWCL_RUNTIME_H
#define FLOWCL_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flowcl/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The flowcl version string ("0.2.0"). */
const char *fcl_version(void);

/* ------------------------------------------------------------------------------------------ */
/* Scalar types                                                                                */
/* ------------------------------------------------------------------------------------------ */

/** The one scalar type enum: element type of arrays, fields and codegen arguments, and (through
 * fcl_value_type, whose scalar values are these) of launcher parameters. */
typedef enum {
  FCL_INT8,      /**< int8_t, OpenCL C char */
  FCL_UINT8,     /**< uint8_t, OpenCL C uchar */
  FCL_INT16,     /**< int16_t, OpenCL C short */
  FCL_UINT16,    /**< uint16_t, OpenCL C ushort */
  FCL_INT32,     /**< int32_t, OpenCL C int */
  FCL_UINT32,    /**< uint32_t, OpenCL C uint */
  FCL_INT64,     /**< int64_t, OpenCL C long */
  FCL_UINT64,    /**< uint64_t, OpenCL C ulong */
  FCL_FLOAT32,   /**< float */
  FCL_FLOAT64,   /**< double (the device needs double support) */
  FCL_COMPLEX64, /**< complex of two floats (real, imaginary): C99 float complex, OpenCL float2 */
  FCL_COMPLEX128 /**< complex of two doubles: C99 double complex, OpenCL double2 */
} fcl_dtype;

/** Bytes of one element (0 for an invalid dtype). */
size_t fcl_dtype_size(fcl_dtype dtype);
/** The OpenCL C type name ("float", "uint", ...; "float2" and "double2" for the complex
 * types). */
const char *fcl_dtype_cl_name(fcl_dtype dtype);

/* ------------------------------------------------------------------------------------------ */
/* Platforms and devices                                                                       */
/* ------------------------------------------------------------------------------------------ */

/** A platform: the devices of one driver (an OpenCL ICD). Owned by the runtime for the life of
 * the process: never released. Native handles: flowcl/opencl.h. */
typedef struct fcl_platform fcl_platform;
/** A device (a GPU, a CPU seen through PoCL). Owned by the runtime for the life of the process:
 * never released; one device has one fcl_device pointer, so pointers compare. */
typedef struct fcl_device fcl_device;

/** Kinds of device, as bits of an fcl_device_type (the values of OpenCL's CL_DEVICE_TYPE_*). */
enum {
  FCL_DEVICE_DEFAULT = 1 << 0,     /**< the platform's default device */
  FCL_DEVICE_CPU = 1 << 1,         /**< a CPU */
  FCL_DEVICE_GPU = 1 << 2,         /**< a GPU */
  FCL_DEVICE_ACCELERATOR = 1 << 3, /**< another accelerator */
  FCL_DEVICE_CUSTOM = 1 << 4       /**< a device without a compiler (built-in kernels only) */
};
/** FCL_DEVICE_* bits. */
typedef unsigned fcl_device_type;
/** Every kind (fcl_context_create_from_type). */
#define FCL_DEVICE_ALL 0xFFFFFFFFu

/** What fcl_platform_get_info reports of a platform. Strings are NUL-terminated and truncated
 * to their buffer. */
typedef struct {
  fcl_platform *id;      /**< the platform */
  char name[256];        /**< CL_PLATFORM_NAME ("Portable Computing Language", "NVIDIA CUDA") */
  char vendor[256];      /**< CL_PLATFORM_VENDOR */
  char version[256];     /**< CL_PLATFORM_VERSION ("OpenCL 3.0 ...") */
  char profile[64];      /**< CL_PLATFORM_PROFILE ("FULL_PROFILE" or "EMBEDDED_PROFILE") */
  char extensions[4096]; /**< CL_PLATFORM_EXTENSIONS, space-separated */
  unsigned num_devices;  /**< devices of every type (0 is not an error) */
} fcl_platform_info;

/** Number of OpenCL platforms (0 when the ICD loader finds none; that is not an error). */
fcl_status fcl_platform_count(unsigned *count);
/** Platform number index (0-based). FCL_ERR_NOT_FOUND when out of range. */
fcl_status fcl_platform_get(unsigned index, fcl_platform **platform);
/** Name, vendor, version, profile, extensions and device count of a platform into info.
 * FCL_ERR_OPENCL when the platform cannot be queried. */
fcl_status fcl_platform_get_info(const fcl_platform *platform, fcl_platform_info *info);
/** Device number index (0-based, all device types) of a platform. */
fcl_status fcl_platform_get_device(const fcl_platform *platform, unsigned index,
                                   fcl_device **device);

/** Every property the runtime knows of a device. Strings are NUL-terminated and truncated to
 * their buffer (extensions_truncated tells when the extension list did not fit). */
typedef struct {
  fcl_device *id;              /**< the device */
  fcl_platform *platform;      /**< CL_DEVICE_PLATFORM */
  char name[256];              /**< CL_DEVICE_NAME */
  char vendor[256];            /**< CL_DEVICE_VENDOR */
  char version[256];           /**< CL_DEVICE_VERSION, "OpenCL 3.0 ..." */
  char driver_version[256];    /**< CL_DRIVER_VERSION */
  char opencl_c_version[256];  /**< CL_DEVICE_OPENCL_C_VERSION ("OpenCL C 1.2 ...") */
  char profile[64];            /**< CL_DEVICE_PROFILE */
  char extensions[8192];       /**< CL_DEVICE_EXTENSIONS, space-separated */
  bool extensions_truncated;   /**< the extension list did not fit in extensions */
  char built_in_kernels[1024]; /**< CL_DEVICE_BUILT_IN_KERNELS, ';'-separated */
  char il_version[256];        /**< SPIR-V versions accepted ("" when none) */
  /** OpenCL version of the device, parsed from version (0 on CUDA). @{ */
  int version_major, version_minor;
  /** @} */
  fcl_device_type type; /**< FCL_DEVICE_GPU, _CPU, _ACCELERATOR... (bits) */
  uint32_t vendor_id;   /**< CL_DEVICE_VENDOR_ID (PCI vendor id on GPUs: 0x10de NVIDIA) */
  /** CL_DEVICE_AVAILABLE, CL_DEVICE_COMPILER_AVAILABLE, CL_DEVICE_LINKER_AVAILABLE. @{ */
  bool available, compiler_available, linker_available;
  /** @} */
  /** CL_DEVICE_ENDIAN_LITTLE, CL_DEVICE_ERROR_CORRECTION_SUPPORT,
   * CL_DEVICE_HOST_UNIFIED_MEMORY. @{ */
  bool endian_little, error_correction_support, host_unified_memory;
  /** @} */
  uint32_t address_bits;            /**< CL_DEVICE_ADDRESS_BITS (32 or 64) */
  uint32_t max_compute_units;       /**< CL_DEVICE_MAX_COMPUTE_UNITS */
  uint32_t max_clock_frequency_mhz; /**< CL_DEVICE_MAX_CLOCK_FREQUENCY, MHz */
  /** Bytes: CL_DEVICE_GLOBAL_MEM_SIZE, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE,
   * CL_DEVICE_MAX_MEM_ALLOC_SIZE (the largest buffer). @{ */
  uint64_t global_mem_size, global_mem_cache_size, max_mem_alloc_size;
  /** @} */
  uint32_t global_mem_cacheline_size; /**< CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE, bytes */
  uint64_t local_mem_size;            /**< CL_DEVICE_LOCAL_MEM_SIZE, bytes */
  bool local_mem_dedicated; /**< CL_DEVICE_LOCAL_MEM_TYPE is CL_LOCAL (else in global memory) */
  uint64_t max_constant_buffer_size; /**< CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE, bytes */
  uint32_t max_constant_args;        /**< CL_DEVICE_MAX_CONSTANT_ARGS */
  size_t max_parameter_size;         /**< CL_DEVICE_MAX_PARAMETER_SIZE: bytes of all arguments */
  uint32_t mem_base_addr_align;      /**< bits */
  size_t max_work_group_size;        /**< CL_DEVICE_MAX_WORK_GROUP_SIZE */
  uint32_t max_work_item_dimensions; /**< CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS */
  size_t max_work_item_sizes[3];     /**< CL_DEVICE_MAX_WORK_ITEM_SIZES (the first 3) */
  /** preferred and native vector widths, in order char short int long float double half @{ */
  uint32_t preferred_vector_width[7], native_vector_width[7];
  /** @} */
  /** Whether the device's queues may be out of order, may profile (CL_DEVICE_QUEUE_PROPERTIES
   * has CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, CL_QUEUE_PROFILING_ENABLE). @{ */
  bool queue_out_of_order, queue_profiling;
  /** @} */
  size_t profiling_timer_resolution_ns; /**< CL_DEVICE_PROFILING_TIMER_RESOLUTION, ns */
  bool image_support;                   /**< CL_DEVICE_IMAGE_SUPPORT */
  /** CL_DEVICE_MAX_READ_IMAGE_ARGS, CL_DEVICE_MAX_WRITE_IMAGE_ARGS, CL_DEVICE_MAX_SAMPLERS (0
   * without image support). @{ */
  uint32_t max_read_image_args, max_write_image_args, max_samplers;
  /** @} */
  /** Largest image, pixels: {width, height} in 2D, {width, height, depth} in 3D (0 without
   * image support). @{ */
  size_t image2d_max_size[2], image3d_max_size[3];
  /** @} */
  uint64_t svm_capabilities;       /**< CL_DEVICE_SVM_* bits; 0 before OpenCL 2.0 */
  uint64_t execution_capabilities; /**< CL_DEVICE_EXECUTION_CAPABILITIES bits */
  bool native_kernels;             /**< CL_EXEC_NATIVE_KERNEL */
  /** CL_DEVICE_SINGLE_FP_CONFIG, CL_DEVICE_DOUBLE_FP_CONFIG (0: no double support). @{ */
  uint64_t single_fp_config, double_fp_config;
  /** @} */
  size_t printf_buffer_size; /**< CL_DEVICE_PRINTF_BUFFER_SIZE, bytes */
  /** The device's PCI address ("0000:3b:00.0"), unique on its host whatever devices a process
   * is shown (CUDA_VISIBLE_DEVICES); empty where the backend does not tell it (OpenCL). */
  char pci_bus_id[32];
} fcl_device_info;

/** Every property of fcl_device_info of a device into info. A property the device does not
 * report is left 0 (or ""). FCL_ERR_OPENCL when the device cannot be queried at all. */
fcl_status fcl_device_get_info(const fcl_device *device, fcl_device_info *info);
/** The device API through which flowcl reaches device: "opencl" or "cuda" ("" for NULL). One
 * GPU is a device of each backend built that sees it; a device specification names the backend
 * to choose its devices ("cuda", "cuda:1"; fcl_device_select). */
const char *fcl_device_backend(const fcl_device *device);
/** Whether the space-separated extension list of info names ext exactly. */
bool fcl_device_has_extension(const fcl_device_info *info, const char *ext);
/** "CPU", "GPU", "ACCELERATOR", "CUSTOM" or "DEFAULT". */
const char *fcl_device_type_name(fcl_device_type type);

/** One device of the flat platform x device enumeration. */
typedef struct {
  /** 0-based indices of the platform, and of the device in its platform. @{ */
  unsigned platform_index, device_index;
  /** @} */
  fcl_platform *platform; /**< the platform */
  fcl_device *device;     /**< the device */
} fcl_device_entry;

/** All devices of all platforms. *entries is allocated; free it with free(). */
fcl_status fcl_device_list(fcl_device_entry **entries, size_t *count);

/** Choose one device from a specification "platform:device" (like PYOPENCL_CTX). Each part is a
 * 0-based index or a case-insensitive substring of the platform name or vendor / of the device
 * name, vendor or type ("gpu", "cpu"); a missing part takes the first match ("1", ":gpu",
 * "nvidia:", "pocl:cpu"). The platform part may name a backend instead ("cuda", "cuda:1",
 * "opencl:gpu"): its devices only. A GPU is a device of each backend that reaches it, so the
 * devices of a backend other than OpenCL match only by that name or by platform index; every
 * other spec, and the default choices, take OpenCL's. spec NULL or "" reads FLOWCL_DEVICE; when
 * that is unset too, OpenCL's first GPU, or else its first device. No match: FCL_ERR_NOT_FOUND
 * with a message listing every available device. */
fcl_status fcl_device_select(const char *spec, fcl_device_entry *out);
/** The device of the index-th process of a node (its node-local rank): when spec and
 * FLOWCL_DEVICE are empty, GPU number index modulo the GPUs there are, or else the first CPU
 * device (PoCL). A spec, or else FLOWCL_DEVICE, chooses among the devices it matches, as
 * fcl_device_select but match number index modulo their count: "nvidia" spreads the ranks of a
 * node over its NVIDIA GPUs, "nvidia:1" puts them all on that one. For one-GPU tools: no MPI
 * needed (fcl_comm_select_device finds the index over MPI). */
fcl_status fcl_device_select_nth(const char *spec, int index, fcl_device_entry *out);
/** Every device named by a ';'-separated list of specifications (as FLOWCL_TEST_DEVICES). */
fcl_status fcl_device_select_list(const char *specs, fcl_device_entry **entries, size_t *count);

/* ------------------------------------------------------------------------------------------ */
/* Contexts                                                                                    */
/* ------------------------------------------------------------------------------------------ */

/** An OpenCL context and its devices (opaque, reference counted, thread safe once made). */
typedef struct fcl_context fcl_context;

/** A context over the given devices (all of one platform). OpenCL's asynchronous error callback
 * is routed to the log at error level. Release *out with fcl_context_release. */
fcl_status fcl_context_create(unsigned num_devices, fcl_device *const *devices, fcl_context **out);
/** A context over every device of a type (FCL_DEVICE_GPU, ...) of a platform. */
fcl_status fcl_context_create_from_type(const fcl_platform *platform, fcl_device_type type,
                                        fcl_context **out);
/** A context over the device fcl_device_select(NULL) chooses. */
fcl_status fcl_context_create_default(fcl_context **out);
/** Add a reference (the caller then releases it too); returns context. Accepts NULL. */
fcl_context *fcl_context_retain(fcl_context *context);
/** Drop one reference; destroys at zero; accepts NULL; sets *context = NULL. */
void fcl_context_release(fcl_context **context);
/** Number of devices of the context. */
unsigned fcl_context_num_devices(const fcl_context *context);
/** Device number index of the context (NULL when out of range). */
fcl_device *fcl_context_device(const fcl_context *context, unsigned index);

/* Per-context memoization (objects that depend on a context, e.g. compiled built-in kernels). */
/** Makes the object of a fcl_context_memo key into *value; a status other than FCL_OK is
 * returned by fcl_context_memo and nothing is stored. */
typedef fcl_status (*fcl_memo_create_fn)(fcl_context *context, void *user, void **value);
/** Destroys a memoized object. */
typedef void (*fcl_memo_destroy_fn)(void *value);
/** The object stored under key in this context; when absent, create(context, user, &value)
 * makes it and it is stored with destroy (may be NULL). Thread safe: create runs once per key;
 * it may use the context but must not call fcl_context_memo for the same key. Objects are
 * destroyed, newest first, when the context is destroyed or by fcl_context_memo_clear. */
fcl_status fcl_context_memo(fcl_context *context, const char *key, fcl_memo_create_fn create,
                            void *user, fcl_memo_destroy_fn destroy, void **value);
/** Destroy every memoized object of the context now. */
fcl_status fcl_context_memo_clear(fcl_context *context);
/** Number of memoized objects. */
size_t fcl_context_memo_count(fcl_context *context);

/* ------------------------------------------------------------------------------------------ */
/* Queues and events                                                                           */
/* ------------------------------------------------------------------------------------------ */

/** Flags of fcl_queue_create. */
enum {
  FCL_QUEUE_OUT_OF_ORDER = 1u << 0, /**< commands may run out of order (events order them) */
  FCL_QUEUE_PROFILING = 1u << 1     /**< events carry profiling times (fcl_event_profile) */
};

/** A command queue of one device (opaque, reference counted): commands run in the order they
 * are enqueued unless it was made with FCL_QUEUE_OUT_OF_ORDER. Native handles in and out:
 * flowcl/opencl.h. */
typedef struct fcl_queue fcl_queue;

/** A command's event (opaque, reference counted): what an enqueue hands back when asked
 * (fcl_event **event not NULL; release it with fcl_event_release) and what a wait list holds
 * (unsigned num_wait, fcl_event *const *wait: the command runs after each of them). Its state
 * (fcl_event_status), host waits (fcl_events_wait), callbacks and profiling times below. */
typedef struct fcl_event fcl_event;

/** A queue on device (NULL: the context's first device) with FCL_QUEUE_* flags into *queue;
 * release it with fcl_queue_release. A flag the device does not support is an
 * FCL_ERR_NOT_SUPPORTED error naming it. */
fcl_status fcl_queue_create(const fcl_context *context, const fcl_device *device, unsigned flags,
                            fcl_queue **queue);
/** One more reference to queue (returned; NULL stays NULL). */
fcl_queue *fcl_queue_retain(fcl_queue *queue);
/** Drop a reference and set *queue to NULL; the last one waits for nothing (commands already
 * enqueued still run) and frees the queue. Accepts NULL and *queue NULL. */
void fcl_queue_release(fcl_queue **queue);
/** Device of a queue. */
fcl_status fcl_queue_device(const fcl_queue *queue, fcl_device **device);
/** The FCL_QUEUE_* flags the queue was made with (0 for NULL). */
unsigned fcl_queue_flags(const fcl_queue *queue);
/** Barrier: later commands wait for every earlier one (and for the wait list). event may be
 * NULL. */
fcl_status fcl_queue_barrier(fcl_queue *queue, unsigned num_wait, fcl_event *const *wait,
                             fcl_event **event);
/** Marker: event completes when every earlier command (or the wait list) has. */
fcl_status fcl_queue_marker(fcl_queue *queue, unsigned num_wait, fcl_event *const *wait,
                            fcl_event **event);
/** Submit the queue's commands to the device without waiting. */
fcl_status fcl_queue_flush(fcl_queue *queue);
/** Wait on the host until every command of the queue is done (a host sync). */
fcl_status fcl_queue_finish(fcl_queue *queue);

/** States of a command (fcl_event_status), in the order a command passes them; a negative
 * status is the error the command ended in. */
enum {
  FCL_EVENT_COMPLETE = 0,  /**< done */
  FCL_EVENT_RUNNING = 1,   /**< running on the device */
  FCL_EVENT_SUBMITTED = 2, /**< submitted to the device */
  FCL_EVENT_QUEUED = 3     /**< in its queue */
};

/** Host-blocking wait for events; an event that ended in error is reported by index. All events
 * of one backend. */
fcl_status fcl_events_wait(unsigned num_events, fcl_event *const *events);
/** One more reference to event (returned; NULL stays NULL). */
fcl_event *fcl_event_retain(fcl_event *event);
/** Drop a reference and set *event to NULL (the command still runs). Accepts NULL and *event
 * NULL. */
void fcl_event_release(fcl_event **event);
/** FCL_EVENT_QUEUED, _SUBMITTED, _RUNNING, _COMPLETE, or a negative error code. */
fcl_status fcl_event_status(const fcl_event *event, int *status);
/** "queued", "submitted", "running", "complete", or "error" for negative codes. */
const char *fcl_event_status_name(int status);

/** Called by fcl_event_on_complete with the event (valid during the call) and its final status
 * (FCL_EVENT_COMPLETE or a negative error code). */
typedef void (*fcl_event_callback)(fcl_event *event, int status, void *user);
/** Call callback(event, status, user) once the event completes or fails, on a driver thread
 * (the event is kept alive until then). */
fcl_status fcl_event_on_complete(fcl_event *event, fcl_event_callback callback, void *user);
/** A user event (release it with fcl_event_release) in state FCL_EVENT_SUBMITTED until
 * completed or failed. */
fcl_status fcl_user_event_create(const fcl_context *context, fcl_event **event);
/** Set a user event to FCL_EVENT_COMPLETE: commands waiting for it may run. */
fcl_status fcl_user_event_complete(fcl_event *event);
/** Put a user event in an error state (negative code): dependent commands do not run (OpenCL).
 * On CUDA they run (a stream cannot drop queued commands); their events then end in error
 * (fcl_event_status, fcl_events_wait and callbacks give the code), and so do host waits on
 * their queues (fcl_queue_finish, blocking transfers and maps, from then on). */
fcl_status fcl_user_event_fail(fcl_event *event, int error);

/** The profiling times of a command. */
typedef struct {
  /** Device timer, ns: when the command was queued, submitted, started and ended. @{ */
  uint64_t queued_ns, submit_ns, start_ns, end_ns; /**< device timer, ns */
  /** @} */
} fcl_event_times;
/** Profiling times of a completed event of a profiling queue (FCL_QUEUE_PROFILING);
 * FCL_ERR_NOT_SUPPORTED otherwise. */
fcl_status fcl_event_profile(const fcl_event *event, fcl_event_times *times);

/* ------------------------------------------------------------------------------------------ */
/* Memory                                                                                      */
/* ------------------------------------------------------------------------------------------ */

/** Memory that a context's devices read and write (opaque, reference counted): device memory,
 * page-locked host memory the device reaches, or the caller's host memory used in place. A
 * kernel gets it through fcl_kernel_set_arg_buffer. Native handles: flowcl/opencl.h. */
typedef struct fcl_mem fcl_mem;

/** Where an fcl_mem lives. */
typedef enum {
  FCL_MEM_DEVICE, /**< device memory */
  FCL_MEM_PINNED, /**< page-locked host memory the device reaches directly (fcl_mem_map gives its
                       host address; mapped transfers run at the bus's speed) */
  FCL_MEM_HOST    /**< the caller's host memory, used in place: it must outlive the object, and
                       the device may cache it until a map or a read */
} fcl_mem_kind;

/** Whether a transfer returns only once the host memory may be used again. An enum and not a
 * bool so that a pointer passed in its place (the order before 0.2, host before blocking) does
 * not compile; true and false still convert. */
typedef enum {
  FCL_NON_BLOCKING = 0, /**< returns at once; the host memory must stay valid until the event */
  FCL_BLOCKING = 1      /**< returns once the transfer has completed */
} fcl_blocking;

/** A rectangular transfer (fcl_mem_*_rect, the copy launchers): origins {x bytes, row, slice}, region {x bytes,
 * rows, slices}, pitches in bytes (0: packed). For host sides the origin applies to the
 * pointer with the host pitches. */
typedef struct {
  /** Origins of the source and the destination, and the region copied. @{ */
  size_t src_origin[3], dst_origin[3], region[3];
  /** @} */
  /** Row and slice pitches of the source and the destination, bytes (0: packed). @{ */
  size_t src_row_pitch, src_slice_pitch, dst_row_pitch, dst_slice_pitch;
  /** @} */
} fcl_rect;

/** bytes (> 0) of memory of kind for context's devices into *mem (release with
 * fcl_mem_release). host: FCL_MEM_HOST's memory (required); for the others, initial contents
 * copied in before this returns (NULL: uninitialized): every command enqueued afterwards, on any
 * queue, sees them, and host may be reused at once. Too much for the device: FCL_ERR_OUT_OF_MEMORY (or
 * FCL_ERR_INVALID_ARGUMENT over the device's largest allocation) giving the bytes. */
fcl_status fcl_mem_create(fcl_context *context, fcl_mem_kind kind, size_t bytes, void *host,
                          fcl_mem **mem);
/** One more reference to mem (returned; NULL stays NULL). */
fcl_mem *fcl_mem_retain(fcl_mem *mem);
/** A number that no other memory object of the process has had (0 for NULL): an identity that
 * outlives the object, for caches keyed by buffers (an address can come back for a new one). */
uint64_t fcl_mem_serial(const fcl_mem *mem);
/** Drop a reference and set *mem to NULL; the last frees the memory once the commands that use
 * it are done, without waiting for them here. Accepts NULL and *mem NULL. */
void fcl_mem_release(fcl_mem **mem);
/** Bytes of mem (0 for NULL). */
size_t fcl_mem_size(const fcl_mem *mem);
/** Where mem lives. */
fcl_mem_kind fcl_mem_where(const fcl_mem *mem);

/** bytes (> 0) of host memory at *host for transfers on context's queues, given back with
 * fcl_host_free before the context's last release: page-locked where the backend would
 * otherwise stage a non-blocking transfer of the caller's pageable memory. The CUDA backend
 * does, through page-locked blocks (powers of two from 4 KiB, kept for reuse until the device's
 * last context goes, also those of this memory; where none can be made the transfer goes
 * unstaged and may wait for its queue, with a warning), and a read's stream then waits for a
 * host function that copies the block out (microseconds a read); a read into this memory is
 * the device's copy alone. Elsewhere plain memory (malloc). Not for kernels (FCL_MEM_PINNED). */
fcl_status fcl_host_alloc(fcl_context *context, size_t bytes, void **host);
/** Give back host memory from fcl_host_alloc of context; no transfer may still use it. Accepts
 * NULL. */
void fcl_host_free(fcl_context *context, void *host);

/** Transfers, enqueued on queue after the wait list; event (may be NULL) completes with them.
 * A range past the end of an fcl_mem is FCL_ERR_INVALID_ARGUMENT naming the argument.
 * FCL_NON_BLOCKING: the host memory must stay valid until the event completes, and a write may
 * read it at any time until then, also when enqueued (CUDA's staging does): memory that a
 * pending read fills is written from only after that read's event; FCL_BLOCKING returns once it
 * may be used again (a host sync). @{ */
fcl_status fcl_mem_write(fcl_queue *queue, fcl_mem *dst, size_t offset, size_t bytes,
                         const void *host, fcl_blocking blocking, unsigned num_wait,
                         fcl_event *const *wait, fcl_event **event);
fcl_status fcl_mem_read(fcl_queue *queue, const fcl_mem *src, size_t offset, size_t bytes,
                        void *host, fcl_blocking blocking, unsigned num_wait,
                        fcl_event *const *wait, fcl_event **event);
fcl_status fcl_mem_copy(fcl_queue *queue, const fcl_mem *src, size_t src_offset, fcl_mem *dst,
                        size_t dst_offset, size_t bytes, unsigned num_wait, fcl_event *const *wait,
                        fcl_event **event);
/** bytes (a multiple of pattern_size: 1, 2, 4, ..., 128) from offset set to the pattern. */
fcl_status fcl_mem_fill(fcl_queue *queue, fcl_mem *dst, const void *pattern, size_t pattern_size,
                        size_t offset, size_t bytes, unsigned num_wait, fcl_event *const *wait,
                        fcl_event **event);
/** Make fresh memory exist on the queue's device now (blocking, a host sync; its contents are
 * undefined afterwards): a driver that allocates at first use fails here, as
 * FCL_ERR_OUT_OF_MEMORY giving the bytes, not in a later command. On CUDA memory exists once
 * created: this returns at once, no host sync. */
fcl_status fcl_mem_commit(fcl_queue *queue, fcl_mem *mem);
/** Rectangular transfers (fcl_rect: for the host side, its origin and pitches apply to host).
 * @{ */
fcl_status fcl_mem_write_rect(fcl_queue *queue, fcl_mem *dst, const void *host,
                              const fcl_rect *rect, fcl_blocking blocking, unsigned num_wait,
                              fcl_event *const *wait, fcl_event **event);
fcl_status fcl_mem_read_rect(fcl_queue *queue, const fcl_mem *src, void *host, const fcl_rect *rect,
                             fcl_blocking blocking, unsigned num_wait, fcl_event *const *wait,
                             fcl_event **event);
fcl_status fcl_mem_copy_rect(fcl_queue *queue, const fcl_mem *src, fcl_mem *dst,
                             const fcl_rect *rect, unsigned num_wait, fcl_event *const *wait,
                             fcl_event **event);
/** @} */
/** @} */

/** Flags of fcl_mem_map. */
enum {
  FCL_MAP_READ = 1u << 0, /**< the host reads what the device wrote */
  FCL_MAP_WRITE = 1u << 1 /**< the host writes what the device will read */
};
/** A host address for bytes of mem from offset, after the wait list, waiting for it (a host
 * sync); the host may use it until fcl_mem_unmap. FCL_MEM_PINNED memory maps without a copy. */
fcl_status fcl_mem_map(fcl_queue *queue, fcl_mem *mem, unsigned flags, size_t offset, size_t bytes,
                       unsigned num_wait, fcl_event *const *wait, void **host);
/** Give back a mapped address: the device sees the host's writes after event. */
fcl_status fcl_mem_unmap(fcl_queue *queue, fcl_mem *mem, void *host, unsigned num_wait,
                         fcl_event *const *wait, fcl_event **event);

/* ------------------------------------------------------------------------------------------ */
/* Programs                                                                                    */
/* ------------------------------------------------------------------------------------------ */

/** An OpenCL program with its source, origin, build options and logs (opaque, reference
 * counted, thread safe once built). */
typedef struct fcl_program fcl_program;

/** A program from OpenCL C source (copied). origin names where the source came from (a file name
 * or "generated: ..."), for error messages; NULL means "<source string>". Not built yet
 * (fcl_program_build); release *out with fcl_program_release, as every program below. The
 * source is compiled after flowcl's OpenCL prelude (kernels/prelude_opencl.h), which defines
 * only FCL_ macros: the portable kernel vocabulary of docs/extending.md ("What a kernel may
 * use"); build logs number the source's own lines. */
fcl_status fcl_program_create_source(fcl_context *context, const char *source, const char *origin,
                                     fcl_program **out);
/** A program from a source of flowcl's kernels/ folder embedded at build time ("selfcheck.cl"). */
fcl_status fcl_program_create_builtin(fcl_context *context, const char *file_name,
                                      fcl_program **out);
/** A program from one binary per device (devices of the context). */
fcl_status fcl_program_create_binaries(fcl_context *context, unsigned num_devices,
                                       fcl_device *const *devices, const size_t *sizes,
                                       const unsigned char *const *binaries, fcl_program **out);

/** Build for every device of the context. The options are followed by FLOWCL_BUILD_OPTIONS.
 * Source programs go through the binary cache (FLOWCL_CACHE_DIR, default
 * $XDG_CACHE_HOME/flowcl or ~/.cache/flowcl; FLOWCL_NO_CACHE=1 disables it); a cache hit shows
 * the warnings the original build printed. A failed build returns FCL_ERR_BUILD_FAILED with the
 * build log, the options and the source origin in the message. */
fcl_status fcl_program_build(fcl_program *program, const char *options);

/** Add a reference (the caller then releases it too); returns program. Accepts NULL. */
fcl_program *fcl_program_retain(fcl_program *program);
/** Drop one reference; destroys at zero (kernels keep their program alive); accepts NULL; sets
 * *program = NULL. */
void fcl_program_release(fcl_program **program);

/** The program's context (not retained for the caller). */
fcl_context *fcl_program_context(const fcl_program *program);
/** The source as given, without the prelude ("" for binary/IL programs), its origin, and the
 * options of the last build (strings owned by the program). @{ */
const char *fcl_program_source(const fcl_program *program);
const char *fcl_program_origin(const fcl_program *program);
const char *fcl_program_options(const fcl_program *program);
/** @} */
/** Whether the last build was served from the binary cache. */
bool fcl_program_from_cache(const fcl_program *program);
/** The state of a program's build for one device (OpenCL's CL_BUILD_* values). */
typedef enum {
  FCL_BUILD_SUCCESS = 0,     /**< built */
  FCL_BUILD_NONE = -1,       /**< not built for this device */
  FCL_BUILD_ERROR = -2,      /**< the build failed (fcl_program_build_log says why) */
  FCL_BUILD_IN_PROGRESS = -3 /**< being built */
} fcl_build_status;
/** The build status of a program for a device. */
fcl_status fcl_program_build_status(const fcl_program *program, const fcl_device *device,
                                    fcl_build_status *status);
/** Build log of a device from the last build ("" when none). Owned by the program. */
const char *fcl_program_build_log(const fcl_program *program, const fcl_device *device);
/** Binary of a device of a built program (owned by the program). */
fcl_status fcl_program_binary(fcl_program *program, const fcl_device *device,
                              const unsigned char **binary, size_t *size);

/** Where the binary cache lives now, into buf: "" when disabled, or when the directory belongs to
 * another user or others may write to it (a warning says so, once per run). */
fcl_status fcl_program_cache_dir(char *buf, size_t size);

/* ------------------------------------------------------------------------------------------ */
/* Kernels                                                                                     */
/* ------------------------------------------------------------------------------------------ */

/** A kernel of a program with the argument values set so far (opaque; not thread safe). */
typedef struct fcl_kernel fcl_kernel;

/** What a kernel argument is, from its declaration. */
typedef enum {
  FCL_ARG_UNKNOWN = 0, /**< no argument metadata (binary program from elsewhere) */
  FCL_ARG_SCALAR,      /**< by value: scalars, vectors, structs */
  FCL_ARG_GLOBAL,      /**< __global pointer */
  FCL_ARG_CONSTANT,    /**< __constant pointer */
  FCL_ARG_LOCAL,       /**< __local pointer */
  FCL_ARG_IMAGE,       /**< image2d_t, image3d_t... (fcl_kernel_set_arg_image) */
  FCL_ARG_SAMPLER,     /**< sampler_t (fcl_kernel_set_arg_sampler) */
  FCL_ARG_QUEUE        /**< queue_t: an on-device queue (OpenCL 2.0 device-side enqueue) */
} fcl_arg_kind;

/** One argument of a kernel, from the program's argument metadata (strings owned by the
 * program). */
typedef struct {
  const char *name;      /**< "" when unknown */
  const char *type_name; /**< "float", "float*", "int4" ... ("" when unknown) */
  fcl_arg_kind kind;     /**< what the argument is */
  size_t size;           /**< bytes of a by-value argument when known from its type, else 0 */
} fcl_kernel_arg_info;

/** A kernel of a built program by name. Unknown name: FCL_ERR_NOT_FOUND listing the program's
 * kernels; a program not built: FCL_ERR_INVALID_STATE. The kernel keeps the program alive;
 * destroy *out with fcl_kernel_destroy. */
fcl_status fcl_kernel_create(fcl_program *program, const char *name, fcl_kernel **out);
/** Every kernel of a built program: *kernels is an allocated array of *count kernels; free with
 * fcl_kernel_list_destroy. */
fcl_status fcl_program_all_kernels(fcl_program *program, fcl_kernel ***kernels, size_t *count);
/** Destroy the count kernels of fcl_program_all_kernels and the array; accepts NULL; sets
 * *kernels = NULL. */
void fcl_kernel_list_destroy(fcl_kernel ***kernels, size_t count);
/** Destroy the kernel (and its reference to the program); accepts NULL; sets *kernel = NULL. */
void fcl_kernel_destroy(fcl_kernel **kernel);

/** The kernel's function name (owned by the kernel). */
const char *fcl_kernel_name(const fcl_kernel *kernel);
/** The kernel's program (not retained for the caller). */
fcl_program *fcl_kernel_program(const fcl_kernel *kernel);
/** Number of arguments of the kernel. */
unsigned fcl_kernel_num_args(const fcl_kernel *kernel);
/** Name, type and kind of argument index (FCL_ERR_INVALID_ARGUMENT when out of range). */
fcl_status fcl_kernel_get_arg_info(const fcl_kernel *kernel, unsigned index,
                                   fcl_kernel_arg_info *info);
/** Index of the argument called name; FCL_ERR_NOT_FOUND when there is none. */
fcl_status fcl_kernel_arg_index(const fcl_kernel *kernel, const char *name, unsigned *index);

/** By-value argument of size bytes. A size that differs from the argument's declared type is
 * FCL_ERR_INVALID_ARGUMENT naming the kernel, the argument index and name, expected and given
 * sizes. */
fcl_status fcl_kernel_set_arg(fcl_kernel *kernel, unsigned index, size_t size, const void *value);
/** Typed scalar arguments: the declared type must be exactly the C type's OpenCL counterpart
 * (int, uint, long, ulong, float, double): no silent int/float mix-ups. Another declared type
 * is FCL_ERR_INVALID_ARGUMENT naming the kernel, the argument and both types. @{ */
fcl_status fcl_kernel_set_arg_i32(fcl_kernel *kernel, unsigned index, int32_t value);
fcl_status fcl_kernel_set_arg_u32(fcl_kernel *kernel, unsigned index, uint32_t value);
fcl_status fcl_kernel_set_arg_i64(fcl_kernel *kernel, unsigned index, int64_t value);
fcl_status fcl_kernel_set_arg_u64(fcl_kernel *kernel, unsigned index, uint64_t value);
fcl_status fcl_kernel_set_arg_f32(fcl_kernel *kernel, unsigned index, float value);
fcl_status fcl_kernel_set_arg_f64(fcl_kernel *kernel, unsigned index, double value);
/** @} */
/** Memory for a __global / __constant pointer argument; NULL passes a NULL pointer. */
fcl_status fcl_kernel_set_arg_buffer(fcl_kernel *kernel, unsigned index, const fcl_mem *buffer);
/** bytes of local memory for a __local pointer argument. */
fcl_status fcl_kernel_set_arg_local(fcl_kernel *kernel, unsigned index, size_t bytes);

/** What a kernel needs and allows on a device (clGetKernelWorkGroupInfo). */
typedef struct {
  size_t work_group_size;            /**< largest work-group for this kernel on the device */
  size_t compile_work_group_size[3]; /**< reqd_work_group_size, zeros when absent */
  /** Bytes of local memory the kernel uses (its __local variables; arguments set so far
   * included), and of private memory per work-item. @{ */
  uint64_t local_mem_size, private_mem_size;
  /** @} */
  size_t preferred_work_group_size_multiple; /**< work-group sizes run best as its multiples */
} fcl_kernel_work_group_info;
/** The work-group properties of the kernel on device into info. */
fcl_status fcl_kernel_get_work_group_info(const fcl_kernel *kernel, const fcl_device *device,
                                          fcl_kernel_work_group_info *info);

/** Flags of fcl_kernel_enqueue and fcl_kernel_capture. */
enum {
  /** global sizes count work-groups: the launched global size is global[i] * local[i] (CUDA
   * style); needs local sizes. */
  FCL_LAUNCH_G_TIMES_L = 1u << 0
};

/** Enqueue an NDRange launch with the arguments set so far. local and offset may be NULL;
 * event may be NULL. */
fcl_status fcl_kernel_enqueue(fcl_kernel *kernel, fcl_queue *queue, unsigned work_dim,
                              const size_t *global, const size_t *local, const size_t *offset,
                              unsigned flags, unsigned num_wait, fcl_event *const *wait,
                              fcl_event **event);
/** Enqueue a single work-item launch. */
fcl_status fcl_kernel_enqueue_task(fcl_kernel *kernel, fcl_queue *queue, unsigned num_wait,
                                   fcl_event *const *wait, fcl_event **event);

/* ------------------------------------------------------------------------------------------ */
/* Device characterization                                                                     */
/* ------------------------------------------------------------------------------------------ */

/** What flowcl's kernel generators need to know of a device beyond fcl_device_info: SIMD
 * width, local-memory banks, math options (fcl_device_characterize). */
typedef struct {
  unsigned simd_group_size;      /**< work-items run in lock-step (warp, wavefront, lanes) */
  unsigned local_mem_bank_count; /**< 0: local memory is not banked (emulated in global) */
  unsigned local_mem_access_granularity; /**< bytes per bank word */
  unsigned simultaneous_local_access;    /**< work-items whose local accesses may conflict */
  /** Local memory bytes a kernel may use: local_mem_size, less 256 on NVIDIA devices before
   * compute capability 2.0 (which pass kernel arguments in it). */
  uint64_t usable_local_mem_size;
  char fast_inaccurate_options[128]; /**< build options for fast, less accurate math */
  int nv_compute_capability_major;   /**< -1 when not an NVIDIA device */
  int nv_compute_capability_minor;   /**< -1 when not an NVIDIA device */
  bool double_support;               /**< double precision (cl_khr_fp64, cl_amd_fp64) */
} fcl_device_characterization;

/** Characterize device into out (from its properties and vendor; NVIDIA and AMD GPUs follow
 * their programming guides). */
fcl_status fcl_device_characterize(const fcl_device *device, fcl_device_characterization *out);
/** SIMD group size for elements of type_size bytes (vector lanes on CPUs; warp/wavefront on
 * GPUs). */
fcl_status fcl_device_simd_group_size(const fcl_device *device, size_t type_size, unsigned *out);

/** Bank conflicts of a local array access pattern: consecutive work-items index consecutive
 * elements along one axis of an array of shape[ndim] (C order, fastest last) stored with
 * stored_shape (padding; NULL = shape), itemsize bytes per element. *multiplicity is the worst
 * number of distinct words one bank serves at once over all axes (1 = conflict free); the
 * explanation names the axis and the banks. Devices without banked local memory report 1. */
fcl_status fcl_local_access_conflicts(const fcl_device_characterization *device, size_t itemsize,
                                      int ndim, const size_t *shape, const size_t *stored_shape,
                                      unsigned *multiplicity, char *explanation,
                                      size_t explanation_size);

/* ------------------------------------------------------------------------------------------ */
/* Links: device memory between processes                                                      */
/* ------------------------------------------------------------------------------------------ */

/** A link: a group of processes, one device each, that move device memory between them
 * directly (NVLink, PCIe peer access or a network, as the backend's library finds), in order on
 * the processes' queues: no host copy and no host wait. The CUDA backend links through NCCL
 * (libnccl.so.2, loaded on first use); other backends have no links. A group is made like an
 * MPI communicator: one process makes an id (fcl_link_id), every process of the group receives
 * a copy (by MPI_Bcast, say) and joins with it (fcl_link_create). flowcl's exchanges (src/comm)
 * use links where every rank's device has them. */
typedef struct fcl_link fcl_link;

/** Sizes of links. */
enum {
  FCL_LINK_ID_BYTES = 128 /**< bytes of a link id */
};

/** FCL_OK where device can link, else FCL_ERR_NOT_SUPPORTED saying why (its backend has no
 * links, NCCL not built or libnccl.so.2 not found). */
fcl_status fcl_link_supported(const fcl_device *device);

/** A new group's id into id (FCL_LINK_ID_BYTES), made on one process for all. */
fcl_status fcl_link_id(const fcl_device *device, unsigned char *id);

/** Joins the group of id as rank (0 <= rank < ranks) with context's device: blocks until every
 * rank has joined and has connected to every other (collective over the group). Every rank's
 * device must be another one. FCL_ERR_INVALID_ARGUMENT: FLOWCL_LINK_TIMEOUT not a number of
 * seconds >= 0 (checked first, before any peer is waited for). */
fcl_status fcl_link_create(fcl_context *context, const unsigned char *id, int ranks, int rank,
                           fcl_link **out);

/** The watchdog's limit (fcl_link_exchange) into *seconds: FLOWCL_LINK_TIMEOUT, else 600; 0:
 * no limit. FCL_ERR_INVALID_ARGUMENT naming the variable where it is not a number >= 0. */
fcl_status fcl_link_timeout(double *seconds);

/** A message of an exchange: bytes of mem at offset, sent to or received from rank peer. */
typedef struct {
  fcl_mem *mem;  /**< device memory of the link's backend */
  size_t offset; /**< where the message's bytes start in mem */
  size_t bytes;  /**< its length */
  int peer;      /**< the rank of the group it goes to or comes from */
  bool send;     /**< true: sent to peer; false: received from peer */
} fcl_link_message;

/** Enqueues n messages on queue (of the link's device) as one group: they start after the
 * queue's earlier commands, and the queue's later commands start after all of them have
 * completed. Every message needs its match in the peer's exchange (a send of the same bytes to
 * this rank for a receive, and the reverse); the ranks' exchanges must be enqueued in the same
 * order. Does not wait for the device. A message of 0 bytes is allowed (and moves nothing).
 * Watched (CUDA): an exchange that has not completed FLOWCL_LINK_TIMEOUT seconds after it was
 * enqueued (default 600; 0: no limit), or a link its library reports an error of, is aborted:
 * its messages end unfinished (their bytes are undefined), the message goes to stderr, and from
 * then until the link is released every host wait on the device (fcl_queue_finish,
 * fcl_events_wait, blocking transfers and maps) fails with FCL_ERR_CUDA naming the reason, and
 * the link's later exchanges too. So a rank that failed inside an exchange, or never enqueued
 * its part, ends its peers with an error, not a hang. The limit counts from the enqueue: it must
 * exceed how far the host runs ahead of the device plus any wait a peer may legitimately make
 * between its exchanges. Not covered: a host blocked inside this call (its queue's launch
 * queue full, after many hundreds of commands enqueued without a host wait). */
fcl_status fcl_link_exchange(fcl_link *link, fcl_queue *queue, unsigned n,
                             const fcl_link_message *msg);

/** The group's size and this process's rank in it. */
fcl_status fcl_link_ranks(const fcl_link *link, int *ranks, int *rank);

/** Leaves the group and frees the link, on every rank of the group; finish the queues of its
 * exchanges first (their messages use it until they complete; on CUDA, release waits for them
 * under the watchdog, and aborts the link where the watchdog did; with FLOWCL_LINK_TIMEOUT=0,
 * for ever). abort: at once, for a failure:
 * the exchanges in flight end in error on this rank, and the peers' exchanges with it may
 * fail or stall until they abort too (the caller tells them, e.g. by MPI_Abort). NULL or
 * *link NULL: nothing. */
void fcl_link_release(fcl_link **link, bool abort);

/** Sizes of memory shares. */
enum {
  FCL_MEM_SHARE_BYTES = 96 /**< bytes of a memory share (fcl_mem_share) */
};

/** Writes into share (FCL_MEM_SHARE_BYTES) what another process of this host needs to open
 * mem (device memory from fcl_mem_create; CUDA: an IPC handle of the allocation and its size).
 * The share is plain bytes: send it as MPI sends any. FCL_ERR_NOT_SUPPORTED where mem's backend
 * cannot share memory (OpenCL) or mem is not device memory of this process. */
fcl_status fcl_mem_share(fcl_mem *mem, unsigned char *share);

/** Opens memory another process shared (fcl_mem_share) as device memory of context's one
 * device, which must reach the sharer's device directly (NVLink or PCIe peer access): copies
 * and kernels on context's queues read and write it in place, ordered on the queue like any
 * memory; nothing orders them with the sharer's queues (the caller does, e.g. by a link's
 * exchange before and after). Release it with fcl_mem_release before the sharer frees the
 * memory. FCL_ERR_NOT_SUPPORTED saying why where the backend has no shares, the devices cannot
 * reach each other, or share comes from this process; FCL_ERR_INVALID_ARGUMENT where share is
 * not one. */
fcl_status fcl_mem_open_shared(fcl_context *context, const unsigned char *share, fcl_mem **out);

/* ------------------------------------------------------------------------------------------ */
/* Counters                                                                                    */
/* ------------------------------------------------------------------------------------------ */

/** Process-wide, since the start, thread safe; for tests and benchmarks that check what a code
 * path costs. Programs built: fcl_program_build calls that succeeded, compiled or served from
 * the binary cache (either way a program object made ready to run), and the FFT library's
 * programs made ready through the cache. */
uint64_t fcl_count_programs_built(void);
/** Programs compiled from source: those of the builds above that the binary cache did not serve
 * (a miss, or the cache off). A second run with a warm cache compiles none. */
uint64_t fcl_count_programs_compiled(void);
/** Host syncs: waits of the host for the device that flowcl made, fcl_queue_finish and
 * fcl_events_wait (flowcl's layers make every blocking wait of their work through them; the
 * waits of destroy functions and of cleanups after a failure are not counted). A wait for an
 * event that is already complete is not counted: it does not hold the host. */
uint64_t fcl_count_host_syncs(void);

/* ------------------------------------------------------------------------------------------ */
/* Embedded kernel sources                                                                     */
/* ------------------------------------------------------------------------------------------ */

/** Source text of a file of flowcl's kernels/ folder, embedded at build time (static: never
 * freed). An unknown file name is FCL_ERR_NOT_FOUND. */
fcl_status fcl_builtin_source(const char *file_name, const char **source);

#ifdef __cplusplus
}
#endif
#endif /* FLOWCL_RUNTIME_H */
