/* Kernel and iterative launchers: fixed arguments set once, parameters set when they change,
 * generators driving iterated parameters. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kernel_fast.h"
#include "launch_impl.h"

static fcl_status set_fixed(fcl_launcher *l, fcl_kernel *k, const fcl_arg *a) {
  switch (a->type) {
    case FCL_TYPE_I32: return fcl_kernel_set_arg_i32(k, a->index, a->value.i32);
    case FCL_TYPE_U32: return fcl_kernel_set_arg_u32(k, a->index, a->value.u32);
    case FCL_TYPE_I64: return fcl_kernel_set_arg_i64(k, a->index, a->value.i64);
    case FCL_TYPE_U64: return fcl_kernel_set_arg_u64(k, a->index, a->value.u64);
    case FCL_TYPE_F32: return fcl_kernel_set_arg_f32(k, a->index, a->value.f32);
    case FCL_TYPE_F64: return fcl_kernel_set_arg_f64(k, a->index, a->value.f64);
    case FCL_TYPE_BUFFER: return fcl_kernel_set_arg_buffer(k, a->index, a->value.buffer);
    case FCL_TYPE_LOCAL: return fcl_kernel_set_arg_local(k, a->index, a->value.local_bytes);
  }
  return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "launcher '%s': argument %u has invalid type %d",
                   l->name, a->index, (int)a->type);
}

/* Build the kernel, set the fixed arguments, check the parameters against the signature. */
static fcl_status setup(fcl_launcher *l, fcl_program *program, const char *kernel_name,
                        size_t num_args, const fcl_arg *args, size_t num_params,
                        const fcl_param_spec *params, const fcl_launch_config *config) {
  fcl_kernel *k = NULL;
  FCL_TRY(fcl_kernel_create(program, kernel_name, &k));
  unsigned nargs = fcl_kernel_num_args(k);
  unsigned char *seen = calloc(nargs ? nargs : 1, 1);
  l->kernel_name = strdup(kernel_name);
  l->param_args = calloc(num_params ? num_params : 1, sizeof *l->param_args);
  l->fixed = calloc(num_args ? num_args : 1, sizeof *l->fixed);
  fcl_status st = (seen && l->kernel_name && l->param_args && l->fixed)
                      ? FCL_OK
                      : FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "launcher '%s'", l->name);
  for (size_t i = 0; st == FCL_OK && i < num_args; ++i) {
    if (args[i].index >= nargs) {
      st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "launcher '%s': argument index %u, but kernel "
                     "'%s' has %u arguments",
                     l->name, args[i].index, kernel_name, nargs);
      break;
    }
    if (seen[args[i].index]++) {
      st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "launcher '%s': kernel '%s' argument %u given "
                     "twice",
                     l->name, kernel_name, args[i].index);
      break;
    }
    st = set_fixed(l, k, &args[i]); /* typed: checked against the signature */
    l->fixed[l->num_fixed++] = args[i];
  }
  for (size_t i = 0; st == FCL_OK && i < num_params; ++i) {
    const fcl_param_spec *p = &params[i];
    fcl_kernel_arg_info info;
    if (!p->name || !*p->name) {
      st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "launcher '%s': parameter %zu has no name", l->name,
                     i);
      break;
    }
    if (p->index >= nargs || seen[p->index]++) {
      st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "launcher '%s': parameter '%s' is argument %u of "
                     "kernel '%s', which %s",
                     l->name, p->name, p->index, kernel_name,
                     p->index >= nargs ? "does not exist" : "is already fixed or a parameter");
      break;
    }
    if (p->type == FCL_TYPE_LOCAL) {
      st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "launcher '%s': parameter '%s': local memory "
                     "sizes are fixed arguments",
                     l->name, p->name);
      break;
    }
    st = fcl_kernel_get_arg_info(k, p->index, &info);
    if (st == FCL_OK && !fcl__value_type_matches(p->type, &info)) {
      st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "launcher '%s': parameter '%s' is declared %s but "
                     "kernel '%s' argument %u (%s) is %s",
                     l->name, p->name, fcl_value_type_name(p->type), kernel_name, p->index,
                     info.name, info.type_name);
      break;
    }
    size_t pos = 0;
    if (st == FCL_OK) st = fcl__decl_add(l, p->name, p->type, &pos);
    if (st == FCL_OK && pos != l->num_param_args)
      st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "launcher '%s': parameter '%s' appears twice",
                     l->name, p->name);
    if (st == FCL_OK)
      l->param_args[l->num_param_args++] = (fcl__param_arg){
          pos, p->type, p->index, fcl__value_size(p->type), false, {0}};
  }
  for (unsigned i = 0; st == FCL_OK && i < nargs; ++i)
    if (!seen[i]) {
      fcl_kernel_arg_info info;
      fcl_kernel_get_arg_info(k, i, &info);
      st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "launcher '%s': kernel '%s' argument %u (%s) is "
                     "neither fixed nor a parameter",
                     l->name, kernel_name, i, info.name);
    }
  free(seen);
  if (st == FCL_OK) {
    /* The launcher keeps the kernel, whose fixed arguments are now set. */
    l->kernel = k;
    k = NULL;
    l->program = fcl_program_retain(program);
    if (config) {
      l->bytes_per_launch = config->bytes_per_launch;
      bool any_local = config->local[0] || config->local[1] || config->local[2];
      st = fcl_launcher_configure(l, config->queue, config->work_dim,
                                  config->work_dim ? config->global : NULL,
                                  any_local ? config->local : NULL);
    }
    l->trace = fcl__trace_matches(l->name, kernel_name);
  }
  fcl_kernel_destroy(&k);
  return st;
}

