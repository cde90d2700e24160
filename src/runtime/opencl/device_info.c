/* The OpenCL backend's platforms and devices: enumeration and properties (the flowcl objects
 * themselves: device.c), and the vendors' own attributes (warp and wavefront width, NVIDIA's
 * compute capability). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "../runtime_impl.h"
#include "opencl_backend.h"

fcl_status fcl__opencl_platform_count(unsigned *count) {
  cl_int err = clGetPlatformIDs(0, NULL, count);
  if (err == -1001) { /* CL_PLATFORM_NOT_FOUND_KHR (cl_ext.h): an ICD loader with no vendors */
    *count = 0;
    return FCL_OK;
  }
  FCL_CL_TRY(err, "clGetPlatformIDs");
  return FCL_OK;
}

fcl_status fcl__opencl_platform_get(unsigned index, fcl_platform **platform) {
  cl_uint n = 0;
  FCL_TRY(fcl__opencl_platform_count(&n));
  cl_platform_id *ids = malloc(n * sizeof *ids);
  if (!ids) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "platform list of %u entries", n);
  cl_int err = clGetPlatformIDs(n, ids, NULL);
  cl_platform_id native = ids[index];
  free(ids);
  FCL_CL_TRY(err, "clGetPlatformIDs");
  if (!(*platform = fcl__platform_of(native)))
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "platform object");
  return FCL_OK;
}

static void platform_string(cl_platform_id p, cl_platform_info what, char *buf, size_t size) {
  size_t need = 0;
  buf[0] = '\0';
  if (clGetPlatformInfo(p, what, 0, NULL, &need) != CL_SUCCESS || need == 0) return;
  if (need <= size) {
    clGetPlatformInfo(p, what, size, buf, NULL);
    return;
  }
  char *tmp = malloc(need);
  if (tmp && clGetPlatformInfo(p, what, need, tmp, NULL) == CL_SUCCESS) {
    memcpy(buf, tmp, size - 1);
    buf[size - 1] = '\0';
  }
  free(tmp);
}

fcl_status fcl__opencl_platform_info(const fcl_platform *fplatform, fcl_platform_info *info) {
  cl_platform_id platform = fcl__platform_cl(fplatform);
  FCL_CL_TRY(clGetPlatformInfo(platform, CL_PLATFORM_NAME, 0, NULL, NULL), "clGetPlatformInfo");
  platform_string(platform, CL_PLATFORM_NAME, info->name, sizeof info->name);
  platform_string(platform, CL_PLATFORM_VENDOR, info->vendor, sizeof info->vendor);
  platform_string(platform, CL_PLATFORM_VERSION, info->version, sizeof info->version);
  platform_string(platform, CL_PLATFORM_PROFILE, info->profile, sizeof info->profile);
  platform_string(platform, CL_PLATFORM_EXTENSIONS, info->extensions, sizeof info->extensions);
  cl_int err = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, NULL, &info->num_devices);
  if (err == CL_DEVICE_NOT_FOUND)
    info->num_devices = 0;
  else
    FCL_CL_TRY(err, "clGetDeviceIDs on platform '%s'", info->name);
  return FCL_OK;
}

fcl_status fcl__opencl_platform_device(const fcl_platform *fplatform, unsigned index,
                                       fcl_device **device) {
  cl_platform_id platform = fcl__platform_cl(fplatform);
  cl_uint n = 0;
  cl_int err = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, NULL, &n);
  if (err != CL_DEVICE_NOT_FOUND) FCL_CL_TRY(err, "clGetDeviceIDs");
  if (index >= n)
    return FCL_ERROR(FCL_ERR_NOT_FOUND, "device index %u out of range (platform has %u devices)",
                     index, n);
  cl_device_id *ids = malloc(n * sizeof *ids);
  if (!ids) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "device list of %u entries", n);
  err = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, n, ids, NULL);
  cl_device_id native = ids[index];
  free(ids);
  FCL_CL_TRY(err, "clGetDeviceIDs");
  if (!(*device = fcl__device_of(native))) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "device object");
  return FCL_OK;
}

/* String property into a fixed buffer; returns true when it had to be truncated. */
static bool device_string(cl_device_id d, cl_device_info what, char *buf, size_t size) {
  size_t need = 0;
  buf[0] = '\0';
  if (clGetDeviceInfo(d, what, 0, NULL, &need) != CL_SUCCESS || need == 0) return false;
  if (need <= size) {
    clGetDeviceInfo(d, what, size, buf, NULL);
    return false;
  }
  char *tmp = malloc(need);
  if (tmp && clGetDeviceInfo(d, what, need, tmp, NULL) == CL_SUCCESS) {
    memcpy(buf, tmp, size - 1);
    buf[size - 1] = '\0';
  }
  free(tmp);
  return true;
}

