/* Device memory shared between processes (fcl_mem_share, fcl_mem_open_shared): each rank
 * shares a buffer, opens its peer's, reads the peer's first half into its own memory and writes
 * its own values into the peer's second half, on its queue (a rectangle too: the copy kernel
 * into another process's memory); after a barrier each rank finds both. Errors: a share that
 * is not one, a process's own share, memory that is not device memory. Where the backend has
 * no shares (OpenCL) the errors are checked and the rest is a skip; on one rank, not
 * applicable. */
#include <stdlib.h>
#include <string.h>

#include "comm_test_util.h"

enum { WORDS = 1 << 16 };

static int32_t value(int rank, int i) { return 1000000 * (rank + 1) + i; }

static void run(fcl_test_mpi_env *e) {
  const int me = e->rank, P = e->size;
  const size_t half = WORDS * sizeof(int32_t);
  fcl_mem *mine = NULL, *pinned = NULL, *theirs = NULL, *copy = NULL;
  unsigned char share[FCL_MEM_SHARE_BYTES], junk[FCL_MEM_SHARE_BYTES] = "not a share";
  int32_t *host = malloc(2 * half);
  CHECK(host != NULL);
  if (!host) return;
  for (int i = 0; i < 2 * WORDS; ++i) host[i] = i < WORDS ? value(me, i) : -1;
  CHECK_OK(fcl_mem_create(e->ctx, FCL_MEM_DEVICE, 2 * half, host, &mine));
  CHECK_OK(fcl_mem_create(e->ctx, FCL_MEM_DEVICE, half, NULL, &copy));
  CHECK_OK(fcl_mem_create(e->ctx, FCL_MEM_PINNED, 64, NULL, &pinned));
  CHECK_STATUS(fcl_mem_share(pinned, share), FCL_ERR_NOT_SUPPORTED, "");
  CHECK_STATUS(fcl_mem_open_shared(e->ctx, NULL, &theirs), FCL_ERR_INVALID_ARGUMENT, "share");
  fcl_status st = fcl_mem_share(mine, share);
  int can = st == FCL_OK, all = 0;
  if (!can) { /* a backend without shares says so */
    CHECK_STATUS(st, FCL_ERR_NOT_SUPPORTED, "cannot be shared");
    CHECK_STATUS(fcl_mem_open_shared(e->ctx, junk, &theirs), FCL_ERR_NOT_SUPPORTED, "");
  } else {
    CHECK_STATUS(fcl_mem_open_shared(e->ctx, junk, &theirs), FCL_ERR_INVALID_ARGUMENT,
                 "not a share");
    CHECK_STATUS(fcl_mem_open_shared(e->ctx, share, &theirs), FCL_ERR_NOT_SUPPORTED,
                 "this process");
  }
  MPI_Allreduce(&can, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (P != 2 || !all) {
    if (P != 2 && me == 0) printf("  (not applicable: %d ranks, the test takes 2)\n", P);
    if (P == 2 && !all) fcl_test_skip_part(NULL, "memory shared between processes");
    goto done;
  }
  unsigned char got[FCL_MEM_SHARE_BYTES];
  MPI_Sendrecv(share, FCL_MEM_SHARE_BYTES, MPI_BYTE, 1 - me, 0, got, FCL_MEM_SHARE_BYTES, MPI_BYTE,
               1 - me, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  st = fcl_mem_open_shared(e->ctx, got, &theirs);
  can = st == FCL_OK;
  MPI_Allreduce(&can, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all) { /* the two devices cannot reach each other (or the ranks share one) */
    if (!can) CHECK_STATUS(st, FCL_ERR_NOT_SUPPORTED, "cuIpcOpenMemHandle");
    fcl_test_skip_part(NULL, "memory shared between processes (the devices cannot reach)");
    goto done;
  }
  CHECKF(fcl_mem_size(theirs) == 2 * half, "opened %zu bytes of %zu", fcl_mem_size(theirs),
         2 * half);
  /* the peer's first half here; ours into the peer's second half: rows of 64 words, every other
   * one by a rectangle and the rest by a plain copy */
  CHECK_OK(fcl_mem_copy(e->q, theirs, 0, copy, 0, half, 0, NULL, NULL));
  const size_t row = 64 * sizeof(int32_t);
  fcl_rect r = {.src_origin = {0, 0, 0},
                .dst_origin = {0, 0, 0},
                .region = {row, WORDS / 128, 1},
                .src_row_pitch = 2 * row,
                .src_slice_pitch = half,
                .dst_row_pitch = 2 * row,
                .dst_slice_pitch = half};
  r.dst_origin[1] = half / (2 * row); /* the second half */
  CHECK_OK(fcl_mem_copy_rect(e->q, mine, theirs, &r, 0, NULL, NULL));
  r.src_origin[0] = r.dst_origin[0] = row;
  CHECK_OK(fcl_mem_copy_rect(e->q, mine, theirs, &r, 0, NULL, NULL));
  CHECK_OK(fcl_queue_finish(e->q));
  MPI_Barrier(MPI_COMM_WORLD); /* both ranks' copies are done */
  CHECK_OK(fcl_mem_read(e->q, mine, 0, 2 * half, host, FCL_BLOCKING, 0, NULL, NULL));
  int bad = 0;
  for (int i = 0; i < 2 * WORDS; ++i)
    bad += host[i] != (i < WORDS ? value(me, i) : value(1 - me, i - WORDS));
  CHECKF(bad == 0, "rank %d: %d of its words wrong after the peer wrote", me, bad);
  CHECK_OK(fcl_mem_read(e->q, copy, 0, half, host, FCL_BLOCKING, 0, NULL, NULL));
  bad = 0;
  for (int i = 0; i < WORDS; ++i) bad += host[i] != value(1 - me, i);
  CHECKF(bad == 0, "rank %d: %d words read from the peer wrong", me, bad);
  fcl_mem_release(&theirs);
  MPI_Barrier(MPI_COMM_WORLD); /* the peer closed this rank's memory before it goes */
done:
  fcl_mem_release(&theirs);
  fcl_mem_release(&mine);
  fcl_mem_release(&copy);
  fcl_mem_release(&pinned);
  free(host);
}

int main(int argc, char **argv) { return fcl_test_mpi_main(&argc, &argv, NULL, run); }
