/* The CUDA backend's platform and devices: one platform, "CUDA", holding the devices that the
 * driver counts, each with its ordinal; made on first sight and kept for the process. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "../runtime_impl.h"
#include "cuda_backend.h"
#include "driver.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static fcl_platform platform = {&fcl__cuda_backend, NULL};
static fcl_device **devices; /* by ordinal, made on first request */
static int num_devices = -1;

static fcl_status count_devices(const fcl__cu_api **cu) {
  const char *why;
  if (!(*cu = fcl__cu(&why))) {
    num_devices = 0; /* no driver: no platform, which is not an error */
    fcl_log(FCL_LOG_DEBUG, "CUDA backend: %s", why);
    return FCL_OK;
  }
  if (num_devices >= 0) return FCL_OK;
  int n = 0;
  FCL_CU_TRY((*cu)->DeviceGetCount(&n), "cuDeviceGetCount");
  devices = calloc(n ? (size_t)n : 1, sizeof *devices);
  if (!devices) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "CUDA device list");
  num_devices = n;
  return FCL_OK;
}

fcl_status fcl__cuda_platform_count(unsigned *count) {
  const fcl__cu_api *cu;
  pthread_mutex_lock(&lock);
  fcl_status st = count_devices(&cu);
  pthread_mutex_unlock(&lock);
  *count = st == FCL_OK && num_devices > 0 ? 1 : 0;
  return st;
}

fcl_status fcl__cuda_platform_get(unsigned index, fcl_platform **out) {
  unsigned n;
  FCL_TRY(fcl__cuda_platform_count(&n));
  if (index >= n) return FCL_ERROR(FCL_ERR_NOT_FOUND, "no CUDA platform %u", index);
  *out = &platform;
  return FCL_OK;
}

fcl_status fcl__cuda_platform_info(const fcl_platform *p, fcl_platform_info *info) {
  (void)p;
  const fcl__cu_api *cu = fcl__cu(NULL);
  int version = 0;
  if (cu) FCL_CU_TRY(cu->DriverGetVersion(&version), "cuDriverGetVersion");
  snprintf(info->name, sizeof info->name, "CUDA");
  snprintf(info->vendor, sizeof info->vendor, "NVIDIA Corporation");
  snprintf(info->version, sizeof info->version, "CUDA %d.%d (driver API)", version / 1000,
           version % 1000 / 10);
  snprintf(info->profile, sizeof info->profile, "FULL_PROFILE");
  info->extensions[0] = '\0';
  info->num_devices = num_devices > 0 ? (unsigned)num_devices : 0;
  return FCL_OK;
}

fcl_status fcl__cuda_platform_device(const fcl_platform *p, unsigned index, fcl_device **out) {
  (void)p;
  const fcl__cu_api *cu;
  pthread_mutex_lock(&lock);
  fcl_status st = count_devices(&cu);
  if (st == FCL_OK && (int)index >= num_devices)
    st = FCL_ERROR(FCL_ERR_NOT_FOUND, "no CUDA device %u (the driver counts %d)", index,
                   num_devices);
  if (st == FCL_OK && !devices[index]) {
    fcl__cuda_device *d = calloc(1, sizeof *d);
    fcl_device *dev = calloc(1, sizeof *dev);
    CUresult r = d && dev ? cu->DeviceGet(&d->device, (int)index) : CUDA_SUCCESS;
    if (!d || !dev)
      st = FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "CUDA device object");
    else if (r != CUDA_SUCCESS)
      st = FCL_CU_ERROR(r, "cuDeviceGet");
    if (st == FCL_OK) {
      d->ordinal = (int)index;
      *dev = (fcl_device){&fcl__cuda_backend, d, &platform};
      devices[index] = dev;
    } else {
      free(d);
      free(dev);
    }
  }
  if (st == FCL_OK) *out = devices[index];
  pthread_mutex_unlock(&lock);
  return st;
}

static int attribute(const fcl__cu_api *cu, CUdevice d, CUdevice_attribute a) {
  int v = 0;
  return cu->DeviceGetAttribute(&v, a, d) == CUDA_SUCCESS ? v : 0;
}

