/* Kernels: lookup by name, typed arguments checked against the declared types, work-group
 * information, enqueue. The enqueue path adds only a few comparisons to raw OpenCL. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "check.h"
#include "flowcl/opencl.h"
#include "opencl/opencl_backend.h"
#include "runtime_impl.h"

static const char *kind_name(fcl_arg_kind kind) {
  static const char *names[] = {
      "unknown",         "by-value", "__global pointer", "__constant pointer",
      "__local pointer", "image",    "sampler",          "queue_t"};
  return names[kind];
}

static fcl_status kernel_new(fcl_program *p, const fcl__kernel_meta *meta, fcl_kernel **out) {
  fcl_kernel *k = calloc(1, sizeof *k);
  fcl__arg_value *values = calloc(meta->num_args ? meta->num_args : 1, sizeof *values);
  if (!k || !values) {
    free(k);
    free(values);
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "kernel object '%s'", meta->name);
  }
  cl_int err;
  k->cl = clCreateKernel(p->cl, meta->name, &err);
  if (err != CL_SUCCESS) {
    free(values);
    free(k);
    return FCL_CL_ERROR(err, "clCreateKernel('%s') of %s", meta->name, p->origin);
  }
  k->program = fcl_program_retain(p);
  k->meta = meta;
  k->values = values;
  *out = k;
  return FCL_OK;
}

fcl_status fcl_kernel_create(fcl_program *program, const char *name, fcl_kernel **out) {
  FCL_CHECK_NULL(program, 1);
  FCL_CHECK_NULL(name, 2);
  FCL_CHECK_NULL(out, 3);
  *out = NULL;
  if (!program->kernels)
    return FCL_ERROR(FCL_ERR_INVALID_STATE,
                     "program %s is not built: call fcl_program_build "
                     "before fcl_kernel_create('%s')",
                     program->origin, name);
  for (size_t i = 0; i < program->num_kernels; ++i)
    if (strcmp(program->kernels[i].name, name) == 0)
      return kernel_new(program, &program->kernels[i], out);
  char available[2048] = "";
  size_t used = 0;
  for (size_t i = 0; i < program->num_kernels && used < sizeof available; ++i) {
    int w = snprintf(available + used, sizeof available - used, "%s%s", i ? ", " : "",
                     program->kernels[i].name);
    if (w > 0) used += (size_t)w;
  }
  return FCL_ERROR(FCL_ERR_NOT_FOUND, "no kernel '%s' in %s; its kernels are: %s", name,
                   program->origin, used ? available : "(none)");
}

fcl_status fcl_program_all_kernels(fcl_program *program, fcl_kernel ***kernels, size_t *count) {
  FCL_CHECK_NULL(program, 1);
  FCL_CHECK_NULL(kernels, 2);
  FCL_CHECK_NULL(count, 3);
  *count = 0;
  *kernels = NULL;
  if (!program->kernels)
    return FCL_ERROR(FCL_ERR_INVALID_STATE, "program %s is not built", program->origin);
  fcl_kernel **list = calloc(program->num_kernels ? program->num_kernels : 1, sizeof *list);
  if (!list) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "kernel list");
  for (size_t i = 0; i < program->num_kernels; ++i) {
    fcl_status st = kernel_new(program, &program->kernels[i], &list[i]);
    if (st != FCL_OK) {
      fcl_kernel_list_destroy(&list, i);
      return st;
    }
  }
  *kernels = list;
  *count = program->num_kernels;
  return FCL_OK;
}

void fcl_kernel_list_destroy(fcl_kernel ***kernels, size_t count) {
  if (!kernels || !*kernels) return;
  for (size_t i = 0; i < count; ++i) fcl_kernel_destroy(&(*kernels)[i]);
  free(*kernels);
  *kernels = NULL;
}

void fcl_kernel_destroy(fcl_kernel **kernel) {
  if (!kernel || !*kernel) return;
  fcl_kernel *k = *kernel;
  *kernel = NULL;
  for (cl_uint i = 0; i < k->meta->num_args; ++i) free(k->values[i].big);
  free(k->values);
  clReleaseKernel(k->cl);
  fcl_program_release(&k->program);
  free(k);
}

const char *fcl_kernel_name(const fcl_kernel *kernel) { return kernel ? kernel->meta->name : ""; }
cl_kernel fcl_kernel_cl(const fcl_kernel *kernel) { return kernel ? kernel->cl : NULL; }
fcl_program *fcl_kernel_program(const fcl_kernel *kernel) {
  return kernel ? kernel->program : NULL;
}
cl_uint fcl_kernel_num_args(const fcl_kernel *kernel) {
  return kernel ? kernel->meta->num_args : 0;
}

fcl_status fcl_kernel_get_arg_info(const fcl_kernel *kernel, cl_uint index,
                                   fcl_kernel_arg_info *info) {
  FCL_CHECK_NULL(kernel, 1);
  FCL_CHECK_NULL(info, 3);
  if (index >= kernel->meta->num_args)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "argument 2 (index): kernel '%s' has %u arguments, "
                     "index %u is out of range",
                     kernel->meta->name, kernel->meta->num_args, index);
  const fcl__arg_meta *a = &kernel->meta->args[index];
  *info = (fcl_kernel_arg_info){a->name, a->type_name, a->kind, a->size};
  return FCL_OK;
}

fcl_status fcl_kernel_arg_index(const fcl_kernel *kernel, const char *name, cl_uint *index) {
  FCL_CHECK_NULL(kernel, 1);
  FCL_CHECK_NULL(name, 2);
  FCL_CHECK_NULL(index, 3);
  for (cl_uint i = 0; i < kernel->meta->num_args; ++i)
    if (strcmp(kernel->meta->args[i].name, name) == 0) {
      *index = i;
      return FCL_OK;
    }
  return FCL_ERROR(FCL_ERR_NOT_FOUND, "kernel '%s' has no argument named '%s'", kernel->meta->name,
                   name);
}

/* Common failure text: "kernel 'k' argument 2 (alpha, float)". */
#define ARG_FMT "kernel '%s' argument %u (%s%s%s)"
#define ARG_ARGS(k, i)                                                                             \
  (k)->meta->name, (i), (k)->meta->args[i].name[0] ? (k)->meta->args[i].name : "unnamed",          \
      (k)->meta->args[i].type_name[0] ? ", " : "", (k)->meta->args[i].type_name

