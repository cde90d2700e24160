/** @file
 * OpenCL only (part of the interop that flowcl/opencl.h includes): images, samplers and
 * memory-object queries (src/runtime/opencl/image.c, sampler.c, mem_object.c).
 *
 * Images are OpenCL 1.2 image objects of 2 or 3 dimensions over a format (channel order and
 * channel type, cl_image_format). Shapes, origins and regions count pixels, x fastest: {width,
 * height, depth}; host data is packed (rows of width * pixel bytes) unless a call takes pitches.
 * Every function that creates or uses an image on a device without image support returns
 * FCL_ERR_NOT_SUPPORTED naming the device; a format the context does not support for the flags
 * and image type is FCL_ERR_NOT_SUPPORTED naming the format. Transfers are enqueued on the queue
 * given; "blocking" ones return when the host data may be used or reused.
 *
 * Samplers say how a kernel reads an image with read_imagef(image, sampler, coord): normalized
 * or pixel coordinates, what lies outside (addressing), nearest or linear filtering. Images and
 * samplers are kernel arguments through fcl_kernel_set_arg_image / fcl_kernel_set_arg_sampler
 * (flowcl/opencl.h), checked against the kernel's declared argument type. */
#ifndef FLOWCL_IMAGE_H
#define FLOWCL_IMAGE_H

#ifndef CL_TARGET_OPENCL_VERSION
/** The OpenCL API version the headers expose (3.0, as flowcl/opencl.h), unless chosen first. */
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>

#include "flowcl/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- formats ---- */

/** Channels (1-4) and bytes per pixel of a format; ctype: the C type of one channel as a host
 * reads or writes it ("uchar", "short", "float", "half" ...). Unknown order or type:
 * FCL_ERR_INVALID_ARGUMENT naming the value. Any output may be NULL. */
fcl_status fcl_image_format_info(cl_image_format format, int *channels, size_t *pixel_bytes,
                                 const char **ctype);
/** "CL_RGBA/CL_FLOAT" and the like, into buf. */
const char *fcl_image_format_name(cl_image_format format, char *buf, size_t size);
/** The formats the context supports for images of dim (2 or 3) with flags: *formats is
 * allocated (free it), *count entries. */
fcl_status fcl_image_supported_formats(fcl_context *context, cl_mem_flags flags, int dim,
                                       cl_image_format **formats, size_t *count);

/* ---- images ---- */

/** An image object with its dimension, shape and format (opaque). */
typedef struct fcl_image fcl_image;

/** An image of dim 2 or 3 and shape[dim] pixels. host: NULL (contents undefined), or packed
 * pixels copied in at creation. flags: CL_MEM_READ_WRITE, _READ_ONLY or _WRITE_ONLY (host
 * pointer flags are added by flowcl). Sizes beyond the device's image limits are an error
 * naming the limit. Release *out with fcl_image_release. */
fcl_status fcl_image_create(fcl_context *context, cl_mem_flags flags, cl_image_format format,
                            int dim, const size_t *shape, const void *host, fcl_image **out);
void fcl_image_release(fcl_image **image); /**< accepts NULL */

/** The OpenCL image (owned by the fcl_image), for kernel arguments. */
cl_mem fcl_image_mem(const fcl_image *image);
/** The image's dimension, 2 or 3. */
int fcl_image_dim(const fcl_image *image);
const size_t *fcl_image_shape(const fcl_image *image); /**< 3 entries, depth 1 in 2D */
/** The image's format. */
cl_image_format fcl_image_format(const fcl_image *image);
/** Bytes of one pixel of the format. */
size_t fcl_image_pixel_bytes(const fcl_image *image);

/** Blocking transfers of a region (origin[3], region[3]; NULL origin: 0, NULL region: the whole
 * image) between the image and packed host pixels. Regions must lie inside the image. @{ */
fcl_status fcl_image_read(fcl_image *image, fcl_queue *queue, const size_t *origin,
                          const size_t *region, void *host);
fcl_status fcl_image_write(fcl_image *image, fcl_queue *queue, const size_t *origin,
                           const size_t *region, const void *host);
