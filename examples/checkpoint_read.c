/* Reading a checkpoint back: a user's code writes the Taylor-Green vorticity and its run state
 * (time, step, dt, named parameters) with fcl_checkpoint_write, then reads the newest
 * checkpoint of that name into a field on another decomposition of the ranks (slabs along x
 * instead of MPI's choice), as a restart on another rank count would. flowcl-tgv's own
 * checkpoints (OUTPUT/tgv_<step, 9 digits>.chk.h5) read the same way into fields of its names.
 *
 * The file is HDF5 after a 512-byte user block (its seal): h5py, h5dump and ParaView open it as
 * it is, e.g. `h5dump -n checkpoint-example/demo_000000075.chk.h5` lists one dataset per component.
 *
 * Checked: the state comes back as written and the field equals the vorticity's formula at
 * every grid point to 1e-14 (the device's sin and cos against the host's: 5.6e-16 on PoCL; a
 * component or a slab read into the wrong place is off by order 1). Exits 0 when both hold, 1
 * when not, 77 when the device lacks doubles.
 *
 *   checkpoint_read [directory (checkpoint-example)] */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "flowcl/flowcl.h"

#define N 32
#define TRY(call)                                                                                  \
  do {                                                                                             \
    fcl_status s_ = (call);                                                                        \
    if (s_ != FCL_OK) {                                                                            \
      fprintf(stderr, "checkpoint_read: %s: %s\n", #call, fcl_last_error());                       \
      return s_;                                                                                   \
    }                                                                                              \
  } while (0)

/* The Taylor-Green vortex's vorticity, as expressions of x, y, z and as C. */
static const char *const omega_expr[3] = {"-cos(x) * sin(y) * sin(z)", "-sin(x) * cos(y) * sin(z)",
                                          "2 * sin(x) * sin(y) * cos(z)"};

static double omega(int c, double x, double y, double z) {
  if (c == 0) return -cos(x) * sin(y) * sin(z);
  if (c == 1) return -sin(x) * cos(y) * sin(z);
  return 2 * sin(x) * sin(y) * cos(z);
}

typedef struct {
  fcl_context *ctx;
  fcl_queue *q;
  fcl_allocator *alloc;
  fcl_pool *pool;
  fcl_topology *writer, *reader;
  fcl_field *w_written, *w_read;
} app;

static fcl_status write_one(app *a, const char *dir) {
  const fcl_domain d = fcl_domain_periodic(3, N, 2 * 3.14159265358979323846);
  const int ghosts[3] = {2, 2, 2};
  TRY(fcl_topology_create(MPI_COMM_WORLD, &d, NULL, ghosts, &a->writer));
  TRY(fcl_field_create(a->writer, a->ctx, a->q, a->pool, "vorticity", 3, FCL_FLOAT64,
                       &a->w_written));
  for (int c = 0; c < 3; ++c) TRY(fcl_field_init_expr(a->w_written, c, omega_expr[c]));
  fcl_checkpoint_state s = {.time = 1.5, .dt = 0.02, .step = 75, .nparams = 1};
  strcpy(s.names[0], "nu");
  s.values[0] = 1.0 / 1600;
  char path[1024];
  TRY(fcl_checkpoint_write(dir, "demo", 2, 1, &a->w_written, &s, path, sizeof path));
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) printf("wrote %s\n", path);
  return FCL_OK;
}

/* The newest checkpoint "demo" in dir into a field named as the written one, on slabs along x;
 * *ok: the state and every value as written. */
