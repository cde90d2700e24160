/* Run a generated kernel on a device and compare what it writes with a plain C loop.
 *
 * Every array argument gets random values in [0.5, 1.5) (fixed seed), outputs included so that
 * elements a kernel must not touch are compared too; scalars get 0.75. The reference function
 * receives the same data as doubles and updates the written arrays in place. Written arrays
 * are compared elementwise with a relative tolerance (1e-12 double, 1e-5 float) and an absolute
 * floor of the tolerance times the array's largest magnitude (stencils cancel). On a mismatch
 * the generated source is printed. */
#ifndef FLOWCL_TEST_KB_CHECK_H
#define FLOWCL_TEST_KB_CHECK_H

#include "fcl_test.h"

#define KB_MAX_ARGS 8

typedef struct {
  size_t nargs;
  double *data[KB_MAX_ARGS]; /* arrays (NULL for scalars) */
  size_t count[KB_MAX_ARGS];
  double scalar[KB_MAX_ARGS];
} kb_data;

typedef void (*kb_reference)(kb_data *d, const int64_t *params);

typedef struct {
  fcl_context *ctx;
  fcl_queue *queue;
  const char *device;
} kb_env;

void kb_env_open(kb_env *env, const fcl_device_entry *device);
void kb_env_close(kb_env *env);

/* main of a kernel test: fn on every test device, with float and then double (a skipped part
 * where the device has no cl_khr_fp64); the process exit code. */
typedef void (*kb_typed_fn)(kb_env *env, fcl_dtype type);
int kb_run_typed(kb_typed_fn fn);

/* Build kb (variant names it in messages), run it once through its launcher and compare. */
void kb_check(kb_env *env, const fcl_kbuilder *kb, const int64_t *params, kb_reference ref,
              const char *variant);

#endif
