/* The column transform: flowcl's own c2c pass along z of a 3D VkFFT plan (fft_vkfft.c: on one
 * rank VkFFT's plans leave z out and this runs after the forward transform and before the
 * backward one; on several it replaces the c2c plan of the last axis). VkFFT's strided pass
 * keeps whole columns in local memory: with OpenCL's 48 KB on NVIDIA devices that is 4 columns
 * of 1024 complex floats, 32-byte pieces of each plane, and the pass ran at 0.37 of the copy
 * bandwidth on an H200 at 1024^3. This one keeps the columns in registers and exchanges half of
 * each value at a time through local memory, so a work-group reads 8 columns of 1024 (64-byte
 * pieces) or 16 of 512 (docs/benchmarks.md, sixteenth session). FLOWCL_FFT_COLUMNS picks it:
 * auto (the default: one rank, float, GPUs, 512 to 1024 points, where VkFFT's local memory
 * holds fewer columns than this pass's work-group), on (wherever it fits), off.
 * Its mirrored form transforms walled axes other than x (fft_vkfft.c), always. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fft_columns_impl.h"
#include "fft_impl.h"
#include "vkfft.h"

struct fcl__fft_columns {
  fcl_kernel *kernel[2]; /* forward, backward */
  bool walls;            /* the mirrored pass (its kernels take odd) */
  fcl_array *twiddles;
  size_t global[2], local[2];
};

/* FLOWCL_FFT_COLUMNS: 0 off, 1 auto, 2 on. */
static fcl_status mode_from_env(int *mode) {
  const char *v = getenv("FLOWCL_FFT_COLUMNS");
  *mode = 1;
  if (!v || !*v || !strcmp(v, "auto")) return FCL_OK;
  if (!strcmp(v, "on"))
    *mode = 2;
  else if (!strcmp(v, "off"))
    *mode = 0;
  else
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "FLOWCL_FFT_COLUMNS='%s': expected auto, on or off",
                     v);
  return FCL_OK;
}

/* The most columns per work-group (16, 8, 4, 2 or 1), at most `most`, whose exchange fits the
 * local memory and whose work-items fit a work-group of the device; 0 when none does. */
static int columns_per_group(const fcl__fft_columns_shape *s, size_t real_size,
                             const fcl_device_characterization *ch, const fcl_device_info *info,
                             int most) {
  for (int C = most; C >= 1; C /= 2) {
    /* the periodic form exchanges real and imaginary parts in turn, the mirrored one both
     * unless split */
    const size_t exchange = (size_t)s->n1 * (size_t)(s->n2 * C + C) * real_size *
                            (s->walls && !s->split ? 2 : 1);
    const size_t items = (size_t)(C * s->n2);
    if (exchange <= ch->usable_local_mem_size && items <= info->max_work_group_size &&
        items <= info->max_work_item_sizes[0])
      return C;
  }
  return 0;
}

/* The program and kernels of shape s into c. *fits: whether the compiled kernels take a
 * work-group of s->columns * s->n2 work-items (a compiler may allow fewer, for registers). */
static fcl_status build_kernels(const fcl_fft *fft, fcl_device *dev,
                                const fcl__fft_columns_shape *s, int64_t n, fcl__fft_columns *c,
                                bool *fits) {
  *fits = false;
  char *source = fcl__fft_columns_source(s);
  if (!source)
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "fft: the column transform's source (%lld points)",
                     (long long)n);
  fcl_program *prog = NULL;
  char origin[64];
  snprintf(origin, sizeof origin, "fft columns %lld x %d", (long long)n, s->columns);
  fcl_status st = fcl_program_create_source(fft->context, source, origin, &prog);
  free(source);
  if (st == FCL_OK) st = fcl_program_build(prog, NULL);
  if (st == FCL_OK) st = fcl_kernel_create(prog, "fcl_fft_columns_forward", &c->kernel[0]);
  if (st == FCL_OK) st = fcl_kernel_create(prog, "fcl_fft_columns_backward", &c->kernel[1]);
  fcl_program_release(&prog);
  *fits = st == FCL_OK;
  for (int d = 0; d < 2 && st == FCL_OK; ++d) {
    fcl_kernel_work_group_info wi;
    st = fcl_kernel_get_work_group_info(c->kernel[d], dev, &wi);
    if (st == FCL_OK && wi.work_group_size < (size_t)(s->columns * s->n2)) *fits = false;
  }
  if (!*fits) {
    fcl_kernel_destroy(&c->kernel[0]);
    fcl_kernel_destroy(&c->kernel[1]);
  }
  return st;
}

