/* The CUDA backend's programs: NVRTC compiles the text (the prelude, then the caller's) into a
 * cubin for the context's device, the driver loads it as a module; the kernels' signatures come
 * from their symbols (signature.c). A program's device is its context's one device. */
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "../runtime_impl.h"
#include "cuda_backend.h"
#include "driver.h"

static const fcl__cu_api *cu(void) { return fcl__cu(NULL); }

static fcl__cuda_program *native(fcl_program *p) {
  if (!p->native) {
    fcl__cuda_program *cp = calloc(1, sizeof *cp);
    if (cp) cp->status = FCL_BUILD_NONE;
    p->native = cp;
  }
  return p->native;
}

fcl_status fcl__cuda_program_create_source(fcl_program *p) {
  return native(p) ? FCL_OK : FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "CUDA program");
}

/* Drops the module and its functions (the image stays). */
static void unload(fcl_program *p) {
  fcl__cuda_program *cp = p->native;
  if (cp->module && fcl__cuda_current(p->context->devices[0]) == FCL_OK)
    cu()->ModuleUnload(cp->module);
  cp->module = NULL;
  free(cp->functions);
  cp->functions = NULL;
  cp->num_functions = 0;
}

/* Loads image (size bytes, a cubin) as p's module; nothing changed on failure. */
static fcl_status load_image(fcl_program *p, const unsigned char *image, size_t size) {
  FCL_TRY(fcl__cuda_current(p->context->devices[0]));
  CUmodule module;
  FCL_CU_TRY(cu()->ModuleLoadData(&module, image), "cuModuleLoadData");
  unsigned char *copy = malloc(size ? size : 1);
  if (!copy) {
    cu()->ModuleUnload(module);
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "program binary");
  }
  memcpy(copy, image, size);
  fcl__cuda_program *cp = p->native;
  unload(p);
  free(cp->image);
  cp->image = copy;
  cp->size = size;
  cp->module = module;
  return FCL_OK;
}

fcl_status fcl__cuda_program_create_binaries(fcl_program *p, unsigned n, fcl_device *const *devices,
                                             const size_t *sizes,
                                             const unsigned char *const *binaries) {
  (void)n;
  (void)devices; /* the context's one device, checked by the caller */
  if (!native(p)) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "CUDA program");
  fcl_status st = load_image(p, binaries[0], sizes[0]);
  if (st != FCL_OK) {
    free(p->native);
    p->native = NULL;
  }
  return st;
}

void fcl__cuda_program_destroy(fcl_program *p) {
  fcl__cuda_program *cp = p->native;
  if (!cp) return;
  unload(p);
  free(cp->image);
  free(cp->log);
  free(cp);
  p->native = NULL;
}

fcl_status fcl__cuda_program_build(fcl_program *p, const char *options) {
  fcl__cuda_program *cp = p->native;
  if (!p->source) { /* from binaries: loaded already */
    cp->status = cp->module ? FCL_BUILD_SUCCESS : FCL_BUILD_ERROR;
    return cp->module ? FCL_OK : FCL_ERROR(FCL_ERR_BUILD_FAILED, "no binary to load");
  }
  fcl__device_vendor v = {0};
  fcl_device_info info;
  FCL_TRY(fcl_device_get_info(p->context->devices[0], &info));
  FCL_TRY(fcl__cuda_device_vendor(p->context->devices[0], &info, &v));
  fcl__nvrtc_output out;
  fcl_status st = fcl__nvrtc_compile(p->source, strlen(fcl__prelude_cuda), p->origin, options,
                                     v.cc_major, v.cc_minor, false, &out);
  free(cp->log);
  cp->log = out.log;
  out.log = NULL;
  if (st == FCL_OK) st = load_image(p, (const unsigned char *)out.image, out.size);
  cp->status = st == FCL_OK ? FCL_BUILD_SUCCESS : FCL_BUILD_ERROR;
  fcl__nvrtc_output_free(&out);
  return st;
}

fcl_status fcl__cuda_program_load(fcl_program *p, const size_t *sizes,
                                  const unsigned char *const *binaries, const char *options) {
  (void)options;
  FCL_TRY(load_image(p, binaries[0], sizes[0]));
  ((fcl__cuda_program *)p->native)->status = FCL_BUILD_SUCCESS;
  return FCL_OK;
}

char *fcl__cuda_program_build_log(const fcl_program *p, unsigned device_index) {
  (void)device_index;
  const fcl__cuda_program *cp = p->native;
  return cp && cp->log ? strdup(cp->log) : NULL;
}

