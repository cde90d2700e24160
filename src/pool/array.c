/* Device arrays: creation over pool blocks or buffers, shared storage, views. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "array_impl.h"
#include "check.h"

void fcl__packed_strides(int ndim, const size_t *shape, size_t itemsize, size_t *strides) {
  size_t s = itemsize;
  for (int i = ndim - 1; i >= 0; --i) {
    strides[i] = s;
    s *= shape[i];
  }
}

/* dtype, argument pos, is an fcl_dtype. */
static fcl_status check_dtype(fcl_dtype dtype, int pos) {
  if (fcl_dtype_size(dtype) == 0)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument %d (dtype): %d is not an fcl_dtype", pos,
                     (int)dtype);
  return FCL_OK;
}

/* ndim (argument pos) and shape (argument pos + 1): 1..FCL_ARRAY_MAX_DIMS axes, none empty. */
static fcl_status check_shape(int ndim, const size_t *shape, int pos) {
  if (ndim < 1 || ndim > FCL_ARRAY_MAX_DIMS)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument %d (ndim): %d is not in 1..%d", pos, ndim,
                     FCL_ARRAY_MAX_DIMS);
  if (!shape) return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument %d (shape): NULL", pos + 1);
  for (int i = 0; i < ndim; ++i)
    if (shape[i] == 0)
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument %d (shape): axis %d has extent 0",
                       pos + 1, i);
  return FCL_OK;
}

static fcl_status new_array(fcl__storage *storage, fcl_queue *queue, fcl_dtype dtype, int ndim,
                            const size_t *shape, const size_t *strides, size_t offset,
                            fcl_array **out) {
  fcl_array *a = calloc(1, sizeof *a);
  if (!a) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "array object");
  a->storage = storage;
  atomic_fetch_add(&storage->refs, 1);
  fcl_queue_retain(queue);
  a->queue = queue;
  a->dtype = dtype;
  a->ndim = ndim;
  memcpy(a->shape, shape, (size_t)ndim * sizeof *shape);
  if (strides)
    memcpy(a->strides, strides, (size_t)ndim * sizeof *strides);
  else
    fcl__packed_strides(ndim, shape, fcl_dtype_size(dtype), a->strides);
  a->offset = offset;
  *out = a;
  return FCL_OK;
}

/* The live storages over pool blocks, for fcl__array_buffer_bytes. */
static pthread_mutex_t pooled_lock = PTHREAD_MUTEX_INITIALIZER;
static fcl__storage *pooled;
static atomic_size_t pooled_changes;

static void pooled_link(fcl__storage *s) {
  pthread_mutex_lock(&pooled_lock);
  s->prev = NULL;
  s->next = pooled;
  if (pooled) pooled->prev = s;
  pooled = s;
  atomic_fetch_add(&pooled_changes, 1);
  pthread_mutex_unlock(&pooled_lock);
}

static void pooled_unlink(fcl__storage *s) {
  pthread_mutex_lock(&pooled_lock);
  if (s->prev)
    s->prev->next = s->next;
  else
    pooled = s->next;
  if (s->next) s->next->prev = s->prev;
  atomic_fetch_add(&pooled_changes, 1);
  pthread_mutex_unlock(&pooled_lock);
}

bool fcl__array_buffer_bytes(fcl_mem *buffer, size_t *bytes) {
  pthread_mutex_lock(&pooled_lock);
  const fcl__storage *s = pooled;
  while (s && s->buffer != buffer) s = s->next;
  if (s) *bytes = s->size;
  pthread_mutex_unlock(&pooled_lock);
  return s != NULL;
}

size_t fcl__array_pooled_changes(void) { return atomic_load(&pooled_changes); }

static void storage_release(fcl__storage *s, fcl_queue *queue) {
  if (atomic_fetch_sub(&s->refs, 1) != 1) return;
  if (s->pool) {
    pooled_unlink(s);
    /* Work already enqueued on the array's queue may still use the block: fence it. */
    fcl_event *done = NULL;
    if (fcl_queue_marker(queue, 0, NULL, &done) != FCL_OK ||
        fcl_pool_free_after(s->pool, s->block, 1, &done) != FCL_OK) {
      fcl_queue_finish(queue);
      fcl_pool_free(s->pool, s->block);
    }
    if (done) fcl_event_release(&done);
    fcl_pool_release(&s->pool);
  } else {
    fcl_mem_release(&s->buffer);
  }
  free(s);
}

