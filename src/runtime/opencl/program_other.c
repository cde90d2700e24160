/* Programs from what is not flowcl's own source text: a device's built-in kernels, bytes that
 * may be SPIR-V, and the platform compiler's unloading. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "../runtime_impl.h"
#include "opencl_backend.h"

/* Whether name is one of the ';'-separated entries of list. */
static bool listed(const char *list, const char *name, size_t len) {
  for (const char *p = list; *p;) {
    while (*p == ';' || *p == ' ') ++p;
    const char *e = p;
    while (*e && *e != ';') ++e;
    size_t n = (size_t)(e - p);
    while (n && p[n - 1] == ' ') --n;
    if (n == len && !strncmp(p, name, len)) return true;
    p = e;
  }
  return false;
}

fcl_status fcl_program_create_built_in(fcl_context *context, const char *names, fcl_program **out) {
  FCL_CHECK_NULL(context, 1);
  FCL_CHECK_NULL(names, 2);
  FCL_CHECK_NULL(out, 3);
  *out = NULL;
  for (const char *p = names; *p;) {
    while (*p == ';' || *p == ' ') ++p;
    const char *e = p;
    while (*e && *e != ';') ++e;
    size_t n = (size_t)(e - p);
    while (n && p[n - 1] == ' ') --n;
    for (cl_uint d = 0; n && d < context->num_devices; ++d) {
      fcl_device_info info;
      FCL_TRY(fcl_device_get_info(fcl_context_device(context, d), &info));
      if (!listed(info.built_in_kernels, p, n))
        return FCL_ERROR(FCL_ERR_NOT_FOUND,
                         "built-in kernel '%.*s' is not one of device '%s' "
                         "(it has: %s)",
                         (int)n, p, info.name,
                         info.built_in_kernels[0] ? info.built_in_kernels : "none");
    }
    p = e;
  }
  fcl_program *prog;
  FCL_TRY(fcl__program_new(context, NULL, "<built-in kernels>", &prog));
  cl_int err;
  prog->cl = clCreateProgramWithBuiltInKernels(fcl__context_cl(context), context->num_devices,
                                               fcl__context_cl_devices(context), names, &err);
  if (err != CL_SUCCESS) {
    fcl_program_release(&prog);
    return FCL_CL_ERROR(err, "clCreateProgramWithBuiltInKernels('%s')", names);
  }
  prog->built_in = true;
  /* no compiler options (PoCL fails a build of built-in kernels with -cl-kernel-arg-info) */
  err = clBuildProgram(prog->cl, context->num_devices, fcl__context_cl_devices(context), "", NULL,
                       NULL);
  /* OpenCL 1.2 says a program of built-in kernels is not built (CL_INVALID_OPERATION); PoCL
   * wants the build before it lists the kernels */
  if (err != CL_SUCCESS && err != CL_INVALID_OPERATION) {
    fcl_program_release(&prog);
    return FCL_CL_ERROR(err, "clBuildProgram of built-in kernels '%s'", names);
  }
  fcl_status st = fcl__program_load_meta(prog, NULL); /* its kernels, for fcl_kernel_create */
  if (st != FCL_OK) {
    fcl_program_release(&prog);
    return st;
  }
  *out = prog;
  return FCL_OK;
}

fcl_status fcl_program_create_bytes(fcl_context *context, const void *bytes, size_t size,
                                    const char *origin, fcl_program **out) {
  FCL_CHECK_NULL(context, 1);
  FCL_CHECK_NULL(bytes, 2);
  FCL_CHECK_NULL(out, 5);
  *out = NULL;
  const unsigned char *b = bytes;
  /* SPIR-V's magic number 0x07230203, as a little- or big-endian word */
  if (size >= 4 && ((b[0] == 0x03 && b[1] == 0x02 && b[2] == 0x23 && b[3] == 0x07) ||
                    (b[0] == 0x07 && b[1] == 0x23 && b[2] == 0x02 && b[3] == 0x03)))
    return fcl_program_create_il(context, bytes, size, out);
  char *text = malloc(size + 1);
  if (!text) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "program source of %zu bytes", size);
  memcpy(text, bytes, size);
  text[size] = '\0';
  const size_t len = strlen(text);
  if (len != size) {
    free(text);
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "argument 2 (bytes): neither SPIR-V (no magic "
                     "number) nor OpenCL C text (a NUL byte at %zu of %zu)",
                     len, size);
  }
  fcl_status st = fcl_program_create_source(context, text, origin, out);
  free(text);
  return st;
}

fcl_status fcl_platform_unload_compiler(const fcl_platform *platform) {
  FCL_CHECK_NULL(platform, 1);
  FCL_CL_TRY(clUnloadPlatformCompiler(fcl__platform_cl(platform)), "clUnloadPlatformCompiler");
  return FCL_OK;
}
