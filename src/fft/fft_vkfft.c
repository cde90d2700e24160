/* The VkFFT backend: VkFFT's OpenCL backend on the field's device. One rank: one r2c plan over
 * every axis, reading the field's padded storage in place (strides and offset, no packing) and
 * writing back into it on the inverse. Several ranks (slabs along the last axis): r2c over the
 * axes a rank holds whole into a device work array, the slab transpose, then c2c along the last
 * axis in the slot. VkFFT's kernels are cached by flowcl's program cache (fft_vkfft_cache.h). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fft_impl.h"

#include "fft_vkfft_cache.h" /* before vkFFT.h: its program builds go through the cache */
#define VKFFT_BACKEND 3      /* OpenCL */
#include <vkFFT.h>

typedef struct {
  cl_device_id device;
  cl_context context;
  cl_command_queue queue;
  VkFFTApplication whole;   /* r2c over the axes held whole */
  VkFFTApplication last;    /* c2c along the last axis (distributed) */
  VkFFTApplication inplace; /* r2c in place on a slot (padded real rows), axes as `whole` */
  bool have_whole, have_last, have_inplace;
  fcl_array *pre; /* complex work array before the transpose (distributed) */
  fcl__slab_transpose *transpose;
  char description[64];
  /* the buffer sizes the plans point to: VkFFT keeps the pointers and reads them at every
   * append, so they live as long as the plans */
  uint64_t in_bytes, out_bytes, inplace_bytes, last_bytes;
} vk_state;

static void vk_destroy(void *state) {
  vk_state *s = state;
  if (!s) return;
  if (s->have_whole) deleteVkFFT(&s->whole);
  if (s->have_last) deleteVkFFT(&s->last);
  if (s->have_inplace) deleteVkFFT(&s->inplace);
  fcl_array_destroy(&s->pre);
  fcl__slab_transpose_destroy(&s->transpose);
  free(s);
}

static fcl_status vk_error(VkFFTResult r, const char *what) {
  return fcl__error_set(FCL_ERR_FFT, (int)r, __func__, __FILE__, __LINE__,
                        "VkFFT %d: %s (VkFFTResult %d; VkFFT %d)", (int)r, what, (int)r,
                        VkFFTGetVersion());
}

/* Plan; on failure VkFFT has already released what it made. A failed compile is tried once
 * more: PoCL 5 has been seen to fail a VkFFT build, with an empty log, when four ranks compile
 * at once, and to succeed alone. */
static fcl_status vk_init(VkFFTApplication *app, VkFFTConfiguration c, const char *what) {
  VkFFTResult r = initializeVkFFT(app, c);
  if (r == VKFFT_ERROR_FAILED_TO_COMPILE_PROGRAM) {
    deleteVkFFT(app);
    memset(app, 0, sizeof *app);
    fcl_log(FCL_LOG_WARNING, "fft: VkFFT kernel build failed while %s; trying once more", what);
    r = initializeVkFFT(app, c);
  }
  if (r != VKFFT_SUCCESS) {
    deleteVkFFT(app);
    return vk_error(r, what);
  }
  return FCL_OK;
}

/* One VkFFT launch on the plan's queue: buf is VkFFT's buffer, in (or NULL) its input buffer
 * (the field, read on forward and written on backward); dir -1 forward, 1 backward. */
static fcl_status vk_append(vk_state *s, VkFFTApplication *app, cl_mem in, cl_mem buf, int dir,
                            const char *what) {
  VkFFTLaunchParams lp = {0};
  lp.commandQueue = &s->queue;
  lp.buffer = &buf;
  if (in) lp.inputBuffer = &in;
  VkFFTResult r = VkFFTAppend(app, dir, &lp);
  return r == VKFFT_SUCCESS ? FCL_OK : vk_error(r, what);
}

static fcl_status vk_forward(fcl_fft *fft, const fcl_field *src, int comp, cl_mem slot) {
  vk_state *s = fft->state;
  cl_mem work = s->pre ? fcl_array_buffer(s->pre) : slot;
  FCL_TRY(vk_append(s, &s->whole, fcl_field_buffer(src, comp), work, -1, "forward transform"));
  if (!s->pre) return FCL_OK;
  FCL_TRY(fcl__slab_transpose_run(s->transpose, work, slot, true));
  return vk_append(s, &s->last, NULL, slot, -1, "forward transform of the last axis");
}

