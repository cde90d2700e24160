/* Grid transfers between a grid and one R times finer (operators/transfer), built with -DT=float
 * or -DT=double (and -DFCL_FP64 for double), -DR= the factor and -DDIM= the dimension. The
 * destination's local point (i, j, k) is dst[base + i + j * dpx + k * dpxy], global point
 * (i, j, k) + off; the source's global point g along an axis is at storage index g + shift
 * (its origin minus its offset) of its padded storage, ghosts included (row pitch spx, plane
 * pitch spxy). Axes at or beyond DIM take one point, weight 1.
 *
 * transfer_interpolate: fine point g lies at s = (g mod R) / R between coarse points b = g / R
 * and b + 1; its value is the tensor product of the cubic Lagrange interpolants through coarse
 * points b - 1 .. b + 2 (fourth order; exact where s = 0). One work-item per coarse cell b (the
 * cells cover the destination's points from cell first): it loads the cell's 4^DIM coarse
 * values once and interpolates along x, then y, then z in registers (12 multiply-adds per fine
 * point in 3D, R = 4, where the direct tensor product takes 64), writing the R^DIM fine points
 * of the cell that are this rank's. On one H200 (CUDA), 64^3 to 256^3, float, 3 components:
 * 0.10 ms per call (2.0 TB/s of what it reads and writes), where one work-item per fine point
 * with the direct product took 1.44 ms (flowcl-scalar's report.txt).
 * transfer_restrict: coarse point g takes the fine points R g + m, |m| < R, with the hat weights
 * (R - |m|) / R^2 per axis (the transpose of linear interpolation, scaled: second order, the
 * mean of a periodic field kept). */
#ifdef FCL_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#define RY (DIM > 1 ? R : 1)
#define RZ (DIM > 2 ? R : 1)
#define PY (DIM > 1 ? 4 : 1)
#define PZ (DIM > 2 ? 4 : 1)

/* The cubic Lagrange weights of nodes -1, 0, 1, 2 at x = s / R, for s = 0 .. R - 1. */
static void cubic_weights(T w[R][4]) {
  for (int s = 0; s < R; ++s) {
    const T x = (T)s / (T)R;
    w[s][0] = -x * (x - 1) * (x - 2) / 6;
    w[s][1] = (x + 1) * (x - 1) * (x - 2) / 2;
    w[s][2] = -(x + 1) * x * (x - 2) / 2;
    w[s][3] = (x + 1) * x * (x - 1) / 6;
  }
}

FCL_KERNEL void transfer_interpolate(FCL_GLOBAL T *dst, const long base, const long dpx,
                                     const long dpxy, FCL_GLOBAL const T *src, const long spx,
                                     const long spxy, const int m0, const int m1, const int m2,
                                     const int first0, const int first1, const int first2,
                                     const int off0, const int off1, const int off2,
                                     const int n0, const int n1, const int n2, const int shift0,
                                     const int shift1, const int shift2) {
  const int ci = (int)get_global_id(0), cj = (int)get_global_id(1), ck = (int)get_global_id(2);
  if (ci >= m0 || cj >= m1 || ck >= m2) return;
  const int bx = first0 + ci, by = first1 + cj, bz = first2 + ck;
  T w[R][4];
  cubic_weights(w);
  T acc[RZ][RY][R];
  for (int sz = 0; sz < RZ; ++sz)
    for (int sy = 0; sy < RY; ++sy)
      for (int sx = 0; sx < R; ++sx) acc[sz][sy][sx] = 0;
  for (int c = 0; c < PZ; ++c) {
    T vy[RY][R];
    for (int sy = 0; sy < RY; ++sy)
      for (int sx = 0; sx < R; ++sx) vy[sy][sx] = 0;
    for (int b = 0; b < PY; ++b) {
      const long y = (DIM > 1 ? by - 1 + b : by) + shift1, z = (DIM > 2 ? bz - 1 + c : bz) + shift2;
      FCL_GLOBAL const T *row = src + (bx - 1 + shift0) + y * spx + z * spxy;
      const T r0 = row[0], r1 = row[1], r2 = row[2], r3 = row[3];
      for (int sx = 0; sx < R; ++sx) {
        const T vx = w[sx][0] * r0 + w[sx][1] * r1 + w[sx][2] * r2 + w[sx][3] * r3;
        for (int sy = 0; sy < RY; ++sy) vy[sy][sx] += (DIM > 1 ? w[sy][b] : (T)1) * vx;
      }
    }
    for (int sz = 0; sz < RZ; ++sz) {
      const T wz = DIM > 2 ? w[sz][c] : (T)1;
      for (int sy = 0; sy < RY; ++sy)
        for (int sx = 0; sx < R; ++sx) acc[sz][sy][sx] += wz * vy[sy][sx];
    }
  }
  for (int sz = 0; sz < RZ; ++sz) {
    const int k = bz * RZ + sz - off2;
    if (k < 0 || k >= n2) continue;
    for (int sy = 0; sy < RY; ++sy) {
      const int j = by * RY + sy - off1;
      if (j < 0 || j >= n1) continue;
      for (int sx = 0; sx < R; ++sx) {
        const int i = bx * R + sx - off0;
        if (i >= 0 && i < n0) dst[base + i + j * dpx + k * dpxy] = acc[sz][sy][sx];
      }
    }
  }
}

FCL_KERNEL void transfer_restrict(FCL_GLOBAL T *dst, const long base, const long dpx,
                                  const long dpxy, FCL_GLOBAL const T *src, const long spx,
                                  const long spxy, const int n0, const int n1, const int n2,
                                  const int off0, const int off1, const int off2, const int shift0,
                                  const int shift1, const int shift2) {
  const int i = (int)get_global_id(0), j = (int)get_global_id(1), k = (int)get_global_id(2);
  if (i >= n0 || j >= n1 || k >= n2) return;
  const int h = R - 1, hy = DIM > 1 ? h : 0, hz = DIM > 2 ? h : 0;
  const long cx = (long)(off0 + i) * R + shift0;
  const long cy = (long)(off1 + j) * RY + shift1;
  const long cz = (long)(off2 + k) * RZ + shift2;
  const T norm = (T)1 / (T)(R * R);
  T sum = 0;
  for (int c = -hz; c <= hz; ++c) {
    const T wz = DIM > 2 ? (T)(R - abs(c)) * norm : (T)1;
    T plane = 0;
    for (int b = -hy; b <= hy; ++b) {
      FCL_GLOBAL const T *row = src + cx + (cy + b) * spx + (cz + c) * spxy;
      T line = 0;
      for (int a = -h; a <= h; ++a) line += (T)(R - abs(a)) * row[a];
      plane += (DIM > 1 ? (T)(R - abs(b)) * norm : (T)1) * line;
    }
    sum += wz * plane;
  }
  dst[base + i + j * dpx + k * dpxy] = sum * norm;
}