fcl_status fcl_launcher_create_kernel(fcl_program *program, const char *name,
                                      const char *kernel_name, size_t num_args, const fcl_arg *args,
                                      size_t num_params, const fcl_param_spec *params,
                                      const fcl_launch_config *config, fcl_launcher **out) {
  FCL_CHECK_NULL(program, 1);
  FCL_CHECK_NULL(kernel_name, 3);
  FCL_CHECK_ARG(num_args == 0 || args, 5, "args", "must not be NULL when num_args > 0");
  FCL_CHECK_ARG(num_params == 0 || params, 7, "params", "must not be NULL when num_params > 0");
  FCL_CHECK_NULL(out, 9);
  *out = NULL;
  fcl_launcher *l;
  FCL_TRY(fcl__launcher_new(L_KERNEL, name ? name : kernel_name, &l));
  fcl_status st = setup(l, program, kernel_name, num_args, args, num_params, params, config);
  if (st != FCL_OK) {
    fcl_launcher_destroy(&l);
    return st;
  }
  *out = l;
  return FCL_OK;
}

fcl_status fcl_launcher_create_iterative(fcl_program *program, const char *name,
                                         const char *kernel_name, size_t num_args,
                                         const fcl_arg *args, size_t num_params,
                                         const fcl_param_spec *params, size_t num_generators,
                                         const fcl_generator *generators, bool enqueue_barrier,
                                         const fcl_launch_config *config, fcl_launcher **out) {
  FCL_CHECK_ARG(num_generators > 0 && generators, 9, "generators", "at least one is needed");
  FCL_TRY(fcl_launcher_create_kernel(program, name, kernel_name, num_args, args, num_params, params,
                                     config, out));
  fcl_launcher *l = *out;
  l->kind = L_ITERATIVE;
  l->barrier = enqueue_barrier;
  l->iterated = calloc(num_generators, sizeof *l->iterated);
  fcl_status st = l->iterated ? FCL_OK : FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "generators");
  for (size_t g = 0; st == FCL_OK && g < num_generators; ++g) {
    const fcl_generator *gen = &generators[g];
    size_t arg = SIZE_MAX;
    for (size_t j = 0; gen->param && j < l->num_param_args; ++j)
      if (!strcmp(l->decls[l->param_args[j].decl].name, gen->param)) arg = j;
    fcl_value_type type = arg != SIZE_MAX ? l->param_args[arg].type : FCL_TYPE_I32;
    size_t count = SIZE_MAX;
    if (arg == SIZE_MAX)
      st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "launcher '%s': generator %zu drives '%s', which "
                     "is not one of its parameters",
                     l->name, g, gen->param ? gen->param : "(null)");
    else if (gen->kind == FCL_GENERATOR_RANGE) {
      if (gen->step == 0 || (type != FCL_TYPE_I32 && type != FCL_TYPE_U32 && type != FCL_TYPE_I64 &&
                             type != FCL_TYPE_U64))
        st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "launcher '%s': range of '%s' needs a non-zero "
                       "step and an integer parameter (it is %s)",
                       l->name, gen->param, fcl_value_type_name(type));
      else if ((gen->step > 0 && gen->stop <= gen->start) ||
               (gen->step < 0 && gen->stop >= gen->start))
        count = 0;
      else
        count = (size_t)((gen->stop - gen->start + gen->step + (gen->step > 0 ? -1 : 1)) /
                         gen->step);
    } else if (gen->kind == FCL_GENERATOR_LIST) {
      if (gen->count && !gen->values)
        st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "launcher '%s': list of '%s' has no values",
                       l->name, gen->param);
      count = gen->count;
    } else if (gen->kind != FCL_GENERATOR_CALLBACK || !gen->fn) {
      st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "launcher '%s': generator of '%s' has no kind or "
                     "callback",
                     l->name, gen->param);
    }
    for (size_t h = 0; st == FCL_OK && h < l->num_iterated; ++h)
      if (l->iterated[h].arg == arg)
        st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "launcher '%s': '%s' has two generators", l->name,
                       gen->param);
    if (st == FCL_OK) l->iterated[l->num_iterated++] = (fcl__iterated){arg, *gen, count};
  }
  if (st != FCL_OK) {
    fcl_launcher_destroy(out);
    return st;
  }
  /* Generated parameters leave the table: callers never set them. */
  for (size_t h = 0; h < l->num_iterated; ++h) {
    size_t gone = l->param_args[l->iterated[h].arg].decl;
    free(l->decls[gone].name);
    memmove(&l->decls[gone], &l->decls[gone + 1], (l->num_decls - gone - 1) * sizeof *l->decls);
    l->num_decls--;
    l->param_args[l->iterated[h].arg].decl = SIZE_MAX;
    for (size_t j = 0; j < l->num_param_args; ++j)
      if (l->param_args[j].decl != SIZE_MAX && l->param_args[j].decl > gone)
        l->param_args[j].decl--;
  }
  return FCL_OK;
}

