/* Images: formats (channels, pixel bytes, the host C type), creation checked against the
 * devices' image support and limits, transfers and mapping of pixel regions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "flowcl/opencl.h"
#include "flowcl/image.h"
#include "../runtime_impl.h"
#include "opencl_backend.h"

struct fcl_image {
  cl_mem mem;
  int dim;
  size_t shape[3];
  cl_image_format format;
  size_t pixel_bytes;
};

typedef struct {
  cl_uint value;
  const char *name;
  int n;             /* channels (orders) or bytes per channel (types; 0: packed) */
  const char *ctype; /* types: the host C type of a channel */
} table_row;

static const table_row orders[] = {
    {CL_R, "CL_R", 1, NULL},
    {CL_A, "CL_A", 1, NULL},
    {CL_INTENSITY, "CL_INTENSITY", 1, NULL},
    {CL_LUMINANCE, "CL_LUMINANCE", 1, NULL},
    {CL_DEPTH, "CL_DEPTH", 1, NULL},
    {CL_RG, "CL_RG", 2, NULL},
    {CL_RA, "CL_RA", 2, NULL},
    {CL_RGB, "CL_RGB", 3, NULL},
    {CL_RGBA, "CL_RGBA", 4, NULL},
    {CL_BGRA, "CL_BGRA", 4, NULL},
    {CL_ARGB, "CL_ARGB", 4, NULL},
};

static const table_row types[] = {
    {CL_SNORM_INT8, "CL_SNORM_INT8", 1, "char"},
    {CL_SNORM_INT16, "CL_SNORM_INT16", 2, "short"},
    {CL_UNORM_INT8, "CL_UNORM_INT8", 1, "uchar"},
    {CL_UNORM_INT16, "CL_UNORM_INT16", 2, "ushort"},
    {CL_UNORM_SHORT_565, "CL_UNORM_SHORT_565", 0, "ushort"},
    {CL_UNORM_SHORT_555, "CL_UNORM_SHORT_555", 0, "ushort"},
    {CL_UNORM_INT_101010, "CL_UNORM_INT_101010", 0, "uint"},
    {CL_SIGNED_INT8, "CL_SIGNED_INT8", 1, "char"},
    {CL_SIGNED_INT16, "CL_SIGNED_INT16", 2, "short"},
    {CL_SIGNED_INT32, "CL_SIGNED_INT32", 4, "int"},
    {CL_UNSIGNED_INT8, "CL_UNSIGNED_INT8", 1, "uchar"},
    {CL_UNSIGNED_INT16, "CL_UNSIGNED_INT16", 2, "ushort"},
    {CL_UNSIGNED_INT32, "CL_UNSIGNED_INT32", 4, "uint"},
    {CL_HALF_FLOAT, "CL_HALF_FLOAT", 2, "half"},
    {CL_FLOAT, "CL_FLOAT", 4, "float"},
};

static const table_row *find(const table_row *rows, size_t n, cl_uint value) {
  for (size_t i = 0; i < n; ++i)
    if (rows[i].value == value) return &rows[i];
  return NULL;
}

#define FIND(rows, value) find(rows, sizeof rows / sizeof *rows, value)

fcl_status fcl_image_format_info(cl_image_format format, int *channels, size_t *pixel_bytes,
                                 const char **ctype) {
  const table_row *o = FIND(orders, format.image_channel_order);
  const table_row *t = FIND(types, format.image_channel_data_type);
  if (!o)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "image format: unknown channel order 0x%x",
                     format.image_channel_order);
  if (!t)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "image format: unknown channel type 0x%x",
                     format.image_channel_data_type);
  /* packed types hold every channel of a pixel in one 16- or 32-bit word */
  size_t bytes = t->n                                                    ? (size_t)(o->n * t->n)
                 : format.image_channel_data_type == CL_UNORM_INT_101010 ? 4
                                                                         : 2;
  if (channels) *channels = o->n;
  if (pixel_bytes) *pixel_bytes = bytes;
  if (ctype) *ctype = t->ctype;
  return FCL_OK;
}

const char *fcl_image_format_name(cl_image_format format, char *buf, size_t size) {
  const table_row *o = FIND(orders, format.image_channel_order);
  const table_row *t = FIND(types, format.image_channel_data_type);
  char ob[16], tb[16];
  if (!o) snprintf(ob, sizeof ob, "0x%x", format.image_channel_order);
  if (!t) snprintf(tb, sizeof tb, "0x%x", format.image_channel_data_type);
  snprintf(buf, size, "%s/%s", o ? o->name : ob, t ? t->name : tb);
  return buf;
}

