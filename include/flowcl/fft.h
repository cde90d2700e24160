/** @file
 * flowcl FFT plans: real-to-complex transforms of field components on periodic domains, and on
 * domains walled along some axes (sine and cosine transforms there, below).
 *
 * Plan once, execute many (FFTW's contract): fcl_fft_create plans, compiles and allocates (and
 * may tune, with FFTW wisdom and VkFFT binaries cached on disk); fcl_fft_forward and
 * fcl_fft_backward allocate nothing. A plan owns nslots spectral buffers on the field's device;
 * forward transforms a component's interior into a slot, backward a slot into a component's
 * interior (ghosts are left as they were). Transforms are unnormalized, as FFTW's: backward
 * after forward multiplies by the number of grid points. Backward destroys the slot's content.
 * In-place transforms work on a slot alone: it holds a rank's real data in FFTW's padded form
 * (rows of 2 (nx / 2 + 1) values, or of twice the pitch where a VkFFT plan on one rank pads its
 * rows (below); the first nx used, over the rank's local grid, x fastest) and receives the
 * spectral values in their layout, or the reverse.
 *
 * Backends:
 *   - FCL_FFT_VKFFT: VkFFT's OpenCL backend on the field's device, reading and writing the
 *     field's padded storage in place (strided, no packing). Distributed fields (one device per
 *     rank): slabs transform the axes a rank holds whole, transpose over every rank (the comm
 *     layer's all-to-all) and transform the last axis; pencils transform x, transpose within
 *     each row of the process grid, transform y, transpose within each column, transform z.
 *     The data never leaves the devices for FFTW. (VkFFT sets its kernels' arguments on every
 *     call.)
 *   - FCL_FFT_FFTW: FFTW with threads on the host (one rank), fftw-mpi across ranks with
 *     transposed output; the field's interior is staged through host memory, the spectral slots
 *     stay on the device.
 *   - FCL_FFT_AUTO: VkFFT on GPUs and accelerators, FFTW on CPU devices (PoCL), VkFFT where
 *     FFTW is not built in or fftw-mpi cannot take the decomposition.
 *
 * Distributed plans need axis 0 whole: slabs along the last axis (procs = {1, 1, P} in 3D,
 * {1, P} in 2D; at most as many ranks as the second-to-last axis has complex points) or, in 3D
 * and with VkFFT only, pencils (procs = {1, P1, P2}, P1 > 1; at most nx / 2 + 1 ranks along y and
 * ny along z), for more ranks than one axis has points. fftw-mpi also needs FFTW's own split of
 * the last axis (ceil(n / P) per rank), which holds when P divides n. Pencil spectral layout:
 * complex x split over the P1 ranks of a row (coordinate 1), y over the P2 ranks of a column
 * (coordinate 2), z whole, memory order x, y, z.
 *
 * Rows of spectral values may be padded (fcl_fft_layout's pitch): a VkFFT plan on one rank
 * stores each row of nx / 2 + 1 complex values in a multiple of 8 of them, so that rows start on
 * 64-byte boundaries (flowcl-tgv's forward transform on one H200: 1.10 -> 1.06 ms at 512^3,
 * 11.89 -> 11.02 ms at 1024^3; docs/benchmarks.md); the padding holds no value and no kernel
 * needs to keep it.
 *
 * Along z, a VkFFT plan in 3D may run flowcl's own pass instead of VkFFT's (FLOWCL_FFT_COLUMNS:
 * auto, the default, on one rank in float on GPUs for 512 to 1024 points, where VkFFT's local
 * memory holds fewer whole columns than the pass's work-group; on, wherever it fits, on several
 * ranks too; off): VkFFT keeps whole columns in local memory, 4 columns of 1024 complex floats
 * in OpenCL's 48 KB on NVIDIA devices, and reads them in 32-byte pieces; the column pass keeps
 * them in registers and reads 8 columns at once (one H200, 1024^3: 5.38 -> 3.34 ms a pass;
 * flowcl-tgv's step 255.1 -> 237.3 ms; docs/benchmarks.md). On CUDA VkFFT takes the opt-in
 * 227 KB of an H200 and its own pass is the faster one: auto leaves z to it there.
 * fcl_fft_description says which runs.
 *
 * Walls: along a bounded axis of N points (both walls on the grid, field.h) a component is
 * transformed as the periodic axis of its mirror image, 2 (N - 1) points over twice the length:
 * odd about the walls where the component is Dirichlet (its wall values taken as 0: the sine
 * transform of its N - 2 interior points, FFTW's RODFT00 up to a factor -2i), even where it is
 * Neumann (the cosine transform of its N points, REDFT00). Each component has its own condition
 * (fcl_field_set_component_bc; a free-slip wall's normal velocity is Dirichlet, the tangential
 * ones Neumann), the same on both walls of an axis (else FCL_ERR_NOT_SUPPORTED at the
 * transform). The plan's domain (fcl_fft_domain) is the mirror image's: its wavenumbers
 * (2 pi / 2L * m = pi / L * m) and normalization (its number of points) are those of the
 * spectral kernels, which run on a walled plan unchanged; backward writes the N points of each
 * walled axis (an odd component's walls set to 0). How the mirror image is transformed:
 *   - VkFFT, walled y and z of N = 2^k + 1 points (3 to 2049): flowcl's mirrored column pass
 *     at the wall's own size, the layout holding the N values m = 0 .. N - 1 of the mirror
 *     image's spectrum along that axis (the others follow from its parity). It reads and writes
 *     each value once and, by the mirror symmetry, does the work of a periodic pass of
 *     N - 1 points (one H200, Biot-Savart with walls along y, 512^3 + 1: 0.81 of the periodic
 *     box's speed on CUDA; docs/benchmarks.md).
 *   - Otherwise (walls along x, the r2c axis; other N; FFTW): the field is copied into its
 *     mirror image, a field of up to 3 components held by the plan, which is transformed as a
 *     periodic one; the layout holds all 2 (N - 1) points (along x, N complex values, the r2c's
 *     half). It costs a copy in and out per transform and twice the points along the axis.
 * fcl_fft_layout_query says which layout a plan gets. A walled axis must be whole on every
 * rank: axis 0 always, axis 1 with 3D slabs (procs 1 x 1 x P), axis 2 on pencils 1 x P x 1,
 * any axis on one rank. In-place transforms take periodic plans only.
 *
 * Spectral layout: complex values of the global shape {nx / 2 + 1, ny, nz}, split over the
 * ranks along one axis and possibly stored transposed; fcl_fft_layout_query says how (query,
 * then allocate), and spectral kernels index a slot through it. The wavenumber of global index
 * m along an axis of n points and length L is 2 pi / L * (m <= n / 2 ? m : m - n), n and L
 * those of fcl_fft_domain (with walls, of the mirror image: a walled axis's layout holds
 * m <= n / 2 only, or all n).
 *
 * Functions marked Collective are called by every rank of the field's topology. */
