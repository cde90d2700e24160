/* codegen: tuned generated kernels against the device's copy bandwidth, measured in the same run.
 *
 * On an N^3 float grid (N = 256 on a GPU, 128 otherwise): a 3D 7-point stencil and a transpose
 * of every xy-plane (out[k, i, j] = in[k, j, i]), each tuned by fcl_tune over its space of
 * choices, then timed (median of repeats, profiling events). Effective bandwidth counts one
 * read and one write of the grid; the copy bandwidth is the better of fcl_mem_copy and a
 * generated float4 copy kernel on the same buffers. The untuned default variant is timed side
 * by side. Goals on a GPU: stencil >= 0.80 and transpose >= 0.75 of copy bandwidth.
 * Usage: codegen [--device SPEC] [--size N] [--effort none|estimate|measure|exhaustive]
 *                [--repeats R] [--json FILE] */
#define _POSIX_C_SOURCE 200809L
#include <flowcl/flowcl.h>

#define BENCH_NAME "codegen"
#include "bench_util.h"

typedef struct {
  fcl_context *ctx;
  fcl_queue *q;
  fcl_mem *a, *b;
  int64_t n;
  size_t bytes;
  int repeats;
  size_t max_wg;
  uint64_t local_mem;
} env;

/* Median device time (ns) of a launcher called with in -> out buffers named in/out. */
static fcl_status time_launcher(env *e, fcl_launcher *l, const char *in, const char *out,
                                bool with_n, double *median) {
  fcl_param_set *ps = NULL;
  fcl_status st = fcl_param_set_create(l, &ps);
  if (st == FCL_OK) st = fcl_param_set_buffer(ps, in, e->a);
  if (st == FCL_OK) st = fcl_param_set_buffer(ps, out, e->b);
  if (st == FCL_OK && with_n) st = fcl_param_set_i32(ps, "n", (int32_t)e->n);
  double *t = calloc((size_t)e->repeats, sizeof *t);
  if (!t) st = FCL_ERR_OUT_OF_MEMORY;
  for (int r = -1; st == FCL_OK && r < e->repeats; ++r) { /* r = -1: warm-up */
    fcl_event *ev = NULL;
    st = fcl_launcher_call(l, e->q, ps, 0, NULL, &ev);
    if (st == FCL_OK) st = fcl_events_wait(1, &ev);
    fcl_event_times times;
    if (st == FCL_OK && r >= 0 && (st = fcl_event_profile(ev, &times)) == FCL_OK)
      t[r] = (double)(times.end_ns - times.start_ns);
    fcl_event_release(&ev);
  }
  if (st == FCL_OK) *median = bench_median(t, e->repeats);
  free(t);
  fcl_param_set_destroy(&ps);
  return st;
}

/* ---------------- copy bandwidth ---------------- */

static fcl_status copy_buffer_ns(env *e, double *median) {
  double *t = calloc((size_t)e->repeats, sizeof *t);
  if (!t) return FCL_ERR_OUT_OF_MEMORY;
  fcl_status st = FCL_OK;
  for (int r = -1; r < e->repeats && st == FCL_OK; ++r) {
    fcl_event *ev = NULL;
    fcl_event_times times;
    st = fcl_mem_copy(e->q, e->a, 0, e->b, 0, e->bytes, 0, NULL, &ev);
    if (st == FCL_OK) st = fcl_events_wait(1, &ev);
    if (st == FCL_OK) st = fcl_event_profile(ev, &times);
    if (st == FCL_OK && r >= 0) t[r] = (double)(times.end_ns - times.start_ns);
    fcl_event_release(&ev);
  }
  if (st == FCL_OK) *median = bench_median(t, e->repeats);
  free(t);
  return st;
}

