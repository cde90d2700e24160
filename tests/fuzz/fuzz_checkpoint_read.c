/* Fuzz target for the checkpoint reader (fcl_checkpoint_read: HDF5 through MPI-IO, the format
 * version, the fields by name, the checksums of the data and of the state). Each input is
 * written to a temporary file and read into two fields of a small grid (u: 3 components, w: 1)
 * on the default device, in one MPI process.
 *
 * The first corpus directory named on the command line, when it holds no file, is seeded with
 * a valid checkpoint of those fields (seed_50.chk.h5), so `fuzz_checkpoint_read DIR` needs no
 * prepared corpus. A finding is a crash, a sanitizer report, or abort(): a failure without a
 * message, or a success whose state is not what a valid checkpoint holds (a negative or
 * non-finite time, a negative step, too many parameters). */
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <flowcl/flowcl.h>

static struct {
  fcl_context *ctx;
  fcl_queue *q;
  fcl_allocator *alloc;
  fcl_pool *pool;
  fcl_topology *topo;
  fcl_field *fields[2];
  char path[256];
} g;

static void must(int cond, const char *what) {
  if (!cond) {
    fprintf(stderr, "fuzz_checkpoint_read: %s%s%s\n", what, fcl_last_error()[0] ? ": " : "",
            fcl_last_error());
    abort();
  }
}

static void set_up(void) {
  fcl_device_entry dev;
  fcl_domain d = fcl_domain_periodic(3, 0, 6.283185307179586);
  d.resolution[0] = 8, d.resolution[1] = 6, d.resolution[2] = 5;
  must(fcl_topology_create(MPI_COMM_WORLD, &d, NULL, NULL, &g.topo) == FCL_OK, "topology");
  must(fcl_topology_select_device(g.topo, NULL, &dev) == FCL_OK, "device");
  must(fcl_context_create(1, &dev.device, &g.ctx) == FCL_OK &&
           fcl_queue_create(g.ctx, dev.device, 0, &g.q) == FCL_OK &&
           fcl_allocator_create_deferred(g.ctx, FCL_MEM_DEVICE, &g.alloc) == FCL_OK &&
           fcl_pool_create(g.alloc, NULL, &g.pool) == FCL_OK,
       "device environment");
  must(
      fcl_field_create(g.topo, g.ctx, g.q, g.pool, "u", 3, FCL_FLOAT32, &g.fields[0]) == FCL_OK &&
          fcl_field_create(g.topo, g.ctx, g.q, g.pool, "w", 1, FCL_FLOAT32, &g.fields[1]) == FCL_OK,
      "fields");
}

static void tear_down(void) {
  unlink(g.path);
  fcl_field_destroy(&g.fields[0]);
  fcl_field_destroy(&g.fields[1]);
  fcl_topology_destroy(&g.topo);
  fcl_pool_release(&g.pool);
  fcl_allocator_release(&g.alloc);
  fcl_queue_release(&g.q);
  fcl_context_release(&g.ctx);
  MPI_Finalize();
}

static int is_empty_dir(const char *path) {
  DIR *d = opendir(path);
  if (!d) return 0;
  struct dirent *e;
  int empty = 1;
  while (empty && (e = readdir(d)) != NULL) empty = e->d_name[0] == '.';
  closedir(d);
  return empty;
}

static void fill(void *user, const double *x, double *v) {
  (void)user;
  v[0] = sin(x[0]) * cos(x[1]);
  v[1] = cos(x[0]) * sin(x[2]);
  v[2] = sin(x[1] + x[2]);
}

static void write_seed(const char *dir) {
  fcl_checkpoint_state st = {.time = 0.5, .dt = 0.01, .step = 50, .nparams = 1};
  snprintf(st.names[0], sizeof st.names[0], "reynolds");
  st.values[0] = 1600;
  must(fcl_field_init(g.fields[0], fill, NULL) == FCL_OK, "field init");
  must(fcl_checkpoint_write(dir, "seed", 0, 2, g.fields, &st, NULL, 0) == FCL_OK,
       "seed checkpoint");
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  MPI_Init(argc, argv);
  set_up();
  atexit(tear_down);
  const char *tmp = getenv("TMPDIR");
  snprintf(g.path, sizeof g.path, "%s/flowcl-fuzz-%ld.chk.h5", tmp && tmp[0] ? tmp : "/tmp",
           (long)getpid());
  for (int i = 1; i < *argc; ++i)
    if ((*argv)[i][0] != '-') {
      if (is_empty_dir((*argv)[i])) write_seed((*argv)[i]);
      break;
    }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FILE *f = fopen(g.path, "wb");
  must(f && fwrite(data, 1, size, f) == size && fclose(f) == 0, "cannot write the input file");
  fcl_checkpoint_state st;
  memset(&st, 0xa5, sizeof st);
  if (fcl_checkpoint_read(g.path, 2, g.fields, &st) != FCL_OK) {
    must(fcl_last_error()[0] != '\0', "an error without message");
    return 0;
  }
  must(isfinite(st.time) && st.time >= 0 && isfinite(st.dt) && st.step >= 0 &&
           st.nparams <= FCL_CHECKPOINT_MAX_PARAMS,
       "a checkpoint read back with an impossible state");
  return 0;
}
