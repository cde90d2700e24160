/* Platforms and devices: enumeration over every backend built, properties from the object's
 * backend. */
#include <string.h>

#include "check.h"
#include "runtime_impl.h"

fcl_status fcl_platform_count(unsigned *count) {
  FCL_CHECK_NULL(count, 1);
  *count = 0;
  for (size_t b = 0; b < fcl__num_backends; ++b) {
    unsigned n = 0;
    FCL_TRY(fcl__backends[b]->platform_count(&n));
    *count += n;
  }
  return FCL_OK;
}

fcl_status fcl_platform_get(unsigned index, fcl_platform **platform) {
  FCL_CHECK_NULL(platform, 2);
  *platform = NULL;
  unsigned first = 0;
  for (size_t b = 0; b < fcl__num_backends; ++b) {
    unsigned n = 0;
    FCL_TRY(fcl__backends[b]->platform_count(&n));
    if (index < first + n) return fcl__backends[b]->platform_get(index - first, platform);
    first += n;
  }
  return FCL_ERROR(FCL_ERR_NOT_FOUND, "platform index %u out of range (%u platforms)", index,
                   first);
}

fcl_status fcl_platform_get_info(const fcl_platform *platform, fcl_platform_info *info) {
  FCL_CHECK_NULL(platform, 1);
  FCL_CHECK_NULL(info, 2);
  memset(info, 0, sizeof *info);
  info->id = (fcl_platform *)platform;
  return platform->backend->platform_info(platform, info);
}

fcl_status fcl_platform_get_device(const fcl_platform *platform, unsigned index,
                                   fcl_device **device) {
  FCL_CHECK_NULL(platform, 1);
  FCL_CHECK_NULL(device, 3);
  return platform->backend->platform_device(platform, index, device);
}

fcl_status fcl_device_get_info(const fcl_device *device, fcl_device_info *info) {
  FCL_CHECK_NULL(device, 1);
  FCL_CHECK_NULL(info, 2);
  memset(info, 0, sizeof *info);
  info->id = (fcl_device *)device;
  info->platform = device->platform;
  return device->backend->device_info(device, info);
}

bool fcl_device_has_extension(const fcl_device_info *info, const char *ext) {
  if (!info || !ext || !*ext) return false;
  size_t n = strlen(ext);
  for (const char *p = info->extensions; (p = strstr(p, ext)) != NULL; p += n) {
    bool starts = p == info->extensions || p[-1] == ' ';
    bool ends = p[n] == '\0' || p[n] == ' ';
    if (starts && ends) return true;
  }
  return false;
}

const char *fcl_device_backend(const fcl_device *device) {
  return device ? device->backend->name : "";
}

const char *fcl_device_type_name(fcl_device_type type) {
  if (type & FCL_DEVICE_GPU) return "GPU";
  if (type & FCL_DEVICE_CPU) return "CPU";
  if (type & FCL_DEVICE_ACCELERATOR) return "ACCELERATOR";
  if (type & FCL_DEVICE_CUSTOM) return "CUSTOM";
  return "DEFAULT";
}
