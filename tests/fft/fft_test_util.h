/* Helpers shared by the FFT and spectral-operator tests: grids, fields, the documented slot
 * layout read back from the device, tolerances per precision. */
#ifndef FLOWCL_FFT_TEST_UTIL_H
#define FLOWCL_FFT_TEST_UTIL_H

#include "fcl_test_mpi.h"

#define PI 3.14159265358979323846

typedef fcl_test_mpi_env env;

/* A periodic grid of dim axes with these resolutions and lengths, slabs along the last axis,
 * ghost width 2 (so transforms must read and write the padded storage correctly). */
static inline fcl_topology *slab_topology(int dim, const int64_t *n, const double *length) {
  fcl_domain d = fcl_domain_periodic(dim, 8, 1.0);
  for (int a = 0; a < dim; ++a) {
    d.resolution[a] = n[a];
    d.length[a] = length ? length[a] : 2 * PI;
  }
  int procs[3] = {1, 1, 1}, ghosts[3] = {2, 2, 2}, size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  procs[dim - 1] = size;
  fcl_topology *t = NULL;
  CHECK_OK(fcl_topology_create(MPI_COMM_WORLD, &d, procs, ghosts, &t));
  return t;
}

/* Pencils: procs 1 x p1 x (ranks / p1), one ghost layer (thin parts along z). */
static inline fcl_topology *pencil_topology(int dim, const int64_t *n, const double *length,
                                            int p1) {
  fcl_domain d = fcl_domain_periodic(dim, 8, 2 * PI);
  for (int a = 0; a < dim; ++a) {
    d.resolution[a] = n[a];
    d.length[a] = length ? length[a] : 2 * PI;
  }
  int size, ghosts[3] = {1, 1, 1};
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int procs[3] = {1, p1, size / p1};
  fcl_topology *t = NULL;
  CHECK_OK(fcl_topology_create(MPI_COMM_WORLD, &d, procs, ghosts, &t));
  return t;
}

/* Relative tolerance on Linf norms of spectral results: about 100 epsilons of the precision
 * (FFT rounding grows like eps log N; the grids here are below 2^10 points per axis). */
static inline double fft_tolerance(fcl_dtype dt) { return dt == FCL_FLOAT64 ? 1e-12 : 1e-5; }

/* The global wavenumber indices (mx, my, mz) of local slot value number i (fft.h's layout). */
static inline void slot_index(const fcl_fft_layout *l, size_t i, int64_t m[3]) {
  int64_t d0 = l->local[l->order[0]], d1 = l->local[l->order[1]];
  int64_t mem[3] = {(int64_t)i % d0, ((int64_t)i / d0) % d1, (int64_t)i / (d0 * d1)};
  for (int d = 0; d < 3; ++d) m[l->order[d]] = mem[d] + l->offset[l->order[d]];
}

/* A slot's values read back as complex double pairs, value i of slot_index at 2 i (malloc'd,
 * 2 * count values: the padding of the rows, past local[order[0]] of each pitch, dropped). */
static inline double *read_slot(env *e, fcl_fft *fft, int slot, fcl_dtype dt) {
  const fcl_fft_layout *l = fcl_fft_layout_of(fft);
  const size_t row = (size_t)l->local[l->order[0]], pitch = (size_t)l->pitch;
  double *out = malloc((2 * l->count + 1) * sizeof *out);
  void *raw = malloc(l->bytes + 1);
  if (l->bytes)
    CHECK_OK(
        fcl_mem_read(e->q, fcl_fft_slot(fft, slot), 0, l->bytes, raw, FCL_BLOCKING, 0, NULL, NULL));
  for (size_t i = 0; i < l->count; ++i)
    for (size_t p = 0; p < 2; ++p) {
      const size_t at = 2 * (i / row * pitch + i % row) + p;
      out[2 * i + p] = dt == FCL_FLOAT64 ? ((double *)raw)[at] : ((float *)raw)[at];
    }
  free(raw);
  return out;
}

/* The backends built in, to run every check on each. */
static inline int backends(fcl_fft_backend *out) {
  int n = 0;
  if (fcl_fft_backend_available(FCL_FFT_VKFFT)) out[n++] = FCL_FFT_VKFFT;
  if (fcl_fft_backend_available(FCL_FFT_FFTW)) out[n++] = FCL_FFT_FFTW;
  return n;
}

/* Whether fftw-mpi's split of n over p (blocks of ceil(n / p)) is the topology's (the first
 * n mod p ranks one more) on every rank. */
static inline bool fftw_split_matches(int64_t n, int p) {
  int64_t block = (n + p - 1) / p;
  for (int r = 0; r < p; ++r) {
    int64_t ours = n / p + (r < n % p ? 1 : 0);
    int64_t theirs = n - r * block < 0 ? 0 : (n - r * block < block ? n - r * block : block);
    if (ours != theirs) return false;
  }
  return true;
}

#endif