static fcl_status vk_backward(fcl_fft *fft, cl_mem slot, fcl_field *dst, int comp) {
  vk_state *s = fft->state;
  cl_mem work = slot;
  if (s->pre) {
    FCL_TRY(vk_append(s, &s->last, NULL, slot, 1, "backward transform of the last axis"));
    work = fcl_array_buffer(s->pre);
    FCL_TRY(fcl__slab_transpose_run(s->transpose, work, slot, false));
  }
  return vk_append(s, &s->whole, fcl_field_buffer(dst, comp), work, 1, "backward transform");
}

/* In place on the slot; across ranks the transpose goes through the work array and back. */
static fcl_status vk_inplace(fcl_fft *fft, cl_mem slot, bool forward) {
  vk_state *s = fft->state;
  if (forward) FCL_TRY(vk_append(s, &s->inplace, NULL, slot, -1, "in-place forward transform"));
  if (s->pre) {
    cl_mem work = fcl_array_buffer(s->pre);
    if (!forward) FCL_TRY(vk_append(s, &s->last, NULL, slot, 1, "backward, last axis"));
    FCL_TRY(forward ? fcl__slab_transpose_run(s->transpose, slot, work, true)
                    : fcl__slab_transpose_run(s->transpose, work, slot, false));
    size_t bytes = forward ? fft->layout.bytes : fcl__slab_transpose_pre_bytes(s->transpose);
    FCL_CL_TRY(clEnqueueCopyBuffer(s->queue, work, slot, 0, 0, bytes, 0, NULL, NULL),
               "fft: in-place transform, copy back to the slot");
    if (forward) FCL_TRY(vk_append(s, &s->last, NULL, slot, -1, "forward, last axis"));
  }
  if (!forward) FCL_TRY(vk_append(s, &s->inplace, NULL, slot, 1, "in-place backward transform"));
  return FCL_OK;
}

static const fcl__fft_ops vk_ops = {vk_forward, vk_backward, vk_inplace, vk_destroy};

