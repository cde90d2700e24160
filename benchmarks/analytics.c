/* analytics: what a time loop's per-step measurements cost at N^3, beside the device copy of
 * one component: the dt measure (max|u_d| and max|grad u|, fcl_analytics_dt_inputs), its parts
 * (one component's reduction, the gradient norm's stencil kernel), and the diagnostics row of
 * flowcl-tgv (energy, enstrophy, max|w|, divergence). Each is timed alike: host wall clock from
 * the enqueue to its result (or a queue finish), median of repeats; "copies" is that time over
 * one device copy of a component, also timed so. A Taylor-Green velocity and its vorticity.
 * Usage: analytics [--device SPEC] [--size N] [--double] [--repeats R] [--json FILE]
 * Defaults: 256 on GPUs, 64 on CPUs; float. */
#define _POSIX_C_SOURCE 200809L

#define BENCH_NAME "analytics"
#include "field_setup.h"

enum { REDUCE_ONE, GRAD_KERNEL, DT_MEASURE, DIAGNOSTICS, COPY, NCASE };
static const char *const NAMES[NCASE] = {
    "reduction of one component", "gradient norm kernel", "dt measure (max|u_d|, max|grad u|)",
    "diagnostics (E, Z, max|w|, div u)", "device copy of one component"};

typedef struct {
  fcl_field *u, *w, *s;
  fcl_fd *grad;
  fcl_analytics *an;
  fcl_mem *scratch;
  size_t bytes;
  fcl_queue *q;
} cases;

