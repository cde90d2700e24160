/* Platforms and devices: properties against direct OpenCL queries, extension matching,
 * selection by FLOWCL_DEVICE-style specifications and its error listing the devices. */
#include <stdlib.h>
#include <string.h>

#include "fcl_test.h"
#include "flowcl/opencl.h"

/* flowcl's properties, device and platform against OpenCL's own queries (an OpenCL device; on
 * another backend only the bounds every device meets, in check_device). */
static void check_against_opencl(const fcl_device_entry *e, const fcl_device_info *pd) {
  const fcl_device_info d = *pd;
  char name[256];
  cl_uint cu = 0;
  size_t wg = 0;
  cl_ulong mem = 0;
  clGetDeviceInfo(fcl_device_cl(e->device), CL_DEVICE_NAME, sizeof name, name, NULL);
  clGetDeviceInfo(fcl_device_cl(e->device), CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL);
  clGetDeviceInfo(fcl_device_cl(e->device), CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof wg, &wg, NULL);
  clGetDeviceInfo(fcl_device_cl(e->device), CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem, NULL);
  CHECK(strcmp(d.name, name) == 0);
  CHECK(d.max_compute_units == cu && cu > 0);
  CHECK(d.max_work_group_size == wg && wg > 0);
  CHECK(d.global_mem_size == mem && mem > 0);
  CHECK(d.native_kernels == ((d.execution_capabilities & CL_EXEC_NATIVE_KERNEL) != 0));
  /* flowcl's device and platform against OpenCL's: one object per device, both ways round */
  cl_device_type type = 0;
  cl_device_local_mem_type local = CL_GLOBAL;
  clGetDeviceInfo(fcl_device_cl(e->device), CL_DEVICE_TYPE, sizeof type, &type, NULL);
  clGetDeviceInfo(fcl_device_cl(e->device), CL_DEVICE_LOCAL_MEM_TYPE, sizeof local, &local, NULL);
  CHECK(d.type == (fcl_device_type)type && d.type != 0);
  CHECK(d.local_mem_dedicated == (local == CL_LOCAL));
  fcl_device *from = NULL;
  fcl_platform *pfrom = NULL;
  CHECK_OK(fcl_device_from_cl(fcl_device_cl(e->device), &from));
  CHECK(from == e->device);
  CHECK_OK(fcl_platform_from_cl(fcl_platform_cl(e->platform), &pfrom));
  CHECK(pfrom == e->platform);
  cl_platform_id native_platform = NULL;
  clGetDeviceInfo(fcl_device_cl(e->device), CL_DEVICE_PLATFORM, sizeof native_platform,
                  &native_platform, NULL);
  CHECK(fcl_platform_cl(e->platform) == native_platform);
  CHECK_STATUS(fcl_device_from_cl(NULL, &from), FCL_ERR_INVALID_ARGUMENT, "argument 1 (native)");
  CHECK(fcl_device_cl(NULL) == NULL && fcl_platform_cl(NULL) == NULL);
}

