/* NCCL figures beside benchmarks/exchange's: device buffers moved between the ranks' GPUs by
 * NCCL (CUDA), the device-direct path (NVLink where the GPUs have it) that the OpenCL transports
 * cannot take. Built when FLOWCL_WITH_NCCL is on (the CUDA toolkit and NCCL found). */
#ifndef FLOWCL_BENCH_NCCL_FIGURES_H
#define FLOWCL_BENCH_NCCL_FIGURES_H

#include <mpi.h>
#include <stddef.h>

typedef struct {
  double pair_gbs;    /* ncclSend/ncclRecv of out_bytes / 2 between rank pairs, each way */
  double alltoall_ms; /* out_bytes leave each rank, spread over its peers, grouped */
} nccl_figures;

/* Collective over comm (every rank of one node or not). Each rank takes the CUDA device of its
 * node-local rank modulo their count. Returns 0 when measured (medians of repeats of the
 * slowest rank), 1 when some rank has no CUDA device (nothing measured, why in *why), -1 on an
 * error (what failed in *why). */
int nccl_measure(MPI_Comm comm, size_t out_bytes, int repeats, nccl_figures *out, char *why,
                 size_t why_size);

#endif
