/* exchange: the comm layer's all-to-all on each transport (mpi, staged; device between CUDA
 * devices, where the CUDA backend links), beside the raw figures
 * of the same run on the same ranks: pinned device->host and host->device copies (all ranks at
 * once; into the mapped memory of an FCL_MEM_PINNED buffer, and into host memory that an
 * FCL_MEM_HOST buffer wraps, as the staged transport's window; the bound takes the faster),
 * both directions at once, and MPI_Sendrecv of host memory between rank pairs. The pattern is the FFT slab
 * transpose's: each rank's buffer of --mib MiB is split into one strided block of rows per rank
 * (rows of 4 KiB in slices), received as contiguous runs. Times are medians over repeats of the
 * slowest rank (host wall clock, everything completed). The bound of a host-staged exchange is
 * the sequential time of its device->host and host->device halves at the faster pinned form's
 * bandwidths; each transport is reported as that bound over its time (1 = at the link's speed;
 * up to the duplex bound's ratio, the time of both halves at once, when the link overlaps them).
 * Built with FLOWCL_WITH_NCCL, NCCL moves the same bytes between CUDA device buffers of the
 * ranks' GPUs (pairs, and the all-to-all): the device-direct figures beside the staged ones.
 * Usage: mpirun -n P exchange [--device SPEC] [--mib M] [--repeats R] [--json FILE] */
#define _POSIX_C_SOURCE 200809L
#include <flowcl/flowcl.h>

#define BENCH_NAME "exchange"
#include "comm_impl.h"
#include "field_setup.h"
#include "nccl_figures.h"

enum { ROW = 4096 };

typedef struct {
  field_env e;
  size_t bytes, out_bytes; /* per rank: the buffer, the part that leaves the rank */
  int repeats;
} bench;