static void check_device(const fcl_device_entry *e, void *user) {
  (void)user;
  fcl_device_info d;
  CHECK_OK(fcl_device_get_info(e->device, &d));
  const bool on_opencl = !strcmp(fcl_device_backend(e->device), "opencl");
  if (on_opencl) check_against_opencl(e, &d);
  CHECK(d.name[0] && d.max_compute_units > 0 && d.max_work_group_size > 0 && d.global_mem_size > 0);
  CHECK(d.platform == e->platform && d.id == e->device && d.type != 0);
  CHECK(on_opencl ? d.version_major >= 1 : d.version_major == 0); /* OpenCL's version */
  CHECK(d.max_work_item_dimensions >= 3 && d.max_work_item_sizes[0] > 0);
  CHECK(d.max_mem_alloc_size > 0 && d.max_mem_alloc_size <= d.global_mem_size);
  CHECK(d.available && d.compiler_available);
  /* Extension matching is by whole word. */
  if (fcl_device_has_extension(&d, "cl_khr_fp64"))
    CHECK(!fcl_device_has_extension(&d, "cl_khr_fp"));
  CHECK(!fcl_device_has_extension(&d, "cl_flowcl_no_such_extension"));
  CHECK(!fcl_device_has_extension(&d, ""));

  fcl_platform_info p;
  CHECK_OK(fcl_platform_get_info(e->platform, &p));
  CHECK(p.name[0] && p.num_devices > e->device_index);
  fcl_device *again;
  CHECK_OK(fcl_platform_get_device(e->platform, e->device_index, &again));
  CHECK(again == e->device);
  CHECK_STATUS(fcl_platform_get_device(e->platform, 1000, &again), FCL_ERR_NOT_FOUND, "1000");

  /* Selection: by indices, by case-insensitive substrings, by type. */
  char spec[600];
  fcl_device_entry s;
  snprintf(spec, sizeof spec, "%u:%u", e->platform_index, e->device_index);
  CHECK_OK(fcl_device_select(spec, &s));
  CHECK(s.device == e->device);
  /* Upper-cased substring of the device name. */
  char upper[256];
  snprintf(upper, sizeof upper, "%s", d.name);
  for (char *c = upper; *c; ++c) *c = (char)(*c >= 'a' && *c <= 'z' ? *c - 32 : *c);
  snprintf(spec, sizeof spec, "%u:%s", e->platform_index, upper);
  CHECK_OK(fcl_device_select(spec, &s));
  CHECK(s.device == e->device);
  snprintf(spec, sizeof spec, "%s:%s", p.name, fcl_device_type_name(d.type));
  CHECK_OK(fcl_device_select(spec, &s));
  CHECK(s.platform == e->platform);

  /* Unknown device: the error lists what is available. */
  CHECK_STATUS(fcl_device_select("no-such-platform-xyz:0", &s), FCL_ERR_NOT_FOUND,
               "no-such-platform-xyz");
  CHECK(fcl_test_contains(fcl_last_error(), d.name));
  CHECK(fcl_test_contains(fcl_last_error(), "available devices"));
  CHECK_STATUS(fcl_device_select("0:999", &s), FCL_ERR_NOT_FOUND, "0:999");

  /* FLOWCL_DEVICE is read when no specification is given. */
  snprintf(spec, sizeof spec, "%u:%u", e->platform_index, e->device_index);
  setenv("FLOWCL_DEVICE", spec, 1);
  CHECK_OK(fcl_device_select(NULL, &s));
  CHECK(s.device == e->device);
  setenv("FLOWCL_DEVICE", "bogus-device-name", 1);
  CHECK_STATUS(fcl_device_select(NULL, &s), FCL_ERR_NOT_FOUND, "FLOWCL_DEVICE 'bogus-device-name'");
  CHECK(fcl_test_contains(fcl_last_error(), d.name));
  fcl_context *ctx = NULL;
  CHECK_STATUS(fcl_context_create_default(&ctx), FCL_ERR_NOT_FOUND, "bogus-device-name");
  CHECK(ctx == NULL);
  /* the node-local choice without MPI: FLOWCL_DEVICE first, then GPU index % GPUs, else a CPU */
  CHECK_STATUS(fcl_device_select_nth(NULL, 3, &s), FCL_ERR_NOT_FOUND, "bogus-device-name");
  unsetenv("FLOWCL_DEVICE");
  CHECK_STATUS(fcl_device_select_nth(NULL, -1, &s), FCL_ERR_INVALID_ARGUMENT, "index");
  {
    fcl_device_entry *all = NULL, gpu[64];
    size_t count = 0, gpus = 0;
    CHECK_OK(fcl_device_list(&all, &count));
    for (size_t i = 0; i < count; ++i) {
      fcl_device_info info;
      /* the default choices take the first backend's devices (OpenCL's; the CUDA backend's
       * are the same GPUs, chosen by naming it) */
      if (!strcmp(fcl_device_backend(all[i].device), "opencl") &&
          fcl_device_get_info(all[i].device, &info) == FCL_OK && (info.type & FCL_DEVICE_GPU) &&
          gpus < 64)
        gpu[gpus++] = all[i];
    }
    free(all);
    for (int index = 0; index < 5; ++index) {
      CHECK_OK(fcl_device_select_nth(NULL, index, &s));
      fcl_device_info si;
      CHECK_OK(fcl_device_get_info(s.device, &si));
      CHECKF(gpus ? s.device == gpu[(size_t)index % gpus].device : (si.type & FCL_DEVICE_CPU) != 0,
             "node-local index %d: %s (%zu GPUs)", index, si.name, gpus);
    }
    snprintf(spec, sizeof spec, "%u:%u", e->platform_index, e->device_index);
    CHECK_OK(fcl_device_select_nth(spec, 7, &s));
    CHECK(s.device == e->device);
    /* a spec matching several devices spreads the indices over them, in list order (run with
     * POCL_DEVICES="pthread pthread" for two: test_device_two) */
    snprintf(spec, sizeof spec, "%u:", e->platform_index);
    CHECK_OK(fcl_device_list(&all, &count));
    size_t same = 0;
    fcl_device_entry on[64];
    for (size_t i = 0; i < count; ++i)
      if (all[i].platform_index == e->platform_index && same < 64) on[same++] = all[i];
    free(all);
    for (int index = 0; index < 5; ++index) {
      CHECK_OK(fcl_device_select_nth(spec, index, &s));
      CHECKF(s.device == on[(size_t)index % same].device,
             "spec '%s', node-local index %d: not match %zu of %zu", spec, index,
             (size_t)index % same, same);
    }
    fcl_platform_info pi; /* POCL_DEVICES makes two on PoCL only */
    CHECK_OK(fcl_platform_get_info(e->platform, &pi));
    const bool want_two = getenv("FLOWCL_TEST_TWO_DEVICES") && strstr(pi.name, "Portable");
    CHECKF(!want_two || same >= 2, "%zu device(s) on platform '%s', 2 expected", same, pi.name);
  }

  /* A list as in FLOWCL_TEST_DEVICES. */
  fcl_device_entry *list = NULL;
  size_t n = 0;
  snprintf(spec, sizeof spec, "%u:%u; %u:%u", e->platform_index, e->device_index, e->platform_index,
           e->device_index);
  CHECK_OK(fcl_device_select_list(spec, &list, &n));
  CHECK(n == 2 && list && list[1].device == e->device);
  free(list);
  CHECK_STATUS(fcl_device_select_list("0:0;nothing-here", &list, &n), FCL_ERR_NOT_FOUND,
               "nothing-here");
  CHECK_STATUS(fcl_device_select_list(" ; ", &list, &n), FCL_ERR_INVALID_ARGUMENT,
               "names no device");

  /* The flat list holds this device exactly once. */
  CHECK_OK(fcl_device_list(&list, &n));
  size_t seen = 0;
  for (size_t i = 0; i < n; ++i) seen += list[i].device == e->device;
  CHECK(seen == 1);
  free(list);
}

int main(void) { return fcl_test_run_on_devices(check_device, NULL); }
