/* Statistics of the velocity (and of the vorticity) in one pass (operators/analytics, on GPUs):
 * per work-group, max |u_c| for each component and max |grad u| (differences of order 4
 * across the ghosts, which the caller exchanged); with the vorticity (WITH_W), also the sums of
 * |u|^2, |w|^2 and (div u)^2, weighted by the trapezoidal rule on walls, and max |w|. One read of
 * each field where a gradient-norm field, a divergence field and a reduction of each would read
 * them several times.
 * A work-group holds a TX x TY tile of columns and marches along z through its share of the
 * planes, each work-item keeping its column's six z values of each component in registers (the
 * z differences read nothing more); per plane the tile and its 2-wide rim go to local memory,
 * where the x and y differences read them: each value comes from memory once, the rim's again
 * (rows whose stencils met in L2 from other work-groups read each value about 9 times, and
 * neighbours read through L1 alone left the kernel at a quarter of the copy bandwidth).
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

/* d/dz of order 4 from a column's window q[0..4] = values at k-2 .. k+2: c1 = 2 / (3 h),
 * c2 = 1 / (12 h) (x and y alike from the local plane). */
#define D4Q(q, c1, c2) ((c1) * ((q)[3] - (q)[1]) - (c2) * ((q)[4] - (q)[0]))
#define LX (TX + 4) /* a local plane: the tile and its rim */
#define LY (TY + 4)
#define RIMN ((LX * LY - 1) / WG) /* rim points per work-item, at most: ceil((LX LY - WG) / WG) */

static acc_t wall_weight(const long g, const long n, const int bounded) {
  return bounded && (g == 0 || g == n - 1) ? (acc_t)0.5 : (acc_t)1;
}

/* Interior point 0 at (ix, iy, iz) of padded rows of px elements and planes of pxy, the global
 * index of local point 0 at (ox, oy, oz) in a grid of NX x NY x NZ (bounded: bit a set when axis
 * a has walls); the interior nx x ny x nz (nz = 1 in 2D); c1*, c2* the factors along each axis.
 * Work-groups: (tiles along x, tiles along y, shares of the planes); one row of NSTATS each, at
 * its linear group index. w0..w2: the vorticity (2D: w0 alone). */