fcl_status fcl__cuda_device_info(const fcl_device *device, fcl_device_info *info) {
  const fcl__cu_api *cu = fcl__cu(NULL);
  const fcl__cuda_device *d = device->native;
  CUdevice dev = d->device;
  FCL_CU_TRY(cu->DeviceGetName(info->name, (int)sizeof info->name, dev), "cuDeviceGetName");
  FCL_CU_TRY(cu->DeviceGetPCIBusId(info->pci_bus_id, (int)sizeof info->pci_bus_id, dev),
             "cuDeviceGetPCIBusId");
  int version = 0, nv_major = 0, nv_minor = 0;
  FCL_CU_TRY(cu->DriverGetVersion(&version), "cuDriverGetVersion");
  FCL_TRY(fcl__nvrtc_version(&nv_major, &nv_minor));
  const int major = attribute(cu, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  const int minor = attribute(cu, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  snprintf(info->vendor, sizeof info->vendor, "NVIDIA Corporation");
  snprintf(info->version, sizeof info->version, "CUDA %d.%d, compute capability %d.%d",
           version / 1000, version % 1000 / 10, major, minor);
  /* NVRTC's version here: it is part of a cached binary's key */
  snprintf(info->driver_version, sizeof info->driver_version, "%d.%d, NVRTC %d.%d", version / 1000,
           version % 1000 / 10, nv_major, nv_minor);
  snprintf(info->opencl_c_version, sizeof info->opencl_c_version, "NVRTC %d.%d", nv_major,
           nv_minor);
  snprintf(info->profile, sizeof info->profile, "FULL_PROFILE");
  /* what the CUDA prelude and the option translation give kernels: doubles, and NVRTC's
   * register limit under OpenCL's NVIDIA option (-cl-nv-maxrregcount) */
  snprintf(info->extensions, sizeof info->extensions, "cl_khr_fp64 cl_nv_compiler_options");
  info->type = FCL_DEVICE_GPU;
  info->vendor_id = 0x10de;
  info->available = info->compiler_available = true;
  info->endian_little = true;
  info->error_correction_support = attribute(cu, dev, CU_DEVICE_ATTRIBUTE_ECC_ENABLED) != 0;
  info->host_unified_memory = attribute(cu, dev, CU_DEVICE_ATTRIBUTE_INTEGRATED) != 0;
  info->address_bits = 64;
  info->max_compute_units = (uint32_t)attribute(cu, dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  info->max_clock_frequency_mhz = (uint32_t)attribute(cu, dev, CU_DEVICE_ATTRIBUTE_CLOCK_RATE) /
                                  1000;
  size_t total = 0;
  FCL_CU_TRY(cu->DeviceTotalMem(&total, dev), "cuDeviceTotalMem");
  info->global_mem_size = info->max_mem_alloc_size = total;
  info->global_mem_cache_size = (uint64_t)attribute(cu, dev, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  info->global_mem_cacheline_size = 128;
  /* what a kernel may declare statically; more is an opt-in of dynamic shared memory */
  info->local_mem_size = (uint64_t)attribute(cu, dev,
                                             CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  info->local_mem_dedicated = true;
  info->max_constant_buffer_size = (uint64_t)attribute(cu, dev,
                                                       CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY);
  info->max_constant_args = 1024;
  info->max_parameter_size = 4096;
  info->mem_base_addr_align = 256 * 8; /* cuMemAlloc aligns on 256 bytes */
  info->max_work_group_size = (size_t)attribute(cu, dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  info->max_work_item_dimensions = 3;
  info->max_work_item_sizes[0] = (size_t)attribute(cu, dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
  info->max_work_item_sizes[1] = (size_t)attribute(cu, dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
  info->max_work_item_sizes[2] = (size_t)attribute(cu, dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
  for (int i = 0; i < 7; ++i) info->preferred_vector_width[i] = info->native_vector_width[i] = 1;
  info->queue_profiling = true;
  info->profiling_timer_resolution_ns = 500; /* cuEventElapsedTime: about half a microsecond */
  info->single_fp_config = info->double_fp_config = 0x3f; /* IEEE 754 with FMA, all roundings */
  return FCL_OK;
}

fcl_status fcl__cuda_device_vendor(const fcl_device *device, const fcl_device_info *info,
                                   fcl__device_vendor *out) {
  (void)info;
  const fcl__cu_api *cu = fcl__cu(NULL);
  const fcl__cuda_device *d = device->native;
  out->simd_width = (unsigned)attribute(cu, d->device, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  out->cc_major = attribute(cu, d->device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  out->cc_minor = attribute(cu, d->device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  return FCL_OK;
}
