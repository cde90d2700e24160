/* Spectral operators: pointwise in wavenumber space, on the spectral slots of an FFT plan
 * (src/fft). Built with -DT=float or -DT=double (and -DFCL_FP64 where the device has it).
 *
 * One work-item per complex value of a rank's slot. Global dimension 0 runs over memory
 * dimensions 0 and 1 together (rows of `pitch` values: the work-items past a row's values
 * compute on its padding, which no transform reads), dimension 1 over memory dimension 2: a
 * row of a prime length (257 complex values of a distributed 512^3 slot) would otherwise leave
 * work-groups of one item. Memory dimension d holds physical axis o_d, and the global index of
 * an axis is the local one plus that axis's offset (fcl_fft_layout). Wavenumbers: 2 pi / L * m,
 * m wrapped to [-n/2, n/2). Odd derivatives drop the Nyquist mode of even n (its derivative is
 * not real). Every kernel multiplies by `scale` (1 / number of points: the unnormalized inverse
 * transform is then exact). */
#ifdef FCL_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#define CAT2(a, b) a##b
#define VEC2(t) CAT2(t, 2)
#define T2 VEC2(T)

#define LAYOUT_ARGS                                                                             \
  const int o0, const int o1, const int o2, const long pitch, const long off_x,                \
      const long off_y, const long off_z, const long nx, const long ny, const long nz,          \
      const T sx, const T sy, const T sz

typedef struct {
  T k[3];    /* wavenumbers */
  T kodd[3]; /* the same without the Nyquist modes, for odd derivatives */
  size_t at; /* index in the slot */
} wave;

static T wavenumber(long m, long n, T s) { return s * (T)(m <= n / 2 ? m : m - n); }

static wave wave_here(const int o0, const int o1, const int o2, const long pitch,
                      const long off_x, const long off_y, const long off_z, const long nx,
                      const long ny, const long nz, const T sx, const T sy, const T sz) {
  const size_t id = get_global_id(0);
  size_t g[3] = {id % (size_t)pitch, id / (size_t)pitch, get_global_id(1)};
  long m[3];
  m[o0] = (long)g[0];
  m[o1] = (long)g[1];
  m[o2] = (long)g[2];
  m[0] += off_x;
  m[1] += off_y;
  m[2] += off_z;
  const long n[3] = {nx, ny, nz};
  const T s[3] = {sx, sy, sz};
  wave w;
  for (int a = 0; a < 3; ++a) {
    w.k[a] = wavenumber(m[a], n[a], s[a]);
    w.kodd[a] = (n[a] % 2 == 0 && m[a] == n[a] / 2) ? (T)0 : w.k[a];
  }
  w.at = g[2] * get_global_size(0) + id;
  return w;
}

#define WAVE_HERE() wave_here(o0, o1, o2, pitch, off_x, off_y, off_z, nx, ny, nz, sx, sy, sz)

static T norm2(const T *k) { return k[0] * k[0] + k[1] * k[1] + k[2] * k[2]; }
/* i * a */
static T2 times_i(T2 a) { return FCL_VEC2(T2, -a.y, a.x); }

/* Poisson: lap(psi) = -f, so psi^ = f^ / |k|^2 (zero mean). */
FCL_KERNEL void spectral_poisson(FCL_GLOBAL T2 *a, LAYOUT_ARGS, const T scale) {
  wave w = WAVE_HERE();
  T k2 = norm2(w.k);
  a[w.at] = k2 > 0 ? a[w.at] * (scale / k2) : FCL_VEC2(T2, 0, 0);
}

/* The zero mode of a Biot-Savart velocity: the uniform velocity set for the plan (a free
 * stream), 0 by default (the backward transforms are not normalized: the mode is the mean). */
#define MEAN_ARGS const T mean_x, const T mean_y, const T mean_z
static T2 mean_mode(T k2, T2 u, T mean) { return k2 > 0 ? u : FCL_VEC2(T2, mean, 0); }

