/* Compiles kernel programs with NVRTC through the CUDA prelude, as the CUDA backend does, so that
 * a kernel text that CUDA C++ reads otherwise than OpenCL C fails here, on a machine without a
 * GPU. Usage:
 *   nvrtc_kernels ARCH KERNELS_DIR LIST [DIR...]
 * ARCH a compute capability (90: PTX for compute_90, the compiler's front end and optimizer;
 * resource limits are the device's and checked when the backend builds for it); LIST lines
 * "file | options" naming files of KERNELS_DIR; every NAME.cl of each DIR with the options on
 * the first line of NAME.options where there is one (FLOWCL_SAVE_PROGRAMS writes both). Prints
 * each failure with NVRTC's log, and any warning; exits 1 on a failure or on no program. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda_backend.h"
#include "files.h"
#include "flowcl/flowcl.h"

static int compiled = 0, failed = 0, warned = 0;
static int cc_major, cc_minor;

static void compile(const char *path, const char *options) {
  size_t size;
  char *source = fcl__file_read(path, &size);
  if (!source) {
    printf("FAIL %s: cannot read it\n", path);
    failed++;
    return;
  }
  size_t np = strlen(fcl__prelude_cuda);
  char *text = malloc(np + size + 1);
  if (!text) abort();
  memcpy(text, fcl__prelude_cuda, np);
  memcpy(text + np, source, size + 1);
  fcl__nvrtc_output out;
  fcl_status st = fcl__nvrtc_compile(text, np, path, options, cc_major, cc_minor, true, &out);
  compiled++;
  if (st != FCL_OK) {
    printf("FAIL %s (options '%s'): %s\n%s\n", path, options, fcl_last_error(),
           out.log ? out.log : "");
    failed++;
  } else if (out.log && out.log[0]) {
    printf("WARNING %s (options '%s'):\n%s\n", path, options, out.log);
    warned++;
  }
  fcl__nvrtc_output_free(&out);
  free(text);
  free(source);
}

static void trim(char *s) {
  char *b = s;
  while (*b == ' ' || *b == '\t') b++;
  memmove(s, b, strlen(b) + 1);
  size_t n = strlen(s);
  while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
    s[--n] = '\0';
}

static void from_list(const char *kernels, const char *list) {
  FILE *f = fopen(list, "r");
  if (!f) {
    printf("FAIL cannot read %s\n", list);
    failed++;
    return;
  }
  char line[1024], path[4096];
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '#' || line[0] == '\n') continue;
    char *bar = strchr(line, '|');
    char *options = bar ? bar + 1 : line + strlen(line);
    if (bar) *bar = '\0';
    trim(line);
    trim(options);
    snprintf(path, sizeof path, "%s/%s", kernels, line);
    compile(path, options);
  }
  fclose(f);
}

static int by_name(const struct dirent **a, const struct dirent **b) {
  return strcmp((*a)->d_name, (*b)->d_name);
}

static void from_dir(const char *dir) {
  struct dirent **names;
  int n = scandir(dir, &names, NULL, by_name);
  if (n < 0) {
    printf("FAIL cannot list %s\n", dir);
    failed++;
    return;
  }
  char path[4096], opt_path[4096];
  for (int i = 0; i < n; ++i) {
    const char *name = names[i]->d_name;
    size_t len = strlen(name);
    if (len > 3 && !strcmp(name + len - 3, ".cl")) {
      snprintf(path, sizeof path, "%s/%s", dir, name);
      snprintf(opt_path, sizeof opt_path, "%s/%.*s.options", dir, (int)(len - 3), name);
      size_t opt_size;
      char *options = fcl__file_read(opt_path, &opt_size);
      if (options) options[strcspn(options, "\n")] = '\0';
      compile(path, options ? options : "");
      free(options);
    }
    free(names[i]);
  }
  free(names);
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: nvrtc_kernels ARCH KERNELS_DIR LIST [DIR...]\n");
    return 2;
  }
  int arch = atoi(argv[1]);
  cc_major = arch / 10;
  cc_minor = arch % 10;
  int major, minor;
  if (fcl__nvrtc_version(&major, &minor) != FCL_OK) {
    printf("FAIL %s\n", fcl_last_error());
    return 1;
  }
  from_list(argv[2], argv[3]);
  for (int i = 4; i < argc; ++i) from_dir(argv[i]);
  printf("NVRTC %d.%d, compute_%d: %d programs compiled, %d failed, %d with warnings\n", major,
         minor, arch, compiled, failed, warned);
  return failed || compiled == 0 ? 1 : 0;
}
