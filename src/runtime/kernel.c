/* Kernels: lookup by name, typed arguments checked against the declared types, work-group
 * information, enqueue; the work done by the program's backend. The enqueue path adds only a
 * few comparisons and one call through the table to the device API's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "check.h"
#include "kernel_fast.h"
#include "runtime_impl.h"

static const char *kind_name(fcl_arg_kind kind) {
  static const char *names[] = {"unknown",       "by-value", "global pointer", "constant pointer",
                                "local pointer", "image",    "sampler",        "queue_t"};
  return names[kind];
}

static fcl_status kernel_new(fcl_program *p, const fcl__kernel_meta *meta, fcl_kernel **out) {
  fcl_kernel *k = calloc(1, sizeof *k);
  fcl__arg_value *values = calloc(meta->num_args ? meta->num_args : 1, sizeof *values);
  if (!k || !values) {
    free(k);
    free(values);
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "kernel object '%s'", meta->name);
  }
  k->backend = p->context->backend;
  k->meta = meta;
  k->values = values;
  fcl_status st = k->backend->kernel_create(p, meta->name, k);
  if (st != FCL_OK) {
    free(values);
    free(k);
    return st;
  }
  k->program = fcl_program_retain(p);
  *out = k;
  return FCL_OK;
}

fcl_status fcl_kernel_create(fcl_program *program, const char *name, fcl_kernel **out) {
  FCL_CHECK_NULL(program, 1);
  FCL_CHECK_NULL(name, 2);
  FCL_CHECK_NULL(out, 3);
  *out = NULL;
  if (!program->kernels)
    return FCL_ERROR(FCL_ERR_INVALID_STATE,
                     "program %s is not built: call fcl_program_build "
                     "before fcl_kernel_create('%s')",
                     program->origin, name);
  for (size_t i = 0; i < program->num_kernels; ++i)
    if (strcmp(program->kernels[i].name, name) == 0)
      return kernel_new(program, &program->kernels[i], out);
  char available[2048] = "";
  size_t used = 0;
  for (size_t i = 0; i < program->num_kernels && used < sizeof available; ++i) {
    int w = snprintf(available + used, sizeof available - used, "%s%s", i ? ", " : "",
                     program->kernels[i].name);
    if (w > 0) used += (size_t)w;
  }
  return FCL_ERROR(FCL_ERR_NOT_FOUND, "no kernel '%s' in %s; its kernels are: %s", name,
                   program->origin, used ? available : "(none)");
}

fcl_status fcl_program_all_kernels(fcl_program *program, fcl_kernel ***kernels, size_t *count) {
  FCL_CHECK_NULL(program, 1);
  FCL_CHECK_NULL(kernels, 2);
  FCL_CHECK_NULL(count, 3);
  *count = 0;
  *kernels = NULL;
  if (!program->kernels)
    return FCL_ERROR(FCL_ERR_INVALID_STATE, "program %s is not built", program->origin);
  fcl_kernel **list = calloc(program->num_kernels ? program->num_kernels : 1, sizeof *list);
  if (!list) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "kernel list");
  for (size_t i = 0; i < program->num_kernels; ++i) {
    fcl_status st = kernel_new(program, &program->kernels[i], &list[i]);
    if (st != FCL_OK) {
      fcl_kernel_list_destroy(&list, i);
      return st;
    }
  }
  *kernels = list;
  *count = program->num_kernels;
  return FCL_OK;
}

void fcl_kernel_list_destroy(fcl_kernel ***kernels, size_t count) {
  if (!kernels || !*kernels) return;
  for (size_t i = 0; i < count; ++i) fcl_kernel_destroy(&(*kernels)[i]);
  free(*kernels);
  *kernels = NULL;
}

void fcl_kernel_destroy(fcl_kernel **kernel) {
  if (!kernel || !*kernel) return;
  fcl_kernel *k = *kernel;
  *kernel = NULL;
  for (unsigned i = 0; i < k->meta->num_args; ++i) free(k->values[i].big);
  free(k->values);
  k->backend->kernel_destroy(k);
  fcl_program_release(&k->program);
  free(k);
}

const char *fcl_kernel_name(const fcl_kernel *kernel) { return kernel ? kernel->meta->name : ""; }
fcl_program *fcl_kernel_program(const fcl_kernel *kernel) {
  return kernel ? kernel->program : NULL;
}
unsigned fcl_kernel_num_args(const fcl_kernel *kernel) {
  return kernel ? kernel->meta->num_args : 0;
}

fcl_status fcl_kernel_get_arg_info(const fcl_kernel *kernel, unsigned index,
                                   fcl_kernel_arg_info *info) {
  FCL_CHECK_NULL(kernel, 1);
  FCL_CHECK_NULL(info, 3);
  if (index >= kernel->meta->num_args)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "argument 2 (index): kernel '%s' has %u arguments, "
                     "index %u is out of range",
                     kernel->meta->name, kernel->meta->num_args, index);
  const fcl__arg_meta *a = &kernel->meta->args[index];
  *info = (fcl_kernel_arg_info){a->name, a->type_name, a->kind, a->size};
  return FCL_OK;
}

fcl_status fcl_kernel_arg_index(const fcl_kernel *kernel, const char *name, unsigned *index) {
  FCL_CHECK_NULL(kernel, 1);
  FCL_CHECK_NULL(name, 2);
  FCL_CHECK_NULL(index, 3);
  for (unsigned i = 0; i < kernel->meta->num_args; ++i)
    if (strcmp(kernel->meta->args[i].name, name) == 0) {
      *index = i;
      return FCL_OK;
    }
  return FCL_ERROR(FCL_ERR_NOT_FOUND, "kernel '%s' has no argument named '%s'", kernel->meta->name,
                   name);
}

/* Common failure text: "kernel 'k' argument 2 (alpha, float)". */
#define ARG_FMT "kernel '%s' argument %u (%s%s%s)"
#define ARG_ARGS(k, i)                                                                             \
  (k)->meta->name, (i), (k)->meta->args[i].name[0] ? (k)->meta->args[i].name : "unnamed",          \
      (k)->meta->args[i].type_name[0] ? ", " : "", (k)->meta->args[i].type_name