/* FCL_ERR_NOT_SUPPORTED naming the first device of the context without images. */
static fcl_status need_images(const fcl_context *ctx) {
  for (cl_uint i = 0; i < ctx->num_devices; ++i) {
    fcl_device_info info;
    FCL_TRY(fcl_device_get_info(fcl_context_device(ctx, i), &info));
    if (!info.image_support)
      return FCL_ERROR(FCL_ERR_NOT_SUPPORTED, "images: device '%s' has no image support",
                       info.name);
  }
  return FCL_OK;
}

fcl_status fcl_image_supported_formats(fcl_context *ctx, cl_mem_flags flags, int dim,
                                       cl_image_format **formats, size_t *count) {
  FCL_CHECK_NULL(ctx, 1);
  FCL_CHECK_ARG(dim == 2 || dim == 3, 3, "dim", "must be 2 or 3");
  FCL_CHECK_NULL(formats, 4);
  FCL_CHECK_NULL(count, 5);
  *formats = NULL;
  *count = 0;
  FCL_TRY(need_images(ctx));
  const cl_mem_object_type type = dim == 2 ? CL_MEM_OBJECT_IMAGE2D : CL_MEM_OBJECT_IMAGE3D;
  cl_uint n = 0;
  FCL_CL_TRY(clGetSupportedImageFormats(fcl__context_cl(ctx), flags, type, 0, NULL, &n),
             "clGetSupportedImageFormats");
  cl_image_format *f = malloc((n ? n : 1) * sizeof *f);
  if (!f) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "%u image formats", n);
  cl_int err = clGetSupportedImageFormats(fcl__context_cl(ctx), flags, type, n, f, NULL);
  if (err != CL_SUCCESS) {
    free(f);
    return FCL_CL_ERROR(err, "clGetSupportedImageFormats");
  }
  *formats = f;
  *count = n;
  return FCL_OK;
}

static fcl_status check_format(fcl_context *ctx, cl_mem_flags flags, int dim,
                               cl_image_format format) {
  cl_image_format *all = NULL;
  size_t n = 0;
  FCL_TRY(fcl_image_supported_formats(ctx, flags, dim, &all, &n));
  bool found = false;
  for (size_t i = 0; i < n && !found; ++i)
    found = all[i].image_channel_order == format.image_channel_order &&
            all[i].image_channel_data_type == format.image_channel_data_type;
  free(all);
  char name[64];
  if (!found)
    return FCL_ERROR(FCL_ERR_NOT_SUPPORTED,
                     "images: format %s is not supported for %dD images "
                     "on this context (fcl_image_supported_formats lists those that are)",
                     fcl_image_format_name(format, name, sizeof name), dim);
  return FCL_OK;
}

static fcl_status check_limits(const fcl_context *ctx, int dim, const size_t *shape) {
  for (cl_uint i = 0; i < ctx->num_devices; ++i) {
    fcl_device_info info;
    FCL_TRY(fcl_device_get_info(fcl_context_device(ctx, i), &info));
    const size_t *max = dim == 2 ? info.image2d_max_size : info.image3d_max_size;
    for (int a = 0; a < dim; ++a)
      if (shape[a] < 1 || shape[a] > max[a])
        return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                         "images: axis %d of %zu pixels (device '%s' "
                         "takes 1 to %zu for %dD images)",
                         a, shape[a], info.name, max[a], dim);
  }
  return FCL_OK;
}

fcl_status fcl_image_create(fcl_context *ctx, cl_mem_flags flags, cl_image_format format, int dim,
                            const size_t *shape, const void *host, fcl_image **out) {
  FCL_CHECK_NULL(ctx, 1);
  FCL_CHECK_ARG(dim == 2 || dim == 3, 4, "dim", "must be 2 or 3");
  FCL_CHECK_NULL(shape, 5);
  FCL_CHECK_NULL(out, 7);
  *out = NULL;
  const cl_mem_flags access = CL_MEM_READ_WRITE | CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY;
  FCL_CHECK_ARG((flags & ~access) == 0, 2, "flags",
                "must be CL_MEM_READ_WRITE, _READ_ONLY or "
                "_WRITE_ONLY");
  size_t pixel = 0;
  FCL_TRY(fcl_image_format_info(format, NULL, &pixel, NULL));
  FCL_TRY(need_images(ctx));
  FCL_TRY(check_limits(ctx, dim, shape));
  FCL_TRY(check_format(ctx, flags ? flags : CL_MEM_READ_WRITE, dim, format));
  fcl_image *img = calloc(1, sizeof *img);
  if (!img) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "image");
  img->dim = dim;
  img->format = format;
  img->pixel_bytes = pixel;
  img->shape[0] = shape[0], img->shape[1] = shape[1], img->shape[2] = dim == 3 ? shape[2] : 1;
  cl_image_desc desc = {.image_type = dim == 2 ? CL_MEM_OBJECT_IMAGE2D : CL_MEM_OBJECT_IMAGE3D,
                        .image_width = img->shape[0],
                        .image_height = img->shape[1],
                        .image_depth = dim == 3 ? img->shape[2] : 0};
  cl_int err;
  img->mem = clCreateImage(fcl__context_cl(ctx),
                           (flags ? flags : CL_MEM_READ_WRITE) | (host ? CL_MEM_COPY_HOST_PTR : 0),
                           &format, &desc, (void *)host, &err);
  if (err != CL_SUCCESS) {
    free(img);
    char name[64];
    return FCL_CL_ERROR(err, "clCreateImage (%dD, %zux%zux%zu, %s)", dim, shape[0], shape[1],
                        dim == 3 ? shape[2] : (size_t)1,
                        fcl_image_format_name(format, name, sizeof name));
  }
  *out = img;
  return FCL_OK;
}

