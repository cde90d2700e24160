/* Kernel argument metadata of a built program: names, type names, kinds and sizes, read by the
 * backend from its driver or, for binaries that lost it, from the program cache entry; its
 * serialized form for the cache. */
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

bool fcl__program_meta_parse(const char *text, fcl__kernel_meta *meta) {
  size_t nlen = strlen(meta->name);
  for (const char *line = text; line && *line;
       line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
    if (strncmp(line, "K ", 2) != 0 || strncmp(line + 2, meta->name, nlen) != 0 ||
        line[2 + nlen] != ' ')
      continue;
    const char *a = strchr(line, '\n');
    for (unsigned i = 0; i < meta->num_args; ++i) {
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
    for (unsigned i = 0; m->args && i < m->num_args; ++i) {
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
  fcl_status st = p->context->backend->program_load_meta(p, cached_meta);
  if (st != FCL_OK) fcl__program_meta_free(p);
  return st;
}

char *fcl__program_meta_serialize(const fcl_program *p) {
  size_t cap = 256, used = 0;
  char *s = malloc(cap);
  if (!s) return NULL;
  s[0] = '\0';
  for (size_t k = 0; k < p->num_kernels; ++k) {
    const fcl__kernel_meta *m = &p->kernels[k];
    for (unsigned i = 0; i <= m->num_args; ++i) {
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