static fcl_status bad_index(const fcl_kernel *k, unsigned index) {
  return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                   "kernel '%s' has %u arguments; index %u is out of "
                   "range",
                   k->meta->name, k->meta->num_args, index);
}

/* The backend's error of setting argument index, with the argument named in front. */
static fcl_status set_failed(const fcl_kernel *k, unsigned index, fcl_status st) {
  return fcl__error_set(st, fcl_last_native_error(), __func__, __FILE__, __LINE__, ARG_FMT ": %s",
                        ARG_ARGS(k, index), fcl_last_error());
}

fcl_status fcl__kernel_check_kind(const fcl_kernel *k, unsigned index, fcl_arg_kind want) {
  if (index >= k->meta->num_args) return bad_index(k, index);
  fcl_arg_kind kind = k->meta->args[index].kind;
  if (kind == want || kind == FCL_ARG_UNKNOWN ||
      (want == FCL_ARG_GLOBAL && kind == FCL_ARG_CONSTANT))
    return FCL_OK;
  static const char *as[] = {
      "",        "",         "buffer pointer", "buffer pointer", "local pointer",
      "n image", " sampler", " queue_t"};
  return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, ARG_FMT " is a %s, not a%s%s", ARG_ARGS(k, index),
                   kind_name(kind), want == FCL_ARG_GLOBAL || want == FCL_ARG_LOCAL ? " " : "",
                   as[want]);
}

/* Store a by-value argument (for capture) and pass it to the backend. */
static fcl_status store_value(fcl_kernel *k, unsigned index, size_t size, const void *value) {
  fcl__arg_value *v = &k->values[index];
  if (size > sizeof v->value) {
    unsigned char *big = realloc(v->big, size);
    if (!big) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "argument copy of %zu bytes", size);
    v->big = big;
    memcpy(big, value, size);
  } else {
    memcpy(v->value, value, size);
  }
  fcl_status st = k->backend->kernel_set_arg(k, index, FCL__VALUE, size, value);
  if (st != FCL_OK) {
    v->how = FCL__UNSET;
    return set_failed(k, index, st);
  }
  v->how = FCL__VALUE;
  v->size = size;
  return FCL_OK;
}

fcl_status fcl__kernel_set_value(fcl_kernel *kernel, unsigned index, size_t size,
                                 const void *value) {
  return store_value(kernel, index, size, value);
}