static fcl_status copy_kernel_ns(env *e, double *median) {
  fcl_kbuilder *kb = NULL;
  fcl_launcher *l = NULL;
  char fixed[32];
  snprintf(fixed, sizeof fixed, "n=%lld", (long long)e->n);
  fcl_status st = fcl_kbuilder_create("copy", &kb);
  if (st == FCL_OK) st = fcl_kbuilder_add_param(kb, "n");
  if (st == FCL_OK) st = fcl_kbuilder_add_array(kb, "src", FCL_FLOAT32, "n * n * n");
  if (st == FCL_OK) st = fcl_kbuilder_add_array(kb, "dst", FCL_FLOAT32, "n * n * n");
  if (st == FCL_OK) st = fcl_kbuilder_add_domain(kb, "{ [i]: 0 <= i < n * n * n }");
  if (st == FCL_OK) st = fcl_kbuilder_add_instructions(kb, "dst[i] = src[i]");
  if (st == FCL_OK) st = fcl_kbuilder_fix_parameters(kb, fixed);
  if (st == FCL_OK) st = fcl_kbuilder_split_iname(kb, "i", 1024, "g.0", NULL);
  if (st == FCL_OK) st = fcl_kbuilder_split_iname(kb, "i_inner", 4, "l.0", "vec");
  if (st == FCL_OK) st = fcl_kbuilder_build(kb, e->ctx, NULL, e->q, &l);
  if (st == FCL_OK) st = time_launcher(e, l, "src", "dst", false, median);
  fcl_launcher_destroy(&l);
  fcl_kbuilder_destroy(&kb);
  return st;
}

/* ---------------- the kernels and their spaces ---------------- */

/* known_rows: n is a multiple of 16 (main() checks it), so vector lanes read aligned blocks. */
static fcl_kbuilder *make_stencil(bool known_rows) {
  fcl_kbuilder *kb = NULL;
  if (fcl_kbuilder_create("stencil7", &kb) != FCL_OK || fcl_kbuilder_add_param(kb, "n") != FCL_OK ||
      fcl_kbuilder_add_array(kb, "u", FCL_FLOAT32, "n, n, n") != FCL_OK ||
      fcl_kbuilder_add_array(kb, "out", FCL_FLOAT32, "n, n, n") != FCL_OK ||
      (known_rows && fcl_kbuilder_assume(kb, "n mod 16 = 0") != FCL_OK) ||
      fcl_kbuilder_add_domain(kb, "{ [k, j, i]: 1 <= k < n - 1 and 1 <= j < n - 1 and "
                                  "1 <= i < n - 1 }") != FCL_OK ||
      fcl_kbuilder_add_instructions(
          kb, "out[k, j, i] = 0.5 * u[k, j, i] + 0.0833 * (u[k, j, i - 1] + u[k, j, i + 1] + "
              "u[k, j - 1, i] + u[k, j + 1, i] + u[k - 1, j, i] + u[k + 1, j, i])") != FCL_OK)
    fcl_kbuilder_destroy(&kb);
  return kb;
}

static const int64_t st_kz[] = {4, 1, 2, 8, 16, 32, 64}, st_sm[] = {0, 1},
                     st_tx[] = {64, 32, 128, 256}, st_ty[] = {4, 1, 2, 8}, st_vec[] = {2, 1, 4},
                     st_pf[] = {0, 1}, st_al[] = {1, 0}, st_fix[] = {1, 0};
/* Defaults on a CPU (PoCL vectorizes across work-items; explicit vectors defeat it). */
static const int64_t st_kz_cpu[] = {2, 1, 4, 8, 16, 32, 64}, st_sm_cpu[] = {0, 1},
                     st_vec_cpu[] = {1, 2, 4}, st_fix_cpu[] = {0, 1};
/* k_chunk: planes per work-item (1: one plane per work-group along g.2; more: a loop over k
 * inside each work-item, unrolled up to 32 planes); stream: the planes of u are carried in
 * registers along that loop (stream_iname), so each is loaded once per work-item; align: start
 * the i loop at 0 rather than 1, so that vector lanes read and write aligned blocks (the
 * neighbours along i are shuffled from two, the edge lanes masked); fix: the size is fixed in
 * the source (fix_parameters) rather than a kernel argument. The axes are searched in this
 * order, from the first value of each (the defaults: measured best on an H200; on a CPU, one
 * point per work-item along i, 2 planes, n an argument: the tuner's usual pick on PoCL). */