/** @} */
/** Enqueued copies (no wait): image to image (one format), image to buffer and back (packed
 * pixels at a byte offset of the buffer). @{ */
fcl_status fcl_image_copy(fcl_image *src, fcl_image *dst, fcl_queue *queue,
                          const size_t *src_origin, const size_t *dst_origin, const size_t *region);
fcl_status fcl_image_copy_to_buffer(fcl_image *image, fcl_queue *queue, const size_t *origin,
                                    const size_t *region, cl_mem buffer, size_t offset);
fcl_status fcl_image_copy_from_buffer(fcl_image *image, fcl_queue *queue, cl_mem buffer,
                                      size_t offset, const size_t *origin, const size_t *region);
/** @} */
/** Fill a region with one color (enqueued): 4 floats for float and normalized channel types,
 * 4 int32 for signed integer types, 4 uint32 for unsigned ones (OpenCL's rule). */
fcl_status fcl_image_fill(fcl_image *image, fcl_queue *queue, const void *color,
                          const size_t *origin, const size_t *region);
/** Map a region for host access (blocking); *row_pitch and *slice_pitch (may be NULL) give the
 * layout of the mapped pixels. Unmap (enqueued) before the device uses the image again. */
fcl_status fcl_image_map(fcl_image *image, fcl_queue *queue, cl_map_flags flags,
                         const size_t *origin, const size_t *region, size_t *row_pitch,
                         size_t *slice_pitch, void **ptr);
/** Unmap what fcl_image_map returned (enqueued on queue). */
fcl_status fcl_image_unmap(fcl_image *image, fcl_queue *queue, void *ptr);

/* ---- samplers ---- */

/** How a sampler reads an image. */
typedef struct {
  bool normalized; /**< coordinates in [0, 1) instead of pixels */
  /** CL_ADDRESS_NONE, _CLAMP_TO_EDGE, _CLAMP, _REPEAT, _MIRRORED_REPEAT */
  cl_addressing_mode addressing;
  cl_filter_mode filter; /**< CL_FILTER_NEAREST or CL_FILTER_LINEAR */
} fcl_sampler_desc;

/** A sampler of the context (the caller owns it: clReleaseSampler). REPEAT and MIRRORED_REPEAT
 * need normalized coordinates (an error says so). */
fcl_status fcl_sampler_create(fcl_context *context, const fcl_sampler_desc *desc, cl_sampler *out);
/** What a sampler was made with. */
fcl_status fcl_sampler_get_desc(cl_sampler sampler, fcl_sampler_desc *out);

/* ---- memory objects ---- */

/** What fcl_mem_get_info reports of a buffer or image (clGetMemObjectInfo). */
typedef struct {
  cl_mem_object_type type; /**< CL_MEM_OBJECT_BUFFER, _IMAGE2D, _IMAGE3D, ... */
  size_t size;             /**< bytes */
  cl_mem_flags flags;      /**< the CL_MEM_* flags it was made with */
  void *host_ptr;          /**< the host pointer it was made with (NULL: none) */
  cl_context context;      /**< its context */
  cl_mem base;             /**< a sub-buffer's buffer (NULL otherwise) */
  size_t offset;           /**< a sub-buffer's offset in base */
  cl_uint references;      /**< reference count (for debugging only: may be stale) */
} fcl_mem_info;

/** Type, size, flags, host pointer, context, sub-buffer origin and reference count of a memory
 * object into out. */
fcl_status fcl_mem_get_info(cl_mem mem, fcl_mem_info *out);

/** fn(mem, user) runs when the object is destroyed (its last reference released and the
 * commands using it done), possibly on another thread; several per object run in the reverse
 * order of registration (OpenCL's rule). mem must not be used by fn but as an identity. */
typedef void (*fcl_mem_destructor_fn)(cl_mem mem, void *user);
/** Register fn(mem, user) to run when mem is destroyed (fcl_mem_destructor_fn says when). */
fcl_status fcl_mem_add_destructor(cl_mem mem, fcl_mem_destructor_fn fn, void *user);

#ifdef __cplusplus
}
#endif
#endif /* FLOWCL_IMAGE_H */
