/* The time step's inputs in one pass over the velocity (operators/analytics): per work-group,
 * max |u_c| for each component and max |grad u| (differences of order 4 across the ghosts,
 * which the caller exchanged), so that u is read once where a gradient-norm field, its
 * reduction and a reduction of u would read u twice and the norm twice more.
 * Build options: -DT=float|double, -DDIM=2|3, -DDT_WG=the work-group size (a power of two).
 * Maxima are exact in T: no wider accumulator. */
/* d/dx of order 4 at p along a stride s, times the inverse spacing's factors c1 = 2 / (3 h)
 * and c2 = 1 / (12 h). */
#define D4(u, p, s, c1, c2) ((c1) * ((u)[(p) + (s)] - (u)[(p) - (s)]) - (c2) * ((u)[(p) + 2 * (s)] - (u)[(p) - 2 * (s)]))

/* Interior point 0 at (ix, iy, iz) of padded rows of px elements and planes of pxy; the
 * interior nx x ny x nz (nz = 1 in 2D); c1[a], c2[a] the factors along axis a. One row of
 * DIM + 1 maxima per work-group: |u_0|, ..., |u_{DIM-1}|, |grad u|. Each work-group takes
 * whole rows (j, k) in turn, its work-items along x. */
__kernel __attribute__((reqd_work_group_size(DT_WG, 1, 1)))
void dt_stats(__global const T *u0, __global const T *u1, __global const T *u2, const long px,
              const long pxy, const int ix, const int iy, const int iz, const int nx,
              const int ny, const int nz, const T c1x, const T c2x, const T c1y, const T c2y,
              const T c1z, const T c2z, __global T *partial) {
  __local T s[DIM + 1][DT_WG];
  T m[DIM + 1];
  for (int q = 0; q <= DIM; ++q) m[q] = 0;
  const int rows = ny * nz;
  for (int row = (int)get_group_id(0); row < rows; row += (int)get_num_groups(0)) {
    const int j = row % ny, k = row / ny;
    const long base = (k + iz) * pxy + (j + iy) * px + ix;
    for (int i0 = 0; i0 < nx; i0 += DT_WG) { /* the same trip count in every work-item */
      const int i = i0 + (int)get_local_id(0);
      if (i >= nx) break;
      const long p = base + i;
      T g = 0, d;
#define COMPONENT(c, u)                                                                            \
  m[c] = fmax(m[c], fabs((u)[p]));                                                          \
  d = D4(u, p, 1, c1x, c2x);                                                                       \
  g += d * d;                                                                                      \
  d = D4(u, p, px, c1y, c2y);                                                                      \
  g += d * d;
#if DIM == 3
#define COMPONENT3(c, u)                                                                           \
  COMPONENT(c, u)                                                                                  \
  d = D4(u, p, pxy, c1z, c2z);                                                                     \
  g += d * d;
      COMPONENT3(0, u0)
      COMPONENT3(1, u1)
      COMPONENT3(2, u2)
#else
      COMPONENT(0, u0)
      COMPONENT(1, u1)
#endif
      m[DIM] = fmax(m[DIM], sqrt(g));
    }
  }
  const int l = (int)get_local_id(0);
  for (int q = 0; q <= DIM; ++q) s[q][l] = m[q];
  for (int h = DT_WG / 2; h > 0; h /= 2) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l < h)
      for (int q = 0; q <= DIM; ++q) s[q][l] = fmax(s[q][l], s[q][l + h]);
  }
  if (l == 0)
    for (int q = 0; q <= DIM; ++q) partial[get_group_id(0) * (DIM + 1) + q] = s[q][0];
}