static fcl_tune_axis stencil_axes[] = {
    {"k_chunk", 7, st_kz}, {"stream", 2, st_sm},   {"tile_x", 4, st_tx}, {"tile_y", 4, st_ty},
    {"vec", 3, st_vec},    {"prefetch", 2, st_pf}, {"align", 2, st_al},  {"fix", 2, st_fix}};
#define STENCIL_AXES (sizeof stencil_axes / sizeof *stencil_axes)

/* A choice outside the device's limits: the tuner skips it. */
static fcl_status refuse(void) { return FCL_ERR_NOT_SUPPORTED; }

static fcl_status apply_stencil(void *user, fcl_kbuilder *kb, const int64_t *c) {
  const env *e = user;
  int64_t kz = c[0], sm = c[1], tx = c[2], ty = c[3], vec = c[4], pf = c[5], al = c[6], fix = c[7];
  if ((size_t)(tx * ty) > e->max_wg) return refuse();
  if (pf && (uint64_t)(3 * (ty + 2) * (tx * vec + 2) * 4) > e->local_mem) return refuse();
  if (!al && vec == 1) return refuse();       /* the same as aligned to 1 */
  if (sm && (kz == 1 || pf)) return refuse(); /* no loop to stream along; or local memory */
  char size[32];
  snprintf(size, sizeof size, "n=%lld", (long long)e->n);
  fcl_status st = fix ? fcl_kbuilder_fix_parameters(kb, size) : FCL_OK;
  if (st == FCL_OK && al) st = fcl_kbuilder_align_iname(kb, "i", vec);
  if (st == FCL_OK)
    st = vec == 1 ? fcl_kbuilder_split_iname(kb, "i", tx, "g.0", "l.0")
                  : fcl_kbuilder_split_iname(kb, "i", tx * vec, "g.0", NULL);
  if (st == FCL_OK && vec > 1) st = fcl_kbuilder_split_iname(kb, "i_inner", vec, "l.0", "vec");
  if (st == FCL_OK) st = fcl_kbuilder_split_iname(kb, "j", ty, "g.1", "l.1");
  if (st == FCL_OK)
    st = kz == 1 ? fcl_kbuilder_tag_inames(kb, "k:g.2")
                 : fcl_kbuilder_split_iname(kb, "k", kz, "g.2", kz <= 32 ? "unr" : "for");
  if (st == FCL_OK && sm) st = fcl_kbuilder_stream_iname(kb, "k_inner", "u");
  if (st == FCL_OK && pf)
    st = fcl_kbuilder_add_prefetch(kb, (fcl_prefetch){.array = "u", .sweep = "i_inner, j_inner"});
  return st;
}

static fcl_kbuilder *make_transpose(void) {
  fcl_kbuilder *kb = NULL;
  if (fcl_kbuilder_create("transpose_xy", &kb) != FCL_OK ||
      fcl_kbuilder_add_param(kb, "n") != FCL_OK ||
      fcl_kbuilder_add_array(kb, "a", FCL_FLOAT32, "n, n, n") != FCL_OK ||
      fcl_kbuilder_add_array(kb, "out", FCL_FLOAT32, "n, n, n") != FCL_OK ||
      fcl_kbuilder_add_domain(kb, "{ [k, i, j]: 0 <= k < n and 0 <= i < n and 0 <= j < n }") !=
          FCL_OK ||
      fcl_kbuilder_add_instructions(kb, "out[k, i, j] = a[k, j, i]") != FCL_OK)
    fcl_kbuilder_destroy(&kb);
  return kb;
}

static const int64_t tr_tile[] = {32, 16, 64}, tr_rows[] = {8, 4, 16, 32}, tr_pad[] = {1, 0},
                     tr_pf[] = {1, 0};
static const fcl_tune_axis transpose_axes[] = {
    {"tile", 3, tr_tile}, {"rows", 4, tr_rows}, {"pad", 2, tr_pad}, {"prefetch", 2, tr_pf}};

