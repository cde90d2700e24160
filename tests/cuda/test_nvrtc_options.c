/* OpenCL's build options as the CUDA backend hands them to NVRTC (src/runtime/cuda/nvrtc.c), no
 * GPU needed: a header found through "-I dir" (the folder a word of its own, as OpenCL compilers
 * take it) and through "-Idir", macros from "-D X=v" and "-DX", the refusals (an option NVRTC has
 * no meaning for, -I without a folder, a folder longer than the option buffer), each named. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda_backend.h"
#include "fcl_test.h"

static const char *text =
    "#include \"nvrtc_options_test.h\"\n"
    "FCL_KERNEL void k(FCL_GLOBAL int *out) { out[0] = FROM_HEADER + A + B; }\n";

/* Compiles text with options: its status (the error text in fcl_last_error). */
static fcl_status compile(const char *options) {
  size_t np = strlen(fcl__prelude_cuda);
  char *source = malloc(np + strlen(text) + 1);
  if (!source) return FCL_ERR_OUT_OF_MEMORY;
  strcpy(source, fcl__prelude_cuda);
  strcat(source, text);
  fcl__nvrtc_output out;
  fcl_status st = fcl__nvrtc_compile(source, np, "options test", options, 9, 0, true, &out);
  fcl__nvrtc_output_free(&out);
  free(source);
  return st;
}

int main(void) {
  char *dir = fcl_test_temp_dir("nvrtc-options");
  if (!dir) return 1;
  char path[4096], options[8192];
  snprintf(path, sizeof path, "%s/nvrtc_options_test.h", dir);
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  if (f) {
    fputs("#define FROM_HEADER 40\n", f);
    fclose(f);
  }
  snprintf(options, sizeof options, "-I %s -D A=1 -DB=1", dir);
  CHECK_OK(compile(options));
  snprintf(options, sizeof options, "-I%s -DA=1 -D B=1", dir);
  CHECK_OK(compile(options));
  snprintf(options, sizeof options, "-DA=1 -DB=1"); /* no folder: the header is not found */
  CHECK_STATUS(compile(options), FCL_ERR_BUILD_FAILED, "");
  snprintf(options, sizeof options, "-DA=1 -DB=1 -I %s -cl-no-such-option", dir);
  CHECK_STATUS(compile(options), FCL_ERR_INVALID_ARGUMENT, "'-cl-no-such-option' has no meaning");
  CHECK_STATUS(compile("-DA=1 -DB=1 -I"), FCL_ERR_INVALID_ARGUMENT, "-I without a folder");
  char longer[400];
  memset(longer, 'x', sizeof longer - 1);
  longer[0] = '/';
  longer[sizeof longer - 1] = '\0';
  snprintf(options, sizeof options, "-I %s", longer);
  CHECK_STATUS(compile(options), FCL_ERR_INVALID_ARGUMENT, "longer than");
  snprintf(options, sizeof options, "-I%s", longer);
  CHECK_STATUS(compile(options), FCL_ERR_INVALID_ARGUMENT, "longer than");
  fcl_test_remove_dir(dir);
  free(dir);
  return fcl_test_exit_code();
}
