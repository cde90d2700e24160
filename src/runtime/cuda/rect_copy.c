/* Rectangle copies between two buffers of device memory as a kernel. cuMemcpy3D hands them to a
 * copy engine, which moves the short rows of an FFT transpose's blocks (2 KiB at 512^3) far
 * below the memory's bandwidth; a kernel moves them at about a plain copy's speed. Compiled by
 * NVRTC on a device's first rectangle (once per primary context), in the widest word that every
 * address, pitch and row length allows. */
#include <pthread.h>
#include <stdint.h>

#include "../check.h"
#include "cuda_backend.h"
#include "driver.h"

/* One kernel per word size: element (i, row, slice) of the rectangle, rows of w words, rows and
 * slices pitched in words; x covers the rows of a slice, y the slices. */
static const char source[] =
    "template <typename T>\n"
    "__device__ void copy(const T *src, T *dst, unsigned long long w, unsigned long long n,\n"
    "                     unsigned long long slices, unsigned long long sr,\n"
    "                     unsigned long long ss, unsigned long long dr, unsigned long long ds) {\n"
    "  for (unsigned long long z = blockIdx.y; z < slices; z += gridDim.y)\n"
    "    for (unsigned long long k = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;\n"
    "         k < n; k += (unsigned long long)gridDim.x * blockDim.x) {\n"
    "      unsigned long long row = k / w, i = k - row * w;\n"
    "      dst[z * ds + row * dr + i] = src[z * ss + row * sr + i];\n"
    "    }\n"
    "}\n"
    "#define COPY(name, T)                                                            \\\n"
    "  extern \"C\" __global__ void name(const T *s, T *d, unsigned long long w,         \\\n"
    "      unsigned long long n, unsigned long long z, unsigned long long sr,            \\\n"
    "      unsigned long long ss, unsigned long long dr, unsigned long long ds) {        \\\n"
    "    copy<T>(s, d, w, n, z, sr, ss, dr, ds);                                         \\\n"
    "  }\n"
    "COPY(rect_copy_1, unsigned char)\n"
    "COPY(rect_copy_2, unsigned short)\n"
    "COPY(rect_copy_4, unsigned int)\n"
    "COPY(rect_copy_8, unsigned long long)\n"
    "COPY(rect_copy_16, uint4)\n";

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* d's kernels, compiled and loaded into its primary context on first use. */
static fcl_status load(fcl__cuda_device *d) {
  if (d->rect_module) return FCL_OK;
  const fcl__cu_api *cu = fcl__cu(NULL);
  int major = 0, minor = 0;
  FCL_CU_TRY(
      cu->DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d->device),
      "cuDeviceGetAttribute");
  FCL_CU_TRY(
      cu->DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d->device),
      "cuDeviceGetAttribute");
  fcl__nvrtc_output out;
  fcl_status st = fcl__nvrtc_compile(source, 0, "rect_copy.cu", "", major, minor, false, &out);
  CUmodule module = NULL;
  if (st == FCL_OK) {
    CUresult r = cu->ModuleLoadData(&module, out.image);
    if (r != CUDA_SUCCESS) st = FCL_CU_ERROR(r, "cuModuleLoadData (rectangle copies)");
  } else {
    st = FCL_ERROR(st, "the rectangle copy kernels: %s", out.log ? out.log : "");
  }
  fcl__nvrtc_output_free(&out);
  static const char *const names[FCL__CUDA_RECT_WORDS] = {
      "rect_copy_1", "rect_copy_2", "rect_copy_4", "rect_copy_8", "rect_copy_16"};
  for (int i = 0; st == FCL_OK && i < FCL__CUDA_RECT_WORDS; ++i) {
    CUresult r = cu->ModuleGetFunction(&d->rect_copy[i], module, names[i]);
    if (r != CUDA_SUCCESS) st = FCL_CU_ERROR(r, "cuModuleGetFunction (rectangle copies)");
  }
  if (st != FCL_OK) {
    if (module) cu->ModuleUnload(module);
    return st;
  }
  d->rect_module = module;
  return FCL_OK;
}

void fcl__cuda_rect_unload(fcl__cuda_device *d) {
  if (d->rect_module) fcl__cu(NULL)->ModuleUnload(d->rect_module);
  d->rect_module = NULL;
}

fcl_status fcl__cuda_rect_copy(fcl_queue *q, CUdeviceptr src, CUdeviceptr dst, const size_t *r,
                               size_t sr, size_t ss, size_t dr, size_t ds) {
  fcl__cuda_device *d = q->device->native;
  pthread_mutex_lock(&lock);
  fcl_status st = load(d);
  pthread_mutex_unlock(&lock);
  FCL_TRY(st);
  /* rows back to back on both sides (a slab's block): one row a slice, in wider words (an odd
   * row of complex numbers allows 8 bytes, a slice of 256 of them 16) */
  size_t row = r[0], rows = r[1];
  if (rows > 1 && sr == row && dr == row) {
    row *= rows;
    rows = 1;
    sr = dr = row;
  }
  /* the widest word dividing both addresses, the row length and every pitch */
  const uint64_t all = (uint64_t)src | (uint64_t)dst | row | sr | ss | dr | ds;
  int kind = 4;
  while (kind > 0 && all % ((uint64_t)1 << kind)) --kind;
  const unsigned long long word = 1ull << kind, w = row / word, n = w * rows, slices = r[2];
  unsigned long long p[4] = {sr / word, ss / word, dr / word, ds / word};
  void *params[] = {&src,  &dst,  (void *)&w, (void *)&n, (void *)&slices,
                    &p[0], &p[1], &p[2],      &p[3]};
  const unsigned block = 256;
  unsigned long long gx = (n + block - 1) / block;
  const unsigned grid_x = gx > 65535 ? 65535 : (unsigned)(gx ? gx : 1),
                 grid_y = slices > 65535 ? 65535 : (unsigned)(slices ? slices : 1);
  FCL_CU_TRY(fcl__cu(NULL)->LaunchKernel(d->rect_copy[kind], grid_x, grid_y, 1, block, 1, 1, 0,
                                         fcl__cuda_stream(q), params, NULL),
             "cuLaunchKernel (rectangle copy)");
  return FCL_OK;
}