/* Biot-Savart in 3D: u^ = i k x omega^ / |k|^2, in place over the three slots. */
FCL_KERNEL void spectral_biot_savart3(FCL_GLOBAL T2 *wx, FCL_GLOBAL T2 *wy, FCL_GLOBAL T2 *wz,
                                      LAYOUT_ARGS, const T scale, MEAN_ARGS) {
  wave w = WAVE_HERE();
  T k2 = norm2(w.k), f = k2 > 0 ? scale / k2 : (T)0;
  T2 a = wx[w.at] * f, b = wy[w.at] * f, c = wz[w.at] * f;
  const T *k = w.kodd;
  wx[w.at] = mean_mode(k2, times_i(k[1] * c - k[2] * b), mean_x);
  wy[w.at] = mean_mode(k2, times_i(k[2] * a - k[0] * c), mean_y);
  wz[w.at] = mean_mode(k2, times_i(k[0] * b - k[1] * a), mean_z);
}

/* Diffusion over dt, then Biot-Savart of the diffused vorticity, in one pass (3D): omega^ *=
 * exp(-nu dt |k|^2) in place; u^ = i k x omega^ / |k|^2 into three more slots. */
FCL_KERNEL void spectral_diffuse_biot_savart3(FCL_GLOBAL T2 *wx, FCL_GLOBAL T2 *wy,
                                              FCL_GLOBAL T2 *wz, FCL_GLOBAL T2 *ux,
                                              FCL_GLOBAL T2 *uy, FCL_GLOBAL T2 *uz, LAYOUT_ARGS,
                                              const T scale, const T nu_dt, MEAN_ARGS) {
  wave w = WAVE_HERE();
  T k2 = norm2(w.k), e = scale * exp(-nu_dt * k2), f = k2 > 0 ? (T)1 / k2 : (T)0;
  T2 a = wx[w.at] * e, b = wy[w.at] * e, c = wz[w.at] * e;
  wx[w.at] = a;
  wy[w.at] = b;
  wz[w.at] = c;
  const T *k = w.kodd;
  ux[w.at] = mean_mode(k2, times_i(k[1] * c - k[2] * b) * f, mean_x);
  uy[w.at] = mean_mode(k2, times_i(k[2] * a - k[0] * c) * f, mean_y);
  uz[w.at] = mean_mode(k2, times_i(k[0] * b - k[1] * a) * f, mean_z);
}

/* The same in 2D: omega^ diffused in place, (ux^, uy^) = (i ky, -i kx) psi^ into two slots. */
FCL_KERNEL void spectral_diffuse_biot_savart2(FCL_GLOBAL T2 *w_, FCL_GLOBAL T2 *ux,
                                              FCL_GLOBAL T2 *uy, LAYOUT_ARGS, const T scale,
                                              const T nu_dt, MEAN_ARGS) {
  wave w = WAVE_HERE();
  T k2 = norm2(w.k), f = k2 > 0 ? (T)1 / k2 : (T)0;
  T2 om = w_[w.at] * (scale * exp(-nu_dt * k2)), psi = om * f;
  w_[w.at] = om;
  ux[w.at] = mean_mode(k2, times_i(psi * w.kodd[1]), mean_x);
  uy[w.at] = mean_mode(k2, -times_i(psi * w.kodd[0]), mean_y);
}

/* Biot-Savart in 2D: psi^ = omega^ / |k|^2, u = (d psi / dy, -d psi / dx); ux into w's slot. */
FCL_KERNEL void spectral_biot_savart2(FCL_GLOBAL T2 *w_ux, FCL_GLOBAL T2 *uy, LAYOUT_ARGS,
                                      const T scale, MEAN_ARGS) {
  wave w = WAVE_HERE();
  T k2 = norm2(w.k), f = k2 > 0 ? scale / k2 : (T)0;
  T2 psi = w_ux[w.at] * f;
  w_ux[w.at] = mean_mode(k2, times_i(psi * w.kodd[1]), mean_x);
  uy[w.at] = mean_mode(k2, -times_i(psi * w.kodd[0]), mean_y);
}

