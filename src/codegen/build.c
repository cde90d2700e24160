/* From a builder to something that runs: work sizes from parameter values, and a kernel
 * launcher whose parameters are the kernel's arguments. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array_impl.h"
#include "check.h"
#include "codegen_impl.h"

static fcl_status sizes(const fcl_kbuilder *kb, const fcl__axes *axes, const int64_t *values,
                        unsigned *work_dim, size_t global[3], size_t local[3]) {
  *work_dim = axes->dim;
  for (int d = 0; d < 3; ++d) {
    int64_t groups = 1;
    if (axes->groups[d] && !fcl__kb_eval(kb, axes->groups[d], values, &groups))
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "kernel '%s': the number of work-groups along "
                       "axis %d cannot be evaluated",
                       kb->name, d);
    if (groups < 0) groups = 0;
    global[d] = (size_t)groups * (size_t)axes->local[d];
    local[d] = (size_t)axes->local[d];
  }
  return FCL_OK;
}

fcl_status fcl_kbuilder_work_size(const fcl_kbuilder *kb, const int64_t *param_values,
                                  unsigned *work_dim, size_t global[3], size_t local[3]) {
  FCL_CHECK_NULL(kb, 1);
  FCL_CHECK_ARG(param_values || fcl_kbuilder_num_params(kb) == 0, 2, "param_values",
                "must not be NULL when the kernel has parameters");
  FCL_CHECK_NULL(work_dim, 3);
  FCL_CHECK_NULL(global, 4);
  FCL_CHECK_NULL(local, 5);
  fcl__axes axes;
  FCL_TRY(fcl__kb_prepared_axes(kb, &axes));
  fcl_status st = sizes(kb, &axes, param_values, work_dim, global, local);
  fcl__axes_free(&axes);
  return st;
}

/* An array argument: checked to hold its declared shape when its buffer or the sizes change. */
typedef struct {
  size_t slot, arg; /* launcher parameter position, kernel argument index */
  size_t itemsize;
  fcl_mem *checked; /* the buffer last found large enough (NULL: none yet) */
} array_arg;

/* What a built launcher keeps to size its calls. */
typedef struct {
  fcl_kbuilder *kb;
  fcl__axes axes;
  size_t nparams;
  size_t *slot;    /* launcher parameter position of each non-fixed parameter */
  int64_t *values; /* scratch */
  int64_t *prev;   /* the values of the last call (the buffers were checked for them) */
  size_t pooled;   /* fcl__array_pooled_changes at the last check */
  size_t narrays;
  array_arg *arrays;
} size_state;

static void size_state_free(void *user) {
  size_state *s = user;
  if (!s) return;
  fcl_kbuilder_destroy(&s->kb);
  fcl__axes_free(&s->axes);
  free(s->slot);
  free(s->values);
  free(s->prev);
  free(s->arrays);
  free(s);
}

/* Every array's buffer holds the array's shape for these sizes (a smaller one would be read
 * or written past its end): checked when a buffer or a size changes, or an array over a pool
 * block was created or released (a block's buffer may come back under a smaller array). */