static fcl_status bad_index(const fcl_kernel *k, cl_uint index) {
  return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                   "kernel '%s' has %u arguments; index %u is out of "
                   "range",
                   k->meta->name, k->meta->num_args, index);
}

static fcl_status set_failed(const fcl_kernel *k, cl_uint index, cl_int err, size_t size) {
  return fcl__error_set(err == CL_INVALID_ARG_SIZE ? FCL_ERR_INVALID_ARGUMENT : FCL_ERR_OPENCL, err,
                        __func__, __FILE__, __LINE__,
                        "clSetKernelArg of " ARG_FMT " with %zu bytes: %s (%d)", ARG_ARGS(k, index),
                        size, fcl_cl_error_name(err), err);
}

/* Store a by-value argument (for capture) and pass it to OpenCL. */
static fcl_status store_value(fcl_kernel *k, cl_uint index, size_t size, const void *value) {
  fcl__arg_value *v = &k->values[index];
  if (size > sizeof v->value) {
    unsigned char *big = realloc(v->big, size);
    if (!big) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "argument copy of %zu bytes", size);
    v->big = big;
    memcpy(big, value, size);
  } else {
    memcpy(v->value, value, size);
  }
  cl_int err = clSetKernelArg(k->cl, index, size, value);
  if (err != CL_SUCCESS) {
    v->how = FCL__UNSET;
    return set_failed(k, index, err, size);
  }
  v->how = FCL__VALUE;
  v->size = size;
  return FCL_OK;
}

fcl_status fcl_kernel_set_arg(fcl_kernel *kernel, cl_uint index, size_t size, const void *value) {
  FCL_CHECK_NULL(kernel, 1);
  FCL_CHECK_NULL(value, 4);
  if (index >= kernel->meta->num_args) return bad_index(kernel, index);
  const fcl__arg_meta *a = &kernel->meta->args[index];
  if (a->kind != FCL_ARG_SCALAR && a->kind != FCL_ARG_UNKNOWN)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, ARG_FMT " is a %s: use fcl_kernel_set_arg_%s",
                     ARG_ARGS(kernel, index), kind_name(a->kind),
                     a->kind == FCL_ARG_LOCAL ? "local" : "buffer");
  if (a->size && a->size != size)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     ARG_FMT ": wrong size, expected %zu bytes, given %zu bytes",
                     ARG_ARGS(kernel, index), a->size, size);
  return store_value(kernel, index, size, value);
}