static fcl_status read_back(app *a, const char *dir, bool *ok) {
  int size, rank;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const fcl_domain d = fcl_domain_periodic(3, N, 2 * 3.14159265358979323846);
  const int procs[3] = {size, 1, 1}, ghosts[3] = {2, 2, 2};
  TRY(fcl_topology_create(MPI_COMM_WORLD, &d, procs, ghosts, &a->reader));
  TRY(fcl_field_create(a->reader, a->ctx, a->q, a->pool, "vorticity", 3, FCL_FLOAT64, &a->w_read));
  fcl_checkpoint_state s;
  char path[1024];
  TRY(fcl_checkpoint_read_latest(dir, "demo", 1, &a->w_read, &s, path, sizeof path));
  *ok = s.time == 1.5 && s.dt == 0.02 && s.step == 75 && s.nparams == 1 &&
        !strcmp(s.names[0], "nu") && s.values[0] == 1.0 / 1600;
  if (rank == 0)
    printf("read %s: t = %g, step %lld, dt = %g, %s = %g\n", path, s.time, (long long)s.step, s.dt,
           s.nparams ? s.names[0] : "-", s.nparams ? s.values[0] : 0.0);
  const int64_t *n = fcl_topology_local_resolution(a->reader);
  const int64_t *off = fcl_topology_offset(a->reader);
  const double h = fcl_domain_spacing(&d, 0);
  double *v = malloc((size_t)(n[0] * n[1] * n[2]) * sizeof *v), worst = 0;
  if (!v) return FCL_ERR_OUT_OF_MEMORY;
  for (int c = 0; c < 3; ++c) {
    fcl_status st = fcl_field_read(a->w_read, c, false, v);
    if (st != FCL_OK) {
      free(v);
      TRY(st);
    }
    for (int64_t k = 0; k < n[2]; ++k)
      for (int64_t j = 0; j < n[1]; ++j)
        for (int64_t i = 0; i < n[0]; ++i) {
          const double x = (double)(i + off[0]) * h, y = (double)(j + off[1]) * h,
                       z = (double)(k + off[2]) * h;
          worst = fmax(worst, fabs(v[(k * n[1] + j) * n[0] + i] - omega(c, x, y, z)));
        }
  }
  free(v);
  MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0)
    printf("largest difference from the formula: %.3g (on %d slab(s) along x)\n", worst, size);
  *ok = *ok && worst <= 1e-14;
  return FCL_OK;
}

static void destroy(app *a) {
  fcl_field_destroy(&a->w_written);
  fcl_field_destroy(&a->w_read);
  fcl_topology_destroy(&a->writer);
  fcl_topology_destroy(&a->reader);
  fcl_pool_release(&a->pool);
  fcl_allocator_release(&a->alloc);
  fcl_queue_release(&a->q);
  fcl_context_release(&a->ctx);
}

static int run(const char *dir) {
  app a = {0};
  fcl_device_entry dev;
  if (fcl_comm_select_device(MPI_COMM_WORLD, NULL, &dev) != FCL_OK) {
    fprintf(stderr, "checkpoint_read: %s\n", fcl_last_error());
    return 1;
  }
  fcl_device_info info;
  if (fcl_device_get_info(dev.device, &info) != FCL_OK || !info.double_fp_config) {
    printf("checkpoint_read: the device has no doubles; skipped\n");
    return 77;
  }
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0 && mkdir(dir, 0777) != 0 && errno != EEXIST)
    fprintf(stderr, "checkpoint_read: cannot create %s: %s\n", dir, strerror(errno));
  MPI_Barrier(MPI_COMM_WORLD);
  bool ok = false;
  fcl_status st = fcl_context_create(1, &dev.device, &a.ctx);
  if (st == FCL_OK) st = fcl_queue_create(a.ctx, dev.device, 0, &a.q);
  if (st == FCL_OK) st = fcl_allocator_create_deferred(a.ctx, FCL_MEM_DEVICE, &a.alloc);
  if (st == FCL_OK) st = fcl_pool_create(a.alloc, NULL, &a.pool);
  if (st == FCL_OK) st = write_one(&a, dir);
  if (st == FCL_OK) st = read_back(&a, dir, &ok);
  if (st != FCL_OK) fprintf(stderr, "checkpoint_read: %s\n", fcl_last_error());
  destroy(&a);
  return st == FCL_OK && ok ? 0 : 1;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const int rc = run(argc > 1 ? argv[1] : "checkpoint-example");
  int all;
  MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return all;
}