fcl_status fcl_kernel_set_arg(fcl_kernel *kernel, unsigned index, size_t size, const void *value) {
  FCL_CHECK_NULL(kernel, 1);
  FCL_CHECK_NULL(value, 4);
  if (index >= kernel->meta->num_args) return bad_index(kernel, index);
  const fcl__arg_meta *a = &kernel->meta->args[index];
  if (a->kind != FCL_ARG_SCALAR && a->kind != FCL_ARG_UNKNOWN)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, ARG_FMT " is a %s: use fcl_kernel_set_arg_%s",
                     ARG_ARGS(kernel, index), kind_name(a->kind),
                     a->kind == FCL_ARG_LOCAL ? "local" : "buffer");
  if (a->size && a->size != size)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     ARG_FMT ": wrong size, expected %zu bytes, given %zu bytes",
                     ARG_ARGS(kernel, index), a->size, size);
  return store_value(kernel, index, size, value);
}

/* Typed scalar: the declared type must be one of the accepted OpenCL spellings. */
static fcl_status set_typed(fcl_kernel *k, unsigned index, const char *ctype, const char *t1,
                            const char *t2, size_t size, const void *value) {
  if (!k) return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 1 (kernel): must not be NULL");
  if (index >= k->meta->num_args) return bad_index(k, index);
  const fcl__arg_meta *a = &k->meta->args[index];
  if (a->kind != FCL_ARG_UNKNOWN &&
      (a->kind != FCL_ARG_SCALAR ||
       (strcmp(a->type_name, t1) != 0 && (!t2 || strcmp(a->type_name, t2) != 0))))
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     ARG_FMT ": wrong type, expected %s (%zu bytes), given %s (%zu bytes)",
                     ARG_ARGS(k, index), a->type_name, a->size, ctype, size);
  return store_value(k, index, size, value);
}

fcl_status fcl_kernel_set_arg_i32(fcl_kernel *kernel, unsigned index, int32_t value) {
  return set_typed(kernel, index, "int32_t (int)", "int", NULL, sizeof value, &value);
}
fcl_status fcl_kernel_set_arg_u32(fcl_kernel *kernel, unsigned index, uint32_t value) {
  return set_typed(kernel, index, "uint32_t (uint)", "uint", "unsigned int", sizeof value, &value);
}
fcl_status fcl_kernel_set_arg_i64(fcl_kernel *kernel, unsigned index, int64_t value) {
  return set_typed(kernel, index, "int64_t (long)", "long", NULL, sizeof value, &value);
}
fcl_status fcl_kernel_set_arg_u64(fcl_kernel *kernel, unsigned index, uint64_t value) {
  return set_typed(kernel, index, "uint64_t (ulong)", "ulong", "unsigned long", sizeof value,
                   &value);
}
fcl_status fcl_kernel_set_arg_f32(fcl_kernel *kernel, unsigned index, float value) {
  return set_typed(kernel, index, "float", "float", NULL, sizeof value, &value);
}
fcl_status fcl_kernel_set_arg_f64(fcl_kernel *kernel, unsigned index, double value) {
  return set_typed(kernel, index, "double", "double", NULL, sizeof value, &value);
}

fcl_status fcl_kernel_set_arg_buffer(fcl_kernel *kernel, unsigned index, const fcl_mem *mem) {
  FCL_CHECK_NULL(kernel, 1);
  FCL_CHECK_ARG(!mem || mem->backend == kernel->backend, 3, "mem",
                "memory of another backend than the kernel's");
  FCL_TRY(fcl__kernel_check_kind(kernel, index, FCL_ARG_GLOBAL));
  return fcl__kernel_set_buffer(kernel, index, mem);
}

fcl_status fcl__kernel_set_buffer(fcl_kernel *kernel, unsigned index, const fcl_mem *mem) {
  if (mem && mem->backend != kernel->backend)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, ARG_FMT ": memory of another backend",
                     ARG_ARGS(kernel, index));
  fcl_status st = kernel->backend->kernel_set_arg(kernel, index, FCL__BUFFER, sizeof(void *), mem);
  if (st != FCL_OK) return set_failed(kernel, index, st);
  kernel->values[index].how = FCL__BUFFER;
  kernel->values[index].size = sizeof(void *);
  return FCL_OK;
}

fcl_status fcl_kernel_set_arg_local(fcl_kernel *kernel, unsigned index, size_t bytes) {
  FCL_CHECK_NULL(kernel, 1);
  FCL_CHECK_ARG(bytes > 0, 3, "bytes", "local memory size must be > 0");
  FCL_TRY(fcl__kernel_check_kind(kernel, index, FCL_ARG_LOCAL));
  fcl_status st = kernel->backend->kernel_set_arg(kernel, index, FCL__LOCAL, bytes, NULL);
  if (st != FCL_OK) return set_failed(kernel, index, st);
  kernel->values[index].how = FCL__LOCAL;
  kernel->values[index].size = bytes;
  return FCL_OK;
}