fcl_status fcl__fft_columns_create(const fcl_fft *fft, fcl_pool *pool, int64_t n, size_t rows,
                                   size_t ncols, size_t stride, size_t row_stride, bool walls,
                                   fcl__fft_columns **out) {
  *out = NULL;
  int mode = 2; /* the mirrored pass is the walls' transform itself, not a choice */
  if (!walls) FCL_TRY(mode_from_env(&mode));
  /* the mirrored pass splits its exchange in double (measured faster: 4 columns of 1024 a
   * work-group instead of 2), not in float (where 4 whole ones beat 8 split) */
  const bool dbl = fft->dtype == FCL_FLOAT64;
  fcl__fft_columns_shape shape = {0, 0, 0, dbl, walls, walls && dbl};
  if (!mode || !fcl__fft_columns_split(n, &shape.n1, &shape.n2) || ncols > UINT32_MAX) {
    if (!walls) return FCL_OK;
    return FCL_ERROR(FCL_ERR_NOT_SUPPORTED,
                     "fft: the mirrored pass of a walled axis takes 3 to 2049 points with N - 1 "
                     "a power of two, not %lld",
                     (long long)(n / 2 + 1));
  }
  fcl_device *dev;
  FCL_TRY(fcl_queue_device(fft->queue, &dev));
  fcl_device_info info;
  FCL_TRY(fcl_device_get_info(dev, &info));
  /* auto: where it was measured faster: one rank, float, GPUs, 512 to 1024 points (on two
   * H200s the transposes dominate and rows of nx / 2 + 1 values are not padded: no gain) */
  if (mode == 1 && (fft->distributed || !(info.type & FCL_DEVICE_GPU) || shape.dtype_double ||
                    n < 512 || n > 1024))
    return FCL_OK;
  fcl_device_characterization ch;
  FCL_TRY(fcl_device_characterize(dev, &ch));
  shape.columns = columns_per_group(&shape, fft->real_size, &ch, &info, 16);
  /* auto, too: where VkFFT's strided pass keeps fewer whole columns in its local memory than
   * this one takes a work-group (OpenCL's 48 KB on NVIDIA holds 12 columns of 512 complex
   * floats, against 16 here; CUDA's opt-in 227 KB on an H200 holds 56, and VkFFT's pass was
   * measured faster there, docs/benchmarks.md) */
  size_t vk_local = 0;
  if (mode == 1 && fcl__vkfft_local_mem(fft->queue, &vk_local) != FCL_OK) fcl_clear_error();
  if (mode == 1 && vk_local / ((size_t)n * 2 * fft->real_size) >= (size_t)shape.columns)
    return FCL_OK;
  fcl__fft_columns *c = calloc(1, sizeof *c);
  if (!c) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "fft: the column transform");
  /* fewer columns where the compiled kernel takes fewer work-items; none: VkFFT's pass */
  bool fits = false;
  fcl_status st = FCL_OK;
  while (st == FCL_OK && shape.columns && !fits) {
    st = build_kernels(fft, dev, &shape, n, c, &fits);
    if (st == FCL_OK && !fits)
      shape.columns = columns_per_group(&shape, fft->real_size, &ch, &info, shape.columns / 2);
  }
  if (st != FCL_OK && mode == 1) { /* auto: VkFFT's pass rather than no plan */
    fcl_log(FCL_LOG_WARNING,
            "fft: the column pass of %lld points failed to build (%s); VkFFT's "
            "pass runs instead",
            (long long)n, fcl_status_string(st));
    st = FCL_OK;
  }
  if (st == FCL_OK && !fits && walls)
    st = FCL_ERROR(FCL_ERR_NOT_SUPPORTED,
                   "fft: the mirrored pass of %lld points does not fit the device (local memory "
                   "or work-group size)",
                   (long long)(n / 2 + 1));
  if (st != FCL_OK || !fits) {
    fcl__fft_columns_destroy(&c);
    return st;
  }
  void *table = malloc((size_t)n * 2 * fft->real_size);
  if (!table) st = FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "fft: column twiddles");
  if (st == FCL_OK) {
    fcl__fft_columns_twiddles(n, shape.dtype_double, table);
    size_t reals = (size_t)n * 2;
    st = fcl_array_create_from_host(pool, fft->queue, fft->dtype, 1, &reals, table, &c->twiddles);
  }
  free(table);
  for (int d = 0; d < 2 && st == FCL_OK; ++d) {
    fcl_kernel *k = c->kernel[d];
    st = fcl_kernel_set_arg_buffer(k, 1, fcl_array_buffer(c->twiddles));
    if (st == FCL_OK) st = fcl_kernel_set_arg_u64(k, 2, (uint64_t)stride);
    if (st == FCL_OK) st = fcl_kernel_set_arg_u64(k, 3, (uint64_t)row_stride);
    if (st == FCL_OK) st = fcl_kernel_set_arg_u32(k, 4, (uint32_t)ncols);
  }
  c->walls = walls;
  c->local[0] = (size_t)(shape.columns * shape.n2);
  c->local[1] = 1;
  c->global[0] = (ncols + (size_t)shape.columns - 1) / (size_t)shape.columns * c->local[0];
  c->global[1] = rows;
  if (st != FCL_OK) {
    fcl__fft_columns_destroy(&c);
    return st;
  }
  *out = c;
  return FCL_OK;
}

fcl_status fcl__fft_columns_run(fcl__fft_columns *c, fcl_queue *queue, fcl_mem *data, bool forward,
                                bool odd) {
  fcl_kernel *k = c->kernel[forward ? 0 : 1];
  FCL_TRY(fcl_kernel_set_arg_buffer(k, 0, data));
  if (c->walls) FCL_TRY(fcl_kernel_set_arg_i32(k, 5, odd ? 1 : 0));
  return fcl_kernel_enqueue(k, queue, 2, c->global, c->local, NULL, 0, 0, NULL, NULL);
}

void fcl__fft_columns_destroy(fcl__fft_columns **cp) {
  if (!cp || !*cp) return;
  fcl__fft_columns *c = *cp;
  fcl_kernel_destroy(&c->kernel[0]);
  fcl_kernel_destroy(&c->kernel[1]);
  fcl_array_destroy(&c->twiddles);
  free(c);
  *cp = NULL;
}
