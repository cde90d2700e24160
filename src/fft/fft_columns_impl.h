/* The column transform (fft_columns.c): a c2c transform along the slowest axis of a complex
 * array in one kernel, for the sizes where VkFFT's own pass reads columns in pieces too short
 * for the memory system (OpenCL's 48 KB of local memory per work-group); and its mirrored form,
 * the transform of a walled axis at the wall's own size (fft.h's walls). */
#ifndef FLOWCL_FFT_COLUMNS_IMPL_H
#define FLOWCL_FFT_COLUMNS_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flowcl/fft.h"

typedef struct {
  int n1, n2;  /* n = n1 * n2 points along the column, n1 = n2 or 2 n2 */
  int columns; /* adjacent columns per work-group (work-items: columns * n2) */
  bool dtype_double;
  bool walls; /* mirrored: a column holds n / 2 + 1 values, the first half of its mirror image */
  bool split; /* mirrored: the exchange takes real parts, then imaginary ones (else whole values) */
} fcl__fft_columns_shape;

/* The pass of one plan: NULL in *out (and FCL_OK) where FLOWCL_FFT_COLUMNS, the device or the
 * size leave it to VkFFT. In place, it transforms columns of n complex values `stride` apart:
 * the first ncols adjacent columns of each of `rows` rows, which start row_stride apart.
 * walls: the mirrored pass, always built (an error where it cannot be): a column holds the
 * n / 2 + 1 points of a walled axis (fcl__fft_walls_native's n = 2 (N - 1)); the pass transforms
 * its mirror image of n points, even or odd (below), and keeps the first n / 2 + 1 values, which
 * is the same pass backward (an even or odd sequence has an even or odd transform). */
typedef struct fcl__fft_columns fcl__fft_columns;
fcl_status fcl__fft_columns_create(const fcl_fft *fft, fcl_pool *pool, int64_t n, size_t rows,
                                   size_t ncols, size_t stride, size_t row_stride, bool walls,
                                   fcl__fft_columns **out);
/* Enqueue the forward (sign -1) or backward (+1, unnormalized) pass on data. odd (mirrored
 * passes only): the columns are odd about their walls (Dirichlet: the wall values are taken as
 * 0 and written as 0), else even (Neumann). */
fcl_status fcl__fft_columns_run(fcl__fft_columns *c, fcl_queue *queue, fcl_mem *data, bool forward,
                                bool odd);
void fcl__fft_columns_destroy(fcl__fft_columns **c); /* accepts NULL */

/* The program of kernels fcl_fft_columns_forward and _backward (unnormalized, signs -1 and +1),
 * malloc'd; NULL when out of memory. Arguments: data (complex), the twiddle table of
 * fcl__fft_columns_twiddles, the strides between the points of a column and between rows (complex
 * values), the columns per row to transform, and (walls) odd (int, 0 or 1); global size
 * (groups * work-items, rows), groups = ceil(ncols / columns). */
char *fcl__fft_columns_source(const fcl__fft_columns_shape *s);
/* n = n1 * n2 with n1 = n2 or 2 n2, for powers of two from 4 to 4096; false otherwise. */
bool fcl__fft_columns_split(int64_t n, int *n1, int *n2);
/* exp(-2 pi i k / n), k < n: n complex values of float or double. */
void fcl__fft_columns_twiddles(int64_t n, bool dbl, void *table);

#endif