void fcl__kernel_destroy(fcl_launcher *l) {
  fcl_kernel_destroy(&l->kernel);
  fcl_queue_release(&l->queue);
  fcl_program_release(&l->program);
  free(l->kernel_name);
  free(l->param_args);
  free(l->iterated);
  free(l->fixed);
  if (l->size_destroy) l->size_destroy(l->size_user);
  free(l->size_values);
}

/* Set a parameter's argument only when its value changed. */
static inline fcl_status apply(fcl_launcher *l, fcl__param_arg *p, const fcl_value *v) {
  if (p->has_last && memcmp(&p->last, v, p->size) == 0) return FCL_OK;
  fcl_status st = p->type == FCL_TYPE_BUFFER
                      ? fcl__kernel_set_buffer(l->kernel, p->index, v->buffer)
                      : fcl__kernel_set_value(l->kernel, p->index, p->size, v);
  if (st == FCL_OK) {
    memcpy(&p->last, v, p->size);
    p->has_last = true;
  }
  return st;
}

/* Value number i of a generator (false when exhausted). */
static bool generate(const fcl__iterated *it, fcl_value_type type, size_t i, fcl_value *v) {
  const fcl_generator *g = &it->gen;
  if (g->kind == FCL_GENERATOR_CALLBACK) return g->fn(g->user, i, v);
  if (i >= it->count) return false;
  if (g->kind == FCL_GENERATOR_LIST) {
    *v = g->values[i];
    return true;
  }
  int64_t x = g->start + (int64_t)i * g->step;
  memset(v, 0, sizeof *v);
  switch (type) {
    case FCL_TYPE_I32: v->i32 = (int32_t)x; break;
    case FCL_TYPE_U32: v->u32 = (uint32_t)x; break;
    case FCL_TYPE_U64: v->u64 = (uint64_t)x; break;
    default: v->i64 = x; break;
  }
  return true;
}

/* The runtime's error of a launch, with the launcher's name in front. */
static fcl_status launch_failed(const fcl_launcher *l, fcl_status st) {
  return fcl__error_set(st, fcl_last_native_error(), "fcl_launcher_call", __FILE__, __LINE__,
                        "launcher '%s': %s", l->name, fcl_last_error());
}

static fcl_status enqueue(fcl_launcher *l, fcl_queue *q, unsigned num_wait, fcl_event *const *wait,
                          fcl_event **event, const fcl_value *values, const size_t *map) {
  bool profile = fcl_queue_flags(q) & FCL_QUEUE_PROFILING;
  fcl_event *ev = NULL;
  if (l->trace)
    fcl__trace_launch(l, l->work_dim, l->global, l->has_local ? l->local : NULL, values, map);
  fcl_status st = fcl_kernel_enqueue(l->kernel, q, l->work_dim, l->global,
                                     l->has_local ? l->local : NULL, NULL, 0, num_wait, wait,
                                     (event || profile) ? &ev : NULL);
  if (st != FCL_OK) return launch_failed(l, st);
  if (profile) fcl__launcher_record(l, q, ev);
  if (event)
    *event = ev;
  else if (ev)
    fcl_event_release(&ev);
  return FCL_OK;
}

