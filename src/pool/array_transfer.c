/* Array transfers: host <-> device, device -> device, fill, map, item. Strided arrays are moved
 * with rectangular copies of up to three dimensions and loops over the remaining ones. */
#include <string.h>

#include "array_impl.h"
#include "check.h"
#include "flowcl/opencl.h"

/* How to move an array between two layouts a and b (byte strides) with rectangular commands. */
typedef struct {
  int rect_dims;    /* 1..3 axes handled by one command */
  size_t region[3]; /* region[0] in bytes */
  size_t pitch_a[2], pitch_b[2];
  int num_loops; /* axes looped over, slowest first */
  size_t loop_shape[FCL_ARRAY_MAX_DIMS], loop_a[FCL_ARRAY_MAX_DIMS], loop_b[FCL_ARRAY_MAX_DIMS];
} rect_plan;

static void make_plan(int ndim, const size_t *shape, size_t itemsize, const size_t *sa,
                      const size_t *sb, int max_dims, rect_plan *p) {
  memset(p, 0, sizeof *p);
  int axes[FCL_ARRAY_MAX_DIMS], n = 0; /* axes of extent > 1, fastest first */
  for (int i = ndim - 1; i >= 0; --i)
    if (shape[i] > 1) axes[n++] = i;
  int next = 0;
  p->region[0] = itemsize;
  p->region[1] = p->region[2] = 1;
  if (n > 0 && sa[axes[0]] == itemsize && sb[axes[0]] == itemsize) {
    p->region[0] = shape[axes[0]] * itemsize; /* contiguous rows */
    next = 1;
  }
  p->rect_dims = 1;
  if (max_dims >= 2 && next < n && sa[axes[next]] >= p->region[0] &&
      sb[axes[next]] >= p->region[0]) {
    p->region[1] = shape[axes[next]];
    p->pitch_a[0] = sa[axes[next]];
    p->pitch_b[0] = sb[axes[next]];
    p->rect_dims = 2;
    ++next;
    size_t za = next < n ? sa[axes[next]] : 0, zb = next < n ? sb[axes[next]] : 0;
    if (max_dims >= 3 && next < n && za >= p->region[1] * p->pitch_a[0] &&
        za % p->pitch_a[0] == 0 && zb >= p->region[1] * p->pitch_b[0] && zb % p->pitch_b[0] == 0) {
      p->region[2] = shape[axes[next]];
      p->pitch_a[1] = za;
      p->pitch_b[1] = zb;
      p->rect_dims = 3;
      ++next;
    }
  }
  for (int i = n - 1; i >= next; --i, ++p->num_loops) {
    p->loop_shape[p->num_loops] = shape[axes[i]];
    p->loop_a[p->num_loops] = sa[axes[i]];
    p->loop_b[p->num_loops] = sb[axes[i]];
  }
}

typedef enum { OP_READ, OP_WRITE, OP_COPY, OP_FILL } op_kind;

typedef struct {
  op_kind kind;
  fcl_queue *queue;
  fcl_mem *a, *b; /* a: the device array read/written/filled; b: copy source */
  size_t base_a, base_b;
  unsigned char *host; /* read destination / write source */
  const void *pattern;
  size_t pattern_size;
} op_desc;

/* A byte offset as a rectangle origin {x bytes, row, slice} for the given pitches. */
static void origin_of(size_t off, const size_t pitch[2], int rect_dims, size_t origin[3]) {
  origin[1] = origin[2] = 0;
  if (rect_dims >= 3) {
    origin[2] = off / pitch[1];
    off %= pitch[1];
  }
  if (rect_dims >= 2) {
    origin[1] = off / pitch[0];
    off %= pitch[0];
  }
  origin[0] = off;
}

