/* The CUDA backend's memory: device allocations, page-locked host memory mapped into the
 * device's address space (FCL_MEM_PINNED), the caller's memory registered in place
 * (FCL_MEM_HOST); transfers, fills, rectangles and maps on a queue's stream. */
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "../runtime_impl.h"
#include "cuda_backend.h"
#include "driver.h"

static const fcl__cu_api *cu(void) { return fcl__cu(NULL); }

fcl_status fcl__cuda_mem_create(fcl_context *context, fcl_mem *m, void *host) {
  FCL_TRY(fcl__cuda_current(context->devices[0]));
  fcl__cuda_free_deferred(context->devices[0], false);
  fcl__cuda_mem *cm = calloc(1, sizeof *cm);
  if (!cm) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "CUDA memory object");
  cm->device = context->devices[0];
  cm->kind = m->kind;
  CUresult r = CUDA_SUCCESS;
  const char *call = "";
  if (m->kind == FCL_MEM_DEVICE) {
    call = "cuMemAlloc";
    r = cu()->MemAlloc(&cm->ptr, m->size);
  } else if (m->kind == FCL_MEM_PINNED) {
    call = "cuMemHostAlloc";
    r = cu()->MemHostAlloc(&cm->host, m->size,
                           CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE);
    if (r == CUDA_SUCCESS) r = cu()->MemHostGetDevicePointer(&cm->ptr, cm->host, 0);
  } else {
    call = "cuMemHostRegister";
    cm->host = host;
    cm->registered = true;
    r = cu()->MemHostRegister(host, m->size,
                              CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_PORTABLE);
    if (r == CUDA_SUCCESS) r = cu()->MemHostGetDevicePointer(&cm->ptr, host, 0);
  }
  /* The initial contents on the legacy stream, waited for: cuMemcpyHtoD from pageable memory
   * returns once the data are staged, and the queues' streams do not wait for the legacy one,
   * so a command enqueued next could run before the copy lands and be overwritten by it. */
  if (r == CUDA_SUCCESS && host && m->kind != FCL_MEM_HOST) {
    call = "cuMemcpyHtoD";
    r = cu()->MemcpyHtoD(cm->ptr, host, m->size);
    if (r == CUDA_SUCCESS) {
      call = "cuStreamSynchronize (legacy stream)";
      r = cu()->StreamSynchronize(CU_STREAM_LEGACY);
    }
  }
  m->native = cm;
  if (r != CUDA_SUCCESS) {
    fcl__cuda_mem_destroy(m);
    m->native = NULL;
    return r == CUDA_ERROR_OUT_OF_MEMORY
               ? FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "%s of %zu bytes: not enough device memory", call,
                           m->size)
               : FCL_CU_ERROR(r, call);
  }
  return FCL_OK;
}

void fcl__cuda_mem_destroy(fcl_mem *m) {
  fcl__cuda_mem *cm = m->native;
  /* another process's memory is closed at once, never deferred: its owner frees it once told
   * that every opener has closed it (CUDA: a free before the close is undefined) */
  if (!cm || (!cm->opened && fcl__cuda_free_later(cm))) return;
  const fcl_device *device = cm->device;
  fcl__cuda_mem_free(cm);
  fcl__cuda_free_deferred(device, false);
}

void fcl__cuda_mem_free(fcl__cuda_mem *cm) {
  if (fcl__cuda_current(cm->device) == FCL_OK) {
    if (cm->kind == FCL_MEM_DEVICE && cm->ptr)
      cm->opened ? cu()->IpcCloseMemHandle(cm->ptr) : cu()->MemFree(cm->ptr);
    if (cm->kind == FCL_MEM_PINNED && cm->host) cu()->MemFreeHost(cm->host);
    if (cm->kind == FCL_MEM_HOST && cm->registered) cu()->MemHostUnregister(cm->host);
  }
  for (fcl__cuda_mapping *p = cm->maps, *next; p; p = next) {
    next = p->next;
    free(p->staging);
    free(p);
  }
  free(cm);
}

static CUdeviceptr at(const fcl_mem *m, size_t offset) {
  return ((const fcl__cuda_mem *)m->native)->ptr + offset;
}

/* The end of an enqueue: its event, and the host wait of a blocking one. */
static fcl_status finish(fcl_queue *q, fcl__cuda_event *e, bool blocking, fcl_event **event) {
  FCL_TRY(fcl__cuda_after(q, e, event));
  if (blocking) FCL_TRY(fcl__cuda_queue_sync(q, "cuStreamSynchronize"));
  return FCL_OK;
}

#define BEGIN(q, num_wait, wait, event)                                                            \
  fcl__cuda_event *e;                                                                              \
  FCL_TRY(fcl__cuda_before((q), (num_wait), (wait), (event) != NULL, &e))