/* Leray projection: u^ -= k (k . u^) / |k|^2 (dim 2: uz is not touched). */
FCL_KERNEL void spectral_project(FCL_GLOBAL T2 *ux, FCL_GLOBAL T2 *uy, FCL_GLOBAL T2 *uz,
                                 LAYOUT_ARGS, const T scale, const int dim) {
  wave w = WAVE_HERE();
  const T *k = w.kodd;
  T k2 = norm2(k);
  T2 a = ux[w.at], b = uy[w.at], c = dim == 3 ? uz[w.at] : FCL_VEC2(T2, 0, 0);
  T2 d = k2 > 0 ? (k[0] * a + k[1] * b + k[2] * c) / k2 : FCL_VEC2(T2, 0, 0);
  ux[w.at] = (a - k[0] * d) * scale;
  uy[w.at] = (b - k[1] * d) * scale;
  if (dim == 3) uz[w.at] = (c - k[2] * d) * scale;
}

/* Exact diffusion over a step: f^ *= exp(-nu dt |k|^2). */
FCL_KERNEL void spectral_diffuse(FCL_GLOBAL T2 *a, LAYOUT_ARGS, const T scale, const T nu_dt) {
  wave w = WAVE_HERE();
  a[w.at] *= scale * exp(-nu_dt * norm2(w.k));
}

/* order-th derivative along axis: f^ *= (i k_axis)^order. */
FCL_KERNEL void spectral_derivative(FCL_GLOBAL T2 *a, LAYOUT_ARGS, const T scale, const int axis,
                                    const int order) {
  wave w = WAVE_HERE();
  T k = (order & 1) ? w.kodd[axis] : w.k[axis];
  T2 v = a[w.at] * scale;
  for (int i = 0; i < order; ++i) v = times_i(v * k);
  a[w.at] = v;
}

/* Curl in 3D: omega^ = i k x u^, in place over the three slots. */
FCL_KERNEL void spectral_curl3(FCL_GLOBAL T2 *ux, FCL_GLOBAL T2 *uy, FCL_GLOBAL T2 *uz,
                               LAYOUT_ARGS, const T scale) {
  wave w = WAVE_HERE();
  const T *k = w.kodd;
  T2 a = ux[w.at] * scale, b = uy[w.at] * scale, c = uz[w.at] * scale;
  ux[w.at] = times_i(k[1] * c - k[2] * b);
  uy[w.at] = times_i(k[2] * a - k[0] * c);
  uz[w.at] = times_i(k[0] * b - k[1] * a);
}

/* Curl in 2D: omega^ = i (kx uy^ - ky ux^), into ux's slot. */
FCL_KERNEL void spectral_curl2(FCL_GLOBAL T2 *ux, FCL_GLOBAL const T2 *uy, LAYOUT_ARGS,
                               const T scale) {
  wave w = WAVE_HERE();
  ux[w.at] = times_i(w.kodd[0] * uy[w.at] - w.kodd[1] * ux[w.at]) * scale;
}

/* Buoyancy: omega^ += i k x (g b^), the vorticity source curl(b g) of the force b g over a step
 * (gx, gy, gz: dt g); b^ in the first slot, read only. 3D: */
FCL_KERNEL void spectral_buoyancy3(FCL_GLOBAL const T2 *b_, FCL_GLOBAL T2 *wx, FCL_GLOBAL T2 *wy,
                                   FCL_GLOBAL T2 *wz, LAYOUT_ARGS, const T scale, const T gx,
                                   const T gy, const T gz) {
  wave w = WAVE_HERE();
  const T *k = w.kodd;
  const T2 b = b_[w.at];
  wx[w.at] = (wx[w.at] + times_i(b * (k[1] * gz - k[2] * gy))) * scale;
  wy[w.at] = (wy[w.at] + times_i(b * (k[2] * gx - k[0] * gz))) * scale;
  wz[w.at] = (wz[w.at] + times_i(b * (k[0] * gy - k[1] * gx))) * scale;
}

/* The same in 2D: omega^ += i (kx gy - ky gx) b^. */
FCL_KERNEL void spectral_buoyancy2(FCL_GLOBAL const T2 *b_, FCL_GLOBAL T2 *w_, LAYOUT_ARGS,
                                   const T scale, const T gx, const T gy) {
  wave w = WAVE_HERE();
  w_[w.at] = (w_[w.at] + times_i(b_[w.at] * (w.kodd[0] * gy - w.kodd[1] * gx))) * scale;
}
