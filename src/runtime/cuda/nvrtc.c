/* Programs through NVRTC: OpenCL-style build options turned into NVRTC's, the options' macros
 * written into the text after the prelude, one compilation to a cubin (or PTX) for one
 * architecture. */
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "cuda_backend.h"

#define MAX_OPTIONS 64

/* A growing text. */
typedef struct {
  char *s;
  size_t n, cap;
  bool failed;
} text;

static void put(text *t, const char *s, size_t n) {
  if (t->failed) return;
  if (t->n + n + 1 > t->cap) {
    size_t cap = (t->n + n + 1) * 2;
    char *s2 = realloc(t->s, cap);
    if (!s2) {
      t->failed = true;
      return;
    }
    t->s = s2;
    t->cap = cap;
  }
  memcpy(t->s + t->n, s, n);
  t->n += n;
  t->s[t->n] = '\0';
}
static void puts_text(text *t, const char *s) { put(t, s, strlen(s)); }

/* -DNAME=VALUE (or -DNAME, or -D followed by NAME=VALUE) as a #define line. NVRTC's own -D
 * would define the macro before its built-in headers, where a -DT=float breaks their
 * templates; after the prelude it reaches only the program. */
static void define(text *t, const char *def) {
  const char *eq = strchr(def, '=');
  puts_text(t, "#define ");
  if (eq) {
    put(t, def, (size_t)(eq - def));
    puts_text(t, " ");
    puts_text(t, eq + 1);
  } else {
    puts_text(t, def);
    puts_text(t, " 1");
  }
  puts_text(t, "\n");
}

/* What an option of OpenCL's compilers means to NVRTC: into nv (NULL: nothing to pass). */
static fcl_status translate(const char *opt, char *nv, size_t size, bool *pass) {
  *pass = true;
  if (!strncmp(opt, "-cl-nv-maxrregcount=", 20))
    snprintf(nv, size, "--maxrregcount=%s", opt + 20);
  else if (!strcmp(opt, "-cl-nv-verbose"))
    snprintf(nv, size, "--ptxas-options=--verbose");
  else if (!strcmp(opt, "-cl-fast-relaxed-math"))
    snprintf(nv, size, "--use_fast_math");
  else if (!strcmp(opt, "-cl-denorms-are-zero"))
    snprintf(nv, size, "--ftz=true");
  else if (!strcmp(opt, "-cl-opt-disable"))
    snprintf(nv, size, "--dopt=off");
  else if (!strcmp(opt, "-w"))
    snprintf(nv, size, "-w");
  /* hints NVRTC takes by default or has no switch for */
  else if (!strcmp(opt, "-cl-mad-enable") || !strcmp(opt, "-cl-no-signed-zeros") ||
           !strcmp(opt, "-cl-unsafe-math-optimizations") || !strcmp(opt, "-cl-finite-math-only") ||
           !strcmp(opt, "-cl-kernel-arg-info") || !strncmp(opt, "-cl-std=", 8) ||
           !strcmp(opt, "-cl-single-precision-constant") || !strcmp(opt, "-Werror"))
    *pass = false;
  else if (!strncmp(opt, "--", 2) || !strncmp(opt, "-I", 2)) {
    if (snprintf(nv, size, "%s", opt) >= (int)size) /* NVRTC's own, and include folders */
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "build option '%s': longer than %zu characters",
                       opt, size - 1);
  } else
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "build option '%s' has no meaning for NVRTC (the CUDA backend takes -D, -I, "
                     "-w, -cl-fast-relaxed-math, -cl-denorms-are-zero, -cl-opt-disable, "
                     "-cl-nv-maxrregcount=N, -cl-nv-verbose, OpenCL's math hints, and NVRTC's own "
                     "--options)",
                     opt);
  return FCL_OK;
}

fcl_status fcl__nvrtc_version(int *major, int *minor) {
  nvrtcResult r = nvrtcVersion(major, minor);
  return r == NVRTC_SUCCESS ? FCL_OK
                            : FCL_ERROR(FCL_ERR_CUDA, "nvrtcVersion: %s", nvrtcGetErrorString(r));
}

/* Splits options at blanks into words (in buf, malloc'd). */
static int words(const char *options, char **buf, char **word, int max) {
  *buf = strdup(options ? options : "");
  int n = 0;
  if (!*buf) return -1;
  for (char *save = NULL, *w = strtok_r(*buf, " \t\n", &save); w;
       w = strtok_r(NULL, " \t\n", &save)) {
    if (n == max) return -2;
    word[n++] = w;
  }
  return n;
}