fcl_status fcl_kernel_get_work_group_info(const fcl_kernel *kernel, const fcl_device *fdevice,
                                          fcl_kernel_work_group_info *info) {
  FCL_CHECK_NULL(kernel, 1);
  FCL_CHECK_NULL(fdevice, 2);
  FCL_CHECK_NULL(info, 3);
  memset(info, 0, sizeof *info);
  fcl_status st = kernel->backend->kernel_work_group_info(kernel, fdevice, info);
  if (st != FCL_OK)
    return fcl__error_set(st, fcl_last_native_error(), __func__, __FILE__, __LINE__,
                          "kernel '%s': %s", kernel->meta->name, fcl_last_error());
  return FCL_OK;
}

static void format_sizes(char *buf, size_t size, unsigned dim, const size_t *v) {
  if (!v) {
    snprintf(buf, size, "NULL");
    return;
  }
  int n = snprintf(buf, size, "(");
  for (unsigned i = 0; i < dim && n > 0 && (size_t)n < size; ++i)
    n += snprintf(buf + n, size - (size_t)n, "%s%zu", i ? ", " : "", v[i]);
  if (n > 0 && (size_t)n < size) snprintf(buf + n, size - (size_t)n, ")");
}

/* The backend's error of a launch, with the kernel, its sizes and its unset arguments. */
static fcl_status enqueue_failed(const fcl_kernel *k, fcl_status st, unsigned dim,
                                 const size_t *global, const size_t *local) {
  char g[128], l[128], unset[512] = "";
  format_sizes(g, sizeof g, dim, global);
  format_sizes(l, sizeof l, dim, local);
  size_t used = 0;
  for (unsigned i = 0; i < k->meta->num_args && used < sizeof unset; ++i)
    if (k->values[i].how == FCL__UNSET) {
      int w = snprintf(unset + used, sizeof unset - used, "%s%u (%s)", used ? ", " : "; unset: ", i,
                       k->meta->args[i].name);
      if (w > 0) used += (size_t)w;
    }
  return fcl__error_set(st, fcl_last_native_error(), "fcl_kernel_enqueue", __FILE__, __LINE__,
                        "launch of '%s' (global %s, local %s): %s%s", k->meta->name, g, l,
                        fcl_last_error(), unset);
}

fcl_status fcl_kernel_enqueue(fcl_kernel *kernel, fcl_queue *queue, unsigned work_dim,
                              const size_t *global, const size_t *local, const size_t *offset,
                              unsigned flags, unsigned num_wait, fcl_event *const *wait,
                              fcl_event **event) {
  if (!kernel || !queue || !global || work_dim - 1u > 2u) {
    FCL_CHECK_NULL(kernel, 1);
    FCL_CHECK_NULL(queue, 2);
    FCL_CHECK_ARG(work_dim >= 1 && work_dim <= 3, 3, "work_dim", "must be 1, 2 or 3");
    FCL_CHECK_NULL(global, 4);
  }
  if (num_wait) FCL_TRY(fcl__check_waits(num_wait, wait, 9, "wait"));
  size_t scaled[3];
  const size_t *g = global;
  if (flags & FCL_LAUNCH_G_TIMES_L) {
    FCL_CHECK_ARG(local != NULL, 5, "local", "FCL_LAUNCH_G_TIMES_L needs local sizes");
    for (unsigned i = 0; i < work_dim; ++i) scaled[i] = global[i] * local[i];
    g = scaled;
  }
  fcl_status st = kernel->backend->kernel_enqueue(kernel, queue, work_dim, g, local, offset,
                                                  num_wait, wait, event);
  if (st != FCL_OK) return enqueue_failed(kernel, st, work_dim, g, local);
  return FCL_OK;
}

fcl_status fcl_kernel_enqueue_task(fcl_kernel *kernel, fcl_queue *queue, unsigned num_wait,
                                   fcl_event *const *wait, fcl_event **event) {
  const size_t one = 1;
  return fcl_kernel_enqueue(kernel, queue, 1, &one, &one, NULL, 0, num_wait, wait, event);
}