static fcl_status apply_transpose(void *user, fcl_kbuilder *kb, const int64_t *c) {
  const env *e = user;
  int64_t t = c[0], rows = c[1], pad = c[2], pf = c[3];
  if (rows > t || (size_t)(t * rows) > e->max_wg) return refuse();
  if (!pf && pad) return refuse();
  if ((uint64_t)(t * (t + pad) * 4) > e->local_mem) return refuse();
  fcl_status st = fcl_kbuilder_split_iname(kb, "j", t, "g.0", "l.0");
  if (st == FCL_OK) st = fcl_kbuilder_split_iname(kb, "i", t, "g.1", NULL);
  if (st == FCL_OK) st = fcl_kbuilder_split_iname(kb, "i_inner", rows, NULL, "l.1");
  if (st == FCL_OK) st = fcl_kbuilder_tag_inames(kb, "k:g.2");
  if (st == FCL_OK && pf)
    st = fcl_kbuilder_add_prefetch(
        kb, (fcl_prefetch){.array = "a", .sweep = "i_inner, j_inner", .pad = (int)pad});
  return st;
}

typedef struct {
  const char *name;
  double tuned_ns, default_ns;
  fcl_tune_result r;
  const fcl_tune_axis *axes;
} outcome;

static fcl_status tune_and_time(env *e, fcl_kbuilder *base, const fcl_tune_axis *axes, size_t naxes,
                                fcl_tune_apply_fn apply, fcl_tune_effort effort, const char *in,
                                fcl_device *dev, outcome *o) {
  fcl_tune_options opt = {.effort = effort, .param_values = &e->n, .repeats = 5};
  fcl_kbuilder *best = NULL, *def = NULL;
  fcl_launcher *l = NULL;
  fcl_status st = fcl_tune(base, naxes, axes, apply, e, e->ctx, dev, &opt, &o->r, &best);
  if (st == FCL_OK) st = fcl_kbuilder_build(best, e->ctx, NULL, e->q, &l);
  if (st == FCL_OK)
    st = time_launcher(e, l, in, "out", fcl_kbuilder_num_params(best), &o->tuned_ns);
  fcl_launcher_destroy(&l);
  opt.effort = FCL_TUNE_NONE;
  fcl_tune_result r0;
  if (st == FCL_OK) st = fcl_tune(base, naxes, axes, apply, e, e->ctx, dev, &opt, &r0, &def);
  if (st == FCL_OK) st = fcl_kbuilder_build(def, e->ctx, NULL, e->q, &l);
  if (st == FCL_OK)
    st = time_launcher(e, l, in, "out", fcl_kbuilder_num_params(def), &o->default_ns);
  fcl_launcher_destroy(&l);
  fcl_kbuilder_destroy(&best);
  fcl_kbuilder_destroy(&def);
  o->axes = axes;
  return st;
}

/* The tuned stencil choice with n unknown (a kernel argument, no assumption): vector lanes
 * cannot be shown aligned, so the vector statements and a scalar path at the edges. */
static fcl_status unblocked_stencil_ns(env *e, const int64_t *choice, double *median) {
  fcl_kbuilder *kb = make_stencil(false);
  fcl_launcher *l = NULL;
  int64_t c[STENCIL_AXES];
  memcpy(c, choice, sizeof c);
  c[STENCIL_AXES - 1] = 0; /* not fixed */
  fcl_status st = kb ? apply_stencil(e, kb, c) : FCL_ERR_OUT_OF_MEMORY;
  if (st == FCL_OK) st = fcl_kbuilder_build(kb, e->ctx, NULL, e->q, &l);
  if (st == FCL_OK) st = time_launcher(e, l, "u", "out", true, median);
  fcl_launcher_destroy(&l);
  fcl_kbuilder_destroy(&kb);
  return st;
}

static void choice_text(const outcome *o, char *buf, size_t size) {
  size_t n = 0;
  buf[0] = '\0';
  for (size_t a = 0; a < o->r.num_axes && n < size; ++a)
    n += (size_t)snprintf(buf + n, size - n, "%s%s=%lld", a ? " " : "", o->axes[a].name,
                          (long long)o->r.choice[a]);
}