#ifndef FLOWCL_FFT_H
#define FLOWCL_FFT_H

#include "flowcl/field.h"
#include "flowcl/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Who computes the transforms (the file comment says how each works). */
typedef enum {
  FCL_FFT_AUTO,  /**< VkFFT on GPUs and accelerators, FFTW on CPU devices, as available */
  FCL_FFT_VKFFT, /**< VkFFT's OpenCL backend on the field's device */
  FCL_FFT_FFTW   /**< FFTW on the host (fftw-mpi across ranks) */
} fcl_fft_backend;

/** "auto", "vkfft", "fftw" (or "fftw-mpi" for a distributed FFTW plan, from
 * fcl_fft_backend_used). */
const char *fcl_fft_backend_name(fcl_fft_backend backend);
/** Parse a backend name (as FLOWCL_FFT or a command-line option gives it). */
fcl_status fcl_fft_backend_parse(const char *name, fcl_fft_backend *out);
/** Whether the backend was built in (FCL_FFT_AUTO: whether any was). */
bool fcl_fft_backend_available(fcl_fft_backend backend);

/** Where a rank's spectral values sit. Per physical axis a (0 = x): global[a] complex points,
 * this rank's local[a] of them from offset[a]. order[d] is the physical axis of memory
 * dimension d, fastest first: value (i0, i1, i2) of the memory dimensions is at
 * (i2 * local[order[1]] + i1) * pitch + i0 (pitch >= local[order[0]]: the values after
 * local[order[0]] in a row are padding). Axes beyond the domain's dim have 1. */