void fcl_image_release(fcl_image **image) {
  if (!image || !*image) return;
  clReleaseMemObject((*image)->mem);
  free(*image);
  *image = NULL;
}

cl_mem fcl_image_mem(const fcl_image *image) { return image ? image->mem : NULL; }
int fcl_image_dim(const fcl_image *image) { return image ? image->dim : 0; }
const size_t *fcl_image_shape(const fcl_image *image) { return image ? image->shape : NULL; }
cl_image_format fcl_image_format(const fcl_image *image) {
  return image ? image->format : (cl_image_format){0, 0};
}
size_t fcl_image_pixel_bytes(const fcl_image *image) { return image ? image->pixel_bytes : 0; }

/* origin and region (NULL: 0 and the whole image) into o and r, checked to lie inside. */
static fcl_status box(const fcl_image *img, const size_t *origin, const size_t *region, size_t *o,
                      size_t *r, const char *what) {
  for (int a = 0; a < 3; ++a) {
    o[a] = origin ? origin[a] : 0;
    r[a] = region ? region[a] : img->shape[a] - o[a];
    if (a >= img->dim && (o[a] != 0 || r[a] != 1))
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "%s: a %dD image takes origin 0 and region 1 "
                       "along axis %d",
                       what, img->dim, a);
    if (r[a] < 1 || o[a] >= img->shape[a] || r[a] > img->shape[a] - o[a])
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "%s: pixels %zu to %zu along axis %d lie "
                       "outside the image's %zu",
                       what, o[a], o[a] + r[a], a, img->shape[a]);
  }
  return FCL_OK;
}

fcl_status fcl_image_read(fcl_image *img, fcl_queue *q, const size_t *origin, const size_t *region,
                          void *host) {
  FCL_CHECK_NULL(img, 1);
  FCL_CHECK_NULL(q, 2);
  FCL_CHECK_NULL(host, 5);
  size_t o[3], r[3];
  FCL_TRY(box(img, origin, region, o, r, "image read"));
  fcl_event *done = NULL;
  fcl__cl_sync s;
  FCL_TRY(fcl__cl_sync_begin(&s, 0, NULL, &done));
  FCL_CL_TRY(fcl__cl_sync_end(&s, clEnqueueReadImage(fcl_queue_cl(q), img->mem, CL_FALSE, o, r, 0,
                                                     0, host, 0, NULL, s.evp)),
             "clEnqueueReadImage");
  fcl_status st = fcl_events_wait(1, &done);
  fcl_event_release(&done);
  return st;
}

fcl_status fcl_image_write(fcl_image *img, fcl_queue *q, const size_t *origin, const size_t *region,
                           const void *host) {
  FCL_CHECK_NULL(img, 1);
  FCL_CHECK_NULL(q, 2);
  FCL_CHECK_NULL(host, 5);
  size_t o[3], r[3];
  FCL_TRY(box(img, origin, region, o, r, "image write"));
  fcl_event *done = NULL;
  fcl__cl_sync s;
  FCL_TRY(fcl__cl_sync_begin(&s, 0, NULL, &done));
  FCL_CL_TRY(fcl__cl_sync_end(&s, clEnqueueWriteImage(fcl_queue_cl(q), img->mem, CL_FALSE, o, r, 0,
                                                      0, host, 0, NULL, s.evp)),
             "clEnqueueWriteImage");
  fcl_status st = fcl_events_wait(1, &done);
  fcl_event_release(&done);
  return st;
}