static fcl_status check_buffers(size_state *s, const fcl_value *values) {
  const size_t pooled = fcl__array_pooled_changes();
  const bool recheck = memcmp(s->prev, s->values, s->nparams * sizeof *s->values) != 0 ||
                       pooled != s->pooled;
  for (size_t a = 0; a < s->narrays; ++a) {
    array_arg *x = &s->arrays[a];
    fcl_mem *b = values[x->slot].buffer;
    if (!b || (b == x->checked && !recheck)) continue;
    size_t ndim, shape[FCL_KB_MAX_DIMS], need = x->itemsize, buffer_bytes = 0, have = 0;
    FCL_TRY(fcl_kbuilder_arg_shape(s->kb, x->arg, s->values, &ndim, shape));
    for (size_t d = 0; d < ndim; ++d) need *= shape[d];
    buffer_bytes = fcl_mem_size(b);
    /* an array's pool block: the array's bytes, not the block's rounded-up size */
    const bool of_array = fcl__array_buffer_bytes(b, &have);
    if (!of_array) have = buffer_bytes;
    if (have < need) {
      const char *name = NULL;
      bool is_array;
      fcl_dtype t;
      bool written;
      fcl_kbuilder_arg(s->kb, x->arg, &name, &is_array, &t, &written);
      x->checked = NULL;
      char block[64] = "";
      if (of_array) snprintf(block, sizeof block, " (in a pool block of %zu)", buffer_bytes);
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "kernel '%s': the buffer of array '%s' %s %zu bytes%s, its shape needs %zu "
                       "for these sizes",
                       s->kb->name, name ? name : "?", of_array ? "holds an array of" : "has", have,
                       block, need);
    }
    x->checked = b;
  }
  memcpy(s->prev, s->values, s->nparams * sizeof *s->values);
  s->pooled = pooled;
  return FCL_OK;
}

static fcl_status size_fn(void *user, const fcl_value *values, unsigned *work_dim, size_t global[3],
                          size_t local[3]) {
  size_state *s = user;
  for (size_t i = 0; i < s->nparams; ++i) s->values[i] = values[s->slot[i]].i32;
  FCL_TRY(check_buffers(s, values));
  return sizes(s->kb, &s->axes, s->values, work_dim, global, local);
}

/* A scalar argument's launcher type: the same value for the 32- and 64-bit dtypes. */
static fcl_value_type value_type(fcl_dtype t, bool *ok) {
  *ok = t == FCL_INT32 || t == FCL_UINT32 || t == FCL_INT64 || t == FCL_UINT64 ||
        t == FCL_FLOAT32 || t == FCL_FLOAT64;
  return (fcl_value_type)t;
}

