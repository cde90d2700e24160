/* Shared main of the MPI tests (see fcl_test_mpi.h). */
#include "fcl_test_mpi.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *dir_tag;
  fcl_test_mpi_fn fn;
} job;

/* The ranks of a node spread over the devices that are twins of the test's (same backend and
 * name: the GPUs of a multi-GPU machine), as an application's ranks do, so that the exchanges
 * between devices (the device transport) are tested where there are several. */
static const fcl_device_entry *spread(const fcl_device_entry *device, fcl_device_entry *out) {
  MPI_Comm node;
  int local = 0;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &local);
  MPI_Comm_free(&node);
  fcl_device_entry *list = NULL;
  size_t n = 0, twins = 0;
  fcl_device_info mine, other;
  if (fcl_device_list(&list, &n) != FCL_OK || fcl_device_get_info(device->device, &mine) != FCL_OK)
    n = 0;
  for (size_t i = 0; i < n; ++i) /* the twins, in the list's order, to the front */
    if (!strcmp(fcl_device_backend(list[i].device), fcl_device_backend(device->device)) &&
        fcl_device_get_info(list[i].device, &other) == FCL_OK && !strcmp(other.name, mine.name))
      list[twins++] = list[i];
  const bool found = twins > 1;
  if (found) *out = list[(size_t)local % twins];
  free(list);
  fcl_clear_error();
  return found ? out : device;
}

static void on_device(const fcl_device_entry *given, void *user) {
  const job *j = user;
  fcl_test_mpi_env e = {0};
  MPI_Comm_rank(MPI_COMM_WORLD, &e.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &e.size);
  fcl_device_entry twin;
  const fcl_device_entry *device = spread(given, &twin);
  fcl_device_info info;
  CHECK_OK(fcl_device_get_info(device->device, &info));
  e.fp64 = info.double_fp_config != 0;
  CHECK_OK(fcl_context_create(1, &device->device, &e.ctx));
  CHECK_OK(fcl_queue_create(e.ctx, device->device, 0, &e.q));
  CHECK_OK(fcl_allocator_create_deferred(e.ctx, FCL_MEM_DEVICE, &e.alloc));
  CHECK_OK(fcl_pool_create(e.alloc, NULL, &e.pool));
  if (j->dir_tag && e.rank == 0) {
    char *dir = fcl_test_temp_dir(j->dir_tag);
    snprintf(e.dir, sizeof e.dir, "%s", dir ? dir : "");
    free(dir);
  }
  MPI_Bcast(e.dir, sizeof e.dir, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (!fcl_test_failures) j->fn(&e);
  MPI_Barrier(MPI_COMM_WORLD);
  if (e.dir[0] && e.rank == 0) fcl_test_remove_dir(e.dir);
  fcl_pool_release(&e.pool);
  fcl_allocator_release(&e.alloc);
  fcl_queue_release(&e.q);
  fcl_context_release(&e.ctx);
}

int fcl_test_mpi_main(int *argc, char ***argv, const char *dir_tag, fcl_test_mpi_fn fn) {
  MPI_Init(argc, argv);
  job j = {dir_tag, fn};
  int rc = fcl_test_run_on_devices(on_device, &j);
  /* a skip on any rank (no device, or a part not run) makes the test a skip */
  int failed = rc == 1, any_failed = 0, skipped = rc == FCL_TEST_SKIP, any_skipped = 0;
  MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(&skipped, &any_skipped, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any_failed ? 1 : any_skipped ? FCL_TEST_SKIP : 0;
}