fcl_status fcl_image_copy(fcl_image *src, fcl_image *dst, fcl_queue *q, const size_t *src_origin,
                          const size_t *dst_origin, const size_t *region) {
  FCL_CHECK_NULL(src, 1);
  FCL_CHECK_NULL(dst, 2);
  FCL_CHECK_NULL(q, 3);
  if (src->format.image_channel_order != dst->format.image_channel_order ||
      src->format.image_channel_data_type != dst->format.image_channel_data_type) {
    char a[64], b[64];
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "image copy: formats %s and %s differ",
                     fcl_image_format_name(src->format, a, sizeof a),
                     fcl_image_format_name(dst->format, b, sizeof b));
  }
  size_t so[3], r[3], dor[3], dr[3];
  FCL_TRY(box(src, src_origin, region, so, r, "image copy (source)"));
  FCL_TRY(box(dst, dst_origin, r, dor, dr, "image copy (destination)"));
  FCL_CL_TRY(clEnqueueCopyImage(fcl_queue_cl(q), src->mem, dst->mem, so, dor, r, 0, NULL, NULL),
             "clEnqueueCopyImage");
  return FCL_OK;
}

fcl_status fcl_image_copy_to_buffer(fcl_image *img, fcl_queue *q, const size_t *origin,
                                    const size_t *region, cl_mem buffer, size_t offset) {
  FCL_CHECK_NULL(img, 1);
  FCL_CHECK_NULL(q, 2);
  FCL_CHECK_NULL(buffer, 5);
  size_t o[3], r[3];
  FCL_TRY(box(img, origin, region, o, r, "image to buffer"));
  FCL_CL_TRY(
      clEnqueueCopyImageToBuffer(fcl_queue_cl(q), img->mem, buffer, o, r, offset, 0, NULL, NULL),
      "clEnqueueCopyImageToBuffer");
  return FCL_OK;
}

fcl_status fcl_image_copy_from_buffer(fcl_image *img, fcl_queue *q, cl_mem buffer, size_t offset,
                                      const size_t *origin, const size_t *region) {
  FCL_CHECK_NULL(img, 1);
  FCL_CHECK_NULL(q, 2);
  FCL_CHECK_NULL(buffer, 3);
  size_t o[3], r[3];
  FCL_TRY(box(img, origin, region, o, r, "buffer to image"));
  FCL_CL_TRY(
      clEnqueueCopyBufferToImage(fcl_queue_cl(q), buffer, img->mem, offset, o, r, 0, NULL, NULL),
      "clEnqueueCopyBufferToImage");
  return FCL_OK;
}

fcl_status fcl_image_fill(fcl_image *img, fcl_queue *q, const void *color, const size_t *origin,
                          const size_t *region) {
  FCL_CHECK_NULL(img, 1);
  FCL_CHECK_NULL(q, 2);
  FCL_CHECK_NULL(color, 3);
  size_t o[3], r[3];
  FCL_TRY(box(img, origin, region, o, r, "image fill"));
  FCL_CL_TRY(clEnqueueFillImage(fcl_queue_cl(q), img->mem, color, o, r, 0, NULL, NULL),
             "clEnqueueFillImage");
  return FCL_OK;
}

fcl_status fcl_image_map(fcl_image *img, fcl_queue *q, cl_map_flags flags, const size_t *origin,
                         const size_t *region, size_t *row_pitch, size_t *slice_pitch, void **ptr) {
  FCL_CHECK_NULL(img, 1);
  FCL_CHECK_NULL(q, 2);
  FCL_CHECK_NULL(ptr, 8);
  *ptr = NULL;
  size_t o[3], r[3], rp = 0, sp = 0;
  FCL_TRY(box(img, origin, region, o, r, "image map"));
  cl_int err;
  fcl_event *done = NULL;
  fcl__cl_sync s;
  FCL_TRY(fcl__cl_sync_begin(&s, 0, NULL, &done));
  void *p = clEnqueueMapImage(fcl_queue_cl(q), img->mem, CL_FALSE, flags, o, r, &rp, &sp, 0, NULL,
                              s.evp, &err);
  FCL_CL_TRY(fcl__cl_sync_end(&s, err), "clEnqueueMapImage");
  fcl_status st = fcl_events_wait(1, &done);
  fcl_event_release(&done);
  if (st != FCL_OK) {
    clEnqueueUnmapMemObject(fcl_queue_cl(q), img->mem, p, 0, NULL, NULL);
    return st;
  }
  if (row_pitch) *row_pitch = rp;
  if (slice_pitch) *slice_pitch = sp;
  *ptr = p;
  return FCL_OK;
}

fcl_status fcl_image_unmap(fcl_image *img, fcl_queue *q, void *ptr) {
  FCL_CHECK_NULL(img, 1);
  FCL_CHECK_NULL(q, 2);
  FCL_CHECK_NULL(ptr, 3);
  FCL_CL_TRY(clEnqueueUnmapMemObject(fcl_queue_cl(q), img->mem, ptr, 0, NULL, NULL), "unmap image");
  return FCL_OK;
}
