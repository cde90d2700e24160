/* The CUDA backend reads a kernel's parameters from its C++ symbol (src/runtime/cuda/
 * signature.c): kernels with every kind of parameter are compiled here by NVRTC through the CUDA
 * prelude (no GPU needed), their symbols taken from the PTX, and what is read compared with the
 * declarations written below; then the names from the definitions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda_backend.h"
#include "fcl_test.h"

static const char *source =
    "FCL_KERNEL void scalars(FCL_GLOBAL float *a, FCL_GLOBAL const float *b, const int n,\n"
    "                        const uint u, const long l, const ulong ul, const float f,\n"
    "                        const double d) {}\n"
    "FCL_KERNEL void vectors(FCL_GLOBAL float2 *restrict p, FCL_GLOBAL float2 *q,\n"
    "                        FCL_GLOBAL const float2 *c, const float2 v,\n"
    "                        FCL_LOCAL_PARAM(int, s), FCL_LOCAL_PARAM(float, t)) {}\n"
    "FCL_KERNEL FCL_GROUP_SIZE(64, 1, 1)\n"
    "void wide(FCL_GLOBAL double4 *a, const double4 w, FCL_GLOBAL double2 *b,\n"
    "          FCL_GLOBAL double4 *again, const int4 i4) {}\n"
    "#define PAIR const int x0, const int x1\n"
    "FCL_KERNEL void hidden(FCL_GLOBAL int *out, PAIR) {}\n"
    "FCL_KERNEL void none() {}\n";

typedef struct {
  const char *kernel;
  unsigned n;
  struct {
    const char *name, *type;
    fcl_arg_kind kind;
    size_t size;
  } args[8];
} expected;

#define G FCL_ARG_GLOBAL
#define S FCL_ARG_SCALAR
#define L FCL_ARG_LOCAL
static const expected want[] = {
    {"scalars",
     8,
     {{"a", "float*", G, 0},
      {"b", "float*", G, 0},
      {"n", "int", S, 4},
      {"u", "uint", S, 4},
      {"l", "long", S, 8},
      {"ul", "ulong", S, 8},
      {"f", "float", S, 4},
      {"d", "double", S, 8}}},
    {"vectors",
     6,
     {{"p", "float2*", G, 0},
      {"q", "float2*", G, 0},
      {"c", "float2*", G, 0},
      {"v", "float2", S, 8},
      {"s", "int*", L, 0},
      {"t", "float*", L, 0}}},
    {"wide",
     5,
     {{"a", "double4*", G, 0},
      {"w", "double4", S, 32},
      {"b", "double2*", G, 0},
      {"again", "double4*", G, 0},
      {"i4", "int4", S, 16}}},
    /* parameters behind a macro: kinds and types, no names */
    {"hidden", 3, {{"", "int*", G, 0}, {"", "int", S, 4}, {"", "int", S, 4}}},
    {"none", 0, {{NULL, NULL, 0, 0}}},
};

static void check_kernel(const char *symbol, const char *program) {
  char *name = NULL;
  unsigned n = 0;
  fcl__arg_meta *args = NULL;
  CHECK_OK(fcl__cuda_signature(symbol, &name, &n, &args));
  if (!name) return;
  fcl__cuda_arg_names(program, name, args, n);
  const expected *w = NULL;
  for (size_t i = 0; i < sizeof want / sizeof *want; ++i)
    if (!strcmp(want[i].kernel, name)) w = &want[i];
  CHECKF(w != NULL, "symbol %s read as an unknown kernel '%s'", symbol, name);
  if (w) {
    CHECKF(n == w->n, "%s: %u parameters read, %u declared", name, n, w->n);
    for (unsigned i = 0; i < n && i < w->n; ++i) {
      CHECKF(!strcmp(args[i].name, w->args[i].name) &&
                 !strcmp(args[i].type_name, w->args[i].type) && args[i].kind == w->args[i].kind &&
                 args[i].size == w->args[i].size,
             "%s parameter %u: read '%s' %s kind %d size %zu, declared '%s' %s kind %d size %zu",
             name, i, args[i].name, args[i].type_name, (int)args[i].kind, args[i].size,
             w->args[i].name, w->args[i].type, (int)w->args[i].kind, w->args[i].size);
    }
  }
  for (unsigned i = 0; i < n; ++i) {
    free(args[i].name);
    free(args[i].type_name);
  }
  free(args);
  free(name);
}

int main(void) {
  size_t np = strlen(fcl__prelude_cuda);
  char *text = malloc(np + strlen(source) + 1);
  CHECK(text != NULL);
  if (!text) return fcl_test_exit_code();
  memcpy(text, fcl__prelude_cuda, np);
  strcpy(text + np, source);
  fcl__nvrtc_output out;
  CHECK_OK(fcl__nvrtc_compile(text, np, "signatures", "", 9, 0, true, &out));
  int found = 0;
  for (const char *p = out.image; p && (p = strstr(p, ".entry ")) != NULL; ++p) {
    char symbol[512];
    if (sscanf(p + 7, "%511[A-Za-z0-9_]", symbol) == 1) {
      check_kernel(symbol, source);
      found++;
    }
  }
  CHECKF(found == (int)(sizeof want / sizeof *want), "%d kernels in the PTX", found);
  /* a symbol of C linkage: the name alone; one not read: NOT_SUPPORTED */
  char *name = NULL;
  unsigned n = 9;
  fcl__arg_meta *args = NULL;
  CHECK_OK(fcl__cuda_signature("plain_c", &name, &n, &args));
  CHECK(name && !strcmp(name, "plain_c") && n == 0);
  free(name);
  free(args);
  CHECK(fcl__cuda_signature("_Z3fooN3bar3bazE", &name, &n, &args) == FCL_ERR_NOT_SUPPORTED);
  fcl__nvrtc_output_free(&out);
  free(text);
  return fcl_test_exit_code();
}
