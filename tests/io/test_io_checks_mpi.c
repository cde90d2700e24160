/* The refusals io.h promises that the other I/O tests leave out, on 1 or 2 ranks:
 *   - a series' directory that cannot be created is FCL_ERR_IO; a series of a 1D domain is
 *     FCL_ERR_NOT_SUPPORTED;
 *   - a checkpoint path over FCL_IO_MAX_PATH is refused before anything is written;
 *   - no checkpoint: fcl_checkpoint_latest and fcl_checkpoint_read_latest are FCL_ERR_NOT_FOUND;
 *     when every checkpoint fails to read, read_latest warns of each newer one it skips, naming
 *     it, and returns the error of the oldest;
 *   - a checkpoint of another format version is refused (FCL_ERR_NOT_SUPPORTED), and one
 *     without the field asked for is an error naming the file. */
#include <hdf5.h>
#include <stdlib.h>
#include <string.h>

#include "fcl_test_mpi.h"
#include "io_impl.h"

typedef fcl_test_mpi_env env;

static int rank_;
static char logged[8192]; /* the warnings logged while captured */

static void capture(fcl_log_level level, const char *message, void *user) {
  (void)user;
  const size_t used = strlen(logged);
  if (level >= FCL_LOG_WARNING) snprintf(logged + used, sizeof logged - used, "%s\n", message);
}

static fcl_field *scalar(env *e, fcl_topology *t, const char *name) {
  fcl_field *f = NULL;
  CHECK_OK(fcl_field_create(t, e->ctx, e->q, e->pool, name, 1, FCL_FLOAT32, &f));
  return f;
}

static void series_refusals(env *e) {
  char file[1024], under[1100];
  snprintf(file, sizeof file, "%s/plain-file", e->dir);
  snprintf(under, sizeof under, "%s/series", file);
  if (rank_ == 0) {
    FILE *f = fopen(file, "w");
    CHECK(f != NULL);
    if (f) fclose(f);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  fcl_io_series *s = NULL;
  CHECK_STATUS(fcl_io_series_create(under, "flow", &s), FCL_ERR_IO, under);
  CHECK(s == NULL);
  fcl_domain d = fcl_domain_periodic(1, 16, 1.0);
  fcl_topology *t = NULL;
  CHECK_OK(fcl_topology_create(MPI_COMM_WORLD, &d, NULL, NULL, &t));
  fcl_field *u = t ? scalar(e, t, "u") : NULL;
  CHECK_OK(fcl_io_series_create(e->dir, "line", &s));
  if (u && s) CHECK_STATUS(fcl_io_series_write(s, 1, &u, 0, 0), FCL_ERR_NOT_SUPPORTED, "1D");
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank_ == 0) CHECK(fcl_test_count_files(e->dir, "line_") == 0);
  fcl_io_series_destroy(&s);
  fcl_field_destroy(&u);
  fcl_topology_destroy(&t);
}

/* Overwrite the checkpoint_format attribute of path with format and seal the file again. */
static void set_format(const char *path, int format) {
  if (rank_ == 0) {
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t a = f >= 0 ? H5Aopen(f, "checkpoint_format", H5P_DEFAULT) : -1;
    CHECK(a >= 0 && H5Awrite(a, H5T_NATIVE_INT, &format) >= 0);
    if (a >= 0) H5Aclose(a);
    if (f >= 0) H5Fclose(f);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_OK(fcl__io_seal(path, MPI_COMM_WORLD));
}

static void checkpoint_refusals(env *e) {
  fcl_domain d = fcl_domain_periodic(2, 8, 1.0);
  fcl_topology *t = NULL;
  CHECK_OK(fcl_topology_create(MPI_COMM_WORLD, &d, NULL, NULL, &t));
  fcl_field *u = t ? scalar(e, t, "u") : NULL, *v = t ? scalar(e, t, "v") : NULL;
  if (!u || !v) return;
  const char *dir = e->dir;
  char path[1024];
  fcl_checkpoint_state s = {.time = 1, .dt = 0.1, .step = 3};
  fcl_checkpoint_state got;
  /* nothing there yet */
  CHECK_STATUS(fcl_checkpoint_latest(dir, "run", path, sizeof path), FCL_ERR_NOT_FOUND, "run_");
  CHECK_STATUS(fcl_checkpoint_read_latest(dir, "run", 1, &u, &got, NULL, 0), FCL_ERR_NOT_FOUND,
               "run_");
  /* a path MPI-IO cannot take: refused, nothing written */
  char deep[sizeof e->dir + FCL_IO_MAX_PATH + 8];
  snprintf(deep, sizeof deep, "%s/%0*d", e->dir, FCL_IO_MAX_PATH, 0);
  CHECK_STATUS(fcl_checkpoint_write(deep, "run", 0, 1, &u, &s, NULL, 0), FCL_ERR_INVALID_ARGUMENT,
               "MPI-IO");
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank_ == 0)
    CHECKF(fcl_test_count_files(e->dir, "0000") == 0 && fcl_test_count_files(deep, "run") == 0,
           "%s", "a refused checkpoint left a directory or a file behind");
  /* two checkpoints, each damaged: read_latest fails with the oldest's error */
  char first[1024], second[1024];
  CHECK_OK(fcl_checkpoint_write(dir, "run", 0, 1, &u, &s, first, sizeof first));
  s.step = 5;
  CHECK_OK(fcl_checkpoint_write(dir, "run", 0, 1, &u, &s, second, sizeof second));
  CHECK_STATUS(fcl_checkpoint_read(second, 1, &v, &got), FCL_ERR_INVALID_ARGUMENT, second);
  set_format(first, FCL_CHECKPOINT_FORMAT + 1);
  set_format(second, FCL_CHECKPOINT_FORMAT - 1);
  CHECK_STATUS(fcl_checkpoint_read(second, 1, &u, &got), FCL_ERR_NOT_SUPPORTED, "format 1");
  logged[0] = '\0';
  fcl_log_set_handler(capture, NULL);
  CHECK_STATUS(fcl_checkpoint_read_latest(dir, "run", 1, &u, &got, path, sizeof path),
               FCL_ERR_NOT_SUPPORTED, first);
  fcl_log_set_handler(NULL, NULL);
  CHECKF(fcl_test_contains(fcl_last_error(), "format 3"),
         "read_latest did not return the oldest's error: %s", fcl_last_error());
  if (rank_ == 0) /* rank 0 warns */
    CHECKF(fcl_test_contains(logged, "skipping") && fcl_test_contains(logged, second) &&
               fcl_test_contains(logged, "format 1"),
           "no warning naming the skipped newer checkpoint and why: %s", logged);
  fcl_field_destroy(&u);
  fcl_field_destroy(&v);
  fcl_topology_destroy(&t);
}

static void run_all(env *e) {
  rank_ = e->rank;
  series_refusals(e);
  checkpoint_refusals(e);
}

int main(int argc, char **argv) { return fcl_test_mpi_main(&argc, &argv, "io-checks", run_all); }
