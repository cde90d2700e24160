/* What the comm tests share. */
#ifndef FLOWCL_TESTS_COMM_TEST_UTIL_H
#define FLOWCL_TESTS_COMM_TEST_UTIL_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "comm_impl.h"
#include "fcl_test_mpi.h"

/* Whether the device transport runs on the test's ranks (every rank's device links, each its
 * own). Where it does not, joining a link fails alike on every rank with FCL_ERR_NOT_SUPPORTED
 * and a reason; a skipped part where this rank's device could link (the ranks share a GPU),
 * not one where it cannot (an OpenCL device has no links to test). */
static inline bool fcl_test_device_transport(fcl_test_mpi_env *e) {
  fcl_link *link = NULL;
  fcl_status st = fcl__link_join(e->ctx, MPI_COMM_WORLD, &link);
  if (st == FCL_ERR_NOT_SUPPORTED) {
    const char *why = fcl_last_error();
    CHECKF(strstr(why, "link") || strstr(why, "NCCL"), "no device transport, reason '%s'", why);
    char what[320];
    snprintf(what, sizeof what, "the device transport (%s)", why);
    int could = fcl_link_supported(fcl_context_device(e->ctx, 0)) == FCL_OK, any = 0;
    MPI_Allreduce(&could, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any)
      fcl_test_skip_part(NULL, what);
    else if (e->rank == 0)
      printf("  (not applicable: %s)\n", what);
    fcl_clear_error();
    return false;
  }
  CHECK_OK(st);
  int ranks = 0, rank = -1;
  if (link) CHECK_OK(fcl_link_ranks(link, &ranks, &rank));
  CHECKF(!link || (ranks == e->size && rank == e->rank), "link rank %d of %d", rank, ranks);
  fcl__link_leave(&link);
  return st == FCL_OK;
}

#endif
