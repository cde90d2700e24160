/* Kernel, parametrized and iterative launchers against host-computed results; creation and
 * parameter errors; out-of-order queues. */
#include <string.h>

#include "fcl_test.h"
#include "flowcl/opencl.h"

static const char *source =
    "#ifdef FCL_PRELUDE_CUDA\n" /* the portable vocabulary has no atomics */
    "#define atomic_inc(p) atomicAdd((p), 1)\n"
    "#endif\n"
    "FCL_KERNEL void scale(FCL_GLOBAL float *y, const float a, const int n) {\n"
    "  int i = get_global_id(0);\n"
    "  if (i < n) y[i] = a * y[i];\n"
    "}\n"
    "FCL_KERNEL void record(FCL_GLOBAL int *out, FCL_GLOBAL int *counter, const int i, const int "
    "j,\n"
    "                     const int width) {\n"
    "  out[i * width + j] = atomic_inc(counter); /* the launch's position in the sequence */\n"
    "}\n";

typedef struct {
  fcl_context *ctx;
  fcl_program *prog;
  fcl_queue *q, *ooo;
} env;

static fcl_mem *buffer(env *e, size_t bytes, const void *host) {
  fcl_mem *m = NULL;
  return fcl_mem_create(e->ctx, FCL_MEM_DEVICE, bytes, (void *)host, &m) == FCL_OK ? m : NULL;
}

