/* Copies of rectangular blocks between device buffers and packed host memory. */
#include <string.h>

#include "check.h"
#include "comm_impl.h"

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

/* The (x bytes, y, z) origin of a block: the offset split by its pitches. */
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
    return fcl_mem_copy(queue, src, ss.offset, dst, dd.offset, n, 0, NULL, NULL);
  }
  if (fcl__block_contiguous(&dd))
    dd = packed_like(&ss, dd.offset);
  else if (fcl__block_contiguous(&ss))
    ss = packed_like(&dd, ss.offset);
  else if (ss.region[0] != dd.region[0] || ss.region[1] != dd.region[1])
    return FCL_ERROR(FCL_ERR_INTERNAL, "block copy between two strided blocks of other shapes");
  fcl_rect r = {.region = {ss.region[0], ss.region[1], ss.region[2]},
                .src_row_pitch = ss.row_pitch,
                .src_slice_pitch = ss.slice_pitch,
                .dst_row_pitch = dd.row_pitch,
                .dst_slice_pitch = dd.slice_pitch};
  origin_of(&ss, r.src_origin);
  origin_of(&dd, r.dst_origin);
  return fcl_mem_copy_rect(queue, src, dst, &r, 0, NULL, NULL);
}

/* A block to or from packed host memory (not blocking). */
static fcl_status transfer(fcl_queue *queue, fcl_mem *buf, const fcl__block *b, void *host,
                           bool to_host) {
  size_t n = fcl__block_bytes(b);
  if (n == 0) return FCL_OK;
  if (fcl__block_contiguous(b))
    return to_host ? fcl_mem_read(queue, buf, b->offset, n, host, FCL_NON_BLOCKING, 0, NULL, NULL)
                   : fcl_mem_write(queue, buf, b->offset, n, host, FCL_NON_BLOCKING, 0, NULL, NULL);
  /* the device side has the block's pitches, the host side is packed */
  size_t o[3], hrow = b->region[0], hslice = b->region[0] * b->region[1];
  origin_of(b, o);
  fcl_rect r = {.region = {b->region[0], b->region[1], b->region[2]}};
  if (to_host) {
    memcpy(r.src_origin, o, sizeof o);
    r.src_row_pitch = b->row_pitch, r.src_slice_pitch = b->slice_pitch;
    r.dst_row_pitch = hrow, r.dst_slice_pitch = hslice;
    return fcl_mem_read_rect(queue, buf, host, &r, FCL_NON_BLOCKING, 0, NULL, NULL);
  }
  memcpy(r.dst_origin, o, sizeof o);
  r.dst_row_pitch = b->row_pitch, r.dst_slice_pitch = b->slice_pitch;
  r.src_row_pitch = hrow, r.src_slice_pitch = hslice;
  return fcl_mem_write_rect(queue, buf, host, &r, FCL_NON_BLOCKING, 0, NULL, NULL);
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
