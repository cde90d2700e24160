/* The OpenCL source of the column transform (fft_columns.c): a c2c transform of n = n1 * n2
 * points along the slowest axis, C adjacent columns per work-group, in two register passes with
 * one exchange through local memory (the four-step split, in one kernel):
 *   z = n2 z1 + z2, k = k1 + n1 k2,
 *   X[k1 + n1 k2] = sum_z2 W_n2^(z2 k2) W_n^(z2 k1) sum_z1 W_n1^(z1 k1) x[n2 z1 + z2].
 * The small transforms are written out as straight-line code (radix 2, twiddles as literals),
 * so that every value lives in a register.
 *
 * The mirrored form (walls) transforms the mirror image x of a column of h + 1 = n / 2 + 1
 * points, x[n - z] = s x[z] (s = -1 where the column is odd about its walls, whose values are
 * then 0; else 1), and keeps X[0 .. h], X[n - k] = s X[k]. Both passes do half the work of the
 * periodic one. Pass 1: the sequences of z2 = r and n2 - r are each other's reversal, so their
 * transforms A satisfy A_{n2 - r}[k1] = s W_n1^-k1 A_r[-k1]: work-item r <= n2 / 2 loads and
 * transforms its own and writes both rows' twiddled values, s conj(W_n^(r k1)) A_r[-k1] for
 * n2 - r (W in the transform's direction). Pass 2: the outputs k2 >= n2 / 2 of row k1 are those
 * below n2 / 2 of row n1 - k1, X[(n1 - k1) + n1 (n2 - 1 - k2)] = s X[k1 + n1 k2]: rows
 * k1 <= n1 / 2 are transformed and store both. The exchange holds whole complex values in one
 * round, or (split) real parts and then imaginary ones, pass 1's products computed for each. */
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

/* A kernel's opening, up to its pointer p to the work-group's first column: the arguments
 * (and odd, walls), the exchange of n1 rows of `row` values (`value`: real or real2). */
static void kernel_head(fcl__str *t, const fcl__fft_columns_shape *s, int dir, const char *value,
                        int row) {
  const char *real = s->dtype_double ? "double" : "float";
  const int C = s->columns;
  fcl__str_printf(t,
                  "FCL_KERNEL FCL_GROUP_SIZE(%d, 1, 1)\n"
                  "void fcl_fft_columns_%s(FCL_GLOBAL %s2 *restrict data,\n"
                  "                        const FCL_GLOBAL %s2 *restrict tw, const ulong stride,\n"
                  "                        const ulong row, const uint ncols%s) {\n"
                  "  FCL_LOCAL %s ex[%d];\n"
                  "  const int l = (int)get_local_id(0), c = l %% %d, r = l / %d;\n"
                  "  const uint col = (uint)get_group_id(0) * %d + c;\n"
                  "  const bool live = col < ncols;\n"
                  "  FCL_GLOBAL %s2 *p = data + (ulong)get_group_id(1) * row + col;\n",
                  C * s->n2, dir == 0 ? "forward" : "backward", real, real,
                  s->walls ? ", const int odd" : "", value, s->n1 * row, C, C, C, real);
}

/* The program's text, or NULL (and nothing) where building it ran out of memory. */
static char *finish(fcl__str *t) {
  if (!t->failed) return t->s;
  free(t->s);
  return NULL;
}

