/** @file
 * flowcl device arrays: typed n-dimensional views over pool blocks or buffers (a device memory
 * view).
 *
 * An array is a dtype, a shape, strides in bytes and a byte offset into shared storage (a pool
 * block or a caller's buffer / sub-buffer). Slicing and reshaping give new arrays that share the
 * storage; the storage is freed (returned to its pool) when its last array is destroyed.
 * Host data is always C-ordered and contiguous; device arrays may be strided (strides are
 * non-negative). Transfers and copies of strided arrays use rectangular copies
 * (clEnqueue*BufferRect), with loops over dimensions beyond three.
 *
 * Every array has a default queue (retained) used when a function takes no queue. Arrays are
 * not thread safe; distinct arrays over one storage may be used from different threads. */
#ifndef FLOWCL_ARRAY_H
#define FLOWCL_ARRAY_H

#include "flowcl/pool.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most dimensions an array may have. */
#define FCL_ARRAY_MAX_DIMS 8

/** A typed n-dimensional view over shared device storage (opaque; not thread safe). */
typedef struct fcl_array fcl_array;

/** A C-contiguous array of shape[ndim] from pool (storage freed back to it). */
fcl_status fcl_array_create(fcl_pool *pool, fcl_queue *queue, fcl_dtype dtype, int ndim,
                            const size_t *shape, fcl_array **out);
/** The same, filled from C-ordered host data (blocking write). */
fcl_status fcl_array_create_from_host(fcl_pool *pool, fcl_queue *queue, fcl_dtype dtype, int ndim,
                                      const size_t *shape, const void *host, fcl_array **out);
/** A view over a caller's buffer or sub-buffer (retained): strides NULL means C-contiguous.
 * The extent implied by shape, strides and offset must fit in the buffer. */
fcl_status fcl_array_wrap_buffer(fcl_mem *buffer, fcl_queue *queue, fcl_dtype dtype, int ndim,
                                 const size_t *shape, const size_t *strides, size_t offset,
                                 fcl_array **out);
/** An array over C-ordered host data of shape[ndim]. copy: the data is copied into new device
 * memory, else the array uses the host memory itself (FCL_MEM_HOST: it must outlive the array,
 * and the device may cache it until a map or read). readable / writable: what the array is for
 * (not neither); a non-writable array is read-only for flowcl's writes (fcl_array_readonly). */
typedef struct {
  /** Whether the data is copied, and what kernels may do with the array (as said above). @{ */
  bool copy, readable, writable;
  /** @} */
} fcl_host_array_options;
/** The array over host data that fcl_host_array_options describes; destroy *out with
 * fcl_array_destroy. */
fcl_status fcl_array_from_host(fcl_context *context, fcl_queue *queue, fcl_dtype dtype, int ndim,
                               const size_t *shape, void *host, fcl_host_array_options options,
                               fcl_array **out);
/** A new C-contiguous array from pool holding a copy of src's elements (any strides), enqueued
 * on queue (NULL: src's). */
fcl_status fcl_array_clone(const fcl_array *src, fcl_pool *pool, fcl_queue *queue, fcl_array **out);
/** A view of the same elements through which writes (fcl_array_write, fill, copy into, map for
 * writing) are refused with FCL_ERR_INVALID_ARGUMENT; views of it (slices, reshapes) stay
 * read-only. The storage is shared: other views may still write it. */
fcl_status fcl_array_readonly_view(const fcl_array *array, fcl_array **view);
/** Whether writes through this view are refused (fcl_array_readonly_view). */
bool fcl_array_readonly(const fcl_array *array);
/** Destroy the view; the storage goes when its last view does. Accepts NULL. */
void fcl_array_destroy(fcl_array **array);

/** The element type. */
fcl_dtype fcl_array_dtype(const fcl_array *array);
/** Number of dimensions (1 to FCL_ARRAY_MAX_DIMS). */
int fcl_array_ndim(const fcl_array *array);
/** Extent of each axis, ndim entries (owned by the array); strides, offset and sizes below. */
const size_t *fcl_array_shape(const fcl_array *array);
const size_t *fcl_array_strides(const fcl_array *array); /**< bytes */
size_t fcl_array_offset(const fcl_array *array);         /**< bytes into the buffer */
size_t fcl_array_size(const fcl_array *array);           /**< elements */
size_t fcl_array_nbytes(const fcl_array *array);         /**< size * itemsize */
/** The buffer of the storage (owned by it); the elements start at fcl_array_offset. */
fcl_mem *fcl_array_buffer(const fcl_array *array);
/** The array's default queue (retained by the array). */
fcl_queue *fcl_array_queue(const fcl_array *array);
/** C-contiguous: strides are those of a packed C-ordered array. */
bool fcl_array_is_contiguous(const fcl_array *array);

/** Host (C-ordered, packed, nbytes) to device and back. FCL_NON_BLOCKING: the host memory must
 * stay valid until event completes. queue NULL: the array's queue. @{ */
fcl_status fcl_array_write(fcl_array *array, fcl_queue *queue, fcl_blocking blocking,
                           const void *host, unsigned num_wait, fcl_event *const *wait,
                           fcl_event **event);
fcl_status fcl_array_read(const fcl_array *array, fcl_queue *queue, fcl_blocking blocking,
                          void *host, unsigned num_wait, fcl_event *const *wait, fcl_event **event);
/** @} */
/** Every element set to *value (itemsize bytes). */
fcl_status fcl_array_fill(fcl_array *array, fcl_queue *queue, const void *value, unsigned num_wait,
                          fcl_event *const *wait, fcl_event **event);
/** dst = src elementwise: same dtype and shape, any strides (rectangular copies). */
fcl_status fcl_array_copy(const fcl_array *src, fcl_array *dst, fcl_queue *queue, unsigned num_wait,
                          fcl_event *const *wait, fcl_event **event);
/** Map a contiguous array into host memory (blocking; flags FCL_MAP_READ, FCL_MAP_WRITE or both;
 * FCL_MAP_WRITE on a read-only view is FCL_ERR_INVALID_ARGUMENT); unmap with fcl_array_unmap. */
fcl_status fcl_array_map(fcl_array *array, fcl_queue *queue, unsigned flags, void **host);
/** Unmap what fcl_array_map returned (enqueued; queue NULL: the array's; event may be NULL). */
fcl_status fcl_array_unmap(fcl_array *array, fcl_queue *queue, void *host, fcl_event **event);
/** One element at index[ndim] (blocking read). */
fcl_status fcl_array_item(const fcl_array *array, const size_t *index, void *value);

/** A view of a contiguous array with a new shape of the same size. */
fcl_status fcl_array_reshape(const fcl_array *array, int ndim, const size_t *shape,
                             fcl_array **view);
/** Python-style slice per axis: elements start, start+step, ... < stop (step >= 1). */
typedef struct {
  /** First element, end (excluded) and step of the slice along its axis. @{ */
  size_t start, stop, step;
  /** @} */
} fcl_slice;
/** A view selecting slices[ndim] (one per axis) that shares the storage. */
fcl_status fcl_array_slice(const fcl_array *array, const fcl_slice *slices, fcl_array **view);

#ifdef __cplusplus
}
#endif
#endif /* FLOWCL_ARRAY_H */