static void kernel_launchers(env *e) {
  enum { N = 1000 };
  float y[N], out[N];
  for (int i = 0; i < N; ++i) y[i] = (float)i;
  fcl_mem *by = buffer(e, sizeof y, y);
  /* All arguments fixed. */
  fcl_arg args[3] = {fcl_arg_buffer(0, by), fcl_arg_f32(1, 3.0f), fcl_arg_i32(2, N)};
  fcl_launch_config cfg = {.queue = e->q, .work_dim = 1, .global = {1024}};
  fcl_launcher *l = NULL, *list = NULL;
  CHECK_OK(fcl_launcher_create_kernel(e->prog, "triple", "scale", 3, args, 0, NULL, &cfg, &l));
  CHECK(fcl_launcher_queue_configured(l) && fcl_launcher_global_size_configured(l));
  CHECK(fcl_launcher_num_params(l) == 0);
  fcl_event *ev = NULL;
  CHECK_OK(fcl_launcher_call(l, NULL, NULL, 0, NULL, &ev));
  CHECK(ev != NULL);
  CHECK_OK(fcl_events_wait(1, &ev));
  fcl_event_release(&ev);
  CHECK_OK(fcl_launcher_as_list(l, "triple list", &list));
  CHECK(fcl_launcher_list_size(list) == 1 && fcl_launcher_list_get(list, 0) == l);
  CHECK_OK(fcl_launcher_call(list, e->q, NULL, 0, NULL, NULL));
  CHECK_OK(fcl_mem_read(e->q, by, 0, sizeof out, out, FCL_BLOCKING, 0, NULL, NULL));
  int bad = 0;
  for (int i = 0; i < N; ++i) bad += out[i] != 9.0f * (float)i;
  CHECKF(bad == 0, "%d wrong after two fixed launches", bad);
  fcl_launcher_destroy(&list);

  /* Creation errors name the argument. */
  fcl_arg two[2] = {fcl_arg_buffer(0, by), fcl_arg_f32(1, 1.0f)};
  CHECK_STATUS(fcl_launcher_create_kernel(e->prog, "partial", "scale", 2, two, 0, NULL, &cfg, &l),
               FCL_ERR_INVALID_ARGUMENT, "argument 2 (n) is neither fixed nor a parameter");
  CHECK(l == NULL);
  fcl_arg wrong[3] = {fcl_arg_buffer(0, by), fcl_arg_f64(1, 1.0), fcl_arg_i32(2, N)};
  CHECK_STATUS(fcl_launcher_create_kernel(e->prog, "wrong", "scale", 3, wrong, 0, NULL, &cfg, &l),
               FCL_ERR_INVALID_ARGUMENT, "argument 1 (a, float): wrong type");
  fcl_param_spec as_double = {"a", 1, FCL_TYPE_F64};
  CHECK_STATUS(fcl_launcher_create_kernel(e->prog, "wrong", "scale", 2,
                                          (fcl_arg[]){fcl_arg_buffer(0, by), fcl_arg_i32(2, N)}, 1,
                                          &as_double, &cfg, &l),
               FCL_ERR_INVALID_ARGUMENT, "parameter 'a' is declared double");
  fcl_param_spec twice = {"a", 2, FCL_TYPE_I32};
  CHECK_STATUS(fcl_launcher_create_kernel(e->prog, "twice", "scale", 3, args, 1, &twice, &cfg, &l),
               FCL_ERR_INVALID_ARGUMENT, "already fixed");
  CHECK_STATUS(fcl_launcher_create_kernel(e->prog, "nokernel", "scael", 3, args, 0, NULL, &cfg, &l),
               FCL_ERR_NOT_FOUND, "scael");

  /* Parametrized: a and n per call. */
  fcl_param_spec ps[2] = {{"a", 1, FCL_TYPE_F32}, {"n", 2, FCL_TYPE_I32}};
  fcl_launch_config nocfg = {0};
  CHECK_OK(fcl_launcher_create_kernel(e->prog, "scale", "scale", 1, args, 2, ps, &nocfg, &l));
  CHECK(!fcl_launcher_queue_configured(l) && !fcl_launcher_global_size_configured(l));
  fcl_param_set *p = NULL;
  CHECK_OK(fcl_param_set_create(l, &p));
  CHECK_OK(fcl_param_set_f32(p, "a", 0.5f));
  CHECK_STATUS(fcl_launcher_call(l, e->q, p, 0, NULL, NULL), FCL_ERR_INVALID_STATE,
               "no global size");
  size_t g = 1024;
  CHECK_OK(fcl_launcher_configure(l, NULL, 1, &g, NULL));
  CHECK_STATUS(fcl_launcher_call(l, NULL, p, 0, NULL, NULL), FCL_ERR_INVALID_ARGUMENT, "no queue");
  CHECK_STATUS(fcl_launcher_call(l, e->q, p, 0, NULL, NULL), FCL_ERR_INVALID_ARGUMENT,
               "parameter 'n' was not set");
  CHECK_STATUS(fcl_launcher_call(l, e->q, NULL, 0, NULL, NULL), FCL_ERR_INVALID_ARGUMENT,
               "no parameter set");
  CHECK_STATUS(fcl_param_set_f64(p, "a", 0.5), FCL_ERR_INVALID_ARGUMENT,
               "parameter 'a' is float, given double");
  CHECK_STATUS(fcl_param_set_i32(p, "alpha", 1), FCL_ERR_NOT_FOUND, "a (float), n (int)");
  CHECK_OK(fcl_param_set_i32(p, "n", 500));
  CHECK_OK(fcl_launcher_call(l, e->q, p, 0, NULL, NULL)); /* first half halved */
  CHECK_OK(fcl_param_set_i32(p, "n", N));
  CHECK_OK(fcl_launcher_call(l, e->q, p, 0, NULL, NULL)); /* a unchanged, n changed */
  size_t slot;
  CHECK_OK(fcl_param_set_slot(p, "a", &slot));
  CHECK_OK(fcl_param_set_value(p, slot, FCL_TYPE_F32, (fcl_value){.f32 = 4.0f}));
  CHECK_OK(fcl_launcher_call(l, e->q, p, 0, NULL, NULL));
  CHECK_OK(fcl_mem_read(e->q, by, 0, sizeof out, out, FCL_BLOCKING, 0, NULL, NULL));
  bad = 0;
  for (int i = 0; i < N; ++i) bad += out[i] != (i < 500 ? 0.25f : 0.5f) * 4.0f * 9.0f * (float)i;
  CHECKF(bad == 0, "%d wrong after parametrized launches", bad);
  /* A set made for another launcher is refused. */
  fcl_launcher *other = NULL;
  fcl_param_set *po = NULL;
  CHECK_OK(fcl_launcher_create_kernel(e->prog, "other", "scale", 1, args, 2, ps, &cfg, &other));
  CHECK_OK(fcl_param_set_create(other, &po));
  CHECK_STATUS(fcl_launcher_call(l, e->q, po, 0, NULL, NULL), FCL_ERR_INVALID_ARGUMENT,
               "made for launcher 'other'");
  fcl_param_set_destroy(&po);
  fcl_launcher_destroy(&other);
  fcl_param_set_destroy(&p);
  fcl_launcher_destroy(&l);
  fcl_mem_release(&by);
}