/* Typed scalar: the declared type must be one of the accepted OpenCL spellings. */
static fcl_status set_typed(fcl_kernel *k, cl_uint index, const char *ctype, const char *t1,
                            const char *t2, size_t size, const void *value) {
  if (!k) return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 1 (kernel): must not be NULL");
  if (index >= k->meta->num_args) return bad_index(k, index);
  const fcl__arg_meta *a = &k->meta->args[index];
  if (a->kind != FCL_ARG_UNKNOWN &&
      (a->kind != FCL_ARG_SCALAR ||
       (strcmp(a->type_name, t1) != 0 && (!t2 || strcmp(a->type_name, t2) != 0))))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     ARG_FMT ": wrong type, expected %s (%zu bytes), given %s (%zu bytes)",
                     ARG_ARGS(k, index), a->type_name, a->size, ctype, size);
  return store_value(k, index, size, value);
}

fcl_status fcl_kernel_set_arg_i32(fcl_kernel *kernel, cl_uint index, int32_t value) {
  return set_typed(kernel, index, "int32_t (int)", "int", NULL, sizeof value, &value);
}
fcl_status fcl_kernel_set_arg_u32(fcl_kernel *kernel, cl_uint index, uint32_t value) {
  return set_typed(kernel, index, "uint32_t (uint)", "uint", "unsigned int", sizeof value, &value);
}
fcl_status fcl_kernel_set_arg_i64(fcl_kernel *kernel, cl_uint index, int64_t value) {
  return set_typed(kernel, index, "int64_t (long)", "long", NULL, sizeof value, &value);
}
fcl_status fcl_kernel_set_arg_u64(fcl_kernel *kernel, cl_uint index, uint64_t value) {
  return set_typed(kernel, index, "uint64_t (ulong)", "ulong", "unsigned long", sizeof value,
                   &value);
}
fcl_status fcl_kernel_set_arg_f32(fcl_kernel *kernel, cl_uint index, float value) {
  return set_typed(kernel, index, "float", "float", NULL, sizeof value, &value);
}
fcl_status fcl_kernel_set_arg_f64(fcl_kernel *kernel, cl_uint index, double value) {
  return set_typed(kernel, index, "double", "double", NULL, sizeof value, &value);
}

fcl_status fcl_kernel_set_arg_buffer(fcl_kernel *kernel, cl_uint index, const fcl_mem *mem) {
  FCL_CHECK_NULL(kernel, 1);
  cl_mem buffer = fcl_mem_cl(mem);
  FCL_CHECK_ARG(buffer || !mem, 3, "mem", "not memory of the kernel's (OpenCL) backend");
  if (index >= kernel->meta->num_args) return bad_index(kernel, index);
  fcl_arg_kind kind = kernel->meta->args[index].kind;
  if (kind != FCL_ARG_GLOBAL && kind != FCL_ARG_CONSTANT && kind != FCL_ARG_UNKNOWN)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, ARG_FMT " is a %s, not a buffer pointer",
                     ARG_ARGS(kernel, index), kind_name(kind));
  cl_int err = clSetKernelArg(kernel->cl, index, sizeof(cl_mem), buffer ? &buffer : NULL);
  if (err != CL_SUCCESS) return set_failed(kernel, index, err, sizeof(cl_mem));
  kernel->values[index].how = FCL__BUFFER;
  kernel->values[index].buffer = buffer;
  kernel->values[index].size = sizeof(cl_mem);
  return FCL_OK;
}

