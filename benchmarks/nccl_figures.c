/* NCCL figures for benchmarks/exchange (nccl_figures.h). */
#include "nccl_figures.h"

#include <cuda_runtime.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef struct {
  MPI_Comm comm;
  int rank, size;
  ncclComm_t nccl;
  cudaStream_t stream;
  char *send, *recv;
} nccl_env;

/* One exchange: pair (with rank ^ 1, bytes each way) or all-to-all (bytes to every peer). */
static ncclResult_t exchange(nccl_env *e, int pair, size_t bytes) {
  ncclResult_t r = ncclGroupStart();
  for (int q = 0; r == ncclSuccess && q < e->size; ++q) {
    if (q == e->rank || (pair && q != (e->rank ^ 1))) continue;
    size_t at = pair ? 0 : (size_t)q * bytes;
    r = ncclSend(e->send + at, bytes, ncclChar, q, e->nccl, e->stream);
    if (r == ncclSuccess) r = ncclRecv(e->recv + at, bytes, ncclChar, q, e->nccl, e->stream);
  }
  ncclResult_t end = ncclGroupEnd();
  return r != ncclSuccess ? r : end;
}

/* Median over repeats of the slowest rank's time of one exchange (after a warm-up), t[repeats]
 * the room for the times; -1 on a failure on any rank. An exchange that a rank could not enqueue
 * is agreed on before any rank waits for its stream (its peers' halves would never complete). */
static double timed(nccl_env *e, int pair, size_t bytes, int repeats, double *t) {
  for (int i = -1; i < repeats; ++i) {
    MPI_Barrier(e->comm);
    double t0 = MPI_Wtime();
    int bad = exchange(e, pair, bytes) != ncclSuccess, anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, e->comm);
    if (anybad) return -1;
    bad = cudaStreamSynchronize(e->stream) != cudaSuccess;
    double dt = MPI_Wtime() - t0, slowest = dt;
    MPI_Allreduce(&dt, &slowest, 1, MPI_DOUBLE, MPI_MAX, e->comm);
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, e->comm);
    if (anybad) return -1;
    if (i >= 0) t[i] = slowest;
  }
  qsort(t, (size_t)repeats, sizeof *t, by_value);
  return repeats % 2 ? t[repeats / 2] : 0.5 * (t[repeats / 2 - 1] + t[repeats / 2]);
}

/* Every rank's verdict: 0 where all succeeded, else the worst (1 before -1). */
static int agree(MPI_Comm comm, int mine) {
  int worst = mine == 0 ? 0 : mine == 1 ? 1 : 2, all = 0;
  MPI_Allreduce(&worst, &all, 1, MPI_INT, MPI_MAX, comm);
  return all == 0 ? 0 : all == 1 ? 1 : -1;
}

int nccl_measure(MPI_Comm comm, size_t out_bytes, int repeats, nccl_figures *out, char *why,
                 size_t why_size) {
  nccl_env e = {.comm = comm};
  MPI_Comm_rank(comm, &e.rank);
  MPI_Comm_size(comm, &e.size);
  *out = (nccl_figures){0, 0};
  snprintf(why, why_size, "an error on another rank");
  MPI_Comm node;
  int local = 0, devices = 0;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, e.rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &local);
  MPI_Comm_free(&node);
  cudaError_t ce = cudaGetDeviceCount(&devices);
  int st = ce == cudaSuccess && devices > 0 ? 0 : 1;
  if (st) snprintf(why, why_size, "no CUDA device (%s)", cudaGetErrorString(ce));
  if ((st = agree(comm, st)) != 0) return st;
  /* all-to-all: out_bytes spread over the peers; pair: out_bytes / 2 each way */
  const size_t peers = e.size > 1 ? (size_t)(e.size - 1) : 1, share = out_bytes / peers;
  const size_t buffer = share * (size_t)e.size > out_bytes ? share * (size_t)e.size : out_bytes;
  ce = cudaSetDevice(local % devices);
  if (ce == cudaSuccess) ce = cudaStreamCreate(&e.stream);
  if (ce == cudaSuccess) ce = cudaMalloc((void **)&e.send, buffer);
  if (ce == cudaSuccess) ce = cudaMalloc((void **)&e.recv, buffer);
  if (ce == cudaSuccess) ce = cudaMemset(e.send, 1, buffer);
  if (ce != cudaSuccess) snprintf(why, why_size, "CUDA: %s", cudaGetErrorString(ce));
  st = agree(comm, ce == cudaSuccess ? 0 : -1);
  ncclUniqueId id = {{0}};
  if (st == 0) { /* rank 0 makes the communicator's id, every rank gets it */
    int bad = e.rank == 0 && ncclGetUniqueId(&id) != ncclSuccess;
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm);
    if (bad) snprintf(why, why_size, "NCCL: no unique id");
    st = agree(comm, bad ? -1 : 0);
  }
  ncclResult_t nr = ncclSuccess;
  /* (a rank whose init fails may leave the others waiting inside NCCL's bootstrap) */
  if (st == 0) nr = ncclCommInitRank(&e.nccl, e.size, id, e.rank);
  if (nr != ncclSuccess) snprintf(why, why_size, "NCCL: %s", ncclGetErrorString(nr));
  if (st == 0) st = agree(comm, nr == ncclSuccess ? 0 : -1);
  double *t = st == 0 ? malloc((size_t)repeats * sizeof *t) : NULL;
  if (st == 0) {
    if (!t) snprintf(why, why_size, "out of host memory");
    st = agree(comm, t ? 0 : -1);
  }
  if (st == 0 && e.size > 1) {
    double t_pair = e.size % 2 == 0 ? timed(&e, 1, out_bytes / 2, repeats, t) : 0;
    double t_all = t_pair >= 0 ? timed(&e, 0, share, repeats, t) : -1;
    if (t_pair < 0 || t_all < 0) {
      snprintf(why, why_size, "an NCCL exchange failed");
      st = -1;
    } else {
      out->pair_gbs = t_pair > 0 ? (double)(out_bytes / 2) / t_pair / 1e9 : 0;
      out->alltoall_ms = t_all * 1e3;
    }
  }
  free(t);
  /* a failed exchange may leave operations posted: abort rather than wait for them */
  if (e.nccl && st == 0)
    ncclCommDestroy(e.nccl);
  else if (e.nccl)
    ncclCommAbort(e.nccl);
  cudaFree(e.send);
  cudaFree(e.recv);
  if (e.stream) cudaStreamDestroy(e.stream);
  return st;
}
