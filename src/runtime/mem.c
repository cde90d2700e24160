/* Memory: arguments and ranges checked and blocking waits counted here, the work done by the
 * memory's backend. */
#include <stdlib.h>

#include "backend.h"
#include "check.h"
#include "runtime_impl.h"

uint64_t fcl__mem_serial(void) {
  static atomic_uint_fast64_t next = 1;
  return (uint64_t)atomic_fetch_add(&next, 1);
}

uint64_t fcl_mem_serial(const fcl_mem *mem) { return mem ? mem->serial : 0; }

fcl_mem *fcl__mem_new(const fcl__backend *b, fcl_mem_kind kind, size_t size) {
  fcl_mem *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  m->backend = b;
  atomic_init(&m->refs, 1);
  m->size = size;
  m->kind = kind;
  m->serial = fcl__mem_serial();
  return m;
}

fcl_status fcl_mem_create(fcl_context *context, fcl_mem_kind kind, size_t bytes, void *host,
                          fcl_mem **mem) {
  FCL_CHECK_NULL(context, 1);
  FCL_CHECK_ARG(kind == FCL_MEM_DEVICE || kind == FCL_MEM_PINNED || kind == FCL_MEM_HOST, 2, "kind",
                "must be FCL_MEM_DEVICE, FCL_MEM_PINNED or FCL_MEM_HOST");
  FCL_CHECK_ARG(bytes > 0, 3, "bytes", "must be > 0");
  FCL_CHECK_ARG(host || kind != FCL_MEM_HOST, 4, "host", "must not be NULL for FCL_MEM_HOST");
  FCL_CHECK_NULL(mem, 5);
  *mem = NULL;
  fcl_mem *m = fcl__mem_new(context->backend, kind, bytes);
  if (!m) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "memory object");
  fcl_status st = m->backend->mem_create(context, m, host);
  if (st != FCL_OK) {
    free(m);
    return st;
  }
  *mem = m;
  return FCL_OK;
}

fcl_status fcl_host_alloc(fcl_context *context, size_t bytes, void **host) {
  FCL_CHECK_NULL(context, 1);
  FCL_CHECK_ARG(bytes > 0, 2, "bytes", "must be > 0");
  FCL_CHECK_NULL(host, 3);
  *host = NULL;
  if (context->backend->host_alloc) return context->backend->host_alloc(context, bytes, host);
  if (!(*host = malloc(bytes)))
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "%zu bytes of host memory", bytes);
  return FCL_OK;
}

void fcl_host_free(fcl_context *context, void *host) {
  if (!context || !host) return;
  if (context->backend->host_free)
    context->backend->host_free(context, host);
  else
    free(host);
}

fcl_mem *fcl_mem_retain(fcl_mem *mem) {
  if (mem) atomic_fetch_add(&mem->refs, 1);
  return mem;
}

void fcl_mem_release(fcl_mem **mem) {
  if (!mem || !*mem) return;
  fcl_mem *m = *mem;
  *mem = NULL;
  if (atomic_fetch_sub(&m->refs, 1) != 1) return;
  m->backend->mem_destroy(m);
  free(m);
}

size_t fcl_mem_size(const fcl_mem *mem) { return mem ? mem->size : 0; }
fcl_mem_kind fcl_mem_where(const fcl_mem *mem) { return mem ? mem->kind : FCL_MEM_DEVICE; }

/* [offset, offset + bytes) inside m, else an error naming argument pos. */
static fcl_status check_range(const fcl_mem *m, size_t offset, size_t bytes, int pos,
                              const char *name) {
  if (offset > m->size || bytes > m->size - offset)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "argument %d (%s): bytes [%zu, %zu) past the end of %zu bytes of memory", pos,
                     name, offset, offset + bytes, m->size);
  return FCL_OK;
}

static fcl_status check_blocking(fcl_blocking blocking, int pos) {
  FCL_CHECK_ARG(blocking == FCL_BLOCKING || blocking == FCL_NON_BLOCKING, pos, "blocking",
                "must be FCL_BLOCKING or FCL_NON_BLOCKING");
  if (blocking == FCL_BLOCKING) fcl__count_host_sync();
  return FCL_OK;
}