static bool three_odd(void *user, size_t i, fcl_value *v) {
  (void)user;
  if (i >= 3) return false;
  v->i32 = (int32_t)(2 * i + 1); /* 1, 3, 5 */
  return true;
}

static void iterative(env *e, fcl_queue *q, bool barrier) {
  enum { W = 8, H = 5 };
  int out[H * W], zero = 0;
  memset(out, 0xff, sizeof out);
  fcl_mem *bo = buffer(e, sizeof out, out), *bc = buffer(e, sizeof zero, &zero);
  fcl_arg args[3] = {fcl_arg_buffer(0, bo), fcl_arg_buffer(1, bc), fcl_arg_i32(4, W)};
  fcl_param_spec ps[2] = {{"i", 2, FCL_TYPE_I32}, {"j", 3, FCL_TYPE_I32}};
  fcl_generator gens[2] = {fcl_generator_range("i", 4, -1, -2), /* 4, 2, 0 */
                           fcl_generator_callback("j", three_odd, NULL)};
  fcl_launch_config cfg = {.queue = q, .work_dim = 1, .global = {1}};
  fcl_launcher *l = NULL;
  CHECK_OK(fcl_launcher_create_iterative(e->prog, "record", "record", 3, args, 2, ps, 2, gens,
                                         barrier, &cfg, &l));
  CHECK(fcl_launcher_num_params(l) == 0); /* generated parameters are not the caller's */
  fcl_event *ev = NULL;
  CHECK_OK(fcl_launcher_call(l, NULL, NULL, 0, NULL, &ev));
  bool ooo = fcl_queue_flags(q) & FCL_QUEUE_OUT_OF_ORDER;
  if (ooo && !barrier) {
    CHECK(ev == NULL);
    CHECK_OK(fcl_queue_finish(q));
  } else {
    CHECK(ev != NULL);
    CHECK_OK(fcl_events_wait(1, &ev)); /* on an out-of-order queue: the barrier's event */
    fcl_event_release(&ev);
  }
  CHECK_OK(fcl_mem_read(q, bo, 0, sizeof out, out, FCL_BLOCKING, 0, NULL, NULL));
  int bad = 0, order = 0, seen[9] = {0};
  for (int i = 4; i >= 0; i -= 2)
    for (int j = 1; j <= 5; j += 2) {
      int got = out[i * W + j];
      if (ooo)
        bad += got < 0 || got >= 9 || seen[got]++; /* each exactly once, any order */
      else
        bad += got != order++; /* in generation order */
    }
  int untouched = 0;
  for (int k = 0; k < H * W; ++k) untouched += out[k] == -1;
  CHECKF(bad == 0 && untouched == H * W - 9, "iterative (%s queue): %d wrong, %d untouched",
         ooo ? "out-of-order" : "in-order", bad, untouched);
  fcl_launcher_destroy(&l);

  /* Generator errors. */
  fcl_generator bad_gen = fcl_generator_range("k", 0, 3, 1);
  CHECK_STATUS(fcl_launcher_create_iterative(e->prog, "x", "record", 3, args, 2, ps, 1, &bad_gen,
                                             true, &cfg, &l),
               FCL_ERR_INVALID_ARGUMENT, "drives 'k'");
  fcl_generator zero_step = fcl_generator_range("i", 0, 3, 0);
  CHECK_STATUS(fcl_launcher_create_iterative(e->prog, "x", "record", 3, args, 2, ps, 1, &zero_step,
                                             true, &cfg, &l),
               FCL_ERR_INVALID_ARGUMENT, "non-zero step");
  fcl_mem_release(&bo);
  fcl_mem_release(&bc);
}

