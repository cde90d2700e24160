/* Images, samplers and memory objects on every test device: pixels written and read back,
 * region transfers, image/image and image/buffer copies and fills equal a host model of the
 * pixels; a kernel sampling a 2D float image with linear filtering equals the host's bilinear
 * interpolation; memory object info; destructor callbacks run in reverse order of
 * registration. A device without images must refuse them with FCL_ERR_NOT_SUPPORTED. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fcl_test.h"
#include "flowcl/opencl.h"

enum { W = 17, H = 13, D = 5 };

static const char *const source =
    "__kernel void sample(__read_only image2d_t img, sampler_t s, __global const float2 *at,\n"
    "                     __global float4 *out) {\n"
    "  const size_t i = get_global_id(0);\n"
    "  out[i] = read_imagef(img, s, at[i]);\n"
    "}\n"
    "__kernel void twice(__read_only image2d_t in, __write_only image2d_t out) {\n"
    "  const int2 p = (int2)(get_global_id(0), get_global_id(1));\n"
    "  const sampler_t s = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_NONE | CLK_FILTER_NEAREST;\n"
    "  write_imagef(out, p, 2 * read_imagef(in, s, p));\n"
    "}\n";

static float pixel(int c, int x, int y, int z) { return (float)(c + 4 * (x + 31 * y + 401 * z)); }

/* Host bilinear interpolation of channel c at pixel coordinates (u, v), clamped to the edge, as
 * OpenCL defines linear filtering (texel centres at integer + 0.5). */
static double bilinear(const float *img, int c, double u, double v) {
  const double x = u - 0.5, y = v - 0.5;
  const int i0 = (int)floor(x), j0 = (int)floor(y);
  const double a = x - i0, b = y - j0;
  double s = 0;
  for (int dj = 0; dj < 2; ++dj)
    for (int di = 0; di < 2; ++di) {
      int i = i0 + di, j = j0 + dj;
      i = i < 0 ? 0 : i >= W ? W - 1 : i;
      j = j < 0 ? 0 : j >= H ? H - 1 : j;
      s += (di ? a : 1 - a) * (dj ? b : 1 - b) * img[4 * (j * W + i) + c];
    }
  return s;
}

static int order_seen[3], order_n;
static void record(cl_mem mem, void *user) {
  (void)mem;
  order_seen[order_n++] = *(int *)user;
}

static void check_mem_objects(cl_context ctx) {
  cl_int err;
  char host[256];
  cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, sizeof host, host, &err);
  CHECK(err == CL_SUCCESS);
  cl_buffer_region region = {128, 64};
  cl_mem sub = clCreateSubBuffer(b, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
  CHECK(err == CL_SUCCESS);
  fcl_mem_info info;
  CHECK_OK(fcl_mem_get_info(b, &info));
  CHECK(info.type == CL_MEM_OBJECT_BUFFER && info.size == sizeof host && info.host_ptr == host &&
        info.context == ctx && info.base == NULL && (info.flags & CL_MEM_USE_HOST_PTR));
  CHECK_OK(fcl_mem_get_info(sub, &info));
  CHECKF(info.base == b && info.offset == 128 && info.size == 64,
         "sub-buffer: base %p offset "
         "%zu size %zu",
         (void *)info.base, info.offset, info.size);
  /* three destructors: called last registered first */
  static int ids[3] = {1, 2, 3};
  order_n = 0;
  for (int i = 0; i < 3; ++i) CHECK_OK(fcl_mem_add_destructor(sub, record, &ids[i]));
  clReleaseMemObject(sub);
  for (int spin = 0; spin < 1000 && order_n < 3; ++spin) {
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL); /* callbacks may run on another thread */
  }
  CHECKF(order_n == 3 && order_seen[0] == 3 && order_seen[1] == 2 && order_seen[2] == 1,
         "destructors ran %d times, order %d %d %d (3 2 1 expected)", order_n, order_seen[0],
         order_seen[1], order_seen[2]);
  CHECK_STATUS(fcl_mem_add_destructor(b, NULL, NULL), FCL_ERR_INVALID_ARGUMENT, "fn");
  clReleaseMemObject(b);
}

