/* The OpenCL backend's kernel metadata: names, argument names, type names and address spaces
 * from clGetKernelArgInfo (the cache's copy where a binary lost them). */
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "../runtime_impl.h"
#include "opencl_backend.h"

static fcl_arg_kind kind_of(cl_kernel_arg_address_qualifier q, const char *type) {
  /* images are memory objects in the global address space: the type decides first */
  if (strncmp(type, "image", 5) == 0) return FCL_ARG_IMAGE;
  switch (q) {
    case CL_KERNEL_ARG_ADDRESS_GLOBAL: return FCL_ARG_GLOBAL;
    case CL_KERNEL_ARG_ADDRESS_CONSTANT: return FCL_ARG_CONSTANT;
    case CL_KERNEL_ARG_ADDRESS_LOCAL: return FCL_ARG_LOCAL;
    default: break;
  }
  if (strcmp(type, "sampler_t") == 0) return FCL_ARG_SAMPLER;
  if (strcmp(type, "queue_t") == 0) return FCL_ARG_QUEUE;
  return FCL_ARG_SCALAR;
}

static char *arg_string(cl_kernel k, cl_uint i, cl_kernel_arg_info what, cl_int *err) {
  size_t n = 0;
  *err = clGetKernelArgInfo(k, i, what, 0, NULL, &n);
  if (*err != CL_SUCCESS) return NULL;
  char *s = calloc(n + 1, 1);
  if (!s) {
    *err = CL_OUT_OF_HOST_MEMORY;
    return NULL;
  }
  *err = clGetKernelArgInfo(k, i, what, n, s, NULL);
  return s;
}

/* Fill meta->args from the driver; CL_KERNEL_ARG_INFO_NOT_AVAILABLE leaves them unknown. */
static cl_int query_args(cl_kernel k, fcl__kernel_meta *meta) {
  for (cl_uint i = 0; i < meta->num_args; ++i) {
    fcl__arg_meta *a = &meta->args[i];
    cl_kernel_arg_address_qualifier q = 0;
    cl_int err = clGetKernelArgInfo(k, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof q, &q, NULL);
    if (err != CL_SUCCESS) return err;
    a->type_name = arg_string(k, i, CL_KERNEL_ARG_TYPE_NAME, &err);
    if (err != CL_SUCCESS) return err;
    a->name = arg_string(k, i, CL_KERNEL_ARG_NAME, &err);
    if (err != CL_SUCCESS) return err;
    a->kind = kind_of(q, a->type_name);
    a->size = a->kind == FCL_ARG_SCALAR ? fcl__cl_type_size(a->type_name) : 0;
  }
  return CL_SUCCESS;
}

fcl_status fcl__opencl_program_load_meta(fcl_program *p, const char *cached_meta) {
  size_t n = 0;
  FCL_CL_TRY(clGetProgramInfo(p->native, CL_PROGRAM_KERNEL_NAMES, 0, NULL, &n),
             "clGetProgramInfo(CL_PROGRAM_KERNEL_NAMES) of %s", p->origin);
  char *names = calloc(n + 1, 1);
  if (!names) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "kernel names");
  cl_int err = clGetProgramInfo(p->native, CL_PROGRAM_KERNEL_NAMES, n, names, NULL);
  size_t count = 0;
  for (char *s = names; *s; ++s) count += *s == ';';
  if (names[0]) ++count;
  p->kernels = calloc(count ? count : 1, sizeof *p->kernels);
  if (!p->kernels) err = CL_OUT_OF_HOST_MEMORY;
  char *save = NULL;
  for (char *tok = strtok_r(names, ";", &save); err == CL_SUCCESS && tok;
       tok = strtok_r(NULL, ";", &save)) {
    fcl__kernel_meta *m = &p->kernels[p->num_kernels++];
    m->name = strdup(tok);
    cl_kernel k = clCreateKernel(p->native, tok, &err);
    if (err != CL_SUCCESS) break;
    err = clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof m->num_args, &m->num_args, NULL);
    m->args = calloc(m->num_args ? m->num_args : 1, sizeof *m->args);
    if (err == CL_SUCCESS && !m->args) err = CL_OUT_OF_HOST_MEMORY;
    if (err == CL_SUCCESS) {
      cl_int qerr = query_args(k, m);
      if (qerr == CL_KERNEL_ARG_INFO_NOT_AVAILABLE || qerr == CL_INVALID_VALUE) {
        for (cl_uint i = 0; i < m->num_args; ++i) {
          free(m->args[i].name);
          free(m->args[i].type_name);
          m->args[i] = (fcl__arg_meta){NULL, NULL, FCL_ARG_UNKNOWN, 0};
        }
        if (!(cached_meta && fcl__program_meta_parse(cached_meta, m)))
          for (cl_uint i = 0; i < m->num_args; ++i) {
            m->args[i].name = strdup("");
            m->args[i].type_name = strdup("");
          }
      } else {
        err = qerr;
      }
    }
    clReleaseKernel(k);
  }
  free(names);
  if (err != CL_SUCCESS)
    return FCL_CL_ERROR(err, "reading the kernel argument metadata of %s", p->origin);
  return FCL_OK;
}