static cl_int enqueue_one(const op_desc *o, const rect_plan *p, size_t off_a, size_t off_b,
                          cl_uint num_wait, const cl_event *wait, cl_event *event) {
  size_t oa[3], ob[3], zero[3] = {0, 0, 0};
  off_a += o->base_a;
  off_b += o->base_b;
  if (o->kind == OP_FILL)
    return clEnqueueFillBuffer(fcl_queue_cl(o->queue), fcl_mem_cl(o->a), o->pattern,
                               o->pattern_size, off_a, p->region[0], num_wait, wait, event);
  if (p->rect_dims == 1) { /* one run of bytes: a linear command */
    switch (o->kind) {
      case OP_READ:
        return clEnqueueReadBuffer(fcl_queue_cl(o->queue), fcl_mem_cl(o->a), CL_FALSE, off_a,
                                   p->region[0], o->host + off_b, num_wait, wait, event);
      case OP_WRITE:
        return clEnqueueWriteBuffer(fcl_queue_cl(o->queue), fcl_mem_cl(o->a), CL_FALSE, off_a,
                                    p->region[0], o->host + off_b, num_wait, wait, event);
      default:
        return clEnqueueCopyBuffer(fcl_queue_cl(o->queue), fcl_mem_cl(o->b), fcl_mem_cl(o->a),
                                   off_b, off_a, p->region[0], num_wait, wait, event);
    }
  }
  origin_of(off_a, p->pitch_a, p->rect_dims, oa);
  switch (o->kind) {
    case OP_READ:
      return clEnqueueReadBufferRect(fcl_queue_cl(o->queue), fcl_mem_cl(o->a), CL_FALSE, oa, zero,
                                     p->region, p->pitch_a[0], p->pitch_a[1], p->pitch_b[0],
                                     p->pitch_b[1], o->host + off_b, num_wait, wait, event);
    case OP_WRITE:
      return clEnqueueWriteBufferRect(fcl_queue_cl(o->queue), fcl_mem_cl(o->a), CL_FALSE, oa, zero,
                                      p->region, p->pitch_a[0], p->pitch_a[1], p->pitch_b[0],
                                      p->pitch_b[1], o->host + off_b, num_wait, wait, event);
    default:
      origin_of(off_b, p->pitch_b, p->rect_dims, ob);
      return clEnqueueCopyBufferRect(fcl_queue_cl(o->queue), fcl_mem_cl(o->b), fcl_mem_cl(o->a), ob,
                                     oa, p->region, p->pitch_b[0], p->pitch_b[1], p->pitch_a[0],
                                     p->pitch_a[1], num_wait, wait, event);
  }
}

/* Enqueue every command of the plan; event (if asked) completes when all have. */
static fcl_status run_plan(const op_desc *o, const rect_plan *p, bool blocking, cl_uint num_wait,
                           const cl_event *wait, cl_event *event, const fcl_array *layout_a,
                           const size_t *strides_b) {
  size_t index[FCL_ARRAY_MAX_DIMS] = {0}, count = 1;
  for (int i = 0; i < p->num_loops; ++i) count *= p->loop_shape[i];
  cl_event last = NULL;
  for (size_t c = 0; c < count; ++c) {
    size_t off_a = 0, off_b = 0;
    for (int i = 0; i < p->num_loops; ++i) {
      off_a += index[i] * p->loop_a[i];
      off_b += index[i] * p->loop_b[i];
    }
    cl_int err = enqueue_one(o, p, off_a, off_b, num_wait, wait, count == 1 ? &last : NULL);
    if (err == CL_INVALID_VALUE && c == 0 && p->rect_dims > 1 && layout_a) {
      /* Some drivers refuse rectangles the specification allows: use one dimension fewer. */
      fcl_log(FCL_LOG_DEBUG,
              "array %d-D rectangular command refused (CL_INVALID_VALUE); "
              "retrying with %d-D commands",
              p->rect_dims, p->rect_dims - 1);
      rect_plan smaller;
      make_plan(layout_a->ndim, layout_a->shape, fcl_dtype_size(layout_a->dtype), layout_a->strides,
                strides_b, p->rect_dims - 1, &smaller);
      return run_plan(o, &smaller, blocking, num_wait, wait, event, layout_a, strides_b);
    }
    if (err != CL_SUCCESS) {
      static const char *names[] = {"read", "write", "copy", "fill"};
      return FCL_CL_ERROR(err, "array %s, command %zu of %zu (region %zu x %zu x %zu bytes/rows)",
                          names[o->kind], c + 1, count, p->region[0], p->region[1], p->region[2]);
    }
    for (int i = p->num_loops - 1; i >= 0 && ++index[i] == p->loop_shape[i]; --i) index[i] = 0;
  }
  if (count > 1) /* a marker with no wait list waits for every earlier command */
    FCL_CL_TRY(clEnqueueMarkerWithWaitList(fcl_queue_cl(o->queue), 0, NULL, &last),
               "marker after array %s", "transfer");
  fcl_status st = blocking ? fcl_events_wait(1, &last) : FCL_OK;
  if (event)
    *event = last;
  else
    clReleaseEvent(last);
  return st;
}