/* An image, sampler or on-device queue argument of the declared kind. */
static fcl_status set_object(fcl_kernel *kernel, cl_uint index, fcl_arg_kind want,
                             const void *object, size_t size, int how) {
  FCL_CHECK_NULL(kernel, 1);
  if (index >= kernel->meta->num_args) return bad_index(kernel, index);
  fcl_arg_kind kind = kernel->meta->args[index].kind;
  if (kind != want && kind != FCL_ARG_UNKNOWN)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, ARG_FMT " is a %s, not a%s", ARG_ARGS(kernel, index),
                     kind_name(kind),
                     want == FCL_ARG_IMAGE     ? "n image"
                     : want == FCL_ARG_SAMPLER ? " sampler"
                                               : " queue_t");
  cl_int err = clSetKernelArg(kernel->cl, index, size, object);
  if (err != CL_SUCCESS) return set_failed(kernel, index, err, size);
  kernel->values[index].how = how;
  kernel->values[index].buffer = want == FCL_ARG_IMAGE ? *(const cl_mem *)object : NULL;
  kernel->values[index].size = size;
  return FCL_OK;
}

fcl_status fcl_kernel_set_arg_image(fcl_kernel *kernel, cl_uint index, cl_mem image) {
  FCL_CHECK_NULL(image, 3);
  return set_object(kernel, index, FCL_ARG_IMAGE, &image, sizeof image, FCL__IMAGE);
}

fcl_status fcl_kernel_set_arg_sampler(fcl_kernel *kernel, cl_uint index, cl_sampler sampler) {
  FCL_CHECK_NULL(sampler, 3);
  return set_object(kernel, index, FCL_ARG_SAMPLER, &sampler, sizeof sampler, FCL__SAMPLER);
}

fcl_status fcl_kernel_set_arg_queue(fcl_kernel *kernel, cl_uint index, fcl_queue *queue) {
  FCL_CHECK_NULL(queue, 3);
  cl_command_queue native = fcl_queue_cl(queue);
  FCL_CHECK_ARG(native != NULL, 3, "queue", "not an OpenCL queue");
  return set_object(kernel, index, FCL_ARG_QUEUE, &native, sizeof native, FCL__QUEUE);
}

fcl_status fcl_kernel_set_arg_local(fcl_kernel *kernel, cl_uint index, size_t bytes) {
  FCL_CHECK_NULL(kernel, 1);
  FCL_CHECK_ARG(bytes > 0, 3, "bytes", "local memory size must be > 0");
  if (index >= kernel->meta->num_args) return bad_index(kernel, index);
  fcl_arg_kind kind = kernel->meta->args[index].kind;
  if (kind != FCL_ARG_LOCAL && kind != FCL_ARG_UNKNOWN)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, ARG_FMT " is a %s, not a __local pointer",
                     ARG_ARGS(kernel, index), kind_name(kind));
  cl_int err = clSetKernelArg(kernel->cl, index, bytes, NULL);
  if (err != CL_SUCCESS) return set_failed(kernel, index, err, bytes);
  kernel->values[index].how = FCL__LOCAL;
  kernel->values[index].size = bytes;
  return FCL_OK;
}

fcl_status fcl_kernel_get_work_group_info(const fcl_kernel *kernel, const fcl_device *fdevice,
                                          fcl_kernel_work_group_info *info) {
  FCL_CHECK_NULL(kernel, 1);
  FCL_CHECK_NULL(fdevice, 2);
  FCL_CHECK_NULL(info, 3);
  cl_device_id device = fcl__device_cl(fdevice);
  memset(info, 0, sizeof *info);
  cl_kernel k = kernel->cl;
  FCL_CL_TRY(clGetKernelWorkGroupInfo(k, device, CL_KERNEL_WORK_GROUP_SIZE, sizeof(size_t),
                                      &info->work_group_size, NULL),
             "clGetKernelWorkGroupInfo(CL_KERNEL_WORK_GROUP_SIZE) of '%s'", kernel->meta->name);
  FCL_CL_TRY(clGetKernelWorkGroupInfo(k, device, CL_KERNEL_COMPILE_WORK_GROUP_SIZE,
                                      sizeof info->compile_work_group_size,
                                      info->compile_work_group_size, NULL),
             "clGetKernelWorkGroupInfo(CL_KERNEL_COMPILE_WORK_GROUP_SIZE)");
  FCL_CL_TRY(clGetKernelWorkGroupInfo(k, device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof(cl_ulong),
                                      &info->local_mem_size, NULL),
             "clGetKernelWorkGroupInfo(CL_KERNEL_LOCAL_MEM_SIZE)");
  FCL_CL_TRY(clGetKernelWorkGroupInfo(k, device, CL_KERNEL_PRIVATE_MEM_SIZE, sizeof(cl_ulong),
                                      &info->private_mem_size, NULL),
             "clGetKernelWorkGroupInfo(CL_KERNEL_PRIVATE_MEM_SIZE)");
  FCL_CL_TRY(
      clGetKernelWorkGroupInfo(k, device, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                               sizeof(size_t), &info->preferred_work_group_size_multiple, NULL),
      "clGetKernelWorkGroupInfo(CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE)");
  return FCL_OK;
}