fcl_status fcl__cuda_program_binaries(fcl_program *p, size_t *sizes, unsigned char **binaries) {
  const fcl__cuda_program *cp = p->native;
  if (!cp || !cp->image) return FCL_ERROR(FCL_ERR_INVALID_STATE, "%s is not built", p->origin);
  binaries[0] = malloc(cp->size);
  if (!binaries[0]) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "program binary");
  memcpy(binaries[0], cp->image, cp->size);
  sizes[0] = cp->size;
  return FCL_OK;
}

fcl_status fcl__cuda_program_build_status(const fcl_program *p, const fcl_device *d,
                                          fcl_build_status *status) {
  (void)d;
  const fcl__cuda_program *cp = p->native;
  *status = cp ? cp->status : FCL_BUILD_NONE;
  return FCL_OK;
}

static fcl_status param_count(CUfunction f, unsigned *n) {
  size_t offset, size;
  *n = 0;
  for (;;) {
    CUresult r = cu()->FuncGetParamInfo(f, *n, &offset, &size);
    if (r == CUDA_ERROR_INVALID_VALUE) return FCL_OK; /* past the last */
    if (r != CUDA_SUCCESS) return FCL_CU_ERROR(r, "cuFuncGetParamInfo");
    ++*n;
  }
}

fcl_status fcl__cuda_program_load_meta(fcl_program *p, const char *cached_meta) {
  (void)cached_meta; /* the symbols carry the signatures */
  fcl__cuda_program *cp = p->native;
  FCL_TRY(fcl__cuda_current(p->context->devices[0]));
  unsigned n = 0;
  FCL_CU_TRY(cu()->ModuleGetFunctionCount(&n, cp->module), "cuModuleGetFunctionCount");
  free(cp->functions);
  cp->functions = calloc(n ? n : 1, sizeof *cp->functions);
  p->kernels = calloc(n ? n : 1, sizeof *p->kernels);
  if (!cp->functions || !p->kernels) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "kernel list");
  FCL_CU_TRY(cu()->ModuleEnumerateFunctions(cp->functions, n, cp->module),
             "cuModuleEnumerateFunctions");
  cp->num_functions = n;
  for (unsigned i = 0; i < n; ++i) {
    const char *symbol = NULL;
    FCL_CU_TRY(cu()->FuncGetName(&symbol, cp->functions[i]), "cuFuncGetName");
    fcl__kernel_meta *m = &p->kernels[p->num_kernels++];
    fcl_status st = fcl__cuda_signature(symbol, &m->name, &m->num_args, &m->args);
    if (st == FCL_ERR_OUT_OF_MEMORY) return FCL_ERROR(st, "kernel signature");
    if (st == FCL_OK && p->source)
      fcl__cuda_arg_names(fcl_program_source(p), m->name, m->args, m->num_args);
    /* A signature read names the parameters; its last must exist. Only else are they counted,
     * by probing past the last (an error return a sanitizer's API check reports). */
    unsigned count = m->num_args;
    if (st == FCL_OK && count > 0) {
      size_t offset, size;
      if (cu()->FuncGetParamInfo(cp->functions[i], count - 1, &offset, &size) != CUDA_SUCCESS)
        st = FCL_ERR_INTERNAL;
    }
    if (st != FCL_OK) FCL_TRY(param_count(cp->functions[i], &count));
    if (st != FCL_OK) { /* C linkage, or a signature not read: sizes */
      if (!m->name) m->name = strdup(symbol);
      for (unsigned a = 0; a < m->num_args; ++a) {
        free(m->args[a].name);
        free(m->args[a].type_name);
      }
      free(m->args);
      m->num_args = count;
      m->args = calloc(count ? count : 1, sizeof *m->args);
      if (!m->name || !m->args) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "kernel signature");
      for (unsigned a = 0; a < count; ++a) {
        m->args[a] = (fcl__arg_meta){strdup(""), strdup(""), FCL_ARG_UNKNOWN, 0};
        if (!m->args[a].name || !m->args[a].type_name)
          return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "kernel signature");
      }
    }
  }
  return FCL_OK;
}

CUfunction fcl__cuda_program_function(const fcl_program *p, const char *name) {
  const fcl__cuda_program *cp = p->native;
  for (size_t i = 0; i < p->num_kernels && i < cp->num_functions; ++i)
    if (strcmp(p->kernels[i].name, name) == 0) return cp->functions[i];
  return NULL;
}
