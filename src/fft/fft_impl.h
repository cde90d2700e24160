/* Internal structures of the FFT layer (src/fft): one plan, one backend behind a small ops
 * table (VkFFT in fft_vkfft.c, FFTW and fftw-mpi in fft_fftw.c). */
#ifndef FLOWCL_FFT_IMPL_H
#define FLOWCL_FFT_IMPL_H

#include "comm_impl.h"
#include "field_impl.h"
#include "flowcl/fft.h"

typedef struct {
  fcl_status (*forward)(fcl_fft *fft, const fcl_field *src, int comp, cl_mem slot);
  fcl_status (*backward)(fcl_fft *fft, cl_mem slot, fcl_field *dst, int comp);
  fcl_status (*inplace)(fcl_fft *fft, cl_mem slot, bool forward);
  void (*destroy)(void *state);
} fcl__fft_ops;

struct fcl_fft {
  const fcl_topology *topo;
  fcl_context *context;
  cl_command_queue queue;
  fcl_dtype dtype;
  size_t real_size; /* bytes of one real value */
  size_t padded[3]; /* the fields' padded local shape */
  int dim;
  fcl_fft_backend backend;
  bool distributed;
  const char *description;
  fcl_fft_layout layout;
  int nslots;
  size_t slot_bytes; /* max of the spectral layout and the padded real form */
  fcl_array **slots;
  const fcl__fft_ops *ops;
  void *state;
};

/* Backends: plan into fft->state / fft->ops (the common fields are set). */
fcl_status fcl__fft_vkfft_plan(fcl_fft *fft, fcl_pool *pool);
fcl_status fcl__fft_fftw_plan(fcl_fft *fft);
/* fftw-mpi's layout for the topology: false (and no error) when its split of the last axis is
 * not the topology's. Collective. */
bool fcl__fft_fftw_layout(const fcl_topology *topo, fcl_dtype dtype, fcl_fft_layout *layout);

/* The slab layout of the device scheme: memory (x, y, z) with the second-to-last axis split
 * after the transpose (all of it on one rank). */
void fcl__fft_slab_layout(const fcl_topology *topo, fcl_dtype dtype, fcl_fft_layout *layout);

/* Block split used by the slab scheme: the first n mod p parts get one more. */
static inline void fcl__fft_split(int64_t n, int p, int r, int64_t *count, int64_t *start) {
  int64_t base = n / p, extra = n % p;
  *count = base + (r < extra ? 1 : 0);
  *start = r * base + (r < extra ? r : extra);
}

/* The all-to-all transpose of the slab scheme between the pre-transpose complex array (whole
 * along the second-to-last axis) and the slot layout (whole along the last axis), on the comm
 * layer's transport (fft_slab_transpose.c). */
typedef struct fcl__slab_transpose fcl__slab_transpose;
fcl_status fcl__slab_transpose_create(const fcl_fft *fft, fcl__slab_transpose **out);
void fcl__slab_transpose_destroy(fcl__slab_transpose **t);
/* forward: pre -> slot; backward: slot -> pre. */
fcl_status fcl__slab_transpose_run(fcl__slab_transpose *t, cl_mem pre, cl_mem slot, bool forward);
size_t fcl__slab_transpose_pre_bytes(const fcl__slab_transpose *t);
/* Name of the transport the transpose runs on ("staged", "mpi"). */
const char *fcl__slab_transpose_transport(const fcl__slab_transpose *t);

#endif
