/* Links (fcl_link): the watchdog limit's parsing; the argument checks, which come before any
 * device is asked; a device of a backend without links says why; where the device links (CUDA
 * with NCCL), a group of one process: its size and rank, an empty exchange, and messages
 * refused before any is sent (no peer but oneself, bytes past the buffer, memory of another
 * backend). */
#include <stdlib.h>
#include <string.h>

#include "fcl_test.h"

static void check_device(const fcl_device_entry *e, void *user) {
  (void)user;
  fcl_context *ctx = NULL;
  fcl_queue *q = NULL;
  CHECK_OK(fcl_context_create(1, &e->device, &ctx));
  CHECK_OK(fcl_queue_create(ctx, e->device, 0, &q));
  if (!ctx || !q) return;
  unsigned char id[FCL_LINK_ID_BYTES] = {0};
  fcl_link *link = NULL;
  CHECK_STATUS(fcl_link_create(ctx, id, 0, 0, &link), FCL_ERR_INVALID_ARGUMENT,
               "argument 3 (ranks)");
  CHECK_STATUS(fcl_link_create(ctx, id, 2, 2, &link), FCL_ERR_INVALID_ARGUMENT,
               "argument 4 (rank)");
  CHECK_STATUS(fcl_link_create(ctx, NULL, 1, 0, &link), FCL_ERR_INVALID_ARGUMENT,
               "argument 2 (id)");
  CHECK_STATUS(fcl_link_supported(NULL), FCL_ERR_INVALID_ARGUMENT, "device");
  CHECK(link == NULL);
  fcl_link_release(NULL, false); /* accepted */
  fcl_link_release(&link, true);

  if (fcl_link_supported(e->device) != FCL_OK) {
    /* no links here: every entry says so, naming the reason */
    CHECK(fcl_last_status() == FCL_ERR_NOT_SUPPORTED && strlen(fcl_last_error()) > 0);
    CHECK_STATUS(fcl_link_id(e->device, id), FCL_ERR_NOT_SUPPORTED, "link");
    CHECK_STATUS(fcl_link_create(ctx, id, 1, 0, &link), FCL_ERR_NOT_SUPPORTED, "link");
    CHECKF(strcmp(fcl_device_backend(e->device), "opencl") != 0 ||
               fcl_test_contains(fcl_last_error(), "opencl devices have no links"),
           "the reason: %s", fcl_last_error());
  } else {
    CHECK_OK(fcl_link_id(e->device, id));
    CHECK_OK(fcl_link_create(ctx, id, 1, 0, &link));
    int ranks = 0, rank = -1;
    if (link) CHECK_OK(fcl_link_ranks(link, &ranks, &rank));
    CHECK(ranks == 1 && rank == 0);
    fcl_mem *buf = NULL;
    CHECK_OK(fcl_mem_create(ctx, FCL_MEM_DEVICE, 256, NULL, &buf));
    if (link && buf) {
      CHECK_OK(fcl_link_exchange(link, q, 0, NULL));
      fcl_link_message m = {buf, 0, 64, 0, true};
      CHECK_STATUS(fcl_link_exchange(link, q, 1, &m), FCL_ERR_INVALID_ARGUMENT, "peer 0");
      m = (fcl_link_message){buf, 200, 64, 1, true};
      CHECK_STATUS(fcl_link_exchange(link, q, 1, &m), FCL_ERR_INVALID_ARGUMENT, "64 bytes at 200");
      m = (fcl_link_message){NULL, 0, 64, 1, false};
      CHECK_STATUS(fcl_link_exchange(link, q, 1, &m), FCL_ERR_INVALID_ARGUMENT, "NULL memory");
      CHECK_OK(fcl_queue_finish(q));
    }
    fcl_mem_release(&buf);
    fcl_link_release(&link, false);
    CHECK(link == NULL);
  }
  fcl_queue_release(&q);
  fcl_context_release(&ctx);
}

/* The watchdog's limit from FLOWCL_LINK_TIMEOUT: its default, a value, no limit, refusals. */
static void check_timeout(void) {
  double t = -1;
  unsetenv("FLOWCL_LINK_TIMEOUT");
  CHECK_OK(fcl_link_timeout(&t));
  CHECKF(t == 600, "default limit %g s (600)", t);
  setenv("FLOWCL_LINK_TIMEOUT", "2.5", 1);
  CHECK_OK(fcl_link_timeout(&t));
  CHECKF(t == 2.5, "limit %g s (2.5)", t);
  setenv("FLOWCL_LINK_TIMEOUT", "0", 1);
  CHECK_OK(fcl_link_timeout(&t));
  CHECKF(t == 0, "limit %g s (0: none)", t);
  static const char *const bad[] = {"-1", "ten", "5s", "nan"};
  for (int i = 0; i < 4; ++i) {
    setenv("FLOWCL_LINK_TIMEOUT", bad[i], 1);
    CHECK_STATUS(fcl_link_timeout(&t), FCL_ERR_INVALID_ARGUMENT, "FLOWCL_LINK_TIMEOUT");
  }
  CHECK_STATUS(fcl_link_timeout(NULL), FCL_ERR_INVALID_ARGUMENT, "seconds");
  unsetenv("FLOWCL_LINK_TIMEOUT");
}

int main(void) {
  check_timeout();
  return fcl_test_run_on_devices(check_device, NULL);
}