FCL_KERNEL FCL_GROUP_SIZE(TX, TY, 1)
void field_stats(FCL_GLOBAL const T *u0, FCL_GLOBAL const T *u1, FCL_GLOBAL const T *u2,
                 FCL_GLOBAL const T *w0, FCL_GLOBAL const T *w1, FCL_GLOBAL const T *w2,
                 const long px, const long pxy, const int ix, const int iy, const int iz,
                 const int nx, const int ny, const int nz, const long ox, const long oy,
                 const long oz, const long NX, const long NY, const long NZ, const int bounded,
                 const T c1x, const T c2x, const T c1y, const T c2y, const T c1z, const T c2z,
                 FCL_GLOBAL acc_t *partial) {
  FCL_LOCAL T t[DIM][LY * LX]; /* a plane of each component around the tile */
  FCL_LOCAL acc_t s[NSTATS][WG];
  T m[NMAX];   /* max |u_c|, then the squares' maxima (their roots taken once, at the end) */
  acc_t sum[3]; /* with w */
  for (int q = 0; q < NMAX; ++q) m[q] = 0;
  for (int q = 0; q < 3; ++q) sum[q] = 0;
  const int lx = (int)get_local_id(0), ly = (int)get_local_id(1), l = ly * TX + lx;
  const int i0 = (int)get_group_id(0) * TX, j0 = (int)get_group_id(1) * TY;
  const int i = i0 + lx, j = j0 + ly, at = (ly + 2) * LX + lx + 2;
  const bool inside = i < nx && j < ny, ghost = !inside && i < nx + 2 && j < ny + 2;
  const int share = (nz + (int)get_num_groups(2) - 1) / (int)get_num_groups(2);
  const int k0 = (int)get_group_id(2) * share, k1 = min(nz, k0 + share); /* the same in a group */
  const long column = (long)(j + iy) * px + i + ix;
#if WITH_W
  const acc_t wij = wall_weight(ox + i, NX, bounded & 1) * wall_weight(oy + j, NY, bounded & 2);
#endif
  /* The rim's points this work-item carries: 2 rows above, 2 below, then 2 columns on each side;
   * rl their place in the local plane (-1: past the interior's last ghosts, a partial tile),
   * rg their offset in a plane, rv their values in the next plane. */
  int rl[RIMN];
  long rg[RIMN];
  T rv[RIMN][DIM];
  for (int n = 0; n < RIMN; ++n) {
    const int e = l + n * WG;
    int ey = 0, ex = 0;
    if (e < 4 * LX) {
      ey = e / LX, ex = e % LX;
      if (ey >= 2) ey += TY;
    } else {
      ey = 2 + (e - 4 * LX) / 4, ex = (e - 4 * LX) % 4;
      if (ex >= 2) ex += TX;
    }
    const int gi = i0 + ex - 2, gj = j0 + ey - 2;
    const bool used = e < LX * LY - WG && gi < nx + 2 && gj < ny + 2;
    rl[n] = used ? ey * LX + ex : -1;
    rg[n] = (long)(gj + iy) * px + gi + ix;
  }
#define LOAD_RIM(k)                                                                                \
  for (int n = 0; n < RIMN; ++n)                                                                   \
    if (rl[n] >= 0) {                                                                              \
      const long g = (long)((k) + iz) * pxy + rg[n];                                               \
      rv[n][0] = u0[g], rv[n][1] = u1[g];                                                          \
      if (DIM == 3) rv[n][DIM - 1] = u2[g];                                                        \
    }
  if (k0 < k1) LOAD_RIM(k0)
#if DIM == 3
  /* the column's window of each component, planes k - 2 .. k + 3: each load is issued a plane
   * before its use, so its latency hides behind a plane's work */
  T q[3][6];
  for (int r = 0; r < 5 && inside && k0 < k1; ++r) {
    const long p = column + (long)(k0 + iz - 2 + r) * pxy;
    q[0][r] = u0[p], q[1][r] = u1[p], q[2][r] = u2[p];
  }
#endif
  for (int k = k0; k < k1; ++k) {
    const long plane = (long)(k + iz) * pxy, p = column + plane;
    T v[DIM];
#if DIM == 3
    if (inside && k + 1 < k1)
      q[0][5] = u0[p + 3 * pxy], q[1][5] = u1[p + 3 * pxy], q[2][5] = u2[p + 3 * pxy];
    for (int c = 0; c < 3 && inside; ++c) v[c] = q[c][2];
#else
    if (inside) v[0] = u0[p], v[1] = u1[p];
#endif
#if WITH_W /* read before the barriers, used after them */
    const T wa = inside ? w0[p] : 0;
#if DIM == 3
    const T wb = inside ? w1[p] : 0, wc = inside ? w2[p] : 0;
#endif
#endif
    FCL_BARRIER_LOCAL(); /* the previous plane's readers are done */
    if (inside) {
      for (int c = 0; c < DIM; ++c) t[c][at] = v[c];
    } else if (ghost) { /* a partial tile's ghosts, read here (rare) */
      t[0][at] = u0[p], t[1][at] = u1[p];
      if (DIM == 3) t[DIM - 1][at] = u2[p];
    }
    for (int n = 0; n < RIMN; ++n)
      if (rl[n] >= 0)
        for (int c = 0; c < DIM; ++c) t[c][rl[n]] = rv[n][c];
    if (k + 1 < k1) LOAD_RIM(k + 1)
    FCL_BARRIER_LOCAL();
    if (!inside) continue;
    T g = 0, d, div = 0;
    for (int c = 0; c < DIM; ++c) {
      FCL_LOCAL_PTR const T *a = t[c] + at;
      m[c] = fmax(m[c], fabs(v[c]));
      d = c1x * (a[1] - a[-1]) - c2x * (a[2] - a[-2]);
      g += d * d;
      if (c == 0) div += d;
      d = c1y * (a[LX] - a[-LX]) - c2y * (a[2 * LX] - a[-2 * LX]);
      g += d * d;
      if (c == 1) div += d;
#if DIM == 3
      d = D4Q(q[c], c1z, c2z);
      g += d * d;
      if (c == 2) div += d;
#endif
    }
    m[DIM] = fmax(m[DIM], g);
#if WITH_W
#if DIM == 3
    const acc_t uu = (acc_t)v[0] * v[0] + (acc_t)v[1] * v[1] + (acc_t)v[2] * v[2];
    const T ww = wa * wa + wb * wb + wc * wc;
    const acc_t wsum = (acc_t)wa * wa + (acc_t)wb * wb + (acc_t)wc * wc;
    const acc_t weight = wij * wall_weight(oz + k, NZ, bounded & 4);
#else
    const acc_t uu = (acc_t)v[0] * v[0] + (acc_t)v[1] * v[1];
    const T ww = wa * wa;
    const acc_t wsum = (acc_t)wa * wa;
    const acc_t weight = wij;
#endif
    m[DIM + 1] = fmax(m[DIM + 1], ww);
    sum[0] += weight * uu;
    sum[1] += weight * wsum;
    sum[2] += weight * (acc_t)div * (acc_t)div;
#endif
#if DIM == 3
    for (int c = 0; c < 3; ++c)
      for (int r = 0; r < 5; ++r) q[c][r] = q[c][r + 1];
#endif
  }
  for (int q = 0; q < NSTATS; ++q)
    s[q][l] = q < DIM ? (acc_t)m[q] : q < NMAX ? (acc_t)sqrt(m[q]) : sum[q - NMAX];
  for (int h = WG / 2; h > 0; h /= 2) {
    FCL_BARRIER_LOCAL();
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
