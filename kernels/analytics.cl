/* Statistics of the velocity (and of the vorticity) in one pass (operators/analytics, on GPUs):
 * per work-group, max |u_c| for each component and max |grad u| (differences of order 4
 * across the ghosts, which the caller exchanged); with the vorticity (WITH_W), also the sums of
 * |u|^2, |w|^2 and (div u)^2, weighted by the trapezoidal rule on walls, and max |w|. One read of
 * each field where a gradient-norm field, a divergence field and a reduction of each would read
 * them several times.
 * A work-group holds a TX x TY tile of columns and marches along z through its share of the
 * planes, each work-item keeping its column's five z values of each component in registers: the
 * z differences cost no second read, the x and y ones read neighbours the tile has just read
 * (L1), so each value comes from memory about once (rows whose stencils met in L2 from other
 * work-groups read each value about 9 times).
 * Build options: -DT=float|double, -DDIM=2|3, -DWITH_W=0|1, -DTX, -DTY (TX * TY a power of
 * two), -DFCL_FP64 when the device has doubles (the sums are then kept in double). */
#ifdef FCL_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double acc_t;
#else
typedef float acc_t;
#endif
#define NMAX (DIM + 1 + WITH_W)    /* |u_0| .. |u_{DIM-1}|, |grad u|, [|w|] */
#define NSTATS (NMAX + 3 * WITH_W) /* then [sums of |u|^2, |w|^2, (div u)^2] */
#define WG (TX * TY)

/* d/dx of order 4 at p along a stride s: c1 = 2 / (3 h), c2 = 1 / (12 h). */
#define D4(u, p, s, c1, c2)                                                                        \
  ((c1) * ((u)[(p) + (s)] - (u)[(p) - (s)]) - (c2) * ((u)[(p) + 2 * (s)] - (u)[(p) - 2 * (s)]))
/* the same along z from a column's window q[0..4] = values at k-2 .. k+2 */
#define D4Q(q, c1, c2) ((c1) * ((q)[3] - (q)[1]) - (c2) * ((q)[4] - (q)[0]))

static acc_t wall_weight(const long g, const long n, const int bounded) {
  return bounded && (g == 0 || g == n - 1) ? (acc_t)0.5 : (acc_t)1;
}

/* Interior point 0 at (ix, iy, iz) of padded rows of px elements and planes of pxy, the global
 * index of local point 0 at (ox, oy, oz) in a grid of NX x NY x NZ (bounded: bit a set when axis
 * a has walls); the interior nx x ny x nz (nz = 1 in 2D); c1*, c2* the factors along each axis.
 * Work-groups: (tiles along x, tiles along y, shares of the planes); one row of NSTATS each, at
 * its linear group index. w0..w2: the vorticity (2D: w0 alone). */
__kernel __attribute__((reqd_work_group_size(TX, TY, 1)))
void field_stats(__global const T *u0, __global const T *u1, __global const T *u2,
                 __global const T *w0, __global const T *w1, __global const T *w2, const long px,
                 const long pxy, const int ix, const int iy, const int iz, const int nx,
                 const int ny, const int nz, const long ox, const long oy, const long oz,
                 const long NX, const long NY, const long NZ, const int bounded, const T c1x,
                 const T c2x, const T c1y, const T c2y, const T c1z, const T c2z,
                 __global acc_t *partial) {
  __local acc_t s[NSTATS][WG];
  acc_t m[NSTATS];
  for (int q = 0; q < NSTATS; ++q) m[q] = 0;
  const int i = (int)get_global_id(0), j = (int)get_global_id(1);
  const int share = (nz + (int)get_num_groups(2) - 1) / (int)get_num_groups(2);
  const int k0 = (int)get_group_id(2) * share, k1 = min(nz, k0 + share);
  if (i < nx && j < ny && k0 < k1) {
    const long column = (long)(j + iy) * px + i + ix;
#if WITH_W
    const acc_t wij = wall_weight(ox + i, NX, bounded & 1) * wall_weight(oy + j, NY, bounded & 2);
#endif
#if DIM == 3
    T q0[5], q1[5], q2[5]; /* the column's window of each component */
    for (int r = 0; r < 4; ++r) {
      const long p = column + (long)(k0 + iz - 2 + r) * pxy;
      q0[r + 1] = u0[p], q1[r + 1] = u1[p], q2[r + 1] = u2[p];
    }
#endif
    for (int k = k0; k < k1; ++k) {
      const long p = column + (long)(k + iz) * pxy;
#if DIM == 3
      for (int r = 0; r < 4; ++r) q0[r] = q0[r + 1], q1[r] = q1[r + 1], q2[r] = q2[r + 1];
      q0[4] = u0[p + 2 * pxy], q1[4] = u1[p + 2 * pxy], q2[4] = u2[p + 2 * pxy];
      const T v0 = q0[2], v1 = q1[2], v2 = q2[2];
#else
      const T v0 = u0[p], v1 = u1[p];
#endif
      T g = 0, d, div = 0;
#define AXIS(u, s, c1, c2, on_diagonal)                                                            \
  d = D4(u, p, s, c1, c2);                                                                         \
  g += d * d;                                                                                      \
  if (on_diagonal) div += d;
#define COMPONENT(c, u, v)                                                                         \
  m[c] = fmax(m[c], (acc_t)fabs(v));                                                               \
  AXIS(u, 1, c1x, c2x, c == 0)                                                                     \
  AXIS(u, px, c1y, c2y, c == 1)
      COMPONENT(0, u0, v0)
      COMPONENT(1, u1, v1)
#if DIM == 3
      COMPONENT(2, u2, v2)
      d = D4Q(q0, c1z, c2z), g += d * d;
      d = D4Q(q1, c1z, c2z), g += d * d;
      d = D4Q(q2, c1z, c2z), g += d * d, div += d;
#endif
      m[DIM] = fmax(m[DIM], (acc_t)sqrt(g));
#if WITH_W
#if DIM == 3
      const acc_t uu = (acc_t)v0 * v0 + (acc_t)v1 * v1 + (acc_t)v2 * v2;
      const T ww = w0[p] * w0[p] + w1[p] * w1[p] + w2[p] * w2[p];
      const acc_t wsum = (acc_t)w0[p] * w0[p] + (acc_t)w1[p] * w1[p] + (acc_t)w2[p] * w2[p];
      const acc_t weight = wij * wall_weight(oz + k, NZ, bounded & 4);
#else
      const acc_t uu = (acc_t)v0 * v0 + (acc_t)v1 * v1;
      const T ww = w0[p] * w0[p];
      const acc_t wsum = (acc_t)w0[p] * w0[p];
      const acc_t weight = wij;
#endif
      m[DIM + 1] = fmax(m[DIM + 1], (acc_t)sqrt(ww));
      m[NMAX] += weight * uu;
      m[NMAX + 1] += weight * wsum;
      m[NMAX + 2] += weight * (acc_t)div * (acc_t)div;
#endif
    }
  }
  const int l = (int)(get_local_id(1) * TX + get_local_id(0));
  for (int q = 0; q < NSTATS; ++q) s[q][l] = m[q];
  for (int h = WG / 2; h > 0; h /= 2) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l < h)
      for (int q = 0; q < NSTATS; ++q)
        s[q][l] = q < NMAX ? fmax(s[q][l], s[q][l + h]) : s[q][l] + s[q][l + h];
  }
  if (l == 0) {
    const size_t g =
        get_group_id(0) + get_num_groups(0) * (get_group_id(1) + get_num_groups(1) * get_group_id(2));
    for (int q = 0; q < NSTATS; ++q) partial[g * NSTATS + q] = s[q][0];
  }
}