/* Generate, build, wrap as a kernel launcher, or an iterative one when generators are given. */
static fcl_status build_launcher(const fcl_kbuilder *kb, fcl_context *context, const char *options,
                                 fcl_queue *queue, size_t num_generators,
                                 const fcl_generator *generators, bool enqueue_barrier,
                                 fcl_launcher **out) {
  *out = NULL;
  for (size_t g = 0; g < num_generators; ++g) {
    const fcl__var *v = generators[g].param ? fcl__kb_var(kb, generators[g].param) : NULL;
    if (!v || v->kind != V_SCALAR)
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "kernel '%s': generator %zu iterates '%s', "
                       "which is not a scalar argument (a domain's parameter sets the work "
                       "size and cannot be iterated)",
                       kb->name, g, generators[g].param ? generators[g].param : "(null)");
  }
  /* parameters in kernel-argument order */
  fcl_param_spec specs[64];
  size_t n = 0;
  for (size_t i = 0; i < kb->nvars; ++i) {
    const fcl__var *v = &kb->vars[i];
    bool ok = true;
    fcl_value_type t;
    if (v->kind == V_PARAM && !v->fixed)
      t = FCL_TYPE_I32;
    else if (v->kind == V_ARRAY)
      t = FCL_TYPE_BUFFER;
    else if (v->kind == V_SCALAR)
      t = value_type(v->dtype, &ok);
    else
      continue;
    if (!ok)
      return FCL_ERROR(FCL_ERR_NOT_SUPPORTED,
                       "kernel '%s': scalar '%s' of type %s cannot be a "
                       "launcher parameter (use 32- or 64-bit types)",
                       kb->name, v->name, fcl_dtype_cl_name(v->dtype));
    if (n == 64)
      return FCL_ERROR(FCL_ERR_NOT_SUPPORTED, "kernel '%s': more than 64 arguments", kb->name);
    specs[n] = (fcl_param_spec){v->name, (unsigned)n, t};
    n++;
  }
  char *source = NULL;
  FCL_TRY(fcl_kbuilder_generate(kb, &source));
  char origin[256];
  snprintf(origin, sizeof origin, "generated: kernel '%s'", kb->name);
  fcl_program *program = NULL;
  fcl_status st = fcl_program_create_source(context, source, origin, &program);
  free(source);
  if (st == FCL_OK) st = fcl_program_build(program, options);
  fcl_launch_config config = {.queue = queue};
  if (st == FCL_OK && num_generators)
    st = fcl_launcher_create_iterative(program, kb->name, kb->name, 0, NULL, n, specs,
                                       num_generators, generators, enqueue_barrier, &config, out);
  else if (st == FCL_OK)
    st = fcl_launcher_create_kernel(program, kb->name, kb->name, 0, NULL, n, specs, &config, out);
  fcl_program_release(&program);
  size_state *s = st == FCL_OK ? calloc(1, sizeof *s) : NULL;
  if (st == FCL_OK && !s) st = FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "launcher sizes");
  if (st == FCL_OK) {
    s->nparams = fcl_kbuilder_num_params(kb);
    s->slot = calloc(s->nparams + 1, sizeof *s->slot);
    s->values = calloc(s->nparams + 1, sizeof *s->values);
    s->prev = calloc(s->nparams + 1, sizeof *s->prev);
    s->arrays = calloc(fcl_kbuilder_num_args(kb) + 1, sizeof *s->arrays);
    st = s->slot && s->values && s->prev && s->arrays
             ? fcl_kbuilder_copy(kb, &s->kb)
             : FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "launcher sizes");
    /* the launcher's own parameter order (an iterative one leaves out the generated ones) */
    const size_t np = fcl_launcher_num_params(*out);
    for (size_t p = 0; st == FCL_OK && p < s->nparams; ++p)
      for (size_t k = 0; k < np; ++k) {
        const char *name;
        fcl_value_type type;
        if (fcl_launcher_param(*out, k, &name, &type) == FCL_OK &&
            !strcmp(name, fcl_kbuilder_param_name(kb, p)))
          s->slot[p] = k;
      }
    /* the array arguments, by their launcher slot */
    for (size_t a = 0; st == FCL_OK && a < fcl_kbuilder_num_args(kb); ++a) {
      const char *name;
      bool is_array, written;
      fcl_dtype t;
      if (fcl_kbuilder_arg(kb, a, &name, &is_array, &t, &written) != FCL_OK || !is_array) continue;
      for (size_t k = 0; k < np; ++k) {
        const char *pname;
        fcl_value_type type;
        if (fcl_launcher_param(*out, k, &pname, &type) == FCL_OK && !strcmp(pname, name))
          s->arrays[s->narrays++] = (array_arg){k, a, fcl_dtype_size(t), NULL};
      }
    }
    if (st == FCL_OK) st = fcl__kb_prepared_axes(kb, &s->axes);
    if (st == FCL_OK) st = fcl_launcher_set_work_size_fn(*out, size_fn, s, size_state_free);
    if (st != FCL_OK) size_state_free(s);
  }
  if (st != FCL_OK) fcl_launcher_destroy(out);
  return st;
}

fcl_status fcl_kbuilder_build(const fcl_kbuilder *kb, fcl_context *context, const char *options,
                              fcl_queue *queue, fcl_launcher **out) {
  FCL_CHECK_NULL(kb, 1);
  FCL_CHECK_NULL(context, 2);
  FCL_CHECK_NULL(out, 5);
  return build_launcher(kb, context, options, queue, 0, NULL, false, out);
}

fcl_status fcl_kbuilder_build_iterative(const fcl_kbuilder *kb, fcl_context *context,
                                        const char *options, fcl_queue *queue,
                                        size_t num_generators, const fcl_generator *generators,
                                        bool enqueue_barrier, fcl_launcher **out) {
  FCL_CHECK_NULL(kb, 1);
  FCL_CHECK_NULL(context, 2);
  FCL_CHECK_ARG(num_generators > 0 && generators, 6, "generators",
                "an iterative launcher needs at least one generator");
  FCL_CHECK_NULL(out, 8);
  return build_launcher(kb, context, options, queue, num_generators, generators, enqueue_barrier,
                        out);
}
