/* OpenCL's own kinds of program: a device's built-in kernels, SPIR-V (or bytes that may be),
 * separate compilation and linking, and the platform compiler's unloading. */
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
  FCL_CHECK_OPENCL(context->backend, 1, "context");
  fcl_program *prog;
  FCL_TRY(fcl__program_new(context, NULL, "<built-in kernels>", &prog));
  cl_int err;
  prog->native = clCreateProgramWithBuiltInKernels(fcl__context_cl(context), context->num_devices,
                                                   fcl__context_cl_devices(context), names, &err);
  if (err != CL_SUCCESS) {
    fcl_program_release(&prog);
    return FCL_CL_ERROR(err, "clCreateProgramWithBuiltInKernels('%s')", names);
  }
  prog->built_in = true;
  /* no compiler options (PoCL fails a build of built-in kernels with -cl-kernel-arg-info) */
  err = clBuildProgram(prog->native, context->num_devices, fcl__context_cl_devices(context), "",
                       NULL, NULL);
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
  FCL_CHECK_OPENCL(platform->backend, 1, "platform");
  FCL_CL_TRY(clUnloadPlatformCompiler(fcl__platform_cl(platform)), "clUnloadPlatformCompiler");
  return FCL_OK;
}

fcl_status fcl_program_create_il(fcl_context *context, const void *il, size_t size,
                                 fcl_program **out) {
  FCL_CHECK_NULL(context, 1);
  FCL_CHECK_NULL(il, 2);
  FCL_CHECK_ARG(size >= 4, 3, "size", "must hold at least the SPIR-V magic number");
  FCL_CHECK_NULL(out, 4);
  *out = NULL;
  for (unsigned i = 0; i < context->num_devices; ++i) {
    fcl_device_info info;
    FCL_TRY(fcl_device_get_info(fcl_context_device(context, i), &info));
    if (!info.il_version[0])
      return FCL_ERROR(FCL_ERR_NOT_SUPPORTED,
                       "SPIR-V / IL programs are not supported by this device ('%s', %s)",
                       info.name, info.version);
  }
  FCL_CHECK_OPENCL(context->backend, 1, "context");
  fcl_program *p;
  FCL_TRY(fcl__program_new(context, NULL, "<SPIR-V>", &p));
  cl_int err;
  p->native = clCreateProgramWithIL(fcl__context_cl(context), il, size, &err);
  if (err != CL_SUCCESS) {
    fcl_program_release(&p);
    return FCL_CL_ERROR(err, "clCreateProgramWithIL(%zu bytes)", size);
  }
  *out = p;
  return FCL_OK;
}

fcl_status fcl_program_compile(fcl_program *program, const char *options, unsigned num_headers,
                               fcl_program *const *headers, const char *const *header_names) {
  FCL_CHECK_NULL(program, 1);
  FCL_CHECK_ARG(num_headers == 0 || (headers && header_names), 4, "headers",
                "headers and header_names must not be NULL when num_headers > 0");
  FCL_CHECK_OPENCL(program->context->backend, 1, "program");
  for (unsigned i = 0; i < num_headers; ++i)
    FCL_CHECK_OPENCL(headers[i]->context->backend, 4, "headers");
  fcl_program *p = program;
  char *opts = fcl__program_full_options(p->context, options);
  cl_program *hs = num_headers ? malloc(num_headers * sizeof *hs) : NULL;
  if (!opts || (num_headers && !hs)) {
    free(opts);
    free(hs);
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "compile options");
  }
  for (unsigned i = 0; i < num_headers; ++i) hs[i] = headers[i]->native;
  free(p->options);
  p->options = opts;
  cl_int err = clCompileProgram(p->native, p->context->num_devices,
                                fcl__context_cl_devices(p->context), opts, num_headers, hs,
                                (const char **)header_names, NULL, NULL);
  free(hs);
  if (err != CL_SUCCESS) {
    FCL_CL_ERROR(err, "clCompileProgram");
    return fcl__program_build_failure(p, "compilation", opts);
  }
  fcl__program_collect_logs(p);
  fcl__program_show_warnings(p, " (compile)");
  return FCL_OK;
}

fcl_status fcl_program_link(fcl_context *context, unsigned num_programs,
                            fcl_program *const *programs, const char *options, fcl_program **out) {
  FCL_CHECK_NULL(context, 1);
  FCL_CHECK_ARG(num_programs > 0, 2, "num_programs", "must be > 0");
  FCL_CHECK_NULL(programs, 3);
  FCL_CHECK_NULL(out, 5);
  *out = NULL;
  FCL_CHECK_OPENCL(context->backend, 1, "context");
  for (unsigned i = 0; i < num_programs; ++i)
    FCL_CHECK_OPENCL(programs[i]->context->backend, 3, "programs");
  cl_program *ps = malloc(num_programs * sizeof *ps);
  if (!ps) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "program list");
  char origin[1024] = "link of";
  for (unsigned i = 0; i < num_programs; ++i) {
    ps[i] = programs[i]->native;
    size_t used = strlen(origin);
    snprintf(origin + used, sizeof origin - used, " %s", programs[i]->origin);
  }
  fcl_program *p;
  fcl_status st = fcl__program_new(context, NULL, origin, &p);
  if (st != FCL_OK) {
    free(ps);
    return st;
  }
  free(p->options);
  p->options = strdup(options ? options : "");
  cl_int err;
  p->native = clLinkProgram(fcl__context_cl(context), context->num_devices,
                            fcl__context_cl_devices(context), p->options, num_programs, ps, NULL,
                            NULL, &err);
  free(ps);
  if (err != CL_SUCCESS) {
    st = FCL_CL_ERROR(err, "clLinkProgram(%s)", origin);
    if (p->native) st = fcl__program_build_failure(p, "link", p->options);
    fcl_program_release(&p);
    return st;
  }
  fcl__program_collect_logs(p);
  st = fcl__program_load_meta(p, NULL);
  if (st != FCL_OK) {
    fcl_program_release(&p);
    return st;
  }
  *out = p;
  return FCL_OK;
}
