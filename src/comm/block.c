/* Copies of rectangular blocks between device buffers and packed host memory. */
#include "check.h"
#include "comm_impl.h"
#include "flowcl/opencl.h"

bool fcl__block_contiguous(const fcl__block *b) {
  return (b->region[1] == 1 || b->row_pitch == b->region[0]) &&
         (b->region[2] == 1 || b->slice_pitch == b->region[0] * b->region[1]);
}

/* b's shape laid out packed at byte offset `at`. */
static fcl__block packed_like(const fcl__block *b, size_t at) {
  fcl__block p = {
      at, {b->region[0], b->region[1], b->region[2]}, b->region[0], b->region[0] * b->region[1]};
  return p;
}

/* OpenCL's (x bytes, y, z) origin of a block: the offset split by its pitches. */
static void origin_of(const fcl__block *b, size_t origin[3]) {
  origin[2] = b->offset / b->slice_pitch;
  size_t rest = b->offset % b->slice_pitch;
  origin[1] = rest / b->row_pitch;
  origin[0] = rest % b->row_pitch;
}

fcl_status fcl__block_copy(fcl_queue *queue, fcl_mem *src, const fcl__block *s, fcl_mem *dst,
                           const fcl__block *d) {
  size_t n = fcl__block_bytes(s);
  if (n == 0) return FCL_OK;
  fcl__block ss = *s, dd = *d;
  if (fcl__block_bytes(d) != n)
    return FCL_ERROR(FCL_ERR_INTERNAL, "block copy: %zu bytes into a block of %zu", n,
                     fcl__block_bytes(d));
  if (fcl__block_contiguous(&ss) && fcl__block_contiguous(&dd)) {
    FCL_CL_TRY(clEnqueueCopyBuffer(fcl_queue_cl(queue), fcl_mem_cl(src), fcl_mem_cl(dst), ss.offset,
                                   dd.offset, n, 0, NULL, NULL),
               "block copy of %zu bytes", n);
    return FCL_OK;
  }
  if (fcl__block_contiguous(&dd))
    dd = packed_like(&ss, dd.offset);
  else if (fcl__block_contiguous(&ss))
    ss = packed_like(&dd, ss.offset);
  else if (ss.region[0] != dd.region[0] || ss.region[1] != dd.region[1])
    return FCL_ERROR(FCL_ERR_INTERNAL, "block copy between two strided blocks of other shapes");
  size_t so[3], dor[3];
  origin_of(&ss, so);
  origin_of(&dd, dor);
  FCL_CL_TRY(clEnqueueCopyBufferRect(fcl_queue_cl(queue), fcl_mem_cl(src), fcl_mem_cl(dst), so, dor,
                                     ss.region, ss.row_pitch, ss.slice_pitch, dd.row_pitch,
                                     dd.slice_pitch, 0, NULL, NULL),
             "block copy of %zu x %zu x %zu bytes", ss.region[0], ss.region[1], ss.region[2]);
  return FCL_OK;
}

/* A block to or from packed host memory (not blocking). */
static fcl_status transfer(fcl_queue *queue, fcl_mem *buf, const fcl__block *b, void *host,
                           bool to_host) {
  size_t n = fcl__block_bytes(b);
  if (n == 0) return FCL_OK;
  const char *what = to_host ? "read" : "write";
  if (fcl__block_contiguous(b)) {
    FCL_CL_TRY(to_host ? clEnqueueReadBuffer(fcl_queue_cl(queue), fcl_mem_cl(buf), CL_FALSE,
                                             b->offset, n, host, 0, NULL, NULL)
                       : clEnqueueWriteBuffer(fcl_queue_cl(queue), fcl_mem_cl(buf), CL_FALSE,
                                              b->offset, n, host, 0, NULL, NULL),
               "block %s of %zu bytes", what, n);
    return FCL_OK;
  }
  size_t o[3], zero[3] = {0, 0, 0}, hrow = b->region[0], hslice = b->region[0] * b->region[1];
  origin_of(b, o);
  FCL_CL_TRY(to_host ? clEnqueueReadBufferRect(fcl_queue_cl(queue), fcl_mem_cl(buf), CL_FALSE, o,
                                               zero, b->region, b->row_pitch, b->slice_pitch, hrow,
                                               hslice, host, 0, NULL, NULL)
                     : clEnqueueWriteBufferRect(fcl_queue_cl(queue), fcl_mem_cl(buf), CL_FALSE, o,
                                                zero, b->region, b->row_pitch, b->slice_pitch, hrow,
                                                hslice, host, 0, NULL, NULL),
             "block %s of %zu x %zu x %zu bytes", what, b->region[0], b->region[1], b->region[2]);
  return FCL_OK;
}

fcl_status fcl__block_read(fcl_queue *queue, fcl_mem *buf, const fcl__block *b, void *host) {
  return transfer(queue, buf, b, host, true);
}

fcl_status fcl__block_write(fcl_queue *queue, fcl_mem *buf, const fcl__block *b, const void *host) {
  return transfer(queue, buf, b, (void *)host, false);
}

size_t fcl__block_grain(const fcl__block *b, size_t unit) {
  if (fcl__block_contiguous(b)) return unit;
  return b->region[2] > 1 ? b->region[0] * b->region[1] : b->region[0];
}

fcl__block fcl__block_part(const fcl__block *b, size_t lo, size_t hi) {
  if (fcl__block_contiguous(b)) return fcl__block_range(b->offset + lo, hi - lo);
  fcl__block p = *b;
  if (b->region[2] > 1) { /* whole slices */
    size_t slice = b->region[0] * b->region[1];
    p.offset += lo / slice * b->slice_pitch;
    p.region[2] = (hi - lo) / slice;
  } else { /* whole rows of one slice */
    p.offset += lo / b->region[0] * b->row_pitch;
    p.region[1] = (hi - lo) / b->region[0];
  }
  return p;
}