fcl_status fcl_array_create(fcl_pool *pool, fcl_queue *queue, fcl_dtype dtype, int ndim,
                            const size_t *shape, fcl_array **out) {
  FCL_CHECK_NULL(pool, 1);
  FCL_CHECK_NULL(queue, 2);
  FCL_CHECK_NULL(out, 6);
  *out = NULL;
  FCL_TRY(check_dtype(dtype, 3));
  FCL_TRY(check_shape(ndim, shape, 4));
  size_t bytes = fcl_dtype_size(dtype);
  for (int i = 0; i < ndim; ++i) bytes *= shape[i];
  fcl__storage *s = calloc(1, sizeof *s);
  if (!s) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "array storage record");
  fcl_status st = fcl_pool_alloc(pool, bytes, &s->block);
  if (st == FCL_OK && !fcl_pool_block_buffer(s->block)) {
    fcl_pool_free(pool, s->block);
    st = FCL_ERROR(FCL_ERR_NOT_SUPPORTED, "arrays need a buffer pool, not an SVM pool");
  }
  if (st != FCL_OK) {
    free(s);
    return st;
  }
  atomic_init(&s->refs, 0);
  s->pool = fcl_pool_retain(pool);
  s->buffer = fcl_pool_block_buffer(s->block);
  s->size = bytes;
  pooled_link(s);
  st = new_array(s, queue, dtype, ndim, shape, NULL, 0, out);
  if (st != FCL_OK) {
    atomic_fetch_add(&s->refs, 1);
    storage_release(s, queue);
  }
  return st;
}

fcl_status fcl_array_create_from_host(fcl_pool *pool, fcl_queue *queue, fcl_dtype dtype, int ndim,
                                      const size_t *shape, const void *host, fcl_array **out) {
  FCL_CHECK_NULL(host, 6);
  FCL_TRY(fcl_array_create(pool, queue, dtype, ndim, shape, out));
  fcl_status st = fcl_array_write(*out, NULL, FCL_BLOCKING, host, 0, NULL, NULL);
  if (st != FCL_OK) fcl_array_destroy(out);
  return st;
}

fcl_status fcl_array_wrap_buffer(fcl_mem *buffer, fcl_queue *queue, fcl_dtype dtype, int ndim,
                                 const size_t *shape, const size_t *strides, size_t offset,
                                 fcl_array **out) {
  FCL_CHECK_NULL(buffer, 1);
  FCL_CHECK_NULL(queue, 2);
  FCL_CHECK_NULL(out, 8);
  *out = NULL;
  FCL_TRY(check_dtype(dtype, 3));
  FCL_TRY(check_shape(ndim, shape, 4));
  size_t size = fcl_mem_size(buffer), itemsize = fcl_dtype_size(dtype), packed[FCL_ARRAY_MAX_DIMS];
  if (!strides) {
    fcl__packed_strides(ndim, shape, itemsize, packed);
    strides = packed;
  }
  size_t extent = offset + itemsize;
  for (int i = 0; i < ndim; ++i) extent += (shape[i] - 1) * strides[i];
  if (extent > size)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "array view reaches byte %zu of a %zu-byte buffer "
                     "(shape, strides and offset do not fit)",
                     extent, size);
  fcl__storage *s = calloc(1, sizeof *s);
  if (!s) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "array storage record");
  fcl_mem_retain(buffer);
  s->buffer = buffer;
  s->size = size;
  fcl_status st = new_array(s, queue, dtype, ndim, shape, strides, offset, out);
  if (st != FCL_OK) {
    fcl_mem_release(&buffer);
    free(s);
  }
  return st;
}

void fcl_array_destroy(fcl_array **array) {
  if (!array || !*array) return;
  fcl_array *a = *array;
  *array = NULL;
  storage_release(a->storage, a->queue);
  fcl_queue_release(&a->queue);
  free(a);
}

fcl_dtype fcl_array_dtype(const fcl_array *a) { return a ? a->dtype : FCL_FLOAT32; }
int fcl_array_ndim(const fcl_array *a) { return a ? a->ndim : 0; }
const size_t *fcl_array_shape(const fcl_array *a) { return a ? a->shape : NULL; }
const size_t *fcl_array_strides(const fcl_array *a) { return a ? a->strides : NULL; }
size_t fcl_array_offset(const fcl_array *a) { return a ? a->offset : 0; }
fcl_mem *fcl_array_buffer(const fcl_array *a) { return a ? a->storage->buffer : NULL; }
fcl_queue *fcl_array_queue(const fcl_array *a) { return a ? a->queue : NULL; }

size_t fcl_array_size(const fcl_array *a) {
  if (!a) return 0;
  size_t n = 1;
  for (int i = 0; i < a->ndim; ++i) n *= a->shape[i];
  return n;
}

size_t fcl_array_nbytes(const fcl_array *a) {
  return a ? fcl_array_size(a) * fcl_dtype_size(a->dtype) : 0;
}

bool fcl_array_is_contiguous(const fcl_array *a) {
  if (!a) return false;
  size_t packed[FCL_ARRAY_MAX_DIMS];
  fcl__packed_strides(a->ndim, a->shape, fcl_dtype_size(a->dtype), packed);
  for (int i = 0; i < a->ndim; ++i)
    if (a->shape[i] > 1 && a->strides[i] != packed[i]) return false;
  return true;
}

