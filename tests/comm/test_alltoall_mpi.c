/* The all-to-all of device blocks on every transport (mpi, staged, device where the devices
 * link) and on auto: strided blocks
 * of rows out of a 3D array, uneven splits (one rank gets more rows), forward into contiguous
 * runs and backward again, each value naming its source rank and position, one pair of buffers
 * or a batch of two in one run; the device transport by peer writes and by the link's sends;
 * FLOWCL_TRANSPORT and FLOWCL_PEER_WRITES errors. */
#include <stdlib.h>
#include <string.h>

#include "comm_test_util.h"

enum { NX = 5, NZ = 7 };

/* Rows of ny split over P ranks: the first ny mod P get one more. */
static void rows(int ny, int P, int q, int *n, int *lo) {
  *n = ny / P + (q < ny % P ? 1 : 0);
  *lo = q * (ny / P) + (q < ny % P ? q : ny % P);
}

static int32_t value(int rank, int i, int j, int k, int ny) {
  return rank * 1000000 + (k * ny + j) * NX + i;
}

/* b_kind: where the contiguous side lives (pinned host memory cannot be shared: the device
 * transport's peer writes then come through its staging one way and go straight the other). */
static void check_transport(fcl_test_mpi_env *e, fcl__transport kind, const char *expect,
                            fcl_mem_kind b_kind) {
  const int P = e->size, me = e->rank, ny = 2 * P + 1;
  const size_t row = NX * sizeof(int32_t), a_bytes = row * (size_t)ny * NZ;
  int my_n, my_lo;
  rows(ny, P, me, &my_n, &my_lo);
  const size_t b_bytes = (size_t)P * row * (size_t)my_n * NZ;
  fcl__block *send = calloc((size_t)P, sizeof *send), *recv = calloc((size_t)P, sizeof *recv);
  int32_t *a = malloc(a_bytes), *b = malloc(b_bytes), *back = malloc(a_bytes);
  CHECK(send && recv && a && b && back);
  if (!send || !recv || !a || !b || !back) return;
  for (int q = 0; q < P; ++q) {
    int n, lo;
    rows(ny, P, q, &n, &lo);
    fcl__block s = {(size_t)lo * row, {row, (size_t)n, NZ}, row, row * (size_t)ny};
    send[q] = s;
    recv[q] = fcl__block_range((size_t)q * row * (size_t)my_n * NZ, row * (size_t)my_n * NZ);
  }
  for (int k = 0; k < NZ; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < NX; ++i) a[(k * ny + j) * NX + i] = value(me, i, j, k, ny);
  /* two pairs of buffers: the second's values shifted by SHIFT (a batch of two in one run) */
  enum { SHIFT = 500000 };
  fcl_mem *da[2], *db[2];
  for (int p = 0; p < 2; ++p) {
    for (size_t v = 0; p && v < a_bytes / sizeof *a; ++v) a[v] += SHIFT;
    CHECK_OK(fcl_mem_create(e->ctx, FCL_MEM_DEVICE, a_bytes, a, &da[p]));
    CHECK_OK(fcl_mem_create(e->ctx, b_kind, b_bytes, NULL, &db[p]));
  }
  for (size_t v = 0; v < a_bytes / sizeof *a; ++v) a[v] -= SHIFT;
  fcl__alltoall *x = NULL;
  CHECK_OK(
      fcl__alltoall_create(e->ctx, e->q, MPI_COMM_WORLD, sizeof(int32_t), send, recv, 2, kind, &x));
  if (x) {
    /* auto on one node: staged; one rank alone keeps its block on the device either way */
    CHECKF(strcmp(fcl__alltoall_transport(x), expect) == 0, "transport %s: got %s",
           fcl__transport_name(kind), fcl__alltoall_transport(x));
    /* the device transport stores into the peers' memory on two ranks, on any number with
     * FLOWCL_PEER_WRITES=on, never with off */
    const char *pw = getenv("FLOWCL_PEER_WRITES");
    const bool automatic = !pw || !*pw || strcmp(pw, "auto") == 0,
               peer = fcl__alltoall_peer_writes(x),
               want = strcmp(expect, "device") == 0 && P > 1 &&
                      (automatic ? P == 2 : strcmp(pw, "on") == 0);
    CHECKF(!peer || want, "peer writes on the %s transport, FLOWCL_PEER_WRITES %s, %d ranks",
           expect, automatic ? "auto" : pw, P);
    if (want && !peer)
      fcl_test_skip_part(NULL, "the device transport's peer writes (the ranks' devices cannot "
                               "open each other's memory: the log says why)");
    /* one pair, again (a second run reuses the staging), then both pairs at once */
    for (int rep = 0; rep < 3; ++rep) {
      const int pairs = rep < 2 ? 1 : 2;
      CHECK_OK(pairs == 1 ? fcl__alltoall_run(x, da[0], db[0], true)
                          : fcl__alltoall_run_batch(x, 2, da, db, true));
      for (int p = 0; p < pairs; ++p) {
        CHECK_OK(fcl_mem_read(e->q, db[p], 0, b_bytes, b, FCL_BLOCKING, 0, NULL, NULL));
        int bad = 0;
        for (int q = 0; q < P; ++q)
          for (int k = 0; k < NZ; ++k)
            for (int jj = 0; jj < my_n; ++jj)
              for (int i = 0; i < NX; ++i) {
                size_t at = (size_t)q * NX * my_n * NZ + ((size_t)k * my_n + jj) * NX + i;
                bad += b[at] != value(q, i, my_lo + jj, k, ny) + p * SHIFT;
              }
        CHECKF(bad == 0, "%s forward, pair %d of %d: %d values wrong on rank %d", expect, p, pairs,
               bad, me);
      }
      int32_t zero = -1;
      for (int p = 0; p < pairs; ++p)
        CHECK_OK(fcl_mem_fill(e->q, da[p], &zero, sizeof zero, 0, a_bytes, 0, NULL, NULL));
      CHECK_OK(pairs == 1 ? fcl__alltoall_run(x, da[0], db[0], false)
                          : fcl__alltoall_run_batch(x, 2, da, db, false));
      for (int p = 0; p < pairs; ++p) {
        CHECK_OK(fcl_mem_read(e->q, da[p], 0, a_bytes, back, FCL_BLOCKING, 0, NULL, NULL));
        for (size_t v = 0; v < a_bytes / sizeof *a; ++v) back[v] -= p * SHIFT;
        CHECKF(memcmp(back, a, a_bytes) == 0,
               "%s backward, pair %d of %d: not the original on "
               "rank %d",
               expect, p, pairs, me);
      }
    }
    CHECK_STATUS(fcl__alltoall_run_batch(x, 3, da, db, true), FCL_ERR_INTERNAL, "1 to 2");
  }
  fcl__alltoall_destroy(&x);
  for (int p = 0; p < 2; ++p) {
    fcl_mem_release(&da[p]);
    fcl_mem_release(&db[p]);
  }
  free(send);
  free(recv);
  free(a);
  free(b);
  free(back);
}