fcl_status fcl_mem_write(fcl_queue *queue, fcl_mem *dst, size_t offset, size_t bytes,
                         const void *host, fcl_blocking blocking, unsigned num_wait,
                         fcl_event *const *wait, fcl_event **event) {
  FCL_CHECK_NULL(queue, 1);
  FCL_CHECK_NULL(dst, 2);
  FCL_CHECK_ARG(host || bytes == 0, 5, "host", "must not be NULL");
  FCL_TRY(fcl__check_waits(num_wait, wait, 8, "wait"));
  FCL_TRY(check_range(dst, offset, bytes, 3, "offset"));
  FCL_TRY(check_blocking(blocking, 6));
  return dst->backend->mem_write(queue, dst, offset, bytes, host, blocking == FCL_BLOCKING,
                                 num_wait, wait, event);
}

fcl_status fcl_mem_read(fcl_queue *queue, const fcl_mem *src, size_t offset, size_t bytes,
                        void *host, fcl_blocking blocking, unsigned num_wait,
                        fcl_event *const *wait, fcl_event **event) {
  FCL_CHECK_NULL(queue, 1);
  FCL_CHECK_NULL(src, 2);
  FCL_CHECK_ARG(host || bytes == 0, 5, "host", "must not be NULL");
  FCL_TRY(fcl__check_waits(num_wait, wait, 8, "wait"));
  FCL_TRY(check_range(src, offset, bytes, 3, "offset"));
  FCL_TRY(check_blocking(blocking, 6));
  return src->backend->mem_read(queue, src, offset, bytes, host, blocking == FCL_BLOCKING, num_wait,
                                wait, event);
}

fcl_status fcl_mem_copy(fcl_queue *queue, const fcl_mem *src, size_t src_offset, fcl_mem *dst,
                        size_t dst_offset, size_t bytes, unsigned num_wait, fcl_event *const *wait,
                        fcl_event **event) {
  FCL_CHECK_NULL(queue, 1);
  FCL_CHECK_NULL(src, 2);
  FCL_CHECK_NULL(dst, 4);
  FCL_TRY(fcl__check_waits(num_wait, wait, 8, "wait"));
  FCL_TRY(check_range(src, src_offset, bytes, 3, "src_offset"));
  FCL_TRY(check_range(dst, dst_offset, bytes, 5, "dst_offset"));
  return dst->backend->mem_copy(queue, src, src_offset, dst, dst_offset, bytes, num_wait, wait,
                                event);
}

fcl_status fcl_mem_fill(fcl_queue *queue, fcl_mem *dst, const void *pattern, size_t pattern_size,
                        size_t offset, size_t bytes, unsigned num_wait, fcl_event *const *wait,
                        fcl_event **event) {
  FCL_CHECK_NULL(queue, 1);
  FCL_CHECK_NULL(dst, 2);
  FCL_CHECK_NULL(pattern, 3);
  FCL_CHECK_ARG(pattern_size > 0 && pattern_size <= 128 && !(pattern_size & (pattern_size - 1)), 4,
                "pattern_size", "must be a power of two from 1 to 128");
  FCL_CHECK_ARG(bytes % pattern_size == 0 && offset % pattern_size == 0, 6, "bytes",
                "bytes and offset must be multiples of pattern_size");
  FCL_TRY(fcl__check_waits(num_wait, wait, 8, "wait"));
  FCL_TRY(check_range(dst, offset, bytes, 5, "offset"));
  return dst->backend->mem_fill(queue, dst, pattern, pattern_size, offset, bytes, num_wait, wait,
                                event);
}

fcl_status fcl_mem_commit(fcl_queue *queue, fcl_mem *mem) {
  FCL_CHECK_NULL(queue, 1);
  FCL_CHECK_NULL(mem, 2);
  if (!mem->backend->mem_commit) return FCL_OK; /* the memory exists once created */
  fcl__count_host_sync();
  return mem->backend->mem_commit(queue, mem);
}

/* The last byte a rectangle reaches past its origin, for a side's pitches (0: packed). */
static size_t rect_extent(const size_t origin[3], const size_t region[3], size_t row_pitch,
                          size_t slice_pitch) {
  size_t row = row_pitch ? row_pitch : region[0];
  size_t slice = slice_pitch ? slice_pitch : row * region[1];
  return (origin[2] + region[2] - 1) * slice + (origin[1] + region[1] - 1) * row + origin[0] +
         region[0];
}

