/* Statistics of the velocity (and of the vorticity) in one pass (operators/analytics, on GPUs):
 * per work-group, max |u_c| for each component and max |grad u| (differences of order 4
 * across the ghosts, which the caller exchanged); with the vorticity (WITH_W), also the sums of
 * |u|^2, |w|^2 and (div u)^2, weighted by the trapezoidal rule on walls, and max |w|. One read of
 * each field where a gradient-norm field, a divergence field and a reduction of each would read
 * them several times.
 * Build options: -DT=float|double, -DDIM=2|3, -DWITH_W=0|1, -DSTATS_WG=the work-group size (a
 * power of two), -DFCL_FP64 when the device has doubles (the sums are then kept in double). */
#ifdef FCL_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double acc_t;
#else
typedef float acc_t;
#endif
#define NMAX (DIM + 1 + WITH_W)    /* |u_0| .. |u_{DIM-1}|, |grad u|, [|w|] */
#define NSTATS (NMAX + 3 * WITH_W) /* then [sums of |u|^2, |w|^2, (div u)^2] */

/* d/dx of order 4 at p along a stride s: c1 = 2 / (3 h), c2 = 1 / (12 h). */
#define D4(u, p, s, c1, c2)                                                                        \
  ((c1) * ((u)[(p) + (s)] - (u)[(p) - (s)]) - (c2) * ((u)[(p) + 2 * (s)] - (u)[(p) - 2 * (s)]))

static acc_t wall_weight(const long g, const long n, const int bounded) {
  return bounded && (g == 0 || g == n - 1) ? (acc_t)0.5 : (acc_t)1;
}

/* Interior point 0 at (ix, iy, iz) of padded rows of px elements and planes of pxy, the global
 * index of local point 0 at (ox, oy, oz) in a grid of NX x NY x NZ (bounded: bit a set when axis
 * a has walls); the interior nx x ny x nz (nz = 1 in 2D); c1*, c2* the factors along each axis.
 * One row of NSTATS per work-group. Each work-group takes whole rows (j, k) in turn, its
 * work-items along x; w0..w2: the vorticity (2D: w0 alone). */
__kernel __attribute__((reqd_work_group_size(STATS_WG, 1, 1)))
void field_stats(__global const T *u0, __global const T *u1, __global const T *u2,
                 __global const T *w0, __global const T *w1, __global const T *w2, const long px,
                 const long pxy, const int ix, const int iy, const int iz, const int nx,
                 const int ny, const int nz, const long ox, const long oy, const long oz,
                 const long NX, const long NY, const long NZ, const int bounded, const T c1x,
                 const T c2x, const T c1y, const T c2y, const T c1z, const T c2z,
                 __global acc_t *partial) {
  __local acc_t s[NSTATS][STATS_WG];
  acc_t m[NSTATS];
  for (int q = 0; q < NSTATS; ++q) m[q] = 0;
  const int rows = ny * nz;
  for (int row = (int)get_group_id(0); row < rows; row += (int)get_num_groups(0)) {
    const int j = row % ny, k = row / ny;
    const long base = (k + iz) * pxy + (j + iy) * px + ix;
#if WITH_W
    const acc_t wjk = wall_weight(oy + j, NY, bounded & 2) * wall_weight(oz + k, NZ, bounded & 4);
#endif
    for (int i0 = 0; i0 < nx; i0 += STATS_WG) { /* a bound the work-items share (vectorizable) */
      const int i = i0 + (int)get_local_id(0);
      if (i >= nx) break;
      const long p = base + i;
      T g = 0, d, div = 0;
      acc_t uu = 0;
#define AXIS(u, s, c1, c2, on_diagonal)                                                            \
  d = D4(u, p, s, c1, c2);                                                                         \
  g += d * d;                                                                                      \
  if (on_diagonal) div += d;
#define COMPONENT(c, u)                                                                            \
  m[c] = fmax(m[c], (acc_t)fabs((u)[p]));                                                          \
  uu += (acc_t)(u)[p] * (acc_t)(u)[p];                                                             \
  AXIS(u, 1, c1x, c2x, c == 0)                                                                     \
  AXIS(u, px, c1y, c2y, c == 1)                                                                    \
  if (DIM == 3) {                                                                                  \
    AXIS(u, pxy, c1z, c2z, c == 2)                                                                 \
  }
      COMPONENT(0, u0)
      COMPONENT(1, u1)
#if DIM == 3
      COMPONENT(2, u2)
#endif
      m[DIM] = fmax(m[DIM], (acc_t)sqrt(g));
#if WITH_W
#if DIM == 3
      const T ww = w0[p] * w0[p] + w1[p] * w1[p] + w2[p] * w2[p];
      const acc_t wsum = (acc_t)w0[p] * w0[p] + (acc_t)w1[p] * w1[p] + (acc_t)w2[p] * w2[p];
#else
      const T ww = w0[p] * w0[p];
      const acc_t wsum = (acc_t)w0[p] * w0[p];
#endif
      const acc_t weight = wjk * wall_weight(ox + i, NX, bounded & 1);
      m[DIM + 1] = fmax(m[DIM + 1], (acc_t)sqrt(ww));
      m[NMAX] += weight * uu;
      m[NMAX + 1] += weight * wsum;
      m[NMAX + 2] += weight * (acc_t)div * (acc_t)div;
#endif
    }
  }
  const int l = (int)get_local_id(0);
  for (int q = 0; q < NSTATS; ++q) s[q][l] = m[q];
  for (int h = STATS_WG / 2; h > 0; h /= 2) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l < h)
      for (int q = 0; q < NSTATS; ++q)
        s[q][l] = q < NMAX ? fmax(s[q][l], s[q][l + h]) : s[q][l] + s[q][l + h];
  }
  if (l == 0)
    for (int q = 0; q < NSTATS; ++q) partial[get_group_id(0) * NSTATS + q] = s[q][0];
}