static void check_device(const fcl_device_entry *d, void *user) {
  (void)user;
  fcl_context *ctx = NULL;
  fcl_queue *q = NULL;
  CHECK_OK(fcl_context_create(1, &d->device, &ctx));
  CHECK_OK(fcl_queue_create(ctx, NULL, 0, &q));
  if (!ctx || !q) return;
  if (fcl_context_cl(ctx)) check_mem_objects(fcl_context_cl(ctx)); /* OpenCL's memory objects */
  fcl_device_info info;
  CHECK_OK(fcl_device_get_info(d->device, &info));
  const cl_image_format rgba = {CL_RGBA, CL_FLOAT};
  fcl_image *img = NULL;
  if (!info.image_support) {
    CHECK_STATUS(fcl_image_create(ctx, CL_MEM_READ_WRITE, rgba, 2, (size_t[]){W, H}, NULL, &img),
                 FCL_ERR_NOT_SUPPORTED, "no image support");
    fcl_test_skip_part(info.name, "images (no image support)");
    goto out;
  }
  /* formats: the tables agree with OpenCL's sizes, RGBA/FLOAT is listed (required) */
  int ch = 0;
  size_t px = 0;
  const char *ctype = NULL;
  CHECK_OK(fcl_image_format_info(rgba, &ch, &px, &ctype));
  CHECK(ch == 4 && px == 16 && !strcmp(ctype, "float"));
  CHECK_OK(fcl_image_format_info((cl_image_format){CL_RG, CL_UNORM_INT16}, &ch, &px, &ctype));
  CHECK(ch == 2 && px == 4 && !strcmp(ctype, "ushort"));
  char fname[64];
  CHECK(
      !strcmp(fcl_image_format_name((cl_image_format){CL_RG, CL_UNORM_INT16}, fname, sizeof fname),
              "CL_RG/CL_UNORM_INT16"));
  CHECK_STATUS(fcl_image_format_info((cl_image_format){0x1234, CL_FLOAT}, &ch, NULL, NULL),
               FCL_ERR_INVALID_ARGUMENT, "0x1234");
  cl_image_format *formats = NULL;
  size_t nformats = 0;
  CHECK_OK(fcl_image_supported_formats(ctx, CL_MEM_READ_WRITE, 2, &formats, &nformats));
  bool listed = false;
  for (size_t i = 0; i < nformats; ++i)
    listed |= formats[i].image_channel_order == CL_RGBA &&
              formats[i].image_channel_data_type == CL_FLOAT;
  free(formats);
  CHECKF(listed, "%s: CL_RGBA/CL_FLOAT not among %zu formats", info.name, nformats);

  /* 2D: created from host pixels, read back whole and by region */
  float *h = malloc(sizeof(float) * 4 * W * H), *back = malloc(sizeof(float) * 4 * W * H);
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x)
      for (int c = 0; c < 4; ++c) h[4 * (y * W + x) + c] = pixel(c, x, y, 0);
  CHECK_OK(fcl_image_create(ctx, CL_MEM_READ_WRITE, rgba, 2, (size_t[]){W, H}, h, &img));
  if (!img) goto out;
  CHECK(fcl_image_dim(img) == 2 && fcl_image_shape(img)[0] == W && fcl_image_shape(img)[2] == 1 &&
        fcl_image_pixel_bytes(img) == 16);
  CHECK(fcl_image_format(img).image_channel_order == CL_RGBA &&
        fcl_image_format(img).image_channel_data_type == CL_FLOAT);
  CHECK_OK(fcl_image_read(img, q, NULL, NULL, back));
  CHECK(!memcmp(h, back, sizeof(float) * 4 * W * H));
  float part[4 * 3 * 2];
  CHECK_OK(fcl_image_read(img, q, (size_t[]){5, 7, 0}, (size_t[]){3, 2, 1}, part));
  int bad = 0;
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 3; ++x)
      for (int c = 0; c < 4; ++c) bad += part[4 * (y * 3 + x) + c] != pixel(c, 5 + x, 7 + y, 0);
  CHECKF(!bad, "region read: %d wrong values", bad);
  CHECK_STATUS(fcl_image_read(img, q, (size_t[]){15, 0, 0}, (size_t[]){3, 1, 1}, part),
               FCL_ERR_INVALID_ARGUMENT, "outside");
  CHECK_STATUS(fcl_image_create(ctx, CL_MEM_READ_WRITE, rgba, 2, (size_t[]){0, H}, NULL,
                                &(fcl_image *){NULL}),
               FCL_ERR_INVALID_ARGUMENT, "axis 0");
  /* write a region, fill another, then copy image -> image and through a buffer */
  for (int i = 0; i < 24; ++i) part[i] = -1.0f - (float)i;
  CHECK_OK(fcl_image_write(img, q, (size_t[]){1, 1, 0}, (size_t[]){3, 2, 1}, part));
  const float color[4] = {0.5f, 1.5f, 2.5f, 3.5f};
  CHECK_OK(fcl_image_fill(img, q, color, (size_t[]){10, 10, 0}, (size_t[]){4, 2, 1}));
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 3; ++x)
      for (int c = 0; c < 4; ++c) h[4 * ((1 + y) * W + 1 + x) + c] = part[4 * (y * 3 + x) + c];
  for (int y = 10; y < 12; ++y)
    for (int x = 10; x < 14; ++x)
      for (int c = 0; c < 4; ++c) h[4 * (y * W + x) + c] = color[c];
  fcl_image *copy = NULL;
  CHECK_OK(fcl_image_create(ctx, CL_MEM_READ_WRITE, rgba, 2, (size_t[]){W, H}, NULL, &copy));
  cl_int err;
  cl_mem buf = clCreateBuffer(fcl_context_cl(ctx), CL_MEM_READ_WRITE, sizeof(float) * 4 * W * H,
                              NULL, &err);
  CHECK_OK(fcl_image_copy_to_buffer(img, q, NULL, NULL, buf, 0));
  CHECK_OK(fcl_image_copy_from_buffer(copy, q, buf, 0, NULL, NULL));
  fcl_image *copy2 = NULL;
  CHECK_OK(fcl_image_create(ctx, CL_MEM_READ_WRITE, rgba, 2, (size_t[]){W, H}, NULL, &copy2));
  CHECK_OK(fcl_image_copy(copy, copy2, q, NULL, NULL, NULL));
  CHECK_OK(fcl_image_read(copy2, q, NULL, NULL, back));
  bad = 0;
  for (int i = 0; i < 4 * W * H; ++i) bad += back[i] != h[i];
  CHECKF(!bad, "%s: write, fill and copies: %d wrong values", info.name, bad);
  /* map for reading */
  void *mapped = NULL;
  size_t row = 0;
  CHECK_OK(fcl_image_map(copy2, q, CL_MAP_READ, (size_t[]){2, 3, 0}, (size_t[]){2, 2, 1}, &row,
                         NULL, &mapped));
  if (mapped) {
    const float *m = mapped, *m1 = (const float *)((const char *)mapped + row);
    CHECK(m[0] == h[4 * (3 * W + 2)] && m1[4 + 3] == h[4 * (4 * W + 3) + 3]);
    CHECK_OK(fcl_image_unmap(copy2, q, mapped));
  }
  /* kernels: image and sampler arguments; linear filtering against the host's bilinear */
  fcl_program *prog = NULL;
  fcl_kernel *k = NULL, *k2 = NULL;
  CHECK_OK(fcl_program_create_source(ctx, source, "image test", &prog));
  CHECK_OK(fcl_program_build(prog, NULL));
  CHECK_OK(fcl_kernel_create(prog, "sample", &k));
  CHECK_OK(fcl_kernel_create(prog, "twice", &k2));
  cl_sampler s = NULL;
  const fcl_sampler_desc sd = {false, CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_LINEAR};
  CHECK_OK(fcl_sampler_create(ctx, &sd, &s));
  fcl_sampler_desc got;
  CHECK_OK(fcl_sampler_get_desc(s, &got));
  CHECK(!got.normalized && got.addressing == CL_ADDRESS_CLAMP_TO_EDGE &&
        got.filter == CL_FILTER_LINEAR);
  CHECK_STATUS(
      fcl_sampler_create(ctx, &(fcl_sampler_desc){false, CL_ADDRESS_REPEAT, CL_FILTER_NEAREST},
                         &(cl_sampler){NULL}),
      FCL_ERR_INVALID_ARGUMENT, "normalized");
  enum { NS = 64 };
  float at[2 * NS], out[4 * NS];
  for (int i = 0; i < NS; ++i) {
    at[2 * i] = 0.25f + (float)W * (float)((i * 37) % 64) / 64.0f;
    at[2 * i + 1] = 0.25f + (float)H * (float)((i * 11) % 64) / 64.0f;
  }
  fcl_mem *bat = NULL, *bout = NULL;
  CHECK_OK(fcl_mem_create(ctx, FCL_MEM_DEVICE, sizeof at, at, &bat));
  CHECK_OK(fcl_mem_create(ctx, FCL_MEM_DEVICE, sizeof out, NULL, &bout));
  if (k && k2 && s) {
    CHECK_OK(fcl_kernel_set_arg_image(k, 0, fcl_image_mem(copy2)));
    CHECK_OK(fcl_kernel_set_arg_sampler(k, 1, s));
    CHECK_OK(fcl_kernel_set_arg_buffer(k, 2, bat));
    CHECK_OK(fcl_kernel_set_arg_buffer(k, 3, bout));
    CHECK_STATUS(fcl_kernel_set_arg_image(k, 2, fcl_image_mem(copy2)), FCL_ERR_INVALID_ARGUMENT,
                 "not an image");
    CHECK_STATUS(fcl_kernel_set_arg_sampler(k, 0, s), FCL_ERR_INVALID_ARGUMENT, "not a sampler");
    CHECK_OK(fcl_kernel_enqueue(k, q, 1, (size_t[]){NS}, NULL, NULL, 0, 0, NULL, NULL));
    CHECK_OK(fcl_mem_read(q, bout, 0, sizeof out, out, FCL_BLOCKING, 0, NULL, NULL));
    /* OpenCL lets devices filter with reduced-precision weights (NVIDIA: 8 fractional bits):
     * a weight error of 1/256 on values up to pixel(3, W, H) */
    const double tol = pixel(3, W, H, 0) / 256.0;
    double worst = 0;
    for (int i = 0; i < NS; ++i)
      for (int c = 0; c < 4; ++c)
        worst = fmax(worst, fabs(out[4 * i + c] - bilinear(h, c, at[2 * i], at[2 * i + 1])));
    CHECKF(worst <= tol,
           "%s: linear sampling differs from bilinear interpolation by %g (at "
           "most %g)",
           info.name, worst, tol);
    /* an image written by a kernel */
    CHECK_OK(fcl_kernel_set_arg_image(k2, 0, fcl_image_mem(copy2)));
    CHECK_OK(fcl_kernel_set_arg_image(k2, 1, fcl_image_mem(copy)));
    CHECK_OK(fcl_kernel_enqueue(k2, q, 2, (size_t[]){W, H}, NULL, NULL, 0, 0, NULL, NULL));
    CHECK_OK(fcl_image_read(copy, q, NULL, NULL, back));
    bad = 0;
    for (int i = 0; i < 4 * W * H; ++i) bad += back[i] != 2 * h[i];
    CHECKF(!bad, "%s: image written by a kernel: %d wrong values", info.name, bad);
  }
  /* 3D: a volume written and read back by slabs */
  fcl_image *vol = NULL;
  const cl_image_format r32 = {CL_R, CL_FLOAT};
  CHECK_OK(fcl_image_create(ctx, CL_MEM_READ_WRITE, r32, 3, (size_t[]){W, H, D}, NULL, &vol));
  if (vol) {
    float *v = malloc(sizeof(float) * W * H * D), *vb = malloc(sizeof(float) * W * H * D);
    for (int z = 0; z < D; ++z)
      for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) v[(z * H + y) * W + x] = pixel(0, x, y, z);
    CHECK_OK(fcl_image_write(vol, q, NULL, NULL, v));
    CHECK_OK(fcl_image_read(vol, q, (size_t[]){0, 0, 2}, (size_t[]){W, H, 2}, vb));
    CHECK(!memcmp(vb, v + 2 * W * H, sizeof(float) * W * H * 2));
    free(v);
    free(vb);
    fcl_mem_info mi;
    CHECK_OK(fcl_mem_get_info(fcl_image_mem(vol), &mi));
    CHECK(mi.type == CL_MEM_OBJECT_IMAGE3D);
  }
  fcl_image_release(&vol);
  if (s) clReleaseSampler(s);
  fcl_mem_release(&bat);
  fcl_mem_release(&bout);
  clReleaseMemObject(buf);
  fcl_kernel_destroy(&k);
  fcl_kernel_destroy(&k2);
  fcl_program_release(&prog);
  fcl_image_release(&copy);
  fcl_image_release(&copy2);
  free(h);
  free(back);
out:
  fcl_image_release(&img);
  fcl_queue_release(&q);
  fcl_context_release(&ctx);
}

int main(void) { return fcl_test_run_on_devices(check_device, NULL); }