static void run(fcl_test_mpi_env *e) {
  check_transport(e, FCL__TRANSPORT_MPI, "mpi", FCL_MEM_DEVICE);
  check_transport(e, FCL__TRANSPORT_STAGED, "staged", FCL_MEM_DEVICE);
  const bool linked = fcl_test_device_transport(e);
  if (linked) {
    check_transport(e, FCL__TRANSPORT_DEVICE, "device", FCL_MEM_DEVICE); /* auto */
    check_transport(e, FCL__TRANSPORT_DEVICE, "device", FCL_MEM_PINNED);
    setenv("FLOWCL_PEER_WRITES", "on", 1); /* on any number of ranks */
    check_transport(e, FCL__TRANSPORT_DEVICE, "device", FCL_MEM_DEVICE);
    setenv("FLOWCL_PEER_WRITES", "off", 1); /* sends and receives on the link */
    check_transport(e, FCL__TRANSPORT_DEVICE, "device", FCL_MEM_DEVICE);
    setenv("FLOWCL_PEER_WRITES", "sometimes", 1);
    fcl__block whole = fcl__block_range(0, 4);
    fcl__block *blocks = malloc((size_t)e->size * sizeof *blocks);
    for (int q = 0; blocks && q < e->size; ++q) blocks[q] = whole;
    fcl__alltoall *x = NULL;
    CHECK_STATUS(fcl__alltoall_create(e->ctx, e->q, MPI_COMM_WORLD, 4, blocks, blocks, 1,
                                      FCL__TRANSPORT_DEVICE, &x),
                 FCL_ERR_INVALID_ARGUMENT, "FLOWCL_PEER_WRITES='sometimes'");
    CHECK(x == NULL);
    free(blocks);
    unsetenv("FLOWCL_PEER_WRITES");
  }
  check_transport(e, FCL__TRANSPORT_AUTO, linked ? "device" : "staged", FCL_MEM_DEVICE);
  /* the staged transport's pipeline: many chunks (of 2 slices or rows here) */
  setenv("FLOWCL_TRANSPORT_CHUNK", "200", 1);
  check_transport(e, FCL__TRANSPORT_STAGED, "staged", FCL_MEM_DEVICE);
  unsetenv("FLOWCL_TRANSPORT_CHUNK");

  fcl__transport t;
  setenv("FLOWCL_TRANSPORT", "carrier-pigeon", 1);
  CHECK_STATUS(fcl__transport_from_env(&t), FCL_ERR_INVALID_ARGUMENT, "carrier-pigeon");
  setenv("FLOWCL_TRANSPORT", "device", 1);
  CHECK_OK(fcl__transport_from_env(&t));
  CHECK(t == FCL__TRANSPORT_DEVICE);
  setenv("FLOWCL_TRANSPORT", "mpi", 1);
  CHECK_OK(fcl__transport_from_env(&t));
  CHECK(t == FCL__TRANSPORT_MPI);
  unsetenv("FLOWCL_TRANSPORT");
  CHECK_OK(fcl__transport_from_env(&t));
  CHECK(t == FCL__TRANSPORT_AUTO);
}

int main(int argc, char **argv) { return fcl_test_mpi_main(&argc, &argv, NULL, run); }