static void list_of_values(env *e) {
  /* An iterative launcher whose only generator is a list; parameters left to the caller. */
  enum { W = 4 };
  int out[4 * W], zero = 0;
  memset(out, 0xff, sizeof out);
  fcl_mem *bo = buffer(e, sizeof out, out), *bc = buffer(e, sizeof zero, &zero);
  fcl_arg args[3] = {fcl_arg_buffer(0, bo), fcl_arg_buffer(1, bc), fcl_arg_i32(4, W)};
  fcl_param_spec ps[2] = {{"i", 2, FCL_TYPE_I32}, {"j", 3, FCL_TYPE_I32}};
  fcl_value js[2] = {{.i32 = 2}, {.i32 = 0}};
  fcl_generator gen = fcl_generator_list("j", js, 2);
  fcl_launch_config cfg = {.queue = e->q, .work_dim = 1, .global = {1}};
  fcl_launcher *l = NULL;
  fcl_param_set *p = NULL;
  CHECK_OK(fcl_launcher_create_iterative(e->prog, "rows", "record", 3, args, 2, ps, 1, &gen, true,
                                         &cfg, &l));
  CHECK_OK(fcl_param_set_create(l, &p));
  CHECK(fcl_launcher_num_params(l) == 1);
  CHECK_OK(fcl_param_set_i32(p, "i", 3));
  CHECK_OK(fcl_launcher_call(l, NULL, p, 0, NULL, NULL));
  CHECK_OK(fcl_mem_read(e->q, bo, 0, sizeof out, out, FCL_BLOCKING, 0, NULL, NULL));
  CHECK(out[3 * W + 2] == 0 && out[3 * W + 0] == 1 && out[3 * W + 1] == -1 && out[0] == -1);
  fcl_param_set_destroy(&p);
  fcl_launcher_destroy(&l);
  fcl_mem_release(&bo);
  fcl_mem_release(&bc);
}

/* A generated kernel as an iterative launcher: acc[i] += s for s in 0, 2, 4 (one launch each),
 * with the domain's n set per call; iterating n (it sets the work size) is refused. */
static void kbuilder_iterative(env *e) {
  fcl_kbuilder *kb = NULL;
  CHECK_OK(fcl_kbuilder_create("acc_s", &kb));
  CHECK_OK(fcl_kbuilder_add_param(kb, "n"));
  CHECK_OK(fcl_kbuilder_add_scalar(kb, "s", FCL_INT32));
  CHECK_OK(fcl_kbuilder_add_array(kb, "acc", FCL_INT32, "n"));
  CHECK_OK(fcl_kbuilder_add_domain(kb, "{ [i]: 0 <= i < n }"));
  CHECK_OK(fcl_kbuilder_add_instructions(kb, "acc[i] = acc[i] + s * (i + 1)"));
  const fcl_generator g = fcl_generator_range("s", 0, 6, 2);
  fcl_launcher *l = NULL;
  CHECK_OK(fcl_kbuilder_build_iterative(kb, e->ctx, NULL, e->q, 1, &g, true, &l));
  enum { N = 50 };
  int host[N] = {0};
  fcl_mem *acc = NULL;
  CHECK_OK(fcl_mem_create(e->ctx, FCL_MEM_DEVICE, sizeof host, host, &acc));
  fcl_param_set *p = NULL;
  if (l) {
    CHECK(fcl_launcher_num_params(l) == 2); /* n and acc: s is generated */
    CHECK_OK(fcl_param_set_create(l, &p));
    CHECK_OK(fcl_param_set_i32(p, "n", N));
    CHECK_OK(fcl_param_set_buffer(p, "acc", acc));
    CHECK_OK(fcl_launcher_call(l, e->q, p, 0, NULL, NULL));
    CHECK_OK(fcl_mem_read(e->q, acc, 0, sizeof host, host, FCL_BLOCKING, 0, NULL, NULL));
    int bad = 0;
    for (int i = 0; i < N; ++i) bad += host[i] != 6 * (i + 1);
    CHECKF(!bad, "generated iterative launcher: %d wrong sums", bad);
  }
  const fcl_generator gn = fcl_generator_range("n", 1, 3, 1);
  fcl_launcher *bad_l = NULL;
  CHECK_STATUS(fcl_kbuilder_build_iterative(kb, e->ctx, NULL, e->q, 1, &gn, true, &bad_l),
               FCL_ERR_INVALID_ARGUMENT, "not a scalar argument");
  CHECK_STATUS(fcl_kbuilder_build_iterative(kb, e->ctx, NULL, e->q, 0, NULL, true, &bad_l),
               FCL_ERR_INVALID_ARGUMENT, "generator");
  fcl_param_set_destroy(&p);
  fcl_launcher_destroy(&l);
  fcl_mem_release(&acc);
  fcl_kbuilder_destroy(&kb);
}

/* A generated kernel's array argument is checked against the array's bytes, not its pool
 * block's: the pool rounds 1008 floats (4032 bytes) up to its bin, a block of 4095 bytes that
 * held 1020 floats before (the same buffer, handed back), but the array holds 1008. */