fcl_status fcl_array_reshape(const fcl_array *array, int ndim, const size_t *shape,
                             fcl_array **view) {
  FCL_CHECK_NULL(array, 1);
  FCL_CHECK_NULL(view, 4);
  *view = NULL;
  FCL_TRY(check_shape(ndim, shape, 2));
  size_t n = 1;
  for (int i = 0; i < ndim; ++i) n *= shape[i];
  if (n != fcl_array_size(array))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "argument 3 (shape): %zu elements, the array has "
                     "%zu",
                     n, fcl_array_size(array));
  if (!fcl_array_is_contiguous(array))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 1 (array): only contiguous arrays can be "
                                               "reshaped (copy the view first)");
  FCL_TRY(new_array(array->storage, array->queue, array->dtype, ndim, shape, NULL, array->offset,
                    view));
  (*view)->readonly = array->readonly;
  return FCL_OK;
}

fcl_status fcl_array_slice(const fcl_array *array, const fcl_slice *slices, fcl_array **view) {
  FCL_CHECK_NULL(array, 1);
  FCL_CHECK_NULL(slices, 2);
  FCL_CHECK_NULL(view, 3);
  *view = NULL;
  size_t shape[FCL_ARRAY_MAX_DIMS], strides[FCL_ARRAY_MAX_DIMS], offset = array->offset;
  for (int i = 0; i < array->ndim; ++i) {
    fcl_slice s = slices[i];
    if (s.step < 1 || s.start >= s.stop || s.stop > array->shape[i])
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "argument 2 (slices): axis %d slice [%zu:%zu:%zu] "
                       "is empty or outside 0..%zu (step must be >= 1)",
                       i, s.start, s.stop, s.step, array->shape[i]);
    shape[i] = (s.stop - s.start + s.step - 1) / s.step;
    strides[i] = array->strides[i] * s.step;
    offset += s.start * array->strides[i];
  }
  FCL_TRY(new_array(array->storage, array->queue, array->dtype, array->ndim, shape, strides, offset,
                    view));
  (*view)->readonly = array->readonly;
  return FCL_OK;
}

bool fcl_array_readonly(const fcl_array *array) { return array && array->readonly; }

fcl_status fcl_array_readonly_view(const fcl_array *array, fcl_array **view) {
  FCL_CHECK_NULL(array, 1);
  FCL_CHECK_NULL(view, 2);
  FCL_TRY(new_array(array->storage, array->queue, array->dtype, array->ndim, array->shape,
                    array->strides, array->offset, view));
  (*view)->readonly = true;
  return FCL_OK;
}

fcl_status fcl_array_clone(const fcl_array *src, fcl_pool *pool, fcl_queue *queue,
                           fcl_array **out) {
  FCL_CHECK_NULL(src, 1);
  FCL_CHECK_NULL(pool, 2);
  FCL_CHECK_NULL(out, 4);
  *out = NULL;
  if (!queue) queue = src->queue;
  FCL_TRY(fcl_array_create(pool, queue, src->dtype, src->ndim, src->shape, out));
  fcl_status st = fcl_array_copy(src, *out, queue, 0, NULL, NULL);
  if (st != FCL_OK) fcl_array_destroy(out);
  return st;
}

fcl_status fcl_array_from_host(fcl_context *context, fcl_queue *queue, fcl_dtype dtype, int ndim,
                               const size_t *shape, void *host, fcl_host_array_options options,
                               fcl_array **out) {
  FCL_CHECK_NULL(context, 1);
  FCL_CHECK_NULL(queue, 2);
  FCL_CHECK_NULL(host, 6);
  FCL_CHECK_NULL(out, 8);
  *out = NULL;
  FCL_TRY(check_dtype(dtype, 3));
  FCL_TRY(check_shape(ndim, shape, 4));
  if (!options.readable && !options.writable)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 7 (options): an array kernels may "
                                               "neither read nor write");
  size_t bytes = fcl_dtype_size(dtype);
  for (int i = 0; i < ndim; ++i) {
    if (shape[i] && bytes > SIZE_MAX / shape[i])
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 5 (shape): the array's size "
                                                 "overflows size_t");
    bytes *= shape[i];
  }
  fcl_mem *b = NULL;
  FCL_TRY(fcl_mem_create(context, options.copy ? FCL_MEM_DEVICE : FCL_MEM_HOST, bytes, host, &b));
  fcl_status st = fcl_array_wrap_buffer(b, queue, dtype, ndim, shape, NULL, 0, out);
  fcl_mem_release(&b); /* the array holds it */
  if (st == FCL_OK) (*out)->readonly = !options.writable;
  return st;
}