/* The mirrored form (the file comment): kernels of the same names and arguments, and odd. */
static char *walls_source(const fcl__fft_columns_shape *s) {
  const char *real = s->dtype_double ? "double" : "float";
  const int n1 = s->n1, n2 = s->n2, C = s->columns, n = n1 * n2, h = n / 2;
  const int row = n2 * C + C; /* exchange [k1][z2][c], rows padded by C values */
  fcl__str t = {0};
  if (s->dtype_double) fcl__str_printf(&t, "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n");
  /* a * b and a * conj(b) */
  fcl__str_printf(&t,
                  "#define FCL_WALLS_MUL(a, b) FCL_VEC2(%s2, a.x * b.x - a.y * b.y, a.x * b.y + "
                  "a.y * b.x)\n"
                  "#define FCL_WALLS_MULC(a, b) FCL_VEC2(%s2, a.x * b.x + a.y * b.y, a.y * b.x - "
                  "a.x * b.y)\n",
                  real, real);
  for (int dir = 0; dir < 2; ++dir) {
    const int sign = dir == 0 ? -1 : 1;
    char value[16];
    snprintf(value, sizeof value, "%s%s", real, s->split ? "" : "2");
    kernel_head(&t, s, dir, value, row);
    fcl__str_printf(&t, "  const %s sg = odd ? -1 : 1;\n  %s2 ", real, real);
    for (int i = 0; i < n1; ++i) fcl__str_printf(&t, "v%d%s", i, i + 1 < n1 ? ", " : ";\n");
    /* pass 1: work-item (c, z2 = r <= n2 / 2) transforms x[n2 z1 + r] over z1 */
    fcl__str_printf(&t, "  if (r <= %d) {\n  if (live) {\n", n2 / 2);
    for (int i = 0; i < n1; ++i)
      fcl__str_printf(&t,
                      "    {const int z = %d + r; const %s f = z == 0 || z == %d ? (%s)(odd ? 0 : "
                      "1) : z > %d ? sg : (%s)1;\n"
                      "     v%d = p[(ulong)(z <= %d ? z : %d - z) * stride] * f;}\n",
                      n2 * i, real, h, real, h, real, i, h, n);
    fcl__str_printf(&t, "  }\n");
    int o1[64], o2[64];
    small_dft(&t, "v", n1, sign, real, o1);
    fcl__str_printf(&t, "  }\n");
    /* pass 2's rows k1 = r + j n2 <= n1 / 2 of work-item (c, r), gathered from the exchange */
    for (int j = 0; j < n1 / n2; ++j) {
      fcl__str_printf(&t, "  %s2 ", real);
      for (int z2 = 0; z2 < n2; ++z2)
        fcl__str_printf(&t, "w%d_%d%s", j, z2, z2 + 1 < n2 ? ", " : ";\n");
    }
    /* the exchange, whole values or (split) the real parts, then the imaginary ones: own row r,
     * W^(r k1) A[k1]; the partner n2 - r (0 < r < n2 / 2), s conj(W^(r k1)) A[-k1] */
    const char *parts[2] = {s->split ? ".x" : "", ".y"};
    for (int part = 0; part < (s->split ? 2 : 1); ++part) {
      const char *pc = parts[part];
      if (part) fcl__str_printf(&t, "  FCL_BARRIER_LOCAL();\n");
      fcl__str_printf(&t, "  if (r <= %d) {\n", n2 / 2);
      for (int k = 0; k < n1; ++k) {
        const int mk = (n1 - k) % n1;
        fcl__str_printf(&t,
                        "  {%s2 w = tw[(r * %d) %% %d]; w.y = %sw.y;\n"
                        "   ex[%d + r * %d + c] = FCL_WALLS_MUL(v%d, w)%s;\n"
                        "   if (r > 0 && r < %d) ex[%d + (%d - r) * %d + c] = "
                        "FCL_WALLS_MULC(v%d, w)%s * sg;}\n",
                        real, k, n, sign < 0 ? "" : "-", k * row, C, o1[k], pc, n2 / 2, k * row, n2,
                        C, o1[mk], pc);
      }
      fcl__str_printf(&t, "  }\n  FCL_BARRIER_LOCAL();\n");
      for (int j = 0; j < n1 / n2; ++j) {
        fcl__str_printf(&t, "  if (r + %d <= %d) {\n", j * n2, n1 / 2);
        for (int z2 = 0; z2 < n2; ++z2)
          fcl__str_printf(&t, "    w%d_%d%s = ex[(r + %d) * %d + %d + c];\n", j, z2, pc, j * n2,
                          row, z2 * C);
        fcl__str_printf(&t, "  }\n");
      }
    }
    /* pass 2: work-item (c, r) transforms its rows over z2 */
    for (int j = 0; j < n1 / n2; ++j) {
      char name[16];
      snprintf(name, sizeof name, "w%d_", j);
      fcl__str_printf(&t, "  if (r + %d <= %d) {\n  const int k1 = r + %d;\n", j * n2, n1 / 2,
                      j * n2);
      small_dft(&t, name, n2, sign, real, o2);
      fcl__str_printf(&t, "  if (live) {\n");
      for (int k2 = 0; k2 < n2; ++k2) {
        char v[24];
        snprintf(v, sizeof v, "w%d_%d", j, o2[k2]);
        if (k2 < n2 / 2) /* X[k1 + n1 k2]; an odd column's X[0] is 0 */
          fcl__str_printf(&t,
                          "    p[(ulong)(k1 + %d) * stride] = %s * (%s)(k1 + %d == 0 && odd ? 0 : "
                          "1);\n",
                          n1 * k2, v, real, n1 * k2);
        if (k2 == n2 / 2) /* X[h] (k1 = 0; 0 where odd) */
          fcl__str_printf(&t, "    if (k1 == 0) p[(ulong)%d * stride] = %s * (%s)(odd ? 0 : 1);\n",
                          h, v, real);
        if (k2 >= n2 / 2) /* row n1 - k1's X[(n1 - k1) + n1 (n2 - 1 - k2)] = s X[k1 + n1 k2] */
          fcl__str_printf(&t,
                          "    if (k1 > 0 && k1 < %d) p[(ulong)(%d - k1) * stride] = %s * sg;\n",
                          n1 / 2, n1 + n1 * (n2 - 1 - k2), v);
      }
      fcl__str_printf(&t, "  }\n  }\n");
    }
    fcl__str_printf(&t, "}\n");
  }
  return finish(&t);
}

char *fcl__fft_columns_source(const fcl__fft_columns_shape *s) {
  if (s->walls) return walls_source(s);
  const char *real = s->dtype_double ? "double" : "float";
  const int n1 = s->n1, n2 = s->n2, C = s->columns;
  /* exchange layout: [k1][z2][c], rows of k1 padded by C values so that the 32 work-items of
   * a warp hit 32 banks on both sides */
  const int row = n2 * C + C;
  fcl__str t = {0};
  if (s->dtype_double) fcl__str_printf(&t, "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n");
  for (int dir = 0; dir < 2; ++dir) {
    const int sign = dir == 0 ? -1 : 1;
    kernel_head(&t, s, dir, real, row);
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
  return finish(&t);
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
