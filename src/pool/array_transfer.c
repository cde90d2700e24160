/* Array transfers: host <-> device, device -> device, fill, map, item. Strided arrays are moved
 * with rectangular copies of up to three dimensions and loops over the remaining ones. */
#include <string.h>

#include "array_impl.h"
#include "check.h"

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

static fcl_status enqueue_one(const op_desc *o, const rect_plan *p, size_t off_a, size_t off_b,
                              unsigned num_wait, fcl_event *const *wait, fcl_event **event) {
  off_a += o->base_a;
  off_b += o->base_b;
  if (o->kind == OP_FILL)
    return fcl_mem_fill(o->queue, o->a, o->pattern, o->pattern_size, off_a, p->region[0], num_wait,
                        wait, event);
  if (p->rect_dims == 1) { /* one run of bytes: a linear command */
    switch (o->kind) {
      case OP_READ:
        return fcl_mem_read(o->queue, o->a, off_a, p->region[0], o->host + off_b, FCL_NON_BLOCKING,
                            num_wait, wait, event);
      case OP_WRITE:
        return fcl_mem_write(o->queue, o->a, off_a, p->region[0], o->host + off_b, FCL_NON_BLOCKING,
                             num_wait, wait, event);
      default:
        return fcl_mem_copy(o->queue, o->b, off_b, o->a, off_a, p->region[0], num_wait, wait,
                            event);
    }
  }
  /* side a is the device array: the source of a read, the destination of a write or copy; side
   * b the host (origin 0) or the copy's source */
  size_t oa[3], ob[3] = {0, 0, 0};
  origin_of(off_a, p->pitch_a, p->rect_dims, oa);
  if (o->kind == OP_COPY) origin_of(off_b, p->pitch_b, p->rect_dims, ob);
  bool read = o->kind == OP_READ;
  const size_t *src_o = read ? oa : ob, *dst_o = read ? ob : oa;
  const size_t *src_p = read ? p->pitch_a : p->pitch_b, *dst_p = read ? p->pitch_b : p->pitch_a;
  fcl_rect r = {.src_origin = {src_o[0], src_o[1], src_o[2]},
                .dst_origin = {dst_o[0], dst_o[1], dst_o[2]},
                .region = {p->region[0], p->region[1], p->region[2]},
                .src_row_pitch = src_p[0],
                .src_slice_pitch = src_p[1],
                .dst_row_pitch = dst_p[0],
                .dst_slice_pitch = dst_p[1]};
  switch (o->kind) {
    case OP_READ:
      return fcl_mem_read_rect(o->queue, o->a, o->host + off_b, &r, FCL_NON_BLOCKING, num_wait,
                               wait, event);
    case OP_WRITE:
      return fcl_mem_write_rect(o->queue, o->a, o->host + off_b, &r, FCL_NON_BLOCKING, num_wait,
                                wait, event);
    default: return fcl_mem_copy_rect(o->queue, o->b, o->a, &r, num_wait, wait, event);
  }
}

/* Enqueue every command of the plan; event (if asked) completes when all have. */
static fcl_status run_plan(const op_desc *o, const rect_plan *p, bool blocking, unsigned num_wait,
                           fcl_event *const *wait, fcl_event **event, const fcl_array *layout_a,
                           const size_t *strides_b) {
  size_t index[FCL_ARRAY_MAX_DIMS] = {0}, count = 1;
  for (int i = 0; i < p->num_loops; ++i) count *= p->loop_shape[i];
  fcl_event *last = NULL;
  for (size_t c = 0; c < count; ++c) {
    size_t off_a = 0, off_b = 0;
    for (int i = 0; i < p->num_loops; ++i) {
      off_a += index[i] * p->loop_a[i];
      off_b += index[i] * p->loop_b[i];
    }
    fcl_status st = enqueue_one(o, p, off_a, off_b, num_wait, wait, count == 1 ? &last : NULL);
    if (st != FCL_OK && fcl_last_native_error() == -30 /* CL_INVALID_VALUE */ && c == 0 &&
        p->rect_dims > 1 && layout_a) {
      /* Some drivers refuse rectangles the specification allows: use one dimension fewer. */
      fcl_log(FCL_LOG_DEBUG,
              "array %d-D rectangular command refused (%s); retrying with %d-D commands",
              p->rect_dims, fcl_last_error(), p->rect_dims - 1);
      rect_plan smaller;
      make_plan(layout_a->ndim, layout_a->shape, fcl_dtype_size(layout_a->dtype), layout_a->strides,
                strides_b, p->rect_dims - 1, &smaller);
      return run_plan(o, &smaller, blocking, num_wait, wait, event, layout_a, strides_b);
    }
    if (st != FCL_OK) {
      static const char *names[] = {"read", "write", "copy", "fill"};
      return fcl__error_set(st, fcl_last_native_error(), __func__, __FILE__, __LINE__,
                            "array %s, command %zu of %zu (region %zu x %zu x %zu bytes/rows): %s",
                            names[o->kind], c + 1, count, p->region[0], p->region[1], p->region[2],
                            fcl_last_error());
    }
    for (int i = p->num_loops - 1; i >= 0 && ++index[i] == p->loop_shape[i]; --i) index[i] = 0;
  }
  if (count > 1) /* a marker with no wait list waits for every earlier command */
    FCL_TRY(fcl_queue_marker(o->queue, 0, NULL, &last));
  fcl_status st = blocking ? fcl_events_wait(1, &last) : FCL_OK;
  if (event)
    *event = last;
  else
    fcl_event_release(&last);
  return st;
}