#define CALL(expr, call)                                                                           \
  do {                                                                                             \
    CUresult r_ = (expr);                                                                          \
    if (r_ != CUDA_SUCCESS) {                                                                      \
      fcl__cuda_event_free(e);                                                                     \
      return FCL_CU_ERROR(r_, call);                                                               \
    }                                                                                              \
  } while (0)
/* A staging step (host_stage.c): a non-blocking transfer of the caller's pageable memory goes
 * through a page-locked block, so that it does not wait for the stream. */
#define STAGE(expr)                                                                                \
  do {                                                                                             \
    const fcl_status st_ = (expr);                                                                 \
    if (st_ != FCL_OK) {                                                                           \
      fcl__cuda_event_free(e);                                                                     \
      return st_;                                                                                  \
    }                                                                                              \
  } while (0)

/* CALL for the copy that uses block s (or none): on failure the block is cancelled, not given. */
#define CALL_STAGED(expr, call, s)                                                                 \
  do {                                                                                             \
    CUresult r_ = (expr);                                                                          \
    if (r_ != CUDA_SUCCESS) {                                                                      \
      if (s) fcl__cuda_stage_cancel((s), fcl__cuda_stream(q));                                     \
      fcl__cuda_event_free(e);                                                                     \
      return FCL_CU_ERROR(r_, call);                                                               \
    }                                                                                              \
  } while (0)

/* A block for a non-blocking transfer of the caller's pageable rows, or none (*stage NULL: the
 * driver's own staging, which may wait for the stream) where page-locked memory ran out. */
static fcl_status stage_rows(fcl_queue *q, const fcl__cuda_rows *rows, bool write,
                             fcl__cuda_stage **stage, void **block) {
  *stage = NULL;
  const fcl_status st = fcl__cuda_stage_take(q->device, rows, write, stage, block);
  if (st != FCL_ERR_OUT_OF_MEMORY) return st;
  fcl_log(FCL_LOG_WARNING, "%s: the transfer goes unstaged and may wait for its queue",
          fcl_last_error());
  fcl_clear_error();
  *stage = NULL;
  return FCL_OK;
}

fcl_status fcl__cuda_mem_write(fcl_queue *q, fcl_mem *dst, size_t offset, size_t bytes,
                               const void *host, bool blocking, unsigned num_wait,
                               fcl_event *const *wait, fcl_event **event) {
  BEGIN(q, num_wait, wait, event);
  if (bytes) {
    const fcl__cuda_rows rows = {(unsigned char *)host, bytes, 1, 1, bytes, bytes};
    fcl__cuda_stage *s = NULL;
    void *block = NULL;
    if (!blocking && !fcl__cuda_rows_pinned(q->device, &rows))
      STAGE(stage_rows(q, &rows, true, &s, &block));
    CALL_STAGED(
        cu()->MemcpyHtoDAsync(at(dst, offset), s ? block : host, bytes, fcl__cuda_stream(q)),
        "cuMemcpyHtoDAsync", s);
    if (s) STAGE(fcl__cuda_stage_give(s, false, fcl__cuda_stream(q)));
  }
  return finish(q, e, blocking, event);
}

fcl_status fcl__cuda_mem_read(fcl_queue *q, const fcl_mem *src, size_t offset, size_t bytes,
                              void *host, bool blocking, unsigned num_wait, fcl_event *const *wait,
                              fcl_event **event) {
  BEGIN(q, num_wait, wait, event);
  if (bytes) {
    const fcl__cuda_rows rows = {host, bytes, 1, 1, bytes, bytes};
    fcl__cuda_stage *s = NULL;
    void *block = NULL;
    if (!blocking && !fcl__cuda_rows_pinned(q->device, &rows))
      STAGE(stage_rows(q, &rows, false, &s, &block));
    CALL_STAGED(
        cu()->MemcpyDtoHAsync(s ? block : host, at(src, offset), bytes, fcl__cuda_stream(q)),
        "cuMemcpyDtoHAsync", s);
    if (s) STAGE(fcl__cuda_stage_give(s, true, fcl__cuda_stream(q)));
  }
  return finish(q, e, blocking, event);
}

fcl_status fcl__cuda_mem_copy(fcl_queue *q, const fcl_mem *src, size_t src_offset, fcl_mem *dst,
                              size_t dst_offset, size_t bytes, unsigned num_wait,
                              fcl_event *const *wait, fcl_event **event) {
  BEGIN(q, num_wait, wait, event);
  if (bytes)
    CALL(
        cu()->MemcpyDtoDAsync(at(dst, dst_offset), at(src, src_offset), bytes, fcl__cuda_stream(q)),
        "cuMemcpyDtoDAsync");
  return finish(q, e, false, event);
}

