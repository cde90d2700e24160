/* The OpenCL source of the column transform (fft_columns.c): a c2c transform of n = n1 * n2
 * points along the slowest axis, C adjacent columns per work-group, in two register passes with
 * one exchange through local memory (the four-step split, in one kernel):
 *   z = n2 z1 + z2, k = k1 + n1 k2,
 *   X[k1 + n1 k2] = sum_z2 W_n2^(z2 k2) W_n^(z2 k1) sum_z1 W_n1^(z1 k1) x[n2 z1 + z2].
 * The small transforms are written out as straight-line code (radix 2, twiddles as literals),
 * so that every value lives in a register. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fft_columns_impl.h"
#include "str.h"

static const double pi = 3.14159265358979323846;

static int log2i(int n) {
  int l = 0;
  while ((1 << l) < n) ++l;
  return l;
}

static int reverse_bits(int i, int bits) {
  int r = 0;
  for (int b = 0; b < bits; ++b) r |= ((i >> b) & 1) << (bits - 1 - b);
  return r;
}

/* In place on the registers <v>0 .. <v>(m-1) (complex: <v>N.x, .y): their DFT of sign `sign`.
 * Radix 2, decimation in time, the bit reversal done by renaming: value k of the transform ends
 * in register <v>out[k]. */
static void small_dft(fcl__str *t, const char *v, int m, int sign, const char *real, int *out) {
  const int bits = log2i(m);
  /* a[i] names the register holding element i of the current stage */
  int a[64];
  for (int i = 0; i < m; ++i) a[i] = reverse_bits(i, bits);
  for (int half = 1; half < m; half *= 2) {
    for (int start = 0; start < m; start += 2 * half)
      for (int j = 0; j < half; ++j) {
        const int p = a[start + j], q = a[start + j + half];
        /* w = exp(sign 2 pi i j / (2 half)) */
        const double ang = sign * 2.0 * pi * j / (2.0 * half);
        double wr = cos(ang), wi = sin(ang);
        const int eighth = (2 * half) / 8; /* exact multiples of pi / 4 */
        if (j == 0) {
          fcl__str_printf(t, "{%s2 s = %s%d; %s%d = s + %s%d; %s%d = s - %s%d;}\n", real, v, p, v,
                          p, v, q, v, q, v, q);
        } else if (2 * j == half) { /* w = sign i */
          fcl__str_printf(t,
                          "{%s2 s = %s%d, r = FCL_VEC2(%s2, %s%s%d.y, %s%s%d.x); %s%d = s + r; "
                          "%s%d = s - r;}\n",
                          real, v, p, real, sign < 0 ? "" : "-", v, q, sign < 0 ? "-" : "", v, q, v,
                          p, v, q);
        } else {
          if (eighth > 0 && j % eighth == 0) { /* w on a diagonal: |wr| = |wi| = sqrt(1/2) */
            const double h = sqrt(0.5);
            wr = wr < 0 ? -h : h;
            wi = wi < 0 ? -h : h;
          }
          /* literals in the kernel's precision (an unsuffixed one is a double) */
          const char *f = strcmp(real, "float") ? "%.17g" : "%.9ef";
          char c[32], sn[32];
          snprintf(c, sizeof c, f, wr);
          snprintf(sn, sizeof sn, f, wi);
          fcl__str_printf(t,
                          "{%s2 s = %s%d, b = %s%d; %s2 r = FCL_VEC2(%s2, b.x * %s - b.y * %s, "
                          "b.x * %s + b.y * %s); %s%d = s + r; %s%d = s - r;}\n",
                          real, v, p, v, q, real, real, c, sn, sn, c, v, p, v, q);
        }
      }
  }
  for (int k = 0; k < m; ++k) out[k] = a[k];
}