static void format_sizes(char *buf, size_t size, cl_uint dim, const size_t *v) {
  if (!v) {
    snprintf(buf, size, "NULL");
    return;
  }
  int n = snprintf(buf, size, "(");
  for (cl_uint i = 0; i < dim && n > 0 && (size_t)n < size; ++i)
    n += snprintf(buf + n, size - (size_t)n, "%s%zu", i ? ", " : "", v[i]);
  if (n > 0 && (size_t)n < size) snprintf(buf + n, size - (size_t)n, ")");
}

static fcl_status enqueue_failed(const fcl_kernel *k, cl_int err, cl_uint dim, const size_t *global,
                                 const size_t *local) {
  char g[128], l[128], unset[512] = "";
  format_sizes(g, sizeof g, dim, global);
  format_sizes(l, sizeof l, dim, local);
  if (err == CL_INVALID_KERNEL_ARGS) {
    size_t used = 0;
    for (cl_uint i = 0; i < k->meta->num_args && used < sizeof unset; ++i)
      if (k->values[i].how == FCL__UNSET) {
        int w = snprintf(unset + used, sizeof unset - used, "%s%u (%s)",
                         used ? ", " : "; unset: ", i, k->meta->args[i].name);
        if (w > 0) used += (size_t)w;
      }
  }
  return fcl__error_set(err == CL_OUT_OF_HOST_MEMORY || err == CL_MEM_OBJECT_ALLOCATION_FAILURE
                            ? FCL_ERR_OUT_OF_MEMORY
                            : FCL_ERR_OPENCL,
                        err, "fcl_kernel_enqueue", __FILE__, __LINE__,
                        "clEnqueueNDRangeKernel of '%s' (global %s, local %s): %s (%d)%s",
                        k->meta->name, g, l, fcl_cl_error_name(err), err, unset);
}

fcl_status fcl_kernel_enqueue(fcl_kernel *kernel, fcl_queue *queue, cl_uint work_dim,
                              const size_t *global, const size_t *local, const size_t *offset,
                              unsigned flags, unsigned num_wait, fcl_event *const *wait,
                              fcl_event **event) {
  if (!kernel || !queue || !global || work_dim - 1u > 2u) {
    FCL_CHECK_NULL(kernel, 1);
    FCL_CHECK_NULL(queue, 2);
    FCL_CHECK_ARG(work_dim >= 1 && work_dim <= 3, 3, "work_dim", "must be 1, 2 or 3");
    FCL_CHECK_NULL(global, 4);
  }
  if (num_wait) FCL_TRY(fcl__check_waits(num_wait, wait, 9, "wait"));
  size_t scaled[3];
  const size_t *g = global;
  if (flags & FCL_LAUNCH_G_TIMES_L) {
    FCL_CHECK_ARG(local != NULL, 5, "local", "FCL_LAUNCH_G_TIMES_L needs local sizes");
    for (cl_uint i = 0; i < work_dim; ++i) scaled[i] = global[i] * local[i];
    g = scaled;
  }
  fcl__cl_sync s;
  FCL_TRY(fcl__cl_sync_begin(&s, num_wait, wait, event));
  cl_int err = fcl__cl_sync_end(&s, clEnqueueNDRangeKernel(queue->native, kernel->cl, work_dim,
                                                           offset, g, local, s.n, s.list, s.evp));
  if (err != CL_SUCCESS) return enqueue_failed(kernel, err, work_dim, g, local);
  return FCL_OK;
}

fcl_status fcl_kernel_enqueue_task(fcl_kernel *kernel, fcl_queue *queue, unsigned num_wait,
                                   fcl_event *const *wait, fcl_event **event) {
  const size_t one = 1;
  return fcl_kernel_enqueue(kernel, queue, 1, &one, &one, NULL, 0, num_wait, wait, event);
}
