/* Field layer kernels, built with -DT=float or -DT=double (and -DFCL_FP64 for double).
 *
 * box_axpy: dst[box] = (add ? dst[box] : 0) + scale * src[box] over an nx x ny x nz box whose
 * elements sit at off + i * s0 + j * s1 + k * s2 in each array, strides signed (a stride of -1
 * mirrors). Ghost packing, unpacking, periodic copies, wall mirrors and ghost accumulation are
 * all such boxes. */
#ifdef FCL_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

FCL_KERNEL void box_axpy(FCL_GLOBAL T *dst, const long dst_off, const long d0, const long d1,
                         const long d2, FCL_GLOBAL const T *src, const long src_off,
                         const long s0, const long s1, const long s2, const int nx, const int ny,
                         const int nz, const T scale, const int add) {
  const int i = (int)get_global_id(0), j = (int)get_global_id(1), k = (int)get_global_id(2);
  if (i >= nx || j >= ny || k >= nz) return;
  const long d = dst_off + i * d0 + j * d1 + k * d2;
  const T v = scale * src[src_off + i * s0 + j * s1 + k * s2];
  dst[d] = add ? dst[d] + v : v;
}

/* ghosts_wrap: on the leading axes periodic and held whole by this rank, every ghost takes the
 * interior value it stands for (its indices wrapped into [o, o + n), o the interior's origin in
 * the padded storage, g the ghost width); the other axes stay interior (a later exchange fills
 * them). One launch per such axis a: the points whose index a is a ghost (2 g_a of them),
 * indices below a anywhere in their ghost-inclusive extent (wrapped too), indices above a
 * interior (which wrapping leaves alone). Each point reads an interior point only, so the
 * launches and points may run in any order. The work-items of an axis below a span its whole
 * padded extent (those on the padding do nothing), so that rows are read and written from their
 * aligned start. A launch takes up to three components (nc), their points one after the other
 * along the third index. */
static int wrap_index(const int c, const int n, const int o) {
  return c < o ? c + n : c >= n + o ? c - n : c;
}

/* The storage index of point t of axis b's range: the ghosts of axis a (the first g below the
 * interior, the rest above it), the ghost-inclusive extent below a (-1 on the padding), the
 * interior above. */
static int wrap_point(const int t, const int b, const int a, const int n, const int g,
                      const int o) {
  if (b == a) return t < g ? o - g + t : o + n - g + t;
  if (b > a) return o + t;
  return t >= o - g && t < o + n + g ? t : -1;
}

FCL_KERNEL void ghosts_wrap(FCL_GLOBAL T *u0, FCL_GLOBAL T *u1, FCL_GLOBAL T *u2, const int nc,
                            const int a, const int n0, const int n1, const int n2, const int g0,
                            const int g1, const int g2, const int o0, const int o1,
                            const int o2) {
  const int ti = (int)get_global_id(0), tj = (int)get_global_id(1);
  const int e0 = a == 0 ? 2 * g0 : n0 + 2 * o0, e1 = a == 1 ? 2 * g1 : a == 0 ? n1 : n1 + 2 * o1,
            e2 = a == 2 ? 2 * g2 : n2;
  /* nc components (up to 3) along the third index, one after the other */
  const int c = nc == 1 ? 0 : (int)get_global_id(2) / e2, tk = (int)get_global_id(2) - c * e2;
  if (ti >= e0 || tj >= e1 || c >= nc) return;
  FCL_GLOBAL T *u = c == 0 ? u0 : c == 1 ? u1 : u2;
  const int i = wrap_point(ti, 0, a, n0, g0, o0), j = wrap_point(tj, 1, a, n1, g1, o1),
            k = wrap_point(tk, 2, a, n2, g2, o2);
  if (i < 0 || j < 0) return;
  const long px = n0 + 2 * o0, pxy = px * (n1 + 2 * o1);
  u[i + j * px + k * pxy] =
      u[wrap_index(i, n0, o0) + wrap_index(j, n1, o1) * px + wrap_index(k, n2, o2) * pxy];
}

