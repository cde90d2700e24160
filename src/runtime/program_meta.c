/* Kernel argument metadata of a built program: names, type names, kinds and sizes, read from
 * clGetKernelArgInfo or, for binaries that lost it, from the program cache entry. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "runtime_impl.h"

size_t fcl__cl_type_size(const char *t) {
  static const struct {
    const char *name;
    size_t size;
  } base[] = {{"uchar", 1}, {"char", 1},  {"ushort", 2}, {"short", 2}, {"half", 2},  {"uint", 4},
              {"int", 4},   {"float", 4}, {"ulong", 8},  {"long", 8},  {"double", 8}};
  if (!t) return 0;
  if (strncmp(t, "unsigned ", 9) == 0) t += 9;
  for (size_t i = 0; i < sizeof base / sizeof *base; ++i) {
    size_t n = strlen(base[i].name);
    if (strncmp(t, base[i].name, n) != 0) continue;
    const char *rest = t + n;
    if (!*rest) return base[i].size;
    int width = atoi(rest);
    if (width == 3) width = 4; /* 3-vectors are stored as 4-vectors */
    if (width == 2 || width == 4 || width == 8 || width == 16) return base[i].size * (size_t)width;
    return 0;
  }
  return 0;
}

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

/* Find "K name nargs" in serialized metadata and fill meta->args from its "A" lines. */
static bool parse_cached(const char *text, fcl__kernel_meta *meta) {
  size_t nlen = strlen(meta->name);
  for (const char *line = text; line && *line;
       line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
    if (strncmp(line, "K ", 2) != 0 || strncmp(line + 2, meta->name, nlen) != 0 ||
        line[2 + nlen] != ' ')
      continue;
    const char *a = strchr(line, '\n');
    for (cl_uint i = 0; i < meta->num_args; ++i) {
      if (!a || strncmp(a + 1, "A ", 2) != 0) return false;
      int kind = 0, used = 0;
      size_t size = 0;
      char name[256];
      if (sscanf(a + 3, "%d %zu %255s %n", &kind, &size, name, &used) != 3) return false;
      const char *type = a + 3 + used, *end = strchr(type, '\n');
      size_t tlen = end ? (size_t)(end - type) : strlen(type);
      meta->args[i].kind = (fcl_arg_kind)kind;
      meta->args[i].size = size;
      meta->args[i].name = strdup(strcmp(name, "-") == 0 ? "" : name);
      meta->args[i].type_name = strndup(type, tlen);
      a = end;
    }
    return true;
  }
  return false;
}

void fcl__program_meta_free(fcl_program *p) {
  for (size_t k = 0; k < p->num_kernels; ++k) {
    fcl__kernel_meta *m = &p->kernels[k];
    for (cl_uint i = 0; m->args && i < m->num_args; ++i) {
      free(m->args[i].name);
      free(m->args[i].type_name);
    }
    free(m->args);
    free(m->name);
  }
  free(p->kernels);
  p->kernels = NULL;
  p->num_kernels = 0;
}

fcl_status fcl__program_load_meta(fcl_program *p, const char *cached_meta) {
  fcl__program_meta_free(p);
  size_t n = 0;
  FCL_CL_TRY(clGetProgramInfo(p->cl, CL_PROGRAM_KERNEL_NAMES, 0, NULL, &n),
             "clGetProgramInfo(CL_PROGRAM_KERNEL_NAMES) of %s", p->origin);
  char *names = calloc(n + 1, 1);
  if (!names) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "kernel names");
  cl_int err = clGetProgramInfo(p->cl, CL_PROGRAM_KERNEL_NAMES, n, names, NULL);
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
    cl_kernel k = clCreateKernel(p->cl, tok, &err);
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
        if (!(cached_meta && parse_cached(cached_meta, m)))
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
  if (err != CL_SUCCESS) {
    fcl__program_meta_free(p);
    return FCL_CL_ERROR(err, "reading the kernel argument metadata of %s", p->origin);
  }
  return FCL_OK;
}

char *fcl__program_meta_serialize(const fcl_program *p) {
  size_t cap = 256, used = 0;
  char *s = malloc(cap);
  if (!s) return NULL;
  s[0] = '\0';
  for (size_t k = 0; k < p->num_kernels; ++k) {
    const fcl__kernel_meta *m = &p->kernels[k];
    for (cl_uint i = 0; i <= m->num_args; ++i) {
      char line[1024];
      int w = i == 0 ? snprintf(line, sizeof line, "K %s %u\n", m->name, m->num_args)
                     : snprintf(line, sizeof line, "A %d %zu %s %s\n", (int)m->args[i - 1].kind,
                                m->args[i - 1].size,
                                m->args[i - 1].name[0] ? m->args[i - 1].name : "-",
                                m->args[i - 1].type_name);
      if (w < 0) continue;
      while (used + (size_t)w + 1 > cap) {
        char *grown = realloc(s, cap *= 2);
        if (!grown) {
          free(s);
          return NULL;
        }
        s = grown;
      }
      memcpy(s + used, line, (size_t)w + 1);
      used += (size_t)w;
    }
  }
  return s;
}