static fcl_status check_rect(const fcl_rect *r, const fcl_mem *src, const fcl_mem *dst, int pos) {
  FCL_CHECK_ARG(r->region[0] && r->region[1] && r->region[2], pos, "rect",
                "region must be at least 1 in each of its three parts");
  if (src &&
      rect_extent(r->src_origin, r->region, r->src_row_pitch, r->src_slice_pitch) > src->size)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "argument %d (rect): the source side reaches past %zu bytes of memory", pos,
                     src->size);
  if (dst &&
      rect_extent(r->dst_origin, r->region, r->dst_row_pitch, r->dst_slice_pitch) > dst->size)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "argument %d (rect): the destination side reaches past %zu bytes of memory",
                     pos, dst->size);
  return FCL_OK;
}

fcl_status fcl_mem_write_rect(fcl_queue *queue, fcl_mem *dst, const void *host,
                              const fcl_rect *rect, fcl_blocking blocking, unsigned num_wait,
                              fcl_event *const *wait, fcl_event **event) {
  FCL_CHECK_NULL(queue, 1);
  FCL_CHECK_NULL(dst, 2);
  FCL_CHECK_NULL(host, 3);
  FCL_CHECK_NULL(rect, 4);
  FCL_TRY(fcl__check_waits(num_wait, wait, 7, "wait"));
  FCL_TRY(check_rect(rect, NULL, dst, 4));
  FCL_TRY(check_blocking(blocking, 5));
  return dst->backend->mem_rect(queue, NULL, dst, (void *)host, rect, blocking == FCL_BLOCKING,
                                num_wait, wait, event);
}

fcl_status fcl_mem_read_rect(fcl_queue *queue, const fcl_mem *src, void *host, const fcl_rect *rect,
                             fcl_blocking blocking, unsigned num_wait, fcl_event *const *wait,
                             fcl_event **event) {
  FCL_CHECK_NULL(queue, 1);
  FCL_CHECK_NULL(src, 2);
  FCL_CHECK_NULL(host, 3);
  FCL_CHECK_NULL(rect, 4);
  FCL_TRY(fcl__check_waits(num_wait, wait, 7, "wait"));
  FCL_TRY(check_rect(rect, src, NULL, 4));
  FCL_TRY(check_blocking(blocking, 5));
  return src->backend->mem_rect(queue, src, NULL, host, rect, blocking == FCL_BLOCKING, num_wait,
                                wait, event);
}

fcl_status fcl_mem_copy_rect(fcl_queue *queue, const fcl_mem *src, fcl_mem *dst,
                             const fcl_rect *rect, unsigned num_wait, fcl_event *const *wait,
                             fcl_event **event) {
  FCL_CHECK_NULL(queue, 1);
  FCL_CHECK_NULL(src, 2);
  FCL_CHECK_NULL(dst, 3);
  FCL_CHECK_NULL(rect, 4);
  FCL_TRY(fcl__check_waits(num_wait, wait, 6, "wait"));
  FCL_TRY(check_rect(rect, src, dst, 4));
  return dst->backend->mem_rect(queue, src, dst, NULL, rect, false, num_wait, wait, event);
}

fcl_status fcl_mem_map(fcl_queue *queue, fcl_mem *mem, unsigned flags, size_t offset, size_t bytes,
                       unsigned num_wait, fcl_event *const *wait, void **host) {
  FCL_CHECK_NULL(queue, 1);
  FCL_CHECK_NULL(mem, 2);
  FCL_CHECK_ARG(flags && !(flags & ~(unsigned)(FCL_MAP_READ | FCL_MAP_WRITE)), 3, "flags",
                "FCL_MAP_READ, FCL_MAP_WRITE or both");
  FCL_TRY(fcl__check_waits(num_wait, wait, 7, "wait"));
  FCL_CHECK_NULL(host, 8);
  *host = NULL;
  FCL_TRY(check_range(mem, offset, bytes, 4, "offset"));
  fcl__count_host_sync();
  return mem->backend->mem_map(queue, mem, flags, offset, bytes, num_wait, wait, host);
}

fcl_status fcl_mem_unmap(fcl_queue *queue, fcl_mem *mem, void *host, unsigned num_wait,
                         fcl_event *const *wait, fcl_event **event) {
  FCL_CHECK_NULL(queue, 1);
  FCL_CHECK_NULL(mem, 2);
  FCL_CHECK_NULL(host, 3);
  FCL_TRY(fcl__check_waits(num_wait, wait, 5, "wait"));
  return mem->backend->mem_unmap(queue, mem, host, num_wait, wait, event);
}