/* Partial statistics of the interior of a padded array (interior point 0 at (ix, iy, iz), the
 * global index of local point 0 at (ox, oy, oz)), one row of 6 per work-group: min, max,
 * max |u|, sum, and the sums of w u and w u^2 with the trapezoidal weight w (1/2 per wall the
 * point sits on; bounded: bit a set when axis a has walls). Accumulated in double when the
 * device has it. A work-group takes REDUCE_ROWS rows at a time, each work-item loading its
 * point of every row before it accumulates: that many loads in flight per work-item (one H200,
 * 512^3 float, one component: 801 us one row at a time, 710 with 2, 597 with 4, 564 with 8;
 * a device copy of it 330 us, benchmarks/analytics). */
#ifdef FCL_FP64
typedef double acc_t;
#else
typedef float acc_t;
#endif
#define REDUCE_WG 256 /* REDUCE_ROWS: a build option (FCL__REDUCE_ROWS) */

static acc_t wall_weight(const long g, const long n, const int bounded) {
  return bounded && (g == 0 || g == n - 1) ? (acc_t)0.5 : (acc_t)1;
}

FCL_KERNEL FCL_GROUP_SIZE(REDUCE_WG, 1, 1)
void reduce_stats(FCL_GLOBAL const T *u, const long px, const long pxy, const int ix,
                  const int iy, const int iz, const int nx, const int ny, const int nz,
                  const long ox, const long oy, const long oz, const long NX, const long NY,
                  const long NZ, const int bounded, FCL_GLOBAL acc_t *partial) {
  FCL_LOCAL acc_t s[6][REDUCE_WG];
  acc_t mn = INFINITY, mx = -INFINITY, ab = 0, sum = 0, ws = 0, ws2 = 0;
  const int rows = ny * nz, stride = (int)get_num_groups(0) * REDUCE_ROWS;
  for (int row0 = (int)get_group_id(0) * REDUCE_ROWS; row0 < rows; row0 += stride) {
    FCL_GLOBAL const T *line[REDUCE_ROWS];
    acc_t wjk[REDUCE_ROWS];
#pragma unroll
    for (int r = 0; r < REDUCE_ROWS; ++r) { /* rows past the last: the last read, not counted */
      const int row = min(row0 + r, rows - 1), j = row % ny, k = row / ny;
      wjk[r] = wall_weight(oy + j, NY, bounded & 2) * wall_weight(oz + k, NZ, bounded & 4);
      line[r] = u + (k + iz) * pxy + (j + iy) * px + ix;
    }
    for (int i = (int)get_local_id(0); i < nx; i += REDUCE_WG) {
      T v[REDUCE_ROWS];
#pragma unroll
      for (int r = 0; r < REDUCE_ROWS; ++r) v[r] = line[r][i];
      const acc_t wi = wall_weight(ox + i, NX, bounded & 1);
#pragma unroll
      for (int r = 0; r < REDUCE_ROWS; ++r)
        if (row0 + r < rows) {
          const acc_t x = (acc_t)v[r], w = wjk[r] * wi;
          mn = fmin(mn, x);
          mx = fmax(mx, x);
          ab = fmax(ab, fabs(x));
          sum += x;
          ws += w * x;
          ws2 += w * x * x;
        }
    }
  }
  const int l = (int)get_local_id(0);
  s[0][l] = mn, s[1][l] = mx, s[2][l] = ab, s[3][l] = sum, s[4][l] = ws, s[5][l] = ws2;
  for (int h = REDUCE_WG / 2; h > 0; h /= 2) {
    FCL_BARRIER_LOCAL();
    if (l < h) {
      s[0][l] = fmin(s[0][l], s[0][l + h]);
      s[1][l] = fmax(s[1][l], s[1][l + h]);
      s[2][l] = fmax(s[2][l], s[2][l + h]);
      for (int q = 3; q < 6; ++q) s[q][l] += s[q][l + h];
    }
  }
  if (l == 0)
    for (int q = 0; q < 6; ++q) partial[get_group_id(0) * 6 + q] = s[q][0];
}