/* Median over repeats of the slowest rank's time of fn (after one warm-up). */
static double timed(bench *b, int (*fn)(bench *, void *), void *arg) {
  double *t = calloc((size_t)b->repeats, sizeof *t), med = -1;
  if (!t) return -1;
  for (int r = -1; r < b->repeats; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = bench_now();
    int bad = fn(b, arg), anybad = 0;
    double dt = bench_now() - t0, slowest = dt;
    MPI_Allreduce(&dt, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (anybad) goto done;
    if (r >= 0) t[r] = slowest;
  }
  med = bench_median(t, b->repeats);
done:
  free(t);
  return med;
}

typedef struct {
  fcl_mem *dev;
  void *pinned;
  bool to_host;
} copy_arg;

static int pinned_copy(bench *b, void *arg) {
  copy_arg *c = arg;
  const fcl_status st = c->to_host ? fcl_mem_read(b->e.q, c->dev, 0, b->out_bytes, c->pinned,
                                                  FCL_BLOCKING, 0, NULL, NULL)
                                   : fcl_mem_write(b->e.q, c->dev, 0, b->out_bytes, c->pinned,
                                                   FCL_BLOCKING, 0, NULL, NULL);
  return st != FCL_OK;
}

/* Half of the outgoing bytes down on the bench's queue while the other half goes up on a second
 * queue: whether the link carries both directions at once. */
typedef struct {
  fcl_mem *down_from, *up_to;
  fcl_queue *up_queue;
  char *pinned;
} duplex_arg;

static int duplex_copy(bench *b, void *arg) {
  duplex_arg *c = arg;
  size_t half = b->out_bytes / 2;
  const fcl_status e1 = fcl_mem_read(b->e.q, c->down_from, 0, half, c->pinned, FCL_NON_BLOCKING, 0,
                                     NULL, NULL);
  const fcl_status e2 = fcl_mem_write(c->up_queue, c->up_to, 0, half, c->pinned + half,
                                      FCL_NON_BLOCKING, 0, NULL, NULL);
  const fcl_status e3 = fcl_queue_finish(b->e.q), e4 = fcl_queue_finish(c->up_queue);
  return e1 != FCL_OK || e2 != FCL_OK || e3 != FCL_OK || e4 != FCL_OK;
}

static int sendrecv(bench *b, void *arg) {
  char *host = arg;
  int peer = b->e.rank ^ 1;
  if (peer >= b->e.size) return 0;
  size_t half = b->out_bytes / 2; /* a MiB-multiple: the count fits an int of 1 KiB units */
  MPI_Datatype kib;
  MPI_Type_contiguous(1024, MPI_BYTE, &kib);
  MPI_Type_commit(&kib);
  int rc = MPI_Sendrecv(host, (int)(half / 1024), kib, peer, 0, host + half, (int)(half / 1024),
                        kib, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Type_free(&kib);
  return rc != MPI_SUCCESS;
}

/* n pairs of buffers in one run (the components of a field) */
typedef struct {
  fcl__alltoall *x;
  int n;
  fcl_mem *a[3], *b[3];
} a2a_arg;

static int alltoall(bench *b, void *arg) {
  (void)b;
  a2a_arg *x = arg;
  return fcl__alltoall_run_batch(x->x, x->n, x->a, x->b, true) != FCL_OK;
}

/* The device transport: the comm layer's all-to-all of the same blocks from device memory to
 * device memory (NCCL between CUDA devices), each rank on its node's CUDA device of its local
 * number, a run ending when its queue is finished. */
typedef struct {
  fcl__alltoall *x;
  fcl_queue *q;
  fcl_mem *a, *b;
} device_arg;

static int device_alltoall(bench *b, void *arg) {
  (void)b;
  device_arg *x = arg;
  return fcl__alltoall_run(x->x, x->a, x->b, true) != FCL_OK || fcl_queue_finish(x->q) != FCL_OK;
}

/* Its median time, or -1 with the reason in why (the same on every rank). */
static double device_transport(bench *b, const fcl__block *send, const fcl__block *recv, char *why,
                               size_t why_size) {
  MPI_Comm node;
  int local = 0;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &local);
  MPI_Comm_free(&node);
  fcl_device_entry e;
  fcl_context *ctx = NULL;
  device_arg x = {0};
  fcl_status st = fcl_device_select_nth("cuda", local, &e);
  if (st == FCL_OK) st = fcl_context_create(1, &e.device, &ctx);
  if (st == FCL_OK) st = fcl_queue_create(ctx, e.device, 0, &x.q);
  if (st == FCL_OK) st = fcl_mem_create(ctx, FCL_MEM_DEVICE, b->bytes, NULL, &x.a);
  if (st == FCL_OK) st = fcl_mem_create(ctx, FCL_MEM_DEVICE, b->bytes, NULL, &x.b);
  int ok = st == FCL_OK, all = 0;
  snprintf(why, why_size, "%s", ok ? "a rank has no CUDA device" : fcl_last_error());
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  double t = -1;
  int made = all && fcl__alltoall_create(ctx, x.q, MPI_COMM_WORLD, ROW, send, recv, 1,
                                         FCL__TRANSPORT_DEVICE, &x.x) == FCL_OK,
      all_made = 0;
  if (all && !made) snprintf(why, why_size, "%s", fcl_last_error());
  MPI_Allreduce(&made, &all_made, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (all_made) t = timed(b, device_alltoall, &x);
  fcl__alltoall_destroy(&x.x);
  fcl_mem_release(&x.a);
  fcl_mem_release(&x.b);
  fcl_queue_release(&x.q);
  fcl_context_release(&ctx);
  return t;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  long mib = 0;
  char *rest[32];
  int nrest = 0;
  for (int i = 0; i < argc && nrest < 32; ++i) {
    if (i > 0 && !strcmp(argv[i], "--mib") && i + 1 < argc)
      mib = atol(argv[++i]);
    else
      rest[nrest++] = argv[i];
  }
  bench_options o = {NULL, NULL, 11, 1};
  if (bench_parse(nrest, rest, &o, "[--device SPEC] [--mib M] [--repeats R] [--json FILE]"))
    return 2;
  fcl_domain d = fcl_domain_periodic(3, 8, 1.0);
  fcl_topology *t = NULL;
  bench b = {.repeats = o.repeats};
  if (fcl_topology_create(MPI_COMM_WORLD, &d, NULL, NULL, &t) != FCL_OK) DIE("topology");
  if (field_env_open(&b.e, t, o.device) != FCL_OK) DIE("device");
  const int P = b.e.size, me = b.e.rank;
  bool gpu = (b.e.info.type & FCL_DEVICE_GPU) != 0;
  if (mib <= 0) mib = gpu ? 256 : 16;
  /* rows per slice: a multiple of P, so that every block is a whole number of rows */
  size_t rows = (size_t)P * 8, slices = ((size_t)mib << 20) / (ROW * rows);
  if (slices == 0) DIE("--mib %ld is too small for %d ranks", mib, P);
  b.bytes = ROW * rows * slices;
  size_t block = b.bytes / (size_t)P;
  b.out_bytes = P > 1 ? block * (size_t)(P - 1) : b.bytes;
  fcl_mem *da = NULL;
  if (fcl_mem_create(b.e.ctx, FCL_MEM_DEVICE, b.bytes, NULL, &da) != FCL_OK) DIE("buffer");
  fcl_mem *db = NULL;
  if (fcl_mem_create(b.e.ctx, FCL_MEM_DEVICE, b.bytes, NULL, &db) != FCL_OK) DIE("buffer");
  fcl_mem *pin = NULL;
  if (fcl_mem_create(b.e.ctx, FCL_MEM_PINNED, b.bytes, NULL, &pin) != FCL_OK) DIE("buffer");
  char *wrapped = aligned_alloc(1 << 16, (b.bytes + 0xffff) & ~(size_t)0xffff);
  fcl_mem *wrap = NULL;
  if (!wrapped || fcl_mem_create(b.e.ctx, FCL_MEM_HOST, b.bytes, wrapped, &wrap) != FCL_OK)
    DIE("%zu bytes of buffers", b.bytes);
  char zero = 1;
  void *host = NULL;
  if (fcl_mem_fill(b.e.q, da, &zero, 1, 0, b.bytes, 0, NULL, NULL) != FCL_OK ||
      fcl_mem_map(b.e.q, pin, FCL_MAP_READ | FCL_MAP_WRITE, 0, b.bytes, 0, NULL, &host) != FCL_OK)
    DIE("map the pinned buffer");

  copy_arg down = {da, host, true}, up = {da, host, false};
  copy_arg wdown = {da, wrapped, true}, wup = {da, wrapped, false};
  double t_d2h_mapped = timed(&b, pinned_copy, &down), t_h2d_mapped = timed(&b, pinned_copy, &up);
  double t_d2h_wrapped = timed(&b, pinned_copy, &wdown),
         t_h2d_wrapped = timed(&b, pinned_copy, &wup);
  bool wrapped_faster = t_d2h_wrapped + t_h2d_wrapped < t_d2h_mapped + t_h2d_mapped;
  double t_d2h = wrapped_faster ? t_d2h_wrapped : t_d2h_mapped;
  double t_h2d = wrapped_faster ? t_h2d_wrapped : t_h2d_mapped;
  fcl_queue *up_queue = NULL;
  if (fcl_queue_create(b.e.ctx, fcl_context_device(b.e.ctx, 0), 0, &up_queue) != FCL_OK)
    DIE("a second queue");
  duplex_arg both = {da, db, up_queue, wrapped_faster ? wrapped : host};
  double t_duplex = timed(&b, duplex_copy, &both);
  double duplex = (double)(b.out_bytes / 2) / t_duplex / 1e9;
  double t_p2p = P > 1 ? timed(&b, sendrecv, host) : -1;
  double d2h = (double)b.out_bytes / t_d2h / 1e9, h2d = (double)b.out_bytes / t_h2d / 1e9;
  double p2p = t_p2p > 0 ? (double)(b.out_bytes / 2) / t_p2p / 1e9 : 0;
  double bound = t_d2h + t_h2d; /* out_bytes down, then the same bytes up */
  double duplex_bound = (double)b.out_bytes / (duplex * 1e9); /* both halves at once */

  fcl__block *send = calloc((size_t)P, sizeof *send), *recv = calloc((size_t)P, sizeof *recv);
  for (int q = 0; q < P; ++q) {
    size_t n = rows / (size_t)P;
    fcl__block s = {(size_t)q * n * ROW, {ROW, n, slices}, ROW, ROW * rows};
    send[q] = s;
    recv[q] = fcl__block_range((size_t)q * block, block);
  }
  const fcl__transport kinds[2] = {FCL__TRANSPORT_MPI, FCL__TRANSPORT_STAGED};
  double t_x[2] = {-1, -1};
  for (int k = 0; k < 2; ++k) {
    a2a_arg x = {NULL, 1, {da}, {db}};
    if (fcl__alltoall_create(b.e.ctx, b.e.q, MPI_COMM_WORLD, ROW, send, recv, 1, kinds[k], &x.x) !=
        FCL_OK) {
      if (me == 0)
        fprintf(stderr, "exchange: %s transport: %s\n", fcl__transport_name(kinds[k]),
                fcl_last_error());
      continue;
    }
    t_x[k] = timed(&b, alltoall, &x);
    fcl__alltoall_destroy(&x.x);
  }
  /* the staged transport with 3 pairs in one run (a vector field's components): per pair */
  double t_batch = -1;
  a2a_arg x3 = {NULL, 3, {da}, {db}};
  for (int i = 1; i < 3; ++i) {
    if (fcl_mem_create(b.e.ctx, FCL_MEM_DEVICE, b.bytes, NULL, &x3.a[i]) != FCL_OK) DIE("buffer");
    if (fcl_mem_create(b.e.ctx, FCL_MEM_DEVICE, b.bytes, NULL, &x3.b[i]) != FCL_OK) DIE("buffer");
    if (!x3.a[i] || !x3.b[i]) DIE("%zu bytes of buffers", b.bytes);
  }
  if (t_x[1] > 0 && fcl__alltoall_create(b.e.ctx, b.e.q, MPI_COMM_WORLD, ROW, send, recv, 3,
                                         FCL__TRANSPORT_STAGED, &x3.x) == FCL_OK) {
    t_batch = timed(&b, alltoall, &x3) / 3;
    fcl__alltoall_destroy(&x3.x);
  }
  for (int i = 1; i < 3; ++i) {
    fcl_mem_release(&x3.a[i]);
    fcl_mem_release(&x3.b[i]);
  }
  char device_why[512] = "";
  const double t_device = P > 1 ? device_transport(&b, send, recv, device_why, sizeof device_why)
                                : -1;
  /* NCCL between the ranks' GPUs, where built: the device-direct figures beside the staged ones */
  nccl_figures nf = {0, 0};
  int nccl_st = 1;
  char nccl_why[256] = "not built (FLOWCL_WITH_NCCL off)";
#ifdef FLOWCL_BENCH_NCCL
  if (P > 1)
    nccl_st = nccl_measure(MPI_COMM_WORLD, b.out_bytes, o.repeats, &nf, nccl_why, sizeof nccl_why);
#endif
  if (me == 0) {
    printf("exchange on %s: %d rank(s), %zu MiB per rank, %zu MiB leave each rank, median of "
           "%d\n",
           b.e.info.name, P, b.bytes >> 20, b.out_bytes >> 20, o.repeats);
    const double gb = (double)b.out_bytes / 1e9;
    printf("  pinned device->host (all ranks at once)  %8.2f GB/s per rank mapped FCL_MEM_PINNED, "
           "%.2f wrapped FCL_MEM_HOST\n",
           gb / t_d2h_mapped, gb / t_d2h_wrapped);
    printf("  pinned host->device (all ranks at once)  %8.2f GB/s per rank mapped FCL_MEM_PINNED, "
           "%.2f wrapped FCL_MEM_HOST\n",
           gb / t_h2d_mapped, gb / t_h2d_wrapped);
    printf("  pinned both directions at once           %8.2f GB/s each way per rank (%s)\n", duplex,
           wrapped_faster ? "wrapped" : "mapped");
    if (p2p > 0) printf("  MPI_Sendrecv between rank pairs          %8.2f GB/s each way\n", p2p);
    printf("  bound of a staged all-to-all             %8.2f ms sequential (the faster form), "
           "%.2f ms duplex\n",
           bound * 1e3, duplex_bound * 1e3);
    for (int k = 0; k < 2; ++k)
      if (t_x[k] > 0)
        printf("  all-to-all, %-6s transport              %8.2f ms  %6.2f GB/s per rank  "
               "%.2f of the bound (%.2f of the duplex bound)\n",
               fcl__transport_name(kinds[k]), t_x[k] * 1e3, (double)b.out_bytes / t_x[k] / 1e9,
               bound / t_x[k], duplex_bound / t_x[k]);
    if (t_batch > 0)
      printf("  all-to-all, staged, 3 in one run         %8.2f ms a pair (%.2f of one at a time)\n",
             t_batch * 1e3, t_batch / t_x[1]);
    if (P > 1 && nccl_st == 0) {
      if (nf.pair_gbs > 0)
        printf("  NCCL send/recv between rank pairs        %8.2f GB/s each way (CUDA device "
               "buffers)\n",
               nf.pair_gbs);
      printf("  all-to-all, NCCL (CUDA device buffers)   %8.2f ms  %6.2f GB/s per rank\n",
             nf.alltoall_ms, (double)b.out_bytes / nf.alltoall_ms / 1e6);
    } else if (P > 1) {
      printf("  NCCL: %s %s\n", nccl_st < 0 ? "failed:" : "not measured:", nccl_why);
    }
    if (t_device > 0)
      printf("  all-to-all, device transport (CUDA)      %8.2f ms  %6.2f GB/s per rank%s\n",
             t_device * 1e3, (double)b.out_bytes / t_device / 1e9,
             nccl_st == 0 && P > 1 ? "" : " (no bare NCCL figure beside it)");
    if (t_device > 0 && nccl_st == 0 && P > 1)
      printf("  device transport over bare NCCL          %8.2f of NCCL's all-to-all speed\n",
             nf.alltoall_ms * 1e-3 / t_device);
    else if (P > 1 && t_device <= 0)
      printf("  device transport: not measured: %s\n", device_why);
    if (o.json) {
      FILE *jf = fopen(o.json, "w");
      if (!jf) DIE("cannot write %s", o.json);
      fprintf(jf,
              "{\"benchmark\": \"exchange\", \"device\": \"%s\", \"ranks\": %d, "
              "\"bytes_per_rank\": %zu, \"bytes_out_per_rank\": %zu, \"results\": [\n"
              "  {\"name\": \"pinned_d2h\", \"value\": %.3f, \"unit\": \"GB/s\"},\n"
              "  {\"name\": \"pinned_h2d\", \"value\": %.3f, \"unit\": \"GB/s\"},\n"
              "  {\"name\": \"pinned_duplex\", \"value\": %.3f, \"unit\": \"GB/s\"},\n"
              "  {\"name\": \"mpi_sendrecv\", \"value\": %.3f, \"unit\": \"GB/s\"},\n"
              "  {\"name\": \"staged_bound\", \"value\": %.3f, \"unit\": \"ms\"},\n"
              "  {\"name\": \"staged_duplex_bound\", \"value\": %.3f, \"unit\": \"ms\"}",
              b.e.info.name, P, b.bytes, b.out_bytes, d2h, h2d, duplex, p2p, bound * 1e3,
              duplex_bound * 1e3);
      for (int k = 0; k < 2; ++k)
        if (t_x[k] > 0)
          fprintf(jf,
                  ",\n  {\"name\": \"alltoall_%s\", \"value\": %.3f, \"unit\": \"ms\", "
                  "\"fraction_of_bound\": %.3f, \"fraction_of_duplex_bound\": %.3f}",
                  fcl__transport_name(kinds[k]), t_x[k] * 1e3, bound / t_x[k],
                  duplex_bound / t_x[k]);
      if (t_batch > 0)
        fprintf(jf,
                ",\n  {\"name\": \"alltoall_staged_3_per_pair\", \"value\": %.3f, \"unit\": "
                "\"ms\"}",
                t_batch * 1e3);
      if (P > 1 && nccl_st == 0 && nf.pair_gbs > 0)
        fprintf(jf, ",\n  {\"name\": \"nccl_pair\", \"value\": %.3f, \"unit\": \"GB/s\"}",
                nf.pair_gbs);
      if (P > 1 && nccl_st == 0)
        fprintf(jf, ",\n  {\"name\": \"alltoall_nccl\", \"value\": %.3f, \"unit\": \"ms\"}",
                nf.alltoall_ms);
      if (t_device > 0)
        fprintf(jf, ",\n  {\"name\": \"alltoall_device\", \"value\": %.3f, \"unit\": \"ms\"}",
                t_device * 1e3);
      fprintf(jf, "\n]}\n");
      fclose(jf);
    }
  }
  free(send);
  free(recv);
  if (fcl_mem_unmap(b.e.q, pin, host, 0, NULL, NULL) != FCL_OK || fcl_queue_finish(b.e.q) != FCL_OK)
    DIE("unmap the pinned buffer");
  fcl_mem_release(&pin);
  fcl_mem_release(&wrap);
  free(wrapped);
  fcl_queue_release(&up_queue);
  fcl_mem_release(&da);
  fcl_mem_release(&db);
  field_env_close(&b.e);
  fcl_topology_destroy(&t);
  MPI_Finalize();
  return 0;
}
