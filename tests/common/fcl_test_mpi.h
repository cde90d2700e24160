/* Shared main of the MPI tests: MPI set-up, one device environment per test device (context,
 * queue, pool, a temporary directory shared by the ranks) and an exit code every rank agrees
 * on (one failing rank fails the test; skipped only when every rank skipped). */
#ifndef FLOWCL_TEST_MPI_H
#define FLOWCL_TEST_MPI_H

#include "fcl_test.h"

typedef struct {
  fcl_context *ctx;
  fcl_queue *q;
  fcl_allocator *alloc;
  fcl_pool *pool;
  bool fp64;      /* the device has cl_khr_fp64 */
  int rank, size; /* in MPI_COMM_WORLD */
  char dir[512];  /* temporary directory shared by the ranks ("" unless asked for) */
} fcl_test_mpi_env;

typedef void (*fcl_test_mpi_fn)(fcl_test_mpi_env *env);

/* The whole main of an MPI test: dir_tag non-NULL gives env->dir (removed afterwards). */
int fcl_test_mpi_main(int *argc, char ***argv, const char *dir_tag, fcl_test_mpi_fn fn);

#endif