static void array_extent(env *e) {
  enum { HAVE = 1008, NEED = 1020 };
  fcl_kbuilder *kb = NULL;
  CHECK_OK(fcl_kbuilder_create("fill_x", &kb));
  CHECK_OK(fcl_kbuilder_add_param(kb, "n"));
  CHECK_OK(fcl_kbuilder_add_array(kb, "x", FCL_FLOAT32, "n"));
  CHECK_OK(fcl_kbuilder_add_domain(kb, "{ [i]: 0 <= i < n }"));
  CHECK_OK(fcl_kbuilder_add_instructions(kb, "x[i] = 2"));
  fcl_launcher *l = NULL;
  CHECK_OK(fcl_kbuilder_build(kb, e->ctx, NULL, e->q, &l));
  fcl_kbuilder_destroy(&kb);
  fcl_allocator *alloc = NULL;
  fcl_pool *pool = NULL;
  fcl_array *big = NULL, *x = NULL;
  CHECK_OK(fcl_allocator_create_deferred(e->ctx, FCL_MEM_DEVICE, &alloc));
  CHECK_OK(fcl_pool_create(alloc, NULL, &pool));
  CHECK_OK(fcl_array_create(pool, e->q, FCL_FLOAT32, 1, (const size_t[]){NEED}, &big));
  fcl_param_set *p = NULL;
  if (l && big) {
    CHECK_OK(fcl_param_set_create(l, &p));
    CHECK_OK(fcl_param_set_buffer(p, "x", fcl_array_buffer(big)));
    CHECK_OK(fcl_param_set_i32(p, "n", NEED));
    CHECK_OK(fcl_launcher_call(l, NULL, p, 0, NULL, NULL)); /* fits: checked once */
    fcl_mem *block = fcl_array_buffer(big);
    fcl_array_destroy(&big);
    CHECK_OK(fcl_queue_finish(e->q)); /* the block's fence passes: the pool hands it back */
    CHECK_OK(fcl_array_create(pool, e->q, FCL_FLOAT32, 1, (const size_t[]){HAVE}, &x));
    CHECK(fcl_array_buffer(x) == block);
    CHECK_OK(fcl_param_set_buffer(p, "x", fcl_array_buffer(x)));
    CHECK_STATUS(fcl_launcher_call(l, NULL, p, 0, NULL, NULL), FCL_ERR_INVALID_ARGUMENT,
                 "array 'x' holds an array of 4032 bytes (in a pool block of 4095), its shape "
                 "needs 4080");
    CHECK_OK(fcl_param_set_i32(p, "n", HAVE)); /* the array's own size */
    CHECK_OK(fcl_launcher_call(l, NULL, p, 0, NULL, NULL));
    float host[HAVE];
    CHECK_OK(fcl_array_read(x, NULL, FCL_BLOCKING, host, 0, NULL, NULL));
    int bad = 0;
    for (int i = 0; i < HAVE; ++i) bad += host[i] != 2.0f;
    CHECKF(bad == 0, "%d of %d elements not filled", bad, HAVE);
  }
  fcl_param_set_destroy(&p);
  fcl_launcher_destroy(&l);
  fcl_array_destroy(&big);
  fcl_array_destroy(&x);
  fcl_pool_release(&pool);
  fcl_allocator_release(&alloc);
}

static void check_device(const fcl_device_entry *d, void *user) {
  (void)user;
  env e = {0};
  CHECK_OK(fcl_context_create(1, &d->device, &e.ctx));
  CHECK_OK(fcl_queue_create(e.ctx, NULL, 0, &e.q));
  CHECK_OK(fcl_program_create_source(e.ctx, source, "launcher test", &e.prog));
  CHECK_OK(fcl_program_build(e.prog, NULL));
  if (!e.q || !e.prog) return;
  kernel_launchers(&e);
  iterative(&e, e.q, true);
  kbuilder_iterative(&e);
  array_extent(&e);
  list_of_values(&e);
  fcl_device_info info;
  CHECK_OK(fcl_device_get_info(d->device, &info));
  if (info.queue_out_of_order) {
    CHECK_OK(fcl_queue_create(e.ctx, NULL, FCL_QUEUE_OUT_OF_ORDER, &e.ooo));
    iterative(&e, e.ooo, true);
    iterative(&e, e.ooo, false);
    fcl_queue_release(&e.ooo);
  }
  fcl_program_release(&e.prog);
  fcl_queue_release(&e.q);
  fcl_context_release(&e.ctx);
}

int main(void) { return fcl_test_run_on_devices(check_device, NULL); }