fcl_status fcl__cuda_mem_fill(fcl_queue *q, fcl_mem *dst, const void *pattern, size_t pattern_size,
                              size_t offset, size_t bytes, unsigned num_wait,
                              fcl_event *const *wait, fcl_event **event) {
  BEGIN(q, num_wait, wait, event);
  const CUdeviceptr p = at(dst, offset);
  const size_t n = bytes / pattern_size;
  if (n == 0) return finish(q, e, false, event);
  /* the runtime checked: pattern_size a power of two, offset and bytes its multiples; memory
   * from cuMemAlloc starts 256-byte aligned, so every pattern is aligned on its width */
  if (pattern_size == 1) {
    CALL(cu()->MemsetD8Async(p, *(const unsigned char *)pattern, n, fcl__cuda_stream(q)),
         "cuMemsetD8Async");
  } else if (pattern_size == 2) {
    unsigned short v;
    memcpy(&v, pattern, 2);
    CALL(cu()->MemsetD16Async(p, v, n, fcl__cuda_stream(q)), "cuMemsetD16Async");
  } else if (pattern_size == 4) {
    unsigned v;
    memcpy(&v, pattern, 4);
    CALL(cu()->MemsetD32Async(p, v, n, fcl__cuda_stream(q)), "cuMemsetD32Async");
  } else { /* each 32-bit word of the pattern down a column of pitch pattern_size */
    for (size_t w = 0; w < pattern_size / 4; ++w) {
      unsigned v;
      memcpy(&v, (const unsigned char *)pattern + 4 * w, 4);
      CALL(cu()->MemsetD2D32Async(p + 4 * w, pattern_size, v, 1, n, fcl__cuda_stream(q)),
           "cuMemsetD2D32Async");
    }
  }
  return finish(q, e, false, event);
}

/* One side of a rectangle: device memory m, or host memory at host, from byte offset on, rows of
 * pitch bytes, slices of height rows. The origin folded into the offset: CUDA refuses an x
 * origin past the pitch, which OpenCL's rectangles allow. */
static void side(CUDA_MEMCPY3D *c, bool src, const fcl_mem *m, unsigned char *host, size_t offset,
                 size_t pitch, size_t height) {
  const CUmemorytype type = m ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
  if (src) {
    c->srcMemoryType = type;
    if (m)
      c->srcDevice = at(m, offset);
    else
      c->srcHost = host + offset;
    c->srcPitch = pitch;
    c->srcHeight = height;
  } else {
    c->dstMemoryType = type;
    if (m)
      c->dstDevice = at(m, offset);
    else
      c->dstHost = host + offset;
    c->dstPitch = pitch;
    c->dstHeight = height;
  }
}

fcl_status fcl__cuda_mem_rect(fcl_queue *q, const fcl_mem *src, fcl_mem *dst, void *host,
                              const fcl_rect *rect, bool blocking, unsigned num_wait,
                              fcl_event *const *wait, fcl_event **event) {
  const size_t *r = rect->region;
  size_t so[3], dso[3];
  memcpy(so, rect->src_origin, sizeof so);
  memcpy(dso, rect->dst_origin, sizeof dso);
  /* packed pitches, as OpenCL reads 0 */
  size_t sr = rect->src_row_pitch ? rect->src_row_pitch : r[0];
  size_t ss = rect->src_slice_pitch ? rect->src_slice_pitch : r[1] * sr;
  size_t dr = rect->dst_row_pitch ? rect->dst_row_pitch : r[0];
  size_t ds = rect->dst_slice_pitch ? rect->dst_slice_pitch : r[1] * dr;
  BEGIN(q, num_wait, wait, event);
  /* the host side, if any: staged when pageable and not blocking (the block packed) */
  fcl__cuda_stage *stage = NULL;
  if (host && !blocking) {
    const bool write = !src;
    size_t *o = write ? so : dso, *rp = write ? &sr : &dr, *sp = write ? &ss : &ds;
    const fcl__cuda_rows rows = {
        (unsigned char *)host + o[0] + o[1] * *rp + o[2] * *sp, r[0], r[1], r[2], *rp, *sp};
    void *block = NULL;
    if (!fcl__cuda_rows_pinned(q->device, &rows))
      STAGE(stage_rows(q, &rows, write, &stage, &block));
    if (stage) {
      host = block;
      o[0] = o[1] = o[2] = 0;
      *rp = r[0];
      *sp = r[0] * r[1];
    }
  }
  const fcl__cuda_mem *sm = src ? src->native : NULL, *dm = dst ? dst->native : NULL;
  if (sm && dm && !sm->host && !dm->host && sm->device == q->device && dm->device == q->device) {
    /* device memory of the queue's device on both sides: a kernel (rect_copy.c) */
    fcl_status st = r[0] && r[1] && r[2]
                        ? fcl__cuda_rect_copy(q, at(src, so[0] + so[1] * sr + so[2] * ss),
                                              at(dst, dso[0] + dso[1] * dr + dso[2] * ds), r, sr,
                                              ss, dr, ds)
                        : FCL_OK;
    if (st != FCL_OK) {
      fcl__cuda_event_free(e);
      return st;
    }
    return finish(q, e, blocking, event);
  }
  /* cuMemcpy3D takes a slice as whole rows: a slice pitch that is not a multiple of the row
   * pitch goes slice by slice */
  const bool whole = r[2] == 1 || (ss % sr == 0 && ds % dr == 0);
  const size_t copies = whole ? 1 : r[2];
  for (size_t z = 0; z < copies; ++z) {
    CUDA_MEMCPY3D c;
    memset(&c, 0, sizeof c);
    side(&c, true, src, src ? NULL : host, so[0] + so[1] * sr + (so[2] + z) * ss, sr,
         whole && r[2] > 1 ? ss / sr : r[1]);
    side(&c, false, dst, dst ? NULL : host, dso[0] + dso[1] * dr + (dso[2] + z) * ds, dr,
         whole && r[2] > 1 ? ds / dr : r[1]);
    c.WidthInBytes = r[0];
    c.Height = r[1];
    c.Depth = whole ? r[2] : 1;
    CALL_STAGED(cu()->Memcpy3DAsync(&c, fcl__cuda_stream(q)), "cuMemcpy3DAsync", stage);
  }
  if (stage) STAGE(fcl__cuda_stage_give(stage, !dst, fcl__cuda_stream(q)));
  return finish(q, e, blocking, event);
}