int main(int argc, char **argv) {
  long size = 0;
  fcl_tune_effort effort = FCL_TUNE_MEASURE;
  char *rest[32];
  int nrest = 0;
  for (int i = 0; i < argc && nrest < 32; ++i) {
    if (i > 0 && !strcmp(argv[i], "--size") && i + 1 < argc)
      size = atol(argv[++i]);
    else if (i > 0 && !strcmp(argv[i], "--effort") && i + 1 < argc) {
      if (fcl_tune_effort_parse(argv[++i], &effort) != FCL_OK) DIE("--effort");
    } else
      rest[nrest++] = argv[i];
  }
  bench_options o = {NULL, NULL, 11, 1};
  if (bench_parse(nrest, rest, &o,
                  "[--device SPEC] [--size N] [--effort E] [--repeats R] "
                  "[--json FILE]"))
    return 2;
  fcl_device_entry dev;
  fcl_device_info info;
  env e = {.repeats = o.repeats};
  if (fcl_device_select(o.device, &dev) != FCL_OK ||
      fcl_device_get_info(dev.device, &info) != FCL_OK)
    DIE("no device");
  bool gpu = info.type & FCL_DEVICE_GPU;
  e.n = size > 0 ? size : gpu ? 256 : 128;
  if (!gpu) {
    stencil_axes[0].values = st_kz_cpu;
    stencil_axes[1].values = st_sm_cpu;
    stencil_axes[4].values = st_vec_cpu;
    stencil_axes[7].values = st_fix_cpu;
  }
  if (e.n % 16 || e.n < 16) DIE("--size must be a positive multiple of 16");
  e.bytes = (size_t)(e.n * e.n * e.n) * sizeof(float);
  e.max_wg = info.max_work_group_size;
  e.local_mem = info.local_mem_size;
  if (fcl_context_create(1, &dev.device, &e.ctx) != FCL_OK ||
      fcl_queue_create(e.ctx, NULL, FCL_QUEUE_PROFILING, &e.q) != FCL_OK)
    DIE("context");
  if (fcl_mem_create(e.ctx, FCL_MEM_DEVICE, e.bytes, NULL, &e.a) != FCL_OK ||
      fcl_mem_create(e.ctx, FCL_MEM_DEVICE, e.bytes, NULL, &e.b) != FCL_OK)
    DIE("two buffers of %zu bytes", e.bytes);
  float one = 1.0f;
  if (fcl_mem_fill(e.q, e.a, &one, sizeof one, 0, e.bytes, 0, NULL, NULL) != FCL_OK ||
      fcl_mem_fill(e.q, e.b, &one, sizeof one, 0, e.bytes, 0, NULL, NULL) != FCL_OK ||
      fcl_queue_finish(e.q) != FCL_OK)
    DIE("fill the buffers");

  printf("codegen on %s: %lld^3 float, effort %s, median of %d\n", info.name, (long long)e.n,
         fcl_tune_effort_name(effort), o.repeats);
  double copy_buf_ns, copy_kern_ns;
  if (copy_buffer_ns(&e, &copy_buf_ns) != FCL_OK) DIE("fcl_mem_copy");
  if (copy_kernel_ns(&e, &copy_kern_ns) != FCL_OK) DIE("copy kernel");
  double gbs_buf = 2.0 * (double)e.bytes / copy_buf_ns,
         gbs_kern = 2.0 * (double)e.bytes / copy_kern_ns;
  double copy_gbs = gbs_buf > gbs_kern ? gbs_buf : gbs_kern;
  printf("  %-34s %9.1f GB/s\n  %-34s %9.1f GB/s\n", "copy: fcl_mem_copy", gbs_buf,
         "copy: generated float4 kernel", gbs_kern);

  outcome res[2] = {{.name = "stencil7"}, {.name = "transpose_xy"}};
  fcl_kbuilder *st = make_stencil(true), *tr = make_transpose();
  if (!st || !tr) DIE("kernel builders");
  double t0 = bench_now();
  if (tune_and_time(&e, st, stencil_axes, STENCIL_AXES, apply_stencil, effort, "u", dev.device,
                    &res[0]) != FCL_OK)
    DIE("stencil");
  double t1 = bench_now();
  if (tune_and_time(&e, tr, transpose_axes, 4, apply_transpose, effort, "a", dev.device, &res[1]) !=
      FCL_OK)
    DIE("transpose");
  double t2 = bench_now();
  double tune_s[2] = {t1 - t0, t2 - t1}, unblocked_ns = 0;
  if (unblocked_stencil_ns(&e, res[0].r.choice, &unblocked_ns) != FCL_OK)
    DIE("stencil without blocks");
  double goal[2] = {0.80, 0.75};
  FILE *f = o.json ? fopen(o.json, "w") : NULL;
  if (o.json && !f) DIE("cannot write %s", o.json);
  if (f)
    fprintf(f,
            "{\"benchmark\": \"codegen\", \"device\": \"%s\", \"results\": [\n"
            "  {\"name\": \"copy_buffer_bandwidth\", \"value\": %.2f, \"unit\": \"GB/s\"},\n"
            "  {\"name\": \"copy_kernel_bandwidth\", \"value\": %.2f, \"unit\": \"GB/s\"}",
            info.name, gbs_buf, gbs_kern);
  for (int k = 0; k < 2; ++k) {
    outcome *r = &res[k];
    char choice[256];
    choice_text(r, choice, sizeof choice);
    double gbs = 2.0 * (double)e.bytes / r->tuned_ns, gbs0 = 2.0 * (double)e.bytes / r->default_ns;
    printf("  %-14s tuned   %9.1f us %9.1f GB/s  %.3f of copy  [%s]%s\n", r->name,
           r->tuned_ns / 1e3, gbs, gbs / copy_gbs, choice, r->r.from_cache ? " (remembered)" : "");
    printf("  %-14s default %9.1f us %9.1f GB/s  %.3f of copy  (%zu variants timed, %zu "
           "rejected, %.1f s)\n",
           r->name, r->default_ns / 1e3, gbs0, gbs0 / copy_gbs, r->r.timed, r->r.rejected,
           tune_s[k]);
    double gbs1 = 2.0 * (double)e.bytes / unblocked_ns;
    if (k == 0)
      printf("  %-14s tuned choice, n unknown (no aligned blocks) %9.1f us  %.3f of copy\n",
             r->name, unblocked_ns / 1e3, gbs1 / copy_gbs);
    if (f)
      fprintf(f,
              ",\n  {\"name\": \"%s_fraction_of_copy\", \"value\": %.4f, \"unit\": \"ratio\", "
              "\"goal_min_gpu\": %.2f, \"time_us\": %.2f, \"bandwidth_gbs\": %.2f, "
              "\"choice\": \"%s\", \"size\": %lld, \"variants_timed\": %zu, "
              "\"from_cache\": %s},\n"
              "  {\"name\": \"%s_default_fraction_of_copy\", \"value\": %.4f, \"unit\": "
              "\"ratio\", \"time_us\": %.2f}",
              r->name, gbs / copy_gbs, goal[k], r->tuned_ns / 1e3, gbs, choice, (long long)e.n,
              r->r.timed, r->r.from_cache ? "true" : "false", r->name, gbs0 / copy_gbs,
              r->default_ns / 1e3);
    if (f && k == 0)
      fprintf(f,
              ",\n  {\"name\": \"stencil7_unblocked_fraction_of_copy\", \"value\": %.4f, "
              "\"unit\": \"ratio\", \"time_us\": %.2f}",
              gbs1 / copy_gbs, unblocked_ns / 1e3);
  }
  if (f) {
    fprintf(f, "\n]}\n");
    fclose(f);
  }
  fcl_kbuilder_destroy(&st);
  fcl_kbuilder_destroy(&tr);
  fcl_mem_release(&e.a);
  fcl_mem_release(&e.b);
  fcl_queue_release(&e.q);
  fcl_context_release(&e.ctx);
  return 0;
}