fcl_status fcl__kernel_call(fcl_launcher *l, fcl_queue *q, unsigned num_wait,
                            fcl_event *const *wait, const fcl_value *values, const bool *set,
                            const size_t *map, fcl_event **event) {
  if (!q) q = l->queue;
  if (!q)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "launcher '%s': no queue given and none "
                     "configured",
                     l->name);
  if (l->size_fn) {
    /* the size function sees the values in the launcher's own parameter order */
    for (size_t j = 0; j < l->num_decls; ++j) {
      size_t slot = map ? map[j] : j;
      if (!set[slot])
        return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "launcher '%s': parameter '%s' was not set",
                         l->name, l->decls[j].name);
      l->size_values[j] = values[slot];
    }
    size_t global[3] = {0, 0, 0}, local[3] = {0, 0, 0};
    unsigned dim = 0;
    FCL_TRY(l->size_fn(l->size_user, l->size_values, &dim, global, local));
    if (dim < 1 || dim > 3)
      return FCL_ERROR(FCL_ERR_INTERNAL, "launcher '%s': work-size function gave %u dimensions",
                       l->name, dim);
    for (unsigned d = 0; d < dim; ++d)
      if (global[d] == 0) return num_wait ? fcl_events_wait(num_wait, wait) : FCL_OK;
    l->work_dim = dim;
    memcpy(l->global, global, sizeof global);
    memcpy(l->local, local, sizeof local);
    l->has_local = local[0] != 0;
  }
  if (!l->work_dim)
    return FCL_ERROR(FCL_ERR_INVALID_STATE,
                     "launcher '%s': no global size configured "
                     "(fcl_launcher_configure)",
                     l->name);
  /* Parameters supplied by the caller (iterated ones come from their generators). */
  for (size_t j = 0; j < l->num_param_args; ++j) {
    if (l->param_args[j].decl == SIZE_MAX) continue; /* generated */
    size_t slot = map ? map[l->param_args[j].decl] : l->param_args[j].decl;
    if (!set[slot])
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "launcher '%s': parameter '%s' was not set",
                       l->name, l->decls[l->param_args[j].decl].name);
    fcl_status st = apply(l, &l->param_args[j], &values[slot]);
    if (st != FCL_OK) return launch_failed(l, st);
  }
  if (l->kind == L_KERNEL) return enqueue(l, q, num_wait, wait, event, values, map);

  /* Iterative: every combination, the last generator varying fastest. */
  enum { MAX_ITER = 8 };
  size_t n = l->num_iterated, index[MAX_ITER] = {0};
  if (n > MAX_ITER)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "launcher '%s': at most %d iterated parameters",
                     l->name, MAX_ITER);
  fcl_value v;
  for (size_t h = 0; h < n; ++h) /* any empty generator: nothing to launch */
    if (!generate(&l->iterated[h], l->param_args[l->iterated[h].arg].type, 0, &v))
      return num_wait ? fcl_events_wait(num_wait, wait) : FCL_OK;
  bool out_of_order = fcl_queue_flags(q) & FCL_QUEUE_OUT_OF_ORDER;
  fcl_event *last = NULL;
  for (bool first = true;; first = false) {
    for (size_t h = 0; h < n; ++h) {
      fcl__iterated *it = &l->iterated[h];
      generate(it, l->param_args[it->arg].type, index[h], &v);
      fcl_status st = apply(l, &l->param_args[it->arg], &v);
      if (st != FCL_OK) return launch_failed(l, st);
    }
    if (last) fcl_event_release(&last);
    last = NULL;
    FCL_TRY(enqueue(l, q, first ? num_wait : 0, first ? wait : NULL, &last, values, map));
    /* advance the odometer */
    size_t h = n;
    while (h-- > 0) {
      fcl__iterated *it = &l->iterated[h];
      if (generate(it, l->param_args[it->arg].type, ++index[h], &v)) break;
      index[h] = 0;
    }
    if (h == SIZE_MAX) break;
  }
  if (out_of_order) {
    fcl_event_release(&last);
    last = NULL;
    if (!l->barrier) return FCL_OK; /* no event: the caller orders the work itself */
    fcl_status st = fcl_queue_barrier(q, 0, NULL, event ? &last : NULL);
    if (st != FCL_OK) return launch_failed(l, st);
  }
  if (event)
    *event = last;
  else if (last)
    fcl_event_release(&last);
  return FCL_OK;
}