fcl_status fcl__cuda_mem_map(fcl_queue *q, fcl_mem *m, unsigned flags, size_t offset, size_t bytes,
                             unsigned num_wait, fcl_event *const *wait, void **host) {
  fcl__cuda_mem *cm = m->native;
  BEGIN(q, num_wait, wait, NULL);
  (void)e; /* no event is wanted: e is NULL unless the queue profiles */
  fcl__cuda_event_free(e);
  if (cm->host) { /* pinned or registered: the host's own address, once the stream is idle */
    FCL_TRY(fcl__cuda_queue_sync(q, "cuStreamSynchronize (map)"));
    *host = (unsigned char *)cm->host + offset;
    return FCL_OK;
  }
  fcl__cuda_mapping *map = calloc(1, sizeof *map);
  void *staging = malloc(bytes ? bytes : 1);
  if (!map || !staging) {
    free(map);
    free(staging);
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "map of %zu bytes", bytes);
  }
  CUresult r = flags & FCL_MAP_READ
                   ? cu()->MemcpyDtoHAsync(staging, at(m, offset), bytes, fcl__cuda_stream(q))
                   : CUDA_SUCCESS;
  fcl_status st = r == CUDA_SUCCESS ? fcl__cuda_queue_sync(q, "cuStreamSynchronize (map)")
                                    : FCL_CU_ERROR(r, "cuMemcpyDtoHAsync (map)");
  if (st != FCL_OK) {
    free(map);
    free(staging);
    return st;
  }
  *map = (fcl__cuda_mapping){cm->maps, staging, offset, bytes, flags};
  cm->maps = map;
  *host = staging;
  return FCL_OK;
}

fcl_status fcl__cuda_mem_unmap(fcl_queue *q, fcl_mem *m, void *host, unsigned num_wait,
                               fcl_event *const *wait, fcl_event **event) {
  fcl__cuda_mem *cm = m->native;
  fcl__cuda_mapping **pp = &cm->maps;
  while (*pp && (*pp)->staging != host) pp = &(*pp)->next;
  if (!cm->host && !*pp)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 3 (host): not an address mapped from it");
  BEGIN(q, num_wait, wait, event);
  if (*pp) {
    fcl__cuda_mapping *map = *pp;
    if (map->flags & FCL_MAP_WRITE && map->bytes) { /* through a block: the map's copy goes now */
      const fcl__cuda_rows rows = {map->staging, map->bytes, 1, 1, map->bytes, map->bytes};
      fcl__cuda_stage *s = NULL;
      void *block = NULL;
      STAGE(stage_rows(q, &rows, true, &s, &block));
      CALL_STAGED(cu()->MemcpyHtoDAsync(at(m, map->offset), s ? block : map->staging, map->bytes,
                                        fcl__cuda_stream(q)),
                  "cuMemcpyHtoDAsync (unmap)", s);
      if (s) STAGE(fcl__cuda_stage_give(s, false, fcl__cuda_stream(q)));
    }
    *pp = map->next;
    free(map->staging);
    free(map);
  }
  return finish(q, e, false, event);
}