fcl_status fcl__nvrtc_compile(const char *source, size_t prelude_length, const char *name,
                              const char *options, int cc_major, int cc_minor, bool ptx,
                              fcl__nvrtc_output *out) {
  memset(out, 0, sizeof *out);
  char *buf, *word[MAX_OPTIONS];
  int n = words(options, &buf, word, MAX_OPTIONS);
  if (n < 0) {
    free(buf);
    return n == -1 ? FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "build options")
                   : FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "more than %d build options", MAX_OPTIONS);
  }
  text t = {0};
  put(&t, source, prelude_length);
  char nv[MAX_OPTIONS + 4][160];
  const char *argv[MAX_OPTIONS + 4];
  int argc = 0;
  snprintf(nv[argc], sizeof nv[argc], "--gpu-architecture=%s_%d%d", ptx ? "compute" : "sm",
           cc_major, cc_minor);
  argv[argc] = nv[argc];
  argc++;
  /* plain helpers are device functions; OpenCL's pragmas, unused helpers and variables (the
   * generated code sets coordinates it may not read) are not news */
  argv[argc++] = "-default-device";
  argv[argc++] = "-std=c++17";
  argv[argc++] = "-diag-suppress=161,177,550";
  fcl_status st = FCL_OK;
  for (int i = 0; i < n && st == FCL_OK; ++i) {
    if (!strcmp(word[i], "-I")) { /* OpenCL's "-I dir" is NVRTC's "-Idir" */
      if (i + 1 == n)
        st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "build option -I without a folder");
      else if (snprintf(nv[argc], sizeof nv[argc], "-I%s", word[++i]) >= (int)sizeof nv[argc])
        st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "build option -I %s: longer than %zu characters",
                       word[i], sizeof nv[argc] - 3);
      else {
        argv[argc] = nv[argc];
        argc++;
      }
      continue;
    }
    if (!strncmp(word[i], "-D", 2)) {
      const char *def = word[i][2] ? word[i] + 2 : i + 1 < n ? word[++i] : NULL;
      if (!def)
        st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "build option -D without a macro");
      else
        define(&t, def);
      continue;
    }
    bool pass;
    st = translate(word[i], nv[argc], sizeof nv[argc], &pass);
    if (st == FCL_OK && pass) {
      argv[argc] = nv[argc];
      argc++;
    }
  }
  puts_text(&t, "#line 1\n");
  puts_text(&t, source + prelude_length);
  free(buf);
  if (st == FCL_OK && t.failed) st = FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "program text");
  if (st != FCL_OK) {
    free(t.s);
    return st;
  }
  nvrtcProgram prog;
  nvrtcResult r = nvrtcCreateProgram(&prog, t.s, name, 0, NULL, NULL);
  free(t.s);
  if (r != NVRTC_SUCCESS)
    return FCL_ERROR(FCL_ERR_CUDA, "nvrtcCreateProgram: %s", nvrtcGetErrorString(r));
  nvrtcResult built = nvrtcCompileProgram(prog, argc, argv);
  size_t size = 0;
  if (nvrtcGetProgramLogSize(prog, &size) == NVRTC_SUCCESS && size > 1) {
    out->log = malloc(size);
    if (out->log && nvrtcGetProgramLog(prog, out->log) != NVRTC_SUCCESS) out->log[0] = '\0';
  }
  if (built == NVRTC_SUCCESS) {
    r = ptx ? nvrtcGetPTXSize(prog, &size) : nvrtcGetCUBINSize(prog, &size);
    out->image = r == NVRTC_SUCCESS ? malloc(size) : NULL;
    if (out->image) r = ptx ? nvrtcGetPTX(prog, out->image) : nvrtcGetCUBIN(prog, out->image);
    out->size = size;
    if (r != NVRTC_SUCCESS || !out->image) {
      free(out->image);
      out->image = NULL;
      st = r != NVRTC_SUCCESS
               ? FCL_ERROR(FCL_ERR_CUDA, "NVRTC image of '%s': %s", name, nvrtcGetErrorString(r))
               : FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "NVRTC image of '%s'", name);
    }
  } else {
    st = FCL_ERROR(FCL_ERR_BUILD_FAILED, "NVRTC: '%s' did not compile for sm_%d%d (%s)", name,
                   cc_major, cc_minor, nvrtcGetErrorString(built));
  }
  nvrtcDestroyProgram(&prog);
  return st;
}

void fcl__nvrtc_output_free(fcl__nvrtc_output *out) {
  free(out->image);
  free(out->log);
  memset(out, 0, sizeof *out);
}