static fcl_status host_transfer(const fcl_array *a, fcl_queue *queue, op_kind kind,
                                unsigned char *host, bool blocking, unsigned num_wait,
                                fcl_event *const *wait, fcl_event **event) {
  size_t itemsize = fcl_dtype_size(a->dtype), packed[FCL_ARRAY_MAX_DIMS];
  fcl__packed_strides(a->ndim, a->shape, itemsize, packed);
  fcl_queue *q = queue ? queue : a->queue;
  if (fcl_array_is_contiguous(a)) { /* one linear command */
    size_t n = fcl_array_nbytes(a);
    fcl_blocking how = blocking ? FCL_BLOCKING : FCL_NON_BLOCKING;
    return kind == OP_READ
               ? fcl_mem_read(q, a->storage->buffer, a->offset, n, host, how, num_wait, wait, event)
               : fcl_mem_write(q, a->storage->buffer, a->offset, n, host, how, num_wait, wait,
                               event);
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
                           const void *host, unsigned num_wait, fcl_event *const *wait,
                           fcl_event **event) {
  FCL_CHECK_NULL(array, 1);
  FCL_TRY(check_blocking(blocking));
  FCL_CHECK_NULL(host, 4);
  FCL_TRY(writable(array, 1, "array", "write to"));
  return host_transfer(array, queue, OP_WRITE, (unsigned char *)host, blocking == FCL_BLOCKING,
                       num_wait, wait, event);
}

fcl_status fcl_array_read(const fcl_array *array, fcl_queue *queue, fcl_blocking blocking,
                          void *host, unsigned num_wait, fcl_event *const *wait,
                          fcl_event **event) {
  FCL_CHECK_NULL(array, 1);
  FCL_TRY(check_blocking(blocking));
  FCL_CHECK_NULL(host, 4);
  return host_transfer(array, queue, OP_READ, host, blocking == FCL_BLOCKING, num_wait, wait,
                       event);
}

fcl_status fcl_array_fill(fcl_array *array, fcl_queue *queue, const void *value, unsigned num_wait,
                          fcl_event *const *wait, fcl_event **event) {
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

fcl_status fcl_array_copy(const fcl_array *src, fcl_array *dst, fcl_queue *queue, unsigned num_wait,
                          fcl_event *const *wait, fcl_event **event) {
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

fcl_status fcl_array_map(fcl_array *array, fcl_queue *queue, unsigned flags, void **host) {
  FCL_CHECK_NULL(array, 1);
  FCL_CHECK_NULL(host, 4);
  *host = NULL;
  if (flags & FCL_MAP_WRITE) FCL_TRY(writable(array, 1, "array", "map for writing"));
  if (!fcl_array_is_contiguous(array))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 1 (array): only contiguous arrays can be "
                                               "mapped");
  /* a blocking map, counted as a host sync */
  return fcl_mem_map(queue ? queue : array->queue, array->storage->buffer, flags, array->offset,
                     fcl_array_nbytes(array), 0, NULL, host);
}

fcl_status fcl_array_unmap(fcl_array *array, fcl_queue *queue, void *host, fcl_event **event) {
  FCL_CHECK_NULL(array, 1);
  FCL_CHECK_NULL(host, 3);
  return fcl_mem_unmap(queue ? queue : array->queue, array->storage->buffer, host, 0, NULL, event);
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
  return fcl_mem_read(array->queue, array->storage->buffer, off, fcl_dtype_size(array->dtype),
                      value, FCL_BLOCKING, 0, NULL, NULL);
}
