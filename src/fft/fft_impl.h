/* Internal structures of the FFT layer (src/fft): one plan, one backend behind a small ops
 * table (VkFFT in fft_vkfft.c, FFTW and fftw-mpi in fft_fftw.c). */
#ifndef FLOWCL_FFT_IMPL_H
#define FLOWCL_FFT_IMPL_H

#include "comm_impl.h"
#include "field_impl.h"
#include "flowcl/fft.h"

/* Components a distributed transform call takes at once, at most (a 3D vector field), and the
 * largest spectral share per rank and component (global shape over ranks) that is batched. */
enum { FCL__FFT_BATCH = 3 };
#define FCL__FFT_BATCH_BYTES ((size_t)32 << 20)

typedef struct {
  /* n (<= the plan's batch) components comp[i] of a field to or from the slots slot[i]; odd[i]:
   * bit a set where component comp[i] is odd about the walls of axis a (fcl__fft_walls_parity;
   * the backend reads the bits of the walled axes of its topology, fcl__fft_walls_native) */
  fcl_status (*forward)(fcl_fft *fft, const fcl_field *src, int n, const int *comp,
                        const unsigned *odd, fcl_mem *const *slot);
  fcl_status (*backward)(fcl_fft *fft, int n, fcl_mem *const *slot, fcl_field *dst, const int *comp,
                         const unsigned *odd);
  fcl_status (*inplace)(fcl_fft *fft, fcl_mem *slot, bool forward);
  void (*destroy)(void *state);
} fcl__fft_ops;

/* Every rank's verdict on st (collective over comm): st where it failed, FCL_ERR_FFT naming
 * what where another rank failed, so that no rank goes on into a collective alone. */
fcl_status fcl__fft_agree(MPI_Comm comm, fcl_status st, const char *what);

/* Walls (fft_walls.c): the extended field a plan with walled axes transforms, and the copies
 * into and out of it. `native`: bit a set for the walled axes the backend transforms itself
 * (fcl__fft_walls_native), which are not extended. */
typedef struct fcl__fft_walls fcl__fft_walls;
/* The walled axes VkFFT transforms by the mirrored column pass: axes 1 and 2 with N - 1 a power
 * of two, N from 3 to 2049 (x, the r2c axis, is always extended). 0 for FFTW. */
unsigned fcl__fft_walls_native(const fcl_domain *d, fcl_fft_backend backend);
/* d with its walled axes not in native extended to periodic ones of 2 (N - 1) points over 2 L. */
void fcl__fft_walls_domain(const fcl_domain *d, unsigned native, fcl_domain *ext);
/* The topology of like's domain so extended (the field's process grid, no ghosts): NULL in *out
 * (and FCL_OK) where no axis is extended; errors for walls the scheme cannot take (any walled
 * axis). Collective. */
fcl_status fcl__fft_walls_topology(const fcl_field *like, unsigned native, fcl_topology **out);
/* The same with a field of ncomp components on it (NULL where nothing is extended). Collective. */
fcl_status fcl__fft_walls_create(const fcl_field *like, unsigned native, int ncomp,
                                 fcl__fft_walls **out);
void fcl__fft_walls_destroy(fcl__fft_walls **walls);
const fcl_field *fcl__fft_walls_field(const fcl__fft_walls *walls);
/* Bit a of *odd set where component comp of f is Dirichlet (odd) on the walls of axis a;
 * FCL_ERR_NOT_SUPPORTED where its two walls of an axis differ. */
fcl_status fcl__fft_walls_parity(const fcl_field *f, int comp, unsigned *odd);
/* Enqueue component comp of src extended into extended component at, or the reverse. */
fcl_status fcl__fft_walls_extend(fcl__fft_walls *walls, const fcl_field *src, int comp, int at);
fcl_status fcl__fft_walls_restrict(fcl__fft_walls *walls, int at, fcl_field *dst, int comp);

struct fcl_fft {
  /* the fields the plan takes (check_use); with extended walls, topo and padded below are those
   * of the extended field the backend transforms */
  const fcl_topology *field_topo;
  size_t field_padded[3];
  bool has_walls;
  fcl__fft_walls *walls; /* NULL where no axis is extended */
  fcl_domain spectral;   /* the domain of the wavenumbers: every walled axis extended */
  const fcl_topology *topo;
  fcl_context *context;
  fcl_queue *queue;
  fcl_dtype dtype;
  size_t real_size; /* bytes of one real value */
  size_t padded[3]; /* the fields' padded local shape */
  int dim;
  fcl_fft_backend backend;
  bool distributed;
  const char *description;
  fcl_fft_layout layout;
  int nslots;
  int batch;         /* components per distributed transform call, at most (one all-to-all) */
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

/* The layout of the device scheme, memory (x, y, z). Slabs (procs 1 x 1 x P): the second-to-last
 * axis split over the ranks, the others whole. Pencils (3D, procs 1 x P1 x P2, P1 > 1): x split
 * over the P1 ranks of a row, y over the P2 ranks of a column, z whole. */
void fcl__fft_device_layout(const fcl_topology *topo, fcl_dtype dtype, fcl_fft_layout *layout);

/* Whether a 3D topology is split along y (the pencil scheme) rather than in slabs. */
static inline bool fcl__fft_pencils(const fcl_topology *topo) {
  return topo->domain.dim == 3 && topo->procs[1] > 1;
}

/* Block split of the distributed schemes (the topology's): the first n mod p parts get one more. */
static inline void fcl__fft_split(int64_t n, int p, int r, int64_t *count, int64_t *start) {
  int64_t base = n / p, extra = n % p;
  *count = base + (r < extra ? 1 : 0);
  *start = r * base + (r < extra ? r : extra);
}

/* An all-to-all transpose over comm (fft_transpose.c): a complex array of shape `before`
 * (memory x, y, z), axis `whole` held whole and axis `split` in this rank's part of split_global
 * points, becomes one with `whole` split over comm's ranks and `split` whole; parts are
 * fcl__fft_split's, by rank in comm; up to `batch` arrays (components) per run, in one
 * exchange. Collective over comm. */
typedef struct fcl__fft_transpose fcl__fft_transpose;
fcl_status fcl__fft_transpose_create(const fcl_fft *fft, MPI_Comm comm, const int64_t before[3],
                                     int whole, int split, int64_t split_global, int batch,
                                     fcl__fft_transpose **out);
void fcl__fft_transpose_destroy(fcl__fft_transpose **t);
/* n arrays: forward before[i] -> after[i]; backward after[i] -> before[i]. Collective over its
 * comm. */
fcl_status fcl__fft_transpose_run(fcl__fft_transpose *t, int n, fcl_mem *const *before,
                                  fcl_mem *const *after, bool forward);
/* Bytes of the array before or after. */
size_t fcl__fft_transpose_bytes(const fcl__fft_transpose *t, bool after);
/* Name of the transport it runs on ("staged", "mpi"). */
const char *fcl__fft_transpose_transport(const fcl__fft_transpose *t);

#endif
