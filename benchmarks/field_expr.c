/* field_expr: re-evaluating a field expression with a new time t (fcl_field_expr_set +
 * fcl_field_expr_eval), against a device copy of the same field, both timed alike (host wall
 * clock around the enqueue and a queue finish, median of repeats, interleaved); and the
 * programs built after the first evaluation (fcl_count_programs_built), which must be none.
 * The default expression has four transcendental functions per point; --expr sets another (of
 * x, y, z, t and the parameters amp and period).
 * Usage: field_expr [--device SPEC] [--size N] [--float] [--expr TEXT] [--repeats R]
 *                   [--json FILE] */
#define _POSIX_C_SOURCE 200809L
#include <math.h>

#define BENCH_NAME "field_expr"
#include "field_setup.h"

static const char *const DEFAULT_EXPR =
    "amp * sin(x) * cos(y) * cos(z) * cos(3.14159265358979 * t / "
    "period)";

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  long size = 0;
  fcl_dtype dtype = FCL_FLOAT64;
  const char *expr = DEFAULT_EXPR;
  char *rest[32];
  int nrest = 0;
  for (int i = 0; i < argc && nrest < 32; ++i) {
    if (i > 0 && !strcmp(argv[i], "--size") && i + 1 < argc)
      size = atol(argv[++i]);
    else if (i > 0 && !strcmp(argv[i], "--float"))
      dtype = FCL_FLOAT32;
    else if (i > 0 && !strcmp(argv[i], "--expr") && i + 1 < argc)
      expr = argv[++i];
    else
      rest[nrest++] = argv[i];
  }
  bench_options o = {NULL, NULL, 21, 1};
  if (bench_parse(nrest, rest, &o,
                  "[--device SPEC] [--size N] [--float] [--expr TEXT] "
                  "[--repeats R] [--json FILE]"))
    return 2;
  fcl_device_entry probe;
  fcl_device_info pinfo;
  if (fcl_device_select(o.device, &probe) != FCL_OK || fcl_device_get_info(probe.device, &pinfo))
    DIE("no device");
  if (dtype == FCL_FLOAT64 && !pinfo.double_fp_config) dtype = FCL_FLOAT32;
  const int64_t n = size > 0 ? size : (pinfo.type & FCL_DEVICE_GPU) ? 256 : 64;
  fcl_domain d = fcl_domain_periodic(3, n, 6.283185307179586);
  fcl_topology *t = NULL;
  field_env e = {0};
  fcl_field *f = NULL;
  fcl_field_expr *x = NULL;
  if (fcl_topology_create(MPI_COMM_WORLD, &d, NULL, NULL, &t) != FCL_OK) DIE("topology");
  if (field_env_open(&e, t, o.device) != FCL_OK) DIE("device");
  if (fcl_field_create(t, e.ctx, e.q, e.pool, "f", 1, dtype, &f) != FCL_OK) DIE("field");
  const char *params[] = {"amp", "period"};
  const uint64_t built0 = fcl_count_programs_built();
  double t0 = bench_now();
  if (fcl_field_expr_create(f, expr, 2, params, &x) != FCL_OK ||
      fcl_field_expr_set(x, "amp", 1.5) != FCL_OK || fcl_field_expr_set(x, "period", 4) != FCL_OK ||
      fcl_field_expr_eval(x, f, 0) != FCL_OK || fcl_queue_finish(e.q) != FCL_OK)
    DIE("first evaluation");
  const double first = bench_now() - t0;
  const uint64_t built1 = fcl_count_programs_built();
  const size_t *p = fcl_field_padded_shape(f);
  const size_t bytes = p[0] * p[1] * p[2] * fcl_dtype_size(dtype);
  fcl_mem *scratch = NULL;
  if (fcl_mem_create(e.ctx, FCL_MEM_DEVICE, bytes, NULL, &scratch) != FCL_OK) DIE("buffer");
  if (!scratch) DIE("scratch buffer");
  double *te = calloc((size_t)o.repeats, sizeof *te), *tc = calloc((size_t)o.repeats, sizeof *tc);
  if (!te || !tc) DIE("memory");
  for (int r = -1; r < o.repeats; ++r) { /* r = -1: warm-up */
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = bench_now();
    if (fcl_field_expr_set(x, "t", 0.01 * (r + 2)) != FCL_OK ||
        fcl_field_expr_eval(x, f, 0) != FCL_OK || fcl_queue_finish(e.q) != FCL_OK)
      DIE("evaluation");
    const double eval = bench_now() - t0;
    t0 = bench_now();
    if (fcl_mem_copy(e.q, fcl_field_buffer(f, 0), 0, scratch, 0, bytes, 0, NULL, NULL) != FCL_OK ||
        fcl_queue_finish(e.q) != FCL_OK)
      DIE("copy");
    const double copy = bench_now() - t0;
    double local[2] = {eval, copy}, slowest[2];
    MPI_Allreduce(local, slowest, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (r >= 0) te[r] = slowest[0], tc[r] = slowest[1];
  }
  const uint64_t built_after = fcl_count_programs_built() - built1;
  const double eval = bench_median(te, o.repeats), copy = bench_median(tc, o.repeats);
  if (e.rank == 0) {
    printf("field_expr on %s: %lld^3 %s, %d rank(s), median of %d: %s\n", e.info.name, (long long)n,
           fcl_dtype_cl_name(dtype), e.size, o.repeats, expr);
    printf("  first evaluation (generate, build, run) %10.1f us, %llu program(s) built\n",
           first * 1e6, (unsigned long long)(built1 - built0));
    printf("  evaluation with a new t                 %10.1f us\n", eval * 1e6);
    printf("  device copy of the field                %10.1f us\n", copy * 1e6);
    printf("  evaluation / copy                       %10.3f\n", eval / copy);
    printf("  programs built after the first          %10llu\n", (unsigned long long)built_after);
    if (o.json) {
      FILE *jf = fopen(o.json, "w");
      if (!jf) DIE("cannot write %s", o.json);
      fprintf(jf,
              "{\"benchmark\": \"field_expr\", \"device\": \"%s\", \"results\": [\n"
              "  {\"name\": \"first_evaluation\", \"value\": %.3f, \"unit\": \"us\", "
              "\"programs_built\": %llu},\n"
              "  {\"name\": \"evaluation\", \"value\": %.3f, \"unit\": \"us\", \"size\": %lld, "
              "\"precision\": \"%s\", \"ranks\": %d},\n"
              "  {\"name\": \"copy\", \"value\": %.3f, \"unit\": \"us\", \"bytes\": %zu},\n"
              "  {\"name\": \"evaluation_over_copy\", \"value\": %.4f, \"unit\": \"ratio\"},\n"
              "  {\"name\": \"programs_built_after_first\", \"value\": %llu, \"unit\": "
              "\"programs\"}\n]}\n",
              e.info.name, first * 1e6, (unsigned long long)(built1 - built0), eval * 1e6,
              (long long)n, fcl_dtype_cl_name(dtype), e.size, copy * 1e6, bytes, eval / copy,
              (unsigned long long)built_after);
      fclose(jf);
    }
  }
  free(te);
  free(tc);
  fcl_mem_release(&scratch);
  fcl_field_expr_destroy(&x);
  fcl_field_destroy(&f);
  field_env_close(&e);
  fcl_topology_destroy(&t);
  MPI_Finalize();
  return built_after == 0 ? 0 : 1;
}