static fcl_status run_case(cases *c, int k) {
  double v;
  fcl_dt_inputs in;
  fcl_diagnostics d;
  switch (k) {
    case REDUCE_ONE: return fcl_field_reduce(c->u, 0, FCL_REDUCE_NORM_LINF, &v);
    case GRAD_KERNEL: {
      fcl_status st = fcl_fd_apply(c->grad, 0);
      return st == FCL_OK ? fcl_queue_finish(c->q) : st;
    }
    case DT_MEASURE: return fcl_analytics_dt_inputs(c->an, true, &in);
    case DIAGNOSTICS:
      return fcl_analytics_compute(
          c->an,
          FCL_DIAG_ENERGY | FCL_DIAG_ENSTROPHY | FCL_DIAG_MAX_VORTICITY | FCL_DIAG_DIVERGENCE, &d);
    default: {
      fcl_status st = fcl_mem_copy(c->q, fcl_field_buffer(c->w, 0), 0, c->scratch, 0, c->bytes, 0,
                                   NULL, NULL);
      return st == FCL_OK ? fcl_queue_finish(c->q) : st;
    }
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  long size = 0;
  fcl_dtype dtype = FCL_FLOAT32;
  char *rest[32];
  int nrest = 0;
  for (int i = 0; i < argc && nrest < 32; ++i) {
    if (i > 0 && !strcmp(argv[i], "--size") && i + 1 < argc)
      size = atol(argv[++i]);
    else if (i > 0 && !strcmp(argv[i], "--double"))
      dtype = FCL_FLOAT64;
    else
      rest[nrest++] = argv[i];
  }
  bench_options o = {NULL, NULL, 21, 1};
  if (bench_parse(nrest, rest, &o,
                  "[--device SPEC] [--size N] [--double] [--repeats R] [--json FILE]"))
    return 2;
  fcl_device_entry probe;
  fcl_device_info pinfo;
  if (fcl_device_select(o.device, &probe) != FCL_OK || fcl_device_get_info(probe.device, &pinfo))
    DIE("no device");
  const int64_t n = size > 0 ? size : (pinfo.type & FCL_DEVICE_GPU) ? 256 : 64;
  fcl_domain dom = fcl_domain_periodic(3, n, 6.283185307179586);
  int procs[3] = {1, 1, 0}, ghosts[3] = {2, 2, 2}; /* the fourth-order stencils' */
  MPI_Comm_size(MPI_COMM_WORLD, &procs[2]);
  fcl_topology *t = NULL;
  field_env e = {0};
  cases c = {0};
  if (fcl_topology_create(MPI_COMM_WORLD, &dom, procs, ghosts, &t) != FCL_OK) DIE("topology");
  if (field_env_open(&e, t, o.device) != FCL_OK) DIE("device");
  c.q = e.q;
  if (fcl_field_create(t, e.ctx, e.q, e.pool, "u", 3, dtype, &c.u) != FCL_OK ||
      fcl_field_create(t, e.ctx, e.q, e.pool, "w", 3, dtype, &c.w) != FCL_OK ||
      fcl_field_create(t, e.ctx, e.q, e.pool, "s", 1, dtype, &c.s) != FCL_OK)
    DIE("fields of %lld^3", (long long)n);
  const char *vel[3] = {"sin(x) * cos(y) * cos(z)", "-cos(x) * sin(y) * cos(z)", "0"};
  const char *vor[3] = {"-cos(x) * sin(y) * sin(z)", "-sin(x) * cos(y) * sin(z)",
                        "2 * sin(x) * sin(y) * cos(z)"};
  for (int k = 0; k < 3; ++k)
    if (fcl_field_init_expr(c.u, k, vel[k]) != FCL_OK ||
        fcl_field_init_expr(c.w, k, vor[k]) != FCL_OK)
      DIE("init");
  if (fcl_fd_gradient_norm_create(c.u, c.s, 4, &c.grad) != FCL_OK ||
      fcl_analytics_create(c.u, c.w, e.pool, &c.an) != FCL_OK)
    DIE("operators: %s", fcl_last_error());
  const size_t *p = fcl_field_padded_shape(c.w);
  c.bytes = p[0] * p[1] * p[2] * fcl_dtype_size(dtype);
  if (fcl_mem_create(e.ctx, FCL_MEM_DEVICE, c.bytes, NULL, &c.scratch) != FCL_OK) DIE("buffer");
  if (!c.scratch) DIE("scratch buffer");
  double *ts = calloc((size_t)(NCASE * o.repeats), sizeof *ts), median[NCASE];
  if (!ts) DIE("memory");
  for (int r = -1; r < o.repeats; ++r) /* r = -1: warm-up; the cases interleaved */
    for (int k = 0; k < NCASE; ++k) {
      MPI_Barrier(MPI_COMM_WORLD);
      if (fcl_queue_finish(e.q) != FCL_OK) DIE("queue");
      const double t0 = bench_now();
      if (run_case(&c, k) != FCL_OK) DIE("%s", NAMES[k]);
      double dt = bench_now() - t0, slowest;
      MPI_Allreduce(&dt, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      if (r >= 0) ts[k * o.repeats + r] = slowest;
    }
  for (int k = 0; k < NCASE; ++k) median[k] = bench_median(ts + k * o.repeats, o.repeats);
  if (e.rank == 0) {
    printf("analytics on %s: %lld^3 %s, %d rank(s), median of %d\n", e.info.name, (long long)n,
           fcl_dtype_cl_name(dtype), e.size, o.repeats);
    for (int k = 0; k < NCASE; ++k)
      printf("  %-40s %10.1f us %8.2f copies\n", NAMES[k], median[k] * 1e6,
             median[k] / median[COPY]);
    if (o.json) {
      FILE *jf = fopen(o.json, "w");
      if (!jf) DIE("cannot write %s", o.json);
      fprintf(jf,
              "{\"benchmark\": \"analytics\", \"device\": \"%s\", \"size\": %lld, \"results\": [",
              e.info.name, (long long)n);
      for (int k = 0; k < NCASE; ++k)
        fprintf(jf, "%s\n  {\"name\": \"%s\", \"value\": %.3f, \"unit\": \"us\", \"copies\": %.4f}",
                k ? "," : "", NAMES[k], median[k] * 1e6, median[k] / median[COPY]);
      fprintf(jf, "\n]}\n");
      fclose(jf);
    }
  }
  free(ts);
  fcl_mem_release(&c.scratch);
  fcl_analytics_destroy(&c.an);
  fcl_fd_destroy(&c.grad);
  fcl_field_destroy(&c.s);
  fcl_field_destroy(&c.w);
  fcl_field_destroy(&c.u);
  field_env_close(&e);
  fcl_topology_destroy(&t);
  MPI_Finalize();
  return 0;
}
