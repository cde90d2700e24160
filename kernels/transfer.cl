/* Grid transfers between a grid and one r times finer (operators/transfer), built with -DT=float
 * or -DT=double (and -DFCL_FP64 for double). One work-item per destination point (i, j, k), at
 * dst[base + i + j * dpx + k * dpxy]; it reads the source's padded storage, ghosts included, at
 * storage index (start + di) + (start_y + dj) * spx + (start_z + dk) * spxy. The source's storage
 * index of global point g along an axis is g + shift (shift: the source's origin minus its
 * offset). Axes at or beyond dim take one point, weight 1.
 *
 * transfer_interpolate: fine point g lies at s = (g mod r) / r between coarse points b = g / r
 * and b + 1; the value is the tensor product of the cubic Lagrange interpolants through coarse
 * points b - 1 .. b + 2 (fourth order; exact where s = 0).
 * transfer_restrict: coarse point g takes the fine points r g + m, |m| < r, with the hat weights
 * (r - |m|) / r^2 per axis (the transpose of linear interpolation, scaled: second order, the
 * mean of a periodic field kept). */
#ifdef FCL_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

/* The first source index of the cubic through points b - 1 .. b + 2, and its weights. */
static long cubic_start(const long g, const int r, const long shift, const int on, T *w) {
  if (!on) {
    w[0] = 1;
    return shift;
  }
  const long b = g / r;
  const T s = (T)(g - b * r) / (T)r;
  w[0] = -s * (s - 1) * (s - 2) / 6;
  w[1] = (s + 1) * (s - 1) * (s - 2) / 2;
  w[2] = -(s + 1) * s * (s - 2) / 2;
  w[3] = (s + 1) * s * (s - 1) / 6;
  return b - 1 + shift;
}

FCL_KERNEL void transfer_interpolate(FCL_GLOBAL T *dst, const long base, const long dpx,
                                     const long dpxy, FCL_GLOBAL const T *src, const long spx,
                                     const long spxy, const int n0, const int n1, const int n2,
                                     const long g0, const long g1, const long g2,
                                     const long shift0, const long shift1, const long shift2,
                                     const int r, const int dim) {
  const int i = (int)get_global_id(0), j = (int)get_global_id(1), k = (int)get_global_id(2);
  if (i >= n0 || j >= n1 || k >= n2) return;
  T wx[4], wy[4], wz[4];
  const long sx = cubic_start(g0 + i, r, shift0, 1, wx);
  const long sy = cubic_start(g1 + j, r, shift1, dim > 1, wy);
  const long sz = cubic_start(g2 + k, r, shift2, dim > 2, wz);
  const int my = dim > 1 ? 4 : 1, mz = dim > 2 ? 4 : 1;
  T sum = 0;
  for (int c = 0; c < mz; ++c) {
    T plane = 0;
    for (int b = 0; b < my; ++b) {
      FCL_GLOBAL const T *row = src + sx + (sy + b) * spx + (sz + c) * spxy;
      plane += wy[b] * (wx[0] * row[0] + wx[1] * row[1] + wx[2] * row[2] + wx[3] * row[3]);
    }
    sum += wz[c] * plane;
  }
  dst[base + i + j * dpx + k * dpxy] = sum;
}

FCL_KERNEL void transfer_restrict(FCL_GLOBAL T *dst, const long base, const long dpx,
                                  const long dpxy, FCL_GLOBAL const T *src, const long spx,
                                  const long spxy, const int n0, const int n1, const int n2,
                                  const long g0, const long g1, const long g2, const long shift0,
                                  const long shift1, const long shift2, const int r,
                                  const int dim) {
  const int i = (int)get_global_id(0), j = (int)get_global_id(1), k = (int)get_global_id(2);
  if (i >= n0 || j >= n1 || k >= n2) return;
  const int h = r - 1, hy = dim > 1 ? h : 0, hz = dim > 2 ? h : 0;
  const long cx = (g0 + i) * r + shift0;
  const long cy = dim > 1 ? (g1 + j) * r + shift1 : shift1;
  const long cz = dim > 2 ? (g2 + k) * r + shift2 : shift2;
  const T norm = (T)1 / (T)(r * r);
  T sum = 0;
  for (int c = -hz; c <= hz; ++c) {
    const T wz = dim > 2 ? (T)(r - abs(c)) * norm : (T)1;
    T plane = 0;
    for (int b = -hy; b <= hy; ++b) {
      FCL_GLOBAL const T *row = src + cx + (cy + b) * spx + (cz + c) * spxy;
      T line = 0;
      for (int a = -h; a <= h; ++a) line += (T)(r - abs(a)) * row[a];
      plane += (dim > 1 ? (T)(r - abs(b)) * norm : (T)1) * line;
    }
    sum += wz * plane;
  }
  dst[base + i + j * dpx + k * dpxy] = sum * norm;
}
