// Probe, not part of the library: how fast can two GPUs of one host move a slab transform's
// all-to-all block to each other, both directions at once? The block of a 512^3 float slab
// transpose on two ranks (flowcl's fft_transpose.c): 256 slices of 526,336 contiguous bytes each
// (complex x 257, 256 rows of y), one slice every 1,052,672 bytes, into a contiguous run on the
// peer. Ways, each both GPUs at once, medians of 20:
//   kernel: an SM copy kernel reads the local strided block and stores into the peer's memory
//           (peer access; what CUDA IPC gives two processes), 16-byte words, several grid sizes;
//   ce:     the copy engines, one cudaMemcpyPeerAsync per slice (256 a direction);
//   ce1:    the copy engines, the block contiguous (one cudaMemcpyPeerAsync), the bound without
//           packing;
//   local:  the kernel into the own GPU's memory (the packing pass alone).
// Build and run on a machine with two GPUs and the CUDA toolkit:
//   nvcc -O2 -std=c++17 -arch=sm_90 tools/probes/peer_write_transpose.cu -o /tmp/pw && /tmp/pw
#include <algorithm>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <vector>

#define CK(x)                                                                                      \
  do {                                                                                             \
    cudaError_t e = (x);                                                                           \
    if (e) {                                                                                       \
      printf("cuda %s at %d\n", cudaGetErrorString(e), __LINE__);                                  \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

// words of 16 bytes: chunk c of `chunk` words starts at c * pitch in src, c * chunk in dst
__global__ void gather(const uint4 *src, uint4 *dst, size_t chunk, size_t pitch, size_t chunks) {
  size_t n = chunk * chunks;
  for (size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x; k < n;
       k += (size_t)gridDim.x * blockDim.x) {
    size_t c = k / chunk, i = k - c * chunk;
    dst[k] = src[c * pitch + i];
  }
}

static const size_t SLICE = 526336, PITCH = 2 * 526336, SLICES = 256;

int main() {
  int n = 0;
  CK(cudaGetDeviceCount(&n));
  if (n < 2) {
    printf("needs two GPUs\n");
    return 2;
  }
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  char *src[2], *dst[2];
  cudaStream_t s[2];
  cudaEvent_t e0[2], e1[2];
  for (int g = 0; g < 2; ++g) {
    CK(cudaSetDevice(g));
    CK(cudaDeviceEnablePeerAccess(1 - g, 0));
    CK(cudaMalloc(&src[g], PITCH * SLICES));
    CK(cudaMalloc(&dst[g], SLICE * SLICES));
    CK(cudaMemset(src[g], g + 1, PITCH * SLICES));
    CK(cudaStreamCreateWithFlags(&s[g], cudaStreamNonBlocking));
    CK(cudaEventCreate(&e0[g]));
    CK(cudaEventCreate(&e1[g]));
  }
  const double mb = SLICE * SLICES / 1e6;
  printf("block %.1f MB a direction, %d SMs\n", mb, sms);
  // way: 0 kernel to peer, 1 ce per slice, 2 ce contiguous, 3 kernel local
  auto run = [&](int way, int blocks) {
    std::vector<float> t;
    for (int r = 0; r < 22; ++r) {
      for (int g = 0; g < 2; ++g) {
        CK(cudaSetDevice(g));
        CK(cudaDeviceSynchronize());
      }
      float worst = 0;
      for (int g = 0; g < 2; ++g) {
        CK(cudaSetDevice(g));
        char *to = way == 3 ? dst[g] : dst[1 - g];
        CK(cudaEventRecord(e0[g], s[g]));
        if (way == 0 || way == 3)
          gather<<<blocks, 512, 0, s[g]>>>((const uint4 *)src[g], (uint4 *)to, SLICE / 16,
                                            PITCH / 16, SLICES);
        else if (way == 1)
          for (size_t c = 0; c < SLICES; ++c)
            CK(cudaMemcpyPeerAsync(to + c * SLICE, 1 - g, src[g] + c * PITCH, g, SLICE, s[g]));
        else
          CK(cudaMemcpyPeerAsync(to, 1 - g, src[g], g, SLICE * SLICES, s[g]));
        CK(cudaEventRecord(e1[g], s[g]));
      }
      for (int g = 0; g < 2; ++g) {
        CK(cudaSetDevice(g));
        CK(cudaEventSynchronize(e1[g]));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0[g], e1[g]));
        worst = std::max(worst, ms);
      }
      if (r >= 2) t.push_back(worst);
    }
    std::sort(t.begin(), t.end());
    float med = t[t.size() / 2];
    const char *name[] = {"kernel to peer", "ce per slice", "ce contiguous", "kernel local"};
    printf("%-15s blocks %5d: %.3f ms, %.1f GB/s a direction\n", name[way], blocks, med,
           mb / med); // MB per ms: GB/s
  };
  for (int b : {sms, 2 * sms, 4 * sms, 8 * sms, 16 * sms}) run(0, b);
  run(1, 0);
  run(2, 0);
  // check, before the local runs overwrite it: one slice of the peer's data arrived
  std::vector<unsigned char> h(SLICE);
  CK(cudaSetDevice(1));
  CK(cudaMemcpy(h.data(), dst[1] + 17 * SLICE, SLICE, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < SLICE; ++i)
    if (h[i] != 1) {
      printf("wrong byte %zu: %d\n", i, h[i]);
      return 1;
    }
  printf("data checked\n");
  for (int b : {sms, 4 * sms}) run(3, b);
  return 0;
}