static fcl_status host_transfer(const fcl_array *a, fcl_queue *queue, op_kind kind,
                                unsigned char *host, bool blocking, cl_uint num_wait,
                                const cl_event *wait, cl_event *event) {
  size_t itemsize = fcl_dtype_size(a->dtype), packed[FCL_ARRAY_MAX_DIMS];
  fcl__packed_strides(a->ndim, a->shape, itemsize, packed);
  fcl_queue *q = queue ? queue : a->queue;
  if (fcl_array_is_contiguous(a)) { /* one linear command */
    size_t n = fcl_array_nbytes(a);
    cl_int err = kind == OP_READ
                     ? clEnqueueReadBuffer(fcl_queue_cl(q), fcl_mem_cl(a->storage->buffer),
                                           blocking, a->offset, n, host, num_wait, wait, event)
                     : clEnqueueWriteBuffer(fcl_queue_cl(q), fcl_mem_cl(a->storage->buffer),
                                            blocking, a->offset, n, host, num_wait, wait, event);
    if (err != CL_SUCCESS)
      return FCL_CL_ERROR(err, "array %s of %zu bytes at offset %zu",
                          kind == OP_READ ? "read" : "write", n, a->offset);
    return FCL_OK;
  }
  rect_plan p;
  make_plan(a->ndim, a->shape, itemsize, a->strides, packed, 3, &p);
  op_desc o = {kind, q, a->storage->buffer, NULL, a->offset, 0, host, NULL, 0};
  return run_plan(&o, &p, blocking, num_wait, wait, event, a, packed);
}

/* FCL_ERR_INVALID_ARGUMENT for a write through a read-only view (a: argument pos, name). */
static fcl_status writable(const fcl_array *a, int pos, const char *name, const char *what) {
  if (a->readonly)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument %d (%s): %s a read-only array", pos, name,
                     what);
  return FCL_OK;
}

/* FCL_ERR_INVALID_ARGUMENT for a value of no fcl_blocking constant (an int converts silently). */
static fcl_status check_blocking(fcl_blocking blocking) {
  if (blocking != FCL_BLOCKING && blocking != FCL_NON_BLOCKING)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "argument 3 (blocking): %d is neither FCL_BLOCKING nor FCL_NON_BLOCKING",
                     (int)blocking);
  return FCL_OK;
}

fcl_status fcl_array_write(fcl_array *array, fcl_queue *queue, fcl_blocking blocking,
                           const void *host, cl_uint num_wait, const cl_event *wait,
                           cl_event *event) {
  FCL_CHECK_NULL(array, 1);
  FCL_TRY(check_blocking(blocking));
  FCL_CHECK_NULL(host, 4);
  FCL_TRY(writable(array, 1, "array", "write to"));
  return host_transfer(array, queue, OP_WRITE, (unsigned char *)host, blocking == FCL_BLOCKING,
                       num_wait, wait, event);
}

fcl_status fcl_array_read(const fcl_array *array, fcl_queue *queue, fcl_blocking blocking,
                          void *host, cl_uint num_wait, const cl_event *wait, cl_event *event) {
  FCL_CHECK_NULL(array, 1);
  FCL_TRY(check_blocking(blocking));
  FCL_CHECK_NULL(host, 4);
  return host_transfer(array, queue, OP_READ, host, blocking == FCL_BLOCKING, num_wait, wait,
                       event);
}

fcl_status fcl_array_fill(fcl_array *array, fcl_queue *queue, const void *value, cl_uint num_wait,
                          const cl_event *wait, cl_event *event) {
  FCL_CHECK_NULL(array, 1);
  FCL_CHECK_NULL(value, 3);
  FCL_TRY(writable(array, 1, "array", "fill"));
  size_t itemsize = fcl_dtype_size(array->dtype);
  rect_plan p;
  if (fcl_array_is_contiguous(array)) {
    memset(&p, 0, sizeof p);
    p.region[0] = fcl_array_nbytes(array);
    p.rect_dims = 1;
  } else {
    make_plan(array->ndim, array->shape, itemsize, array->strides, array->strides, 1, &p);
  }
  op_desc o = {OP_FILL,
               queue ? queue : array->queue,
               array->storage->buffer,
               NULL,
               array->offset,
               0,
               NULL,
               value,
               itemsize};
  return run_plan(&o, &p, false, num_wait, wait, event, NULL, NULL);
}

