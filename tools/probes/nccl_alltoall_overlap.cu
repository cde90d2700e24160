// Probe, not part of the library: does an all-to-all between GPUs run under a bandwidth-bound
// kernel? NCCL's all-to-all between the ranks' GPUs (one rank per GPU), three ways: the default
// CTA policy (SM kernels), the efficiency policy, and the Zero-CTA policy on symmetric windows
// (ncclMemAlloc + ncclCommWindowRegister; NCCL 2.28 then moves it with the copy engines), each
// alone, beside a kernel that streams 3 GiB (a = 2 b + a) on another stream, and the sum of the
// two alone. Build and run on a machine with several GPUs, CUDA and NCCL:
//   nvcc -O2 -std=c++17 -arch=sm_90 tools/probes/nccl_alltoall_overlap.cu -o /tmp/a2a_probe \
//        $(mpicc --showme:compile) $(mpicc --showme:link) -lnccl
//   mpirun -n 2 /tmp/a2a_probe 256        (MiB per rank)
// What it measured (two and four H200, NCCL 2.28, 2026-11-28) is in docs/benchmarks.md.
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>

#define CK(x) do { cudaError_t e = (x); if (e) { printf("cuda %s at %d\n", cudaGetErrorString(e), __LINE__); MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)
#define NK(x) do { ncclResult_t r = (x); if (r) { printf("nccl %s at %d\n", ncclGetErrorString(r), __LINE__); MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)

__global__ void scale(float *a, const float *b, size_t n) { // a = 2 b + a: 12 bytes a point
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    a[i] = 2.f * b[i] + a[i];
}

static float ms(cudaEvent_t a, cudaEvent_t b) { float t; cudaEventElapsedTime(&t, a, b); return t; }

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, P;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  size_t bytes = (size_t)(argc > 1 ? atoi(argv[1]) : 256) << 20;
  size_t count = bytes / sizeof(float) / P;
  CK(cudaSetDevice(rank));
  cudaStream_t s[2];
  for (int i = 0; i < 2; ++i) CK(cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking));
  cudaEvent_t ev[8];
  for (int i = 0; i < 8; ++i) CK(cudaEventCreate(&ev[i]));
  size_t nk = (size_t)1 << 28; // 1 GiB per kernel array
  float *ka, *kb;
  CK(cudaMalloc(&ka, nk * 4)); CK(cudaMalloc(&kb, nk * 4));
  CK(cudaMemset(ka, 0, nk * 4)); CK(cudaMemset(kb, 0, nk * 4));
  for (int policy = 0; policy < 3; ++policy) {
    ncclUniqueId id;
    if (!rank) NK(ncclGetUniqueId(&id));
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    cfg.CTAPolicy = policy == 0 ? NCCL_CTA_POLICY_DEFAULT : policy == 1 ? NCCL_CTA_POLICY_EFFICIENCY : NCCL_CTA_POLICY_ZERO;
    ncclComm_t comm;
    NK(ncclCommInitRankConfig(&comm, P, id, rank, &cfg));
    void *a, *b;
    ncclWindow_t wa = NULL, wb = NULL;
    if (policy == 2) {
      NK(ncclMemAlloc(&a, bytes)); NK(ncclMemAlloc(&b, bytes));
      NK(ncclCommWindowRegister(comm, a, bytes, &wa, NCCL_WIN_COLL_SYMMETRIC));
      NK(ncclCommWindowRegister(comm, b, bytes, &wb, NCCL_WIN_COLL_SYMMETRIC));
    } else {
      CK(cudaMalloc(&a, bytes)); CK(cudaMalloc(&b, bytes));
    }
    CK(cudaMemset(a, 1, bytes));
    CK(cudaDeviceSynchronize());
    const int R = 20;
    float t_a2a[R], t_k[R], t_both[R], t_kb[R];
    for (int r = 0; r < R; ++r) {
      MPI_Barrier(MPI_COMM_WORLD);
      CK(cudaEventRecord(ev[0], s[0]));
      NK(ncclAlltoAll(a, b, count, ncclFloat, comm, s[0]));
      CK(cudaEventRecord(ev[1], s[0]));
      CK(cudaStreamSynchronize(s[0]));
      t_a2a[r] = ms(ev[0], ev[1]);
      CK(cudaEventRecord(ev[2], s[1]));
      scale<<<132 * 8, 256, 0, s[1]>>>(ka, kb, nk);
      CK(cudaEventRecord(ev[3], s[1]));
      CK(cudaStreamSynchronize(s[1]));
      t_k[r] = ms(ev[2], ev[3]);
      MPI_Barrier(MPI_COMM_WORLD); // both at once: the kernel started first, the exchange beside it
      CK(cudaEventRecord(ev[4], s[1]));
      scale<<<132 * 8, 256, 0, s[1]>>>(ka, kb, nk);
      CK(cudaEventRecord(ev[6], s[1]));
      CK(cudaStreamWaitEvent(s[0], ev[4], 0));
      NK(ncclAlltoAll(a, b, count, ncclFloat, comm, s[0]));
      CK(cudaEventRecord(ev[5], s[0]));
      CK(cudaDeviceSynchronize());
      float e1 = ms(ev[4], ev[5]), e2 = ms(ev[4], ev[6]);
      t_both[r] = e1 > e2 ? e1 : e2;
      t_kb[r] = e2;
    }
    // medians
    auto med = [](float *x, int n) { for (int i = 0; i < n; ++i) for (int j = i + 1; j < n; ++j) if (x[j] < x[i]) { float t = x[i]; x[i] = x[j]; x[j] = t; } return x[n / 2]; };
    float A = med(t_a2a, R), K = med(t_k, R), B = med(t_both, R), KB = med(t_kb, R);
    if (!rank)
      printf("P=%d %zu MiB/rank policy %s: a2a %.3f ms (%.1f GB/s out per rank), kernel %.3f ms, both %.3f ms (kernel in it %.3f; serial would be %.3f)\n",
             P, bytes >> 20, policy == 0 ? "default" : policy == 1 ? "efficiency" : "zero+symmetric", A,
             bytes * (P - 1.0) / P / A / 1e6, K, B, KB, A + K);
    if (policy == 2) {
      NK(ncclCommWindowDeregister(comm, wa)); NK(ncclCommWindowDeregister(comm, wb));
      NK(ncclMemFree(a)); NK(ncclMemFree(b));
    } else {
      CK(cudaFree(a)); CK(cudaFree(b));
    }
    NK(ncclCommDestroy(comm));
  }
  MPI_Finalize();
  return 0;
}
