/* The all-to-all of device blocks on every transport (mpi, staged) and on auto: strided blocks
 * of rows out of a 3D array, uneven splits (one rank gets more rows), forward into contiguous
 * runs and backward again, each value naming its source rank and position; FLOWCL_TRANSPORT
 * errors. */
#include <stdlib.h>
#include <string.h>

#include "comm_impl.h"
#include "fcl_test_mpi.h"

enum { NX = 5, NZ = 7 };

/* Rows of ny split over P ranks: the first ny mod P get one more. */
static void rows(int ny, int P, int q, int *n, int *lo) {
  *n = ny / P + (q < ny % P ? 1 : 0);
  *lo = q * (ny / P) + (q < ny % P ? q : ny % P);
}

static int32_t value(int rank, int i, int j, int k, int ny) {
  return rank * 1000000 + (k * ny + j) * NX + i;
}

static void check_transport(fcl_test_mpi_env *e, fcl__transport kind, const char *expect) {
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
  cl_int err;
  cl_context ctx = fcl_context_cl(e->ctx);
  cl_mem da = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, a_bytes, a, &err);
  cl_mem db = clCreateBuffer(ctx, CL_MEM_READ_WRITE, b_bytes, NULL, &err);
  fcl__alltoall *x = NULL;
  CHECK_OK(
      fcl__alltoall_create(e->ctx, e->q, MPI_COMM_WORLD, sizeof(int32_t), send, recv, kind, &x));
  if (x) {
    /* auto on one node: staged; one rank alone keeps its block on the device either way */
    CHECKF(strcmp(fcl__alltoall_transport(x), expect) == 0, "transport %s: got %s",
           fcl__transport_name(kind), fcl__alltoall_transport(x));
    for (int rep = 0; rep < 2; ++rep) { /* a second run reuses the staging */
      CHECK_OK(fcl__alltoall_run(x, da, db, true));
      clEnqueueReadBuffer(e->q, db, CL_TRUE, 0, b_bytes, b, 0, NULL, NULL);
      int bad = 0;
      for (int q = 0; q < P; ++q)
        for (int k = 0; k < NZ; ++k)
          for (int jj = 0; jj < my_n; ++jj)
            for (int i = 0; i < NX; ++i) {
              size_t at = (size_t)q * NX * my_n * NZ + ((size_t)k * my_n + jj) * NX + i;
              bad += b[at] != value(q, i, my_lo + jj, k, ny);
            }
      CHECKF(bad == 0, "%s forward: %d values wrong on rank %d", expect, bad, me);
      int32_t zero = -1;
      clEnqueueFillBuffer(e->q, da, &zero, sizeof zero, 0, a_bytes, 0, NULL, NULL);
      CHECK_OK(fcl__alltoall_run(x, da, db, false));
      clEnqueueReadBuffer(e->q, da, CL_TRUE, 0, a_bytes, back, 0, NULL, NULL);
      CHECKF(memcmp(back, a, a_bytes) == 0, "%s backward: not the original on rank %d", expect, me);
    }
  }
  fcl__alltoall_destroy(&x);
  clReleaseMemObject(da);
  clReleaseMemObject(db);
  free(send);
  free(recv);
  free(a);
  free(b);
  free(back);
}

static void run(fcl_test_mpi_env *e) {
  check_transport(e, FCL__TRANSPORT_MPI, "mpi");
  check_transport(e, FCL__TRANSPORT_STAGED, "staged");
  check_transport(e, FCL__TRANSPORT_AUTO, "staged");
  /* the staged transport's pipeline: many chunks (of 2 slices or rows here) */
  setenv("FLOWCL_TRANSPORT_CHUNK", "200", 1);
  check_transport(e, FCL__TRANSPORT_STAGED, "staged");
  unsetenv("FLOWCL_TRANSPORT_CHUNK");

  fcl__transport t;
  setenv("FLOWCL_TRANSPORT", "carrier-pigeon", 1);
  CHECK_STATUS(fcl__transport_from_env(&t), FCL_ERR_INVALID_ARGUMENT, "carrier-pigeon");
  setenv("FLOWCL_TRANSPORT", "device", 1);
  CHECK_STATUS(fcl__transport_from_env(&t), FCL_ERR_NOT_SUPPORTED, "device-direct");
  setenv("FLOWCL_TRANSPORT", "mpi", 1);
  CHECK_OK(fcl__transport_from_env(&t));
  CHECK(t == FCL__TRANSPORT_MPI);
  unsetenv("FLOWCL_TRANSPORT");
  CHECK_OK(fcl__transport_from_env(&t));
  CHECK(t == FCL__TRANSPORT_AUTO);
}

int main(int argc, char **argv) { return fcl_test_mpi_main(&argc, &argv, NULL, run); }