fcl_status fcl_array_copy(const fcl_array *src, fcl_array *dst, fcl_queue *queue, cl_uint num_wait,
                          const cl_event *wait, cl_event *event) {
  FCL_CHECK_NULL(src, 1);
  FCL_CHECK_NULL(dst, 2);
  FCL_TRY(writable(dst, 2, "dst", "copy into"));
  if (dst->dtype != src->dtype || dst->ndim != src->ndim ||
      memcmp(dst->shape, src->shape, (size_t)dst->ndim * sizeof *dst->shape) != 0)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "array copy needs the same dtype and shape "
                     "(dst %s[%d axes], src %s[%d axes])",
                     fcl_dtype_cl_name(dst->dtype), dst->ndim, fcl_dtype_cl_name(src->dtype),
                     src->ndim);
  rect_plan p;
  if (fcl_array_is_contiguous(dst) && fcl_array_is_contiguous(src)) {
    memset(&p, 0, sizeof p);
    p.region[0] = fcl_array_nbytes(dst);
    p.region[1] = p.region[2] = 1;
    p.rect_dims = 1;
  } else {
    make_plan(dst->ndim, dst->shape, fcl_dtype_size(dst->dtype), dst->strides, src->strides, 3, &p);
  }
  op_desc o = {OP_COPY,
               queue ? queue : dst->queue,
               dst->storage->buffer,
               src->storage->buffer,
               dst->offset,
               src->offset,
               NULL,
               NULL,
               0};
  return run_plan(&o, &p, false, num_wait, wait, event, dst, src->strides);
}

fcl_status fcl_array_map(fcl_array *array, fcl_queue *queue, cl_map_flags flags, void **host) {
  FCL_CHECK_NULL(array, 1);
  FCL_CHECK_NULL(host, 4);
  *host = NULL;
  if (flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION))
    FCL_TRY(writable(array, 1, "array", "map for writing"));
  if (!fcl_array_is_contiguous(array))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 1 (array): only contiguous arrays can be "
                                               "mapped");
  cl_int err;
  cl_event mapped = NULL;
  fcl_queue *q = queue ? queue : array->queue;
  void *p = clEnqueueMapBuffer(fcl_queue_cl(q), fcl_mem_cl(array->storage->buffer), CL_FALSE, flags,
                               array->offset, fcl_array_nbytes(array), 0, NULL, &mapped, &err);
  if (err != CL_SUCCESS)
    return FCL_CL_ERROR(err, "clEnqueueMapBuffer of %zu bytes", fcl_array_nbytes(array));
  fcl_status st = fcl_events_wait(1, &mapped); /* counted as a host sync */
  clReleaseEvent(mapped);
  if (st != FCL_OK) {
    clEnqueueUnmapMemObject(fcl_queue_cl(q), fcl_mem_cl(array->storage->buffer), p, 0, NULL, NULL);
    return st;
  }
  *host = p;
  return FCL_OK;
}

fcl_status fcl_array_unmap(fcl_array *array, fcl_queue *queue, void *host, cl_event *event) {
  FCL_CHECK_NULL(array, 1);
  FCL_CHECK_NULL(host, 3);
  FCL_CL_TRY(clEnqueueUnmapMemObject(fcl_queue_cl(queue ? queue : array->queue),
                                     fcl_mem_cl(array->storage->buffer), host, 0, NULL, event),
             "clEnqueueUnmapMemObject");
  return FCL_OK;
}

fcl_status fcl_array_item(const fcl_array *array, const size_t *index, void *value) {
  FCL_CHECK_NULL(array, 1);
  FCL_CHECK_NULL(index, 2);
  FCL_CHECK_NULL(value, 3);
  size_t off = array->offset;
  for (int i = 0; i < array->ndim; ++i) {
    if (index[i] >= array->shape[i])
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "argument 2 (index): axis %d index %zu is out of "
                       "range 0..%zu",
                       i, index[i], array->shape[i] - 1);
    off += index[i] * array->strides[i];
  }
  cl_event read = NULL;
  FCL_CL_TRY(
      clEnqueueReadBuffer(fcl_queue_cl(array->queue), fcl_mem_cl(array->storage->buffer), CL_FALSE,
                          off, fcl_dtype_size(array->dtype), value, 0, NULL, &read),
      "reading one element at byte %zu", off);
  fcl_status st = fcl_events_wait(1, &read);
  clReleaseEvent(read);
  return st;
}