/* Numeric property; properties a device does not know (older OpenCL) are left at zero. */
static void device_value(cl_device_id d, cl_device_info what, void *out, size_t size) {
  if (clGetDeviceInfo(d, what, size, out, NULL) != CL_SUCCESS) memset(out, 0, size);
}

static bool device_bool(cl_device_id d, cl_device_info what) {
  cl_bool b = CL_FALSE;
  device_value(d, what, &b, sizeof b);
  return b == CL_TRUE;
}

fcl_status fcl__opencl_device_info(const fcl_device *fdevice, fcl_device_info *info) {
  cl_device_id device = fcl__device_cl(fdevice);
  device_string(device, CL_DEVICE_NAME, info->name, sizeof info->name);
  device_string(device, CL_DEVICE_VENDOR, info->vendor, sizeof info->vendor);
  device_string(device, CL_DEVICE_VERSION, info->version, sizeof info->version);
  device_string(device, CL_DRIVER_VERSION, info->driver_version, sizeof info->driver_version);
  device_string(device, CL_DEVICE_OPENCL_C_VERSION, info->opencl_c_version,
                sizeof info->opencl_c_version);
  device_string(device, CL_DEVICE_PROFILE, info->profile, sizeof info->profile);
  info->extensions_truncated = device_string(device, CL_DEVICE_EXTENSIONS, info->extensions,
                                             sizeof info->extensions);
  device_string(device, CL_DEVICE_BUILT_IN_KERNELS, info->built_in_kernels,
                sizeof info->built_in_kernels);
  device_string(device, CL_DEVICE_IL_VERSION, info->il_version, sizeof info->il_version);
  if (sscanf(info->version, "OpenCL %d.%d", &info->version_major, &info->version_minor) != 2) {
    info->version_major = 1;
    info->version_minor = 0;
  }
  cl_device_type type = 0;
  device_value(device, CL_DEVICE_TYPE, &type, sizeof type);
  info->type = (fcl_device_type)type;
  device_value(device, CL_DEVICE_VENDOR_ID, &info->vendor_id, sizeof info->vendor_id);
  info->available = device_bool(device, CL_DEVICE_AVAILABLE);
  info->compiler_available = device_bool(device, CL_DEVICE_COMPILER_AVAILABLE);
  info->linker_available = device_bool(device, CL_DEVICE_LINKER_AVAILABLE);
  info->endian_little = device_bool(device, CL_DEVICE_ENDIAN_LITTLE);
  info->error_correction_support = device_bool(device, CL_DEVICE_ERROR_CORRECTION_SUPPORT);
  info->host_unified_memory = device_bool(device, CL_DEVICE_HOST_UNIFIED_MEMORY);
  device_value(device, CL_DEVICE_ADDRESS_BITS, &info->address_bits, sizeof(cl_uint));
  device_value(device, CL_DEVICE_MAX_COMPUTE_UNITS, &info->max_compute_units, sizeof(cl_uint));
  device_value(device, CL_DEVICE_MAX_CLOCK_FREQUENCY, &info->max_clock_frequency_mhz,
               sizeof(cl_uint));
  device_value(device, CL_DEVICE_GLOBAL_MEM_SIZE, &info->global_mem_size, sizeof(cl_ulong));
  device_value(device, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, &info->global_mem_cache_size,
               sizeof(cl_ulong));
  device_value(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, &info->max_mem_alloc_size, sizeof(cl_ulong));
  device_value(device, CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE, &info->global_mem_cacheline_size,
               sizeof(cl_uint));
  device_value(device, CL_DEVICE_LOCAL_MEM_SIZE, &info->local_mem_size, sizeof(cl_ulong));
  cl_device_local_mem_type local_mem = CL_GLOBAL;
  device_value(device, CL_DEVICE_LOCAL_MEM_TYPE, &local_mem, sizeof local_mem);
  info->local_mem_dedicated = local_mem == CL_LOCAL;
  device_value(device, CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE, &info->max_constant_buffer_size,
               sizeof(cl_ulong));
  device_value(device, CL_DEVICE_MAX_CONSTANT_ARGS, &info->max_constant_args, sizeof(cl_uint));
  device_value(device, CL_DEVICE_MAX_PARAMETER_SIZE, &info->max_parameter_size, sizeof(size_t));
  device_value(device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, &info->mem_base_addr_align, sizeof(cl_uint));
  device_value(device, CL_DEVICE_MAX_WORK_GROUP_SIZE, &info->max_work_group_size, sizeof(size_t));
  device_value(device, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, &info->max_work_item_dimensions,
               sizeof(cl_uint));
  if (info->max_work_item_dimensions >= 3) {
    size_t *sizes = calloc(info->max_work_item_dimensions, sizeof *sizes);
    if (!sizes) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "work-item size list");
    device_value(device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizes,
                 info->max_work_item_dimensions * sizeof *sizes);
    memcpy(info->max_work_item_sizes, sizes, sizeof info->max_work_item_sizes);
    free(sizes);
  }
  static const cl_device_info preferred[7] = {
      CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR,  CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT,
      CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT,   CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG,
      CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT, CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE,
      CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF};
  static const cl_device_info native[7] = {
      CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR,  CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT,
      CL_DEVICE_NATIVE_VECTOR_WIDTH_INT,   CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG,
      CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT, CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE,
      CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF};
  for (int i = 0; i < 7; ++i) {
    device_value(device, preferred[i], &info->preferred_vector_width[i], sizeof(cl_uint));
    device_value(device, native[i], &info->native_vector_width[i], sizeof(cl_uint));
  }
  cl_command_queue_properties queues = 0;
  device_value(device, CL_DEVICE_QUEUE_PROPERTIES, &queues, sizeof queues);
  info->queue_out_of_order = queues & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE;
  info->queue_profiling = queues & CL_QUEUE_PROFILING_ENABLE;
  device_value(device, CL_DEVICE_PROFILING_TIMER_RESOLUTION, &info->profiling_timer_resolution_ns,
               sizeof(size_t));
  info->image_support = device_bool(device, CL_DEVICE_IMAGE_SUPPORT);
  if (info->image_support) {
    device_value(device, CL_DEVICE_MAX_READ_IMAGE_ARGS, &info->max_read_image_args,
                 sizeof(cl_uint));
    device_value(device, CL_DEVICE_MAX_WRITE_IMAGE_ARGS, &info->max_write_image_args,
                 sizeof(cl_uint));
    device_value(device, CL_DEVICE_MAX_SAMPLERS, &info->max_samplers, sizeof(cl_uint));
    device_value(device, CL_DEVICE_IMAGE2D_MAX_WIDTH, &info->image2d_max_size[0], sizeof(size_t));
    device_value(device, CL_DEVICE_IMAGE2D_MAX_HEIGHT, &info->image2d_max_size[1], sizeof(size_t));
    device_value(device, CL_DEVICE_IMAGE3D_MAX_WIDTH, &info->image3d_max_size[0], sizeof(size_t));
    device_value(device, CL_DEVICE_IMAGE3D_MAX_HEIGHT, &info->image3d_max_size[1], sizeof(size_t));
    device_value(device, CL_DEVICE_IMAGE3D_MAX_DEPTH, &info->image3d_max_size[2], sizeof(size_t));
  }
  if (info->version_major >= 2)
    device_value(device, CL_DEVICE_SVM_CAPABILITIES, &info->svm_capabilities,
                 sizeof info->svm_capabilities);
  device_value(device, CL_DEVICE_EXECUTION_CAPABILITIES, &info->execution_capabilities,
               sizeof info->execution_capabilities);
  info->native_kernels = info->execution_capabilities & CL_EXEC_NATIVE_KERNEL;
  device_value(device, CL_DEVICE_SINGLE_FP_CONFIG, &info->single_fp_config,
               sizeof info->single_fp_config);
  device_value(device, CL_DEVICE_DOUBLE_FP_CONFIG, &info->double_fp_config,
               sizeof info->double_fp_config);
  device_value(device, CL_DEVICE_PRINTF_BUFFER_SIZE, &info->printf_buffer_size, sizeof(size_t));
  return FCL_OK;
}