typedef struct {
  /** Per physical axis: complex points of the whole spectrum, of this rank, and the global
   * index of this rank's first. @{ */
  int64_t global[3], local[3], offset[3];
  /** @} */
  int order[3];        /**< order[d]: the physical axis of memory dimension d, fastest first */
  size_t count;        /**< complex values of the spectral layout on this rank */
  size_t bytes;        /**< bytes of a slot's spectral layout, padding included */
  size_t padded_reals; /**< real values of the rank's data in the in-place padded form */
  int64_t pitch;       /**< complex values from the start of a row (memory dimension 0) to the
                            next: local[order[0]], or more where rows are padded */
} fcl_fft_layout;

/** An FFT plan with its spectral slots (opaque; not thread safe). */
typedef struct fcl_fft fcl_fft;

/** The layout and backend a plan for fields like `like` would have (nothing is allocated).
 * Collective. */
fcl_status fcl_fft_layout_query(const fcl_field *like, fcl_fft_backend backend,
                                fcl_fft_layout *layout, fcl_fft_backend *resolved);

/** Plan transforms of components of fields shaped like `like` (same topology, dtype, context
 * and queue), with nslots spectral buffers from pool. Errors: dim 1, a decomposition that is
 * neither slabs nor pencils (or too fine for them), a walled axis split over ranks or of fewer
 * than 3 points, a backend that is not built in or does not fit (named). Collective. Destroy *out with fcl_fft_destroy (waits for the queue;
 * collective too where the plan spans ranks, and before MPI_Finalize). */
fcl_status fcl_fft_create(const fcl_field *like, fcl_fft_backend backend, int nslots,
                          fcl_pool *pool, fcl_fft **out);
void fcl_fft_destroy(fcl_fft **fft); /**< accepts NULL */

/** Forward: slot = FFT(src's component comp). Backward: dst's component comp = inverse FFT(slot),
 * unnormalized. The field must be on the plan's topology with its dtype and queue. Enqueued on
 * the field's queue; blocking when data passes through the host (FFTW, or MPI). Collective.
 * @{ */
fcl_status fcl_fft_forward(fcl_fft *fft, const fcl_field *src, int comp, int slot);
fcl_status fcl_fft_backward(fcl_fft *fft, int slot, fcl_field *dst, int comp);
/** @} */

/** Every component c of src into slot `slot + c` (forward), or every slot `slot + c` into
 * component c of dst (backward): on several ranks with VkFFT, up to 3 components cross ranks in
 * one all-to-all per transpose where the spectral data per rank (the global shape over the
 * ranks) is at most 32 MiB a component (there the exchange is latency-bound; the plan keeps a
 * work array and staging per component), one at a time above. Errors as the one-component
 * calls, and when the plan has too few slots. Collective. @{ */
fcl_status fcl_fft_forward_components(fcl_fft *fft, const fcl_field *src, int slot);
fcl_status fcl_fft_backward_components(fcl_fft *fft, int slot, fcl_field *dst);
/** @} */
/** In place on a slot (padded real form <-> spectral layout). Errors: a plan with walls
 * (FCL_ERR_NOT_SUPPORTED). Collective. @{ */
fcl_status fcl_fft_forward_inplace(fcl_fft *fft, int slot);
fcl_status fcl_fft_backward_inplace(fcl_fft *fft, int slot);
/** @} */

/** The periodic domain the plan transforms (owned by the plan): the fields' domain, each walled
 * axis extended to its mirror image (2 (N - 1) points, twice the length). Its points are the
 * normalization, its lengths and resolutions give the wavenumbers. */
const fcl_domain *fcl_fft_domain(const fcl_fft *fft);
/** The plan's spectral layout (owned by the plan). */
const fcl_fft_layout *fcl_fft_layout_of(const fcl_fft *fft);
/** The backend the plan resolved to (FCL_FFT_VKFFT or FCL_FFT_FFTW). */
fcl_fft_backend fcl_fft_backend_used(const fcl_fft *fft);
bool fcl_fft_distributed(const fcl_fft *fft); /**< more than one rank */
/** Backend name as used ("vkfft", "fftw", "fftw-mpi"). */
const char *fcl_fft_description(const fcl_fft *fft);
/** Number of spectral slots. */
int fcl_fft_nslots(const fcl_fft *fft);
/** The buffer of a slot (owned by the plan; NULL for a slot out of range). */
fcl_mem *fcl_fft_slot(const fcl_fft *fft, int slot);

#ifdef __cplusplus
}
#endif
#endif /* FLOWCL_FFT_H */
