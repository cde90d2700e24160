/* The OpenCL backend's kernels: made from a built program, arguments, launch, work-group
 * information; and the OpenCL-only arguments (images, samplers, on-device queues) with
 * fcl_kernel_cl. */
#include "../check.h"
#include "../runtime_impl.h"
#include "opencl_backend.h"

fcl_status fcl__opencl_kernel_create(fcl_program *p, const char *name, fcl_kernel *k) {
  cl_int err;
  k->native = clCreateKernel(p->native, name, &err);
  if (err != CL_SUCCESS) return FCL_CL_ERROR(err, "clCreateKernel('%s') of %s", name, p->origin);
  return FCL_OK;
}

void fcl__opencl_kernel_destroy(fcl_kernel *k) { clReleaseKernel(k->native); }

fcl_status fcl__opencl_kernel_set_arg(fcl_kernel *k, unsigned index, int how, size_t size,
                                      const void *value) {
  cl_mem buffer = how == FCL__BUFFER && value ? ((const fcl_mem *)value)->native : NULL;
  cl_int err = how == FCL__BUFFER
                   ? clSetKernelArg(k->native, index, sizeof buffer, buffer ? &buffer : NULL)
               : how == FCL__LOCAL ? clSetKernelArg(k->native, index, size, NULL)
                                   : clSetKernelArg(k->native, index, size, value);
  if (err == CL_INVALID_ARG_SIZE)
    return fcl__error_set(FCL_ERR_INVALID_ARGUMENT, err, __func__, __FILE__, __LINE__,
                          "clSetKernelArg with %zu bytes: %s (%d)", size, fcl_cl_error_name(err),
                          err);
  if (err != CL_SUCCESS) return FCL_CL_ERROR(err, "clSetKernelArg with %zu bytes", size);
  if (how == FCL__BUFFER) k->values[index].native = buffer;
  return FCL_OK;
}

fcl_status fcl__opencl_kernel_enqueue(fcl_kernel *k, fcl_queue *q, unsigned dim,
                                      const size_t *global, const size_t *local,
                                      const size_t *offset, unsigned num_wait,
                                      fcl_event *const *wait, fcl_event **event) {
  fcl__cl_sync s;
  FCL_TRY(fcl__cl_sync_begin(&s, num_wait, wait, event));
  FCL_CL_TRY(fcl__cl_sync_end(&s, clEnqueueNDRangeKernel(q->native, k->native, dim, offset, global,
                                                         local, s.n, s.list, s.evp)),
             "clEnqueueNDRangeKernel");
  return FCL_OK;
}

fcl_status fcl__opencl_kernel_work_group_info(const fcl_kernel *k, const fcl_device *d,
                                              fcl_kernel_work_group_info *info) {
  cl_device_id device = fcl__device_cl(d);
  cl_ulong local = 0, private_bytes = 0;
  FCL_CL_TRY(clGetKernelWorkGroupInfo(k->native, device, CL_KERNEL_WORK_GROUP_SIZE, sizeof(size_t),
                                      &info->work_group_size, NULL),
             "clGetKernelWorkGroupInfo(CL_KERNEL_WORK_GROUP_SIZE)");
  FCL_CL_TRY(clGetKernelWorkGroupInfo(k->native, device, CL_KERNEL_COMPILE_WORK_GROUP_SIZE,
                                      sizeof info->compile_work_group_size,
                                      info->compile_work_group_size, NULL),
             "clGetKernelWorkGroupInfo(CL_KERNEL_COMPILE_WORK_GROUP_SIZE)");
  FCL_CL_TRY(clGetKernelWorkGroupInfo(k->native, device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof local,
                                      &local, NULL),
             "clGetKernelWorkGroupInfo(CL_KERNEL_LOCAL_MEM_SIZE)");
  FCL_CL_TRY(clGetKernelWorkGroupInfo(k->native, device, CL_KERNEL_PRIVATE_MEM_SIZE,
                                      sizeof private_bytes, &private_bytes, NULL),
             "clGetKernelWorkGroupInfo(CL_KERNEL_PRIVATE_MEM_SIZE)");
  FCL_CL_TRY(
      clGetKernelWorkGroupInfo(k->native, device, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                               sizeof(size_t), &info->preferred_work_group_size_multiple, NULL),
      "clGetKernelWorkGroupInfo(CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE)");
  info->local_mem_size = local;
  info->private_mem_size = private_bytes;
  return FCL_OK;
}

cl_kernel fcl_kernel_cl(const fcl_kernel *kernel) {
  return kernel && kernel->backend == &fcl__opencl_backend ? kernel->native : NULL;
}

/* An image, sampler or on-device queue argument of the declared kind. */
static fcl_status set_object(fcl_kernel *kernel, unsigned index, fcl_arg_kind want,
                             const void *object, size_t size, int how) {
  FCL_CHECK_NULL(kernel, 1);
  FCL_CHECK_ARG(kernel->backend == &fcl__opencl_backend, 1, "kernel", "not an OpenCL kernel");
  FCL_TRY(fcl__kernel_check_kind(kernel, index, want));
  cl_int err = clSetKernelArg(kernel->native, index, size, object);
  if (err != CL_SUCCESS)
    return FCL_CL_ERROR(err, "clSetKernelArg of kernel '%s' argument %u", kernel->meta->name,
                        index);
  kernel->values[index].how = how;
  kernel->values[index].native = want == FCL_ARG_IMAGE ? *(const cl_mem *)object : NULL;
  kernel->values[index].size = size;
  return FCL_OK;
}

fcl_status fcl_kernel_set_arg_image(fcl_kernel *kernel, unsigned index, cl_mem image) {
  FCL_CHECK_NULL(image, 3);
  return set_object(kernel, index, FCL_ARG_IMAGE, &image, sizeof image, FCL__IMAGE);
}

fcl_status fcl_kernel_set_arg_sampler(fcl_kernel *kernel, unsigned index, cl_sampler sampler) {
  FCL_CHECK_NULL(sampler, 3);
  return set_object(kernel, index, FCL_ARG_SAMPLER, &sampler, sizeof sampler, FCL__SAMPLER);
}

fcl_status fcl_kernel_set_arg_queue(fcl_kernel *kernel, unsigned index, fcl_queue *queue) {
  FCL_CHECK_NULL(queue, 3);
  cl_command_queue native = fcl_queue_cl(queue);
  FCL_CHECK_ARG(native != NULL, 3, "queue", "not an OpenCL queue");
  return set_object(kernel, index, FCL_ARG_QUEUE, &native, sizeof native, FCL__QUEUE);
}