/* cl_nv_device_attribute_query and cl_amd_device_attribute_query (cl_ext.h) */
enum {
  CC_MAJOR_NV = 0x4000,
  CC_MINOR_NV = 0x4001,
  WARP_SIZE_NV = 0x4003,
  WAVEFRONT_WIDTH_AMD = 0x4043
};

fcl_status fcl__opencl_device_vendor(const fcl_device *d, const fcl_device_info *info,
                                     fcl__device_vendor *out) {
  cl_device_id device = fcl__device_cl(d);
  cl_uint v = 0, major = 0, minor = 0;
  *out = (fcl__device_vendor){0, -1, -1};
  if (fcl_device_has_extension(info, "cl_nv_device_attribute_query")) {
    if (clGetDeviceInfo(device, WARP_SIZE_NV, sizeof v, &v, NULL) == CL_SUCCESS)
      out->simd_width = v;
    if (clGetDeviceInfo(device, CC_MAJOR_NV, sizeof major, &major, NULL) == CL_SUCCESS &&
        clGetDeviceInfo(device, CC_MINOR_NV, sizeof minor, &minor, NULL) == CL_SUCCESS) {
      out->cc_major = (int)major;
      out->cc_minor = (int)minor;
    }
  } else if (fcl_device_has_extension(info, "cl_amd_device_attribute_query") &&
             clGetDeviceInfo(device, WAVEFRONT_WIDTH_AMD, sizeof v, &v, NULL) == CL_SUCCESS) {
    out->simd_width = v;
  }
  return FCL_OK;
}
