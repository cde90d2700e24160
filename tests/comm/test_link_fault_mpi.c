/* A link's watchdog: rank 1 never joins an exchange that rank 0 enqueued (a peer that failed).
 * Rank 0's host, which ran ahead of its device, must not hang: its waits (an event, the queue,
 * a blocking read) fail with the reason once FLOWCL_LINK_TIMEOUT (2 s here) has passed, later
 * exchanges on the link are refused, and once the link is released the queue works again; then,
 * on a new link, a release right after such an exchange returns after the limit. A
 * healthy exchange first checks the link moved the data. Where the device transport does not
 * run (no links: OpenCL, PoCL; or the ranks share a GPU) the test is a skip. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comm_test_util.h"

enum { WORDS = 1 << 18 }; /* 1 MiB sent each way */

static void run(fcl_test_mpi_env *e) {
  if (e->size != 2) {
    if (e->rank == 0) printf("  (not applicable: %d ranks, the test takes 2)\n", e->size);
    return;
  }
  if (!fcl_test_device_transport(e)) { /* the whole test is about device links */
    fcl_test_skip_part(NULL, "the link's watchdog (no device transport between these ranks)");
    return;
  }
  setenv("FLOWCL_LINK_TIMEOUT", "2", 0); /* set outside (0: no limit) to see the test fail */
  const double limit = atof(getenv("FLOWCL_LINK_TIMEOUT"));
  const int me = e->rank, peer = 1 - me;
  unsigned char id[FCL_LINK_ID_BYTES] = {0};
  if (me == 0) CHECK_OK(fcl_link_id(fcl_context_device(e->ctx, 0), id));
  MPI_Bcast(id, FCL_LINK_ID_BYTES, MPI_BYTE, 0, MPI_COMM_WORLD);
  fcl_link *link = NULL;
  fcl_mem *buf = NULL;
  CHECK_OK(fcl_link_create(e->ctx, id, 2, me, &link));
  const size_t bytes = WORDS * sizeof(int32_t);
  CHECK_OK(fcl_mem_create(e->ctx, FCL_MEM_DEVICE, 2 * bytes, NULL, &buf));
  if (!link || !buf) goto done;
  int32_t *host = malloc(bytes);
  if (!host) goto done;
  for (int i = 0; i < WORDS; ++i) host[i] = 1000000 * (me + 1) + i;
  CHECK_OK(fcl_mem_write(e->q, buf, 0, bytes, host, FCL_BLOCKING, 0, NULL, NULL));
  const fcl_link_message m[2] = {{buf, 0, bytes, peer, true}, {buf, bytes, bytes, peer, false}};
  CHECK_OK(fcl_link_exchange(link, e->q, 2, m));
  CHECK_OK(fcl_mem_read(e->q, buf, bytes, bytes, host, FCL_BLOCKING, 0, NULL, NULL));
  int wrong = 0;
  for (int i = 0; i < WORDS; ++i) wrong += host[i] != 1000000 * (peer + 1) + i;
  CHECKF(wrong == 0, "the healthy exchange: %d of %d values wrong", wrong, (int)WORDS);
  free(host);

  if (me == 0) {
    alarm(30); /* a hang (no watchdog) ends the test as a failure, not at CTest's limit */
    CHECK_OK(fcl_link_exchange(link, e->q, 2, m)); /* rank 1 never joins it */
    fcl_event *after = NULL;
    CHECK_OK(fcl_queue_marker(e->q, 0, NULL, &after));
    const double t0 = MPI_Wtime();
    if (after) CHECK_STATUS(fcl_events_wait(1, &after), FCL_ERR_CUDA, "FLOWCL_LINK_TIMEOUT");
    const double waited = MPI_Wtime() - t0;
    CHECKF(waited > 0.75 * limit && waited < limit + 5, "the wait failed after %.1f s (limit %g s)",
           waited, limit);
    fcl_event_release(&after);
    CHECK_STATUS(fcl_queue_finish(e->q), FCL_ERR_CUDA, "a link was aborted");
    int32_t word = 0;
    CHECK_STATUS(fcl_mem_read(e->q, buf, 0, sizeof word, &word, FCL_BLOCKING, 0, NULL, NULL),
                 FCL_ERR_CUDA, "a peer failed or never joined it");
    CHECK_STATUS(fcl_link_exchange(link, e->q, 2, m), FCL_ERR_CUDA, "the link was aborted");
    alarm(0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  /* rank 0's link is aborted already; rank 1 leaves at once (its peer is gone) */
  fcl_link_release(&link, me == 1);
  CHECK_OK(fcl_queue_finish(e->q)); /* the failure went with the link */

  /* a release (not an abort) right after an exchange the peer never joins: it waits for the
   * exchange under the watchdog, which aborts it, instead of waiting in NCCL for ever */
  if (me == 0) CHECK_OK(fcl_link_id(fcl_context_device(e->ctx, 0), id));
  MPI_Bcast(id, FCL_LINK_ID_BYTES, MPI_BYTE, 0, MPI_COMM_WORLD);
  CHECK_OK(fcl_link_create(e->ctx, id, 2, me, &link));
  if (link && me == 0) {
    alarm(30);
    CHECK_OK(fcl_link_exchange(link, e->q, 2, m));
    const double t0 = MPI_Wtime();
    fcl_link_release(&link, false);
    const double took = MPI_Wtime() - t0;
    CHECKF(took > 0.75 * limit && took < limit + 5, "the release took %.1f s (limit %g s)", took,
           limit);
    CHECK_OK(fcl_queue_finish(e->q)); /* the aborted exchange's kernels ended */
    alarm(0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  fcl_link_release(&link, true);
done:
  fcl_link_release(&link, true);
  fcl_mem_release(&buf);
}

int main(int argc, char **argv) { return fcl_test_mpi_main(&argc, &argv, NULL, run); }