char *fcl__fft_columns_source(const fcl__fft_columns_shape *s) {
  const char *real = s->dtype_double ? "double" : "float";
  const int n1 = s->n1, n2 = s->n2, C = s->columns, T = C * n2;
  /* exchange layout: [k1][z2][c], rows of k1 padded by C values so that the 32 work-items of
   * a warp hit 32 banks on both sides */
  const int row = n2 * C + C;
  fcl__str t = {0};
  if (s->dtype_double) fcl__str_printf(&t, "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n");
  for (int dir = 0; dir < 2; ++dir) {
    const int sign = dir == 0 ? -1 : 1;
    fcl__str_printf(
        &t,
        "FCL_KERNEL FCL_GROUP_SIZE(%d, 1, 1)\n"
        "void fcl_fft_columns_%s(FCL_GLOBAL %s2 *restrict data,\n"
        "                        const FCL_GLOBAL %s2 *restrict tw, const ulong stride,\n"
        "                        const ulong row, const uint ncols) {\n"
        "  FCL_LOCAL %s ex[%d];\n"
        "  const int l = (int)get_local_id(0), c = l %% %d, r = l / %d;\n"
        "  const uint col = (uint)get_group_id(0) * %d + c;\n"
        "  const bool live = col < ncols;\n"
        "  FCL_GLOBAL %s2 *p = data + (ulong)get_group_id(1) * row + col;\n",
        T, dir == 0 ? "forward" : "backward", real, real, real, n1 * row, C, C, C, real);
    /* pass 1: work-item (c, z2 = r) transforms x[n2 z1 + z2] over z1 */
    fcl__str_printf(&t, "  %s2 ", real);
    for (int i = 0; i < n1; ++i) fcl__str_printf(&t, "v%d%s", i, i + 1 < n1 ? ", " : ";\n");
    fcl__str_printf(&t, "  if (live) {\n");
    for (int i = 0; i < n1; ++i)
      fcl__str_printf(&t, "    v%d = p[(ulong)(%d + r) * stride];\n", i, n2 * i);
    fcl__str_printf(&t, "  }\n");
    int o1[64], o2[64];
    small_dft(&t, "v", n1, sign, real, o1);
    /* the twiddles W_n^(z2 k1), from the table (conjugated backward) */
    for (int k = 1; k < n1; ++k)
      fcl__str_printf(
          &t,
          "{%s2 w = tw[(r * %d) %% %d], b = v%d; "
          "v%d = FCL_VEC2(%s2, b.x * w.x - b.y * (%sw.y), b.x * (%sw.y) + b.y * w.x);}\n",
          real, k, n1 * n2, o1[k], o1[k], real, sign < 0 ? "" : "-", sign < 0 ? "" : "-");
    /* exchange: the real parts, then the imaginary ones; work-item (c, k1 = r + j n2) gathers
     * its n2 values of each of the n1 / n2 rows it transforms */
    const int rows = n1 / n2;
    fcl__str_printf(&t, "  %s2 ", real);
    for (int i = 0; i < n1; ++i) fcl__str_printf(&t, "u%d%s", i, i + 1 < n1 ? ", " : ";\n");
    for (int part = 0; part < 2; ++part) {
      const char comp = part == 0 ? 'x' : 'y';
      if (part) fcl__str_printf(&t, "  FCL_BARRIER_LOCAL();\n");
      for (int k = 0; k < n1; ++k)
        fcl__str_printf(&t, "  ex[%d + r * %d + c] = v%d.%c;\n", k * row, C, o1[k], comp);
      fcl__str_printf(&t, "  FCL_BARRIER_LOCAL();\n");
      for (int j = 0; j < rows; ++j)
        for (int z2 = 0; z2 < n2; ++z2)
          fcl__str_printf(&t, "  u%d.%c = ex[(r + %d) * %d + %d + c];\n", j * n2 + z2, comp, j * n2,
                          row, z2 * C);
    }
    /* pass 2: work-item (c, k1) transforms over z2; X[k1 + n1 k2] */
    for (int j = 0; j < rows; ++j) {
      char name[16];
      snprintf(name, sizeof name, "w%d_", j);
      fcl__str_printf(&t, "  {\n  %s2 ", real);
      for (int i = 0; i < n2; ++i)
        fcl__str_printf(&t, "w%d_%d = u%d%s", j, i, j * n2 + i, i + 1 < n2 ? ", " : ";\n");
      small_dft(&t, name, n2, sign, real, o2);
      fcl__str_printf(&t, "  if (live) {\n");
      for (int k2 = 0; k2 < n2; ++k2)
        fcl__str_printf(&t, "    p[(ulong)(r + %d) * stride] = w%d_%d;\n", j * n2 + n1 * k2, j,
                        o2[k2]);
      fcl__str_printf(&t, "  }\n  }\n");
    }
    fcl__str_printf(&t, "}\n");
  }
  if (t.failed) {
    free(t.s);
    return NULL;
  }
  return t.s;
}

bool fcl__fft_columns_split(int64_t n, int *n1, int *n2) {
  if (n < 4 || (n & (n - 1)) || n > 4096) return false;
  const int bits = log2i((int)n);
  *n2 = 1 << (bits / 2);
  *n1 = (int)n / *n2;
  return true;
}

void fcl__fft_columns_twiddles(int64_t n, bool dbl, void *table) {
  for (int64_t i = 0; i < n; ++i) {
    const double a = -2.0 * pi * (double)i / (double)n;
    if (dbl) {
      ((double *)table)[2 * i] = cos(a);
      ((double *)table)[2 * i + 1] = sin(a);
    } else {
      ((float *)table)[2 * i] = (float)cos(a);
      ((float *)table)[2 * i + 1] = (float)sin(a);
    }
  }
}