fcl_status fcl__fft_vkfft_plan(fcl_fft *fft, fcl_pool *pool) {
  vk_state *s = calloc(1, sizeof *s);
  if (!s) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "fft: VkFFT plan");
  fft->state = s;
  fft->ops = &vk_ops;
  fft->description = "vkfft";
  s->queue = fft->queue;
  s->context = fcl_context_cl(fft->context);
  FCL_TRY(fcl_queue_device(fft->queue, &s->device));
  const fcl_topology *t = fft->topo;
  const int dim = fft->dim;
  const size_t *p = fft->padded;
  /* The axes a rank transforms in the r2c plan: all of them, or all but the last (slabs). */
  uint64_t n[3] = {1, 1, 1}, nc[3] = {1, 1, 1};
  for (int a = 0; a < dim; ++a) n[a] = (uint64_t)t->local[a];
  nc[0] = n[0] / 2 + 1;
  nc[1] = n[1];
  nc[2] = n[2];
  const int *g = t->ghosts;
  const uint64_t in_bytes = s->in_bytes = p[0] * p[1] * p[2] * fft->real_size;
  const uint64_t out_bytes = s->out_bytes = nc[0] * nc[1] * nc[2] * 2 * fft->real_size;
  if (fft->distributed) {
    size_t bytes = out_bytes > fft->layout.bytes ? out_bytes : fft->layout.bytes;
    size_t reals = bytes / fft->real_size;
    FCL_TRY(fcl_array_create(pool, fft->queue, fft->dtype, 1, &reals, &s->pre));
    FCL_TRY(fcl__slab_transpose_create(fft, &s->transpose));
    snprintf(s->description, sizeof s->description, "vkfft (slabs, %s transport)",
             fcl__slab_transpose_transport(s->transpose));
    fft->description = s->description;
  }
  cl_mem in_probe = NULL, buf_probe = NULL; /* VkFFT wants buffers at planning; any will do */
  VkFFTConfiguration c = {0};
  c.FFTdim = (uint64_t)dim;
  for (int a = 0; a < 3; ++a) c.size[a] = a < dim ? n[a] : 1;
  c.device = &s->device;
  c.context = &s->context;
  c.commandQueue = &s->queue;
  c.doublePrecision = fft->dtype == FCL_FLOAT64;
  c.performR2C = 1;
  c.isInputFormatted = 1;
  c.inverseReturnToInputBuffer = 1;
  c.inputBufferStride[0] = p[0];
  c.inputBufferStride[1] = p[0] * p[1];
  c.inputBufferStride[2] = p[0] * p[1] * p[2];
  c.inputBufferOffset = ((g[2] * p[1] + g[1]) * p[0] + g[0]) * fft->real_size;
  c.bufferStride[0] = nc[0];
  c.bufferStride[1] = nc[0] * nc[1];
  c.bufferStride[2] = nc[0] * nc[1] * nc[2];
  c.inputBufferSize = &s->in_bytes;
  c.bufferSize = &s->out_bytes;
  /* VkFFT refuses to omit an axis of one point (VKFFT_ERROR_UNSUPPORTED_RADIX): a slab of one
   * plane is a plan of one dimension less. */
  if (fft->distributed && n[dim - 1] == 1)
    c.FFTdim = (uint64_t)dim - 1;
  else if (fft->distributed)
    c.omitDimension[dim - 1] = 1;
  cl_int err;
  in_probe = clCreateBuffer(s->context, CL_MEM_READ_WRITE, in_bytes, NULL, &err);
  if (err != CL_SUCCESS) return FCL_CL_ERROR(err, "fft: VkFFT planning buffer");
  buf_probe = s->pre ? fcl_array_buffer(s->pre) : fcl_array_buffer(fft->slots[0]);
  c.inputBuffer = &in_probe;
  c.buffer = &buf_probe;
  fcl_status st = vk_init(&s->whole, c, "planning the r2c transform");
  clReleaseMemObject(in_probe);
  FCL_TRY(st);
  s->have_whole = true;
  /* The same axes in place on a slot: VkFFT's default r2c buffer is FFTW's padded form. */
  VkFFTConfiguration ip = c;
  ip.isInputFormatted = 0;
  ip.inverseReturnToInputBuffer = 0;
  memset(ip.inputBufferStride, 0, sizeof ip.inputBufferStride);
  ip.inputBufferOffset = 0;
  ip.inputBuffer = NULL;
  ip.inputBufferSize = NULL;
  memset(ip.bufferStride, 0, sizeof ip.bufferStride);
  s->inplace_bytes = fft->slot_bytes;
  cl_mem slot0 = fcl_array_buffer(fft->slots[0]);
  ip.buffer = &slot0;
  ip.bufferSize = &s->inplace_bytes;
  FCL_TRY(vk_init(&s->inplace, ip, "planning the in-place r2c transform"));
  s->have_inplace = true;
  if (!fft->distributed) return FCL_OK;
  /* c2c along the last axis over the slot layout, the axes before it taken as one batch
   * dimension (contiguous, and VkFFT cannot omit an axis of one point). */
  const fcl_fft_layout *l = &fft->layout;
  uint64_t lead = 1;
  for (int a = 0; a < dim - 1; ++a) lead *= (uint64_t)l->local[a];
  VkFFTConfiguration z = {0};
  z.FFTdim = lead > 1 ? 2 : 1;
  z.size[0] = lead > 1 ? lead : (uint64_t)l->local[dim - 1];
  z.size[1] = lead > 1 ? (uint64_t)l->local[dim - 1] : 1;
  z.size[2] = 1;
  z.omitDimension[0] = lead > 1;
  z.device = &s->device;
  z.context = &s->context;
  z.commandQueue = &s->queue;
  z.doublePrecision = fft->dtype == FCL_FLOAT64;
  s->last_bytes = l->bytes;
  z.bufferSize = &s->last_bytes;
  cl_mem slot = fcl_array_buffer(fft->slots[0]);
  z.buffer = &slot;
  FCL_TRY(vk_init(&s->last, z, "planning the transform of the last axis"));
  s->have_last = true;
  return FCL_OK;
}
