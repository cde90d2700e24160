/* A stage of the conservative stretching (stretching_conservative.c) as a plane-tile kernel for
 * GPUs: a work-group of WX x WY work-items holds a tile of a plane of k with 2 layers of halo
 * along x and y in local memory, one plane of each array it differentiates along x or y, and
 * walks KC planes of k; every work-item carries the planes k - 2 .. k + 2 of the arrays
 * differentiated along z in registers. Each value of a plane is then read from memory about
 * once, where the generated kernel reads the neighbours of a point's fluxes through the caches.
 * The loads of the next plane are issued before the barrier that publishes the tile of the
 * current one, so they are in flight while it is computed, and the loop takes two planes an
 * iteration, so that each tile buffer is a constant. The halo values of a plane are spread over
 * the work-items, at most one each. One H200, 512^3 float, in flowcl-tgv
 * (FLOWCL_TUNE=estimate): the RK2 stages 1.78 and 2.08 ms against the generated kernels' 1.83
 * and 2.32 (0.65 and 0.74 of the copy bandwidth against 0.62 and 0.66) when the first two items
 * of each row and column loaded the halos; spread, 1.48 and 1.72 ms for the tiles off the faces,
 * and one kernel wrapping every tile (below) 1.67 and 1.99 ms for a whole stage (0.69 and 0.77 of
 * copy, default options). Tried on the way (a probe, 512^3): loads waited on every plane, 2.48
 * ms for stage 1; a point per work-item with no tiles, 2.29; 4 points of x per work-item in
 * vectors, 3.11.
 *
 * Along the axes that are periodic and held whole by this rank (every axis on one rank of a
 * periodic box, no ghost read at all) the work-items wrap their indices to the periodic
 * images (each item's halo offset computed once, the z wrap a uniform add of a plane's loads). With the halo loads of the first items of each row and column, a kernel
 * wrapping every tile took 92-110 registers against 80 and ran slower than the ghost exchanges
 * it saved, so the tiles off the faces took a kernel of constant offsets and a ring of the rest
 * (16 % of the points at 512^3) one that wrapped, at 0.57-0.67 of the copy bandwidth; with the
 * halo values spread, one kernel wrapping every tile takes 77-80 registers, and at 512^3 (one
 * H200, flowcl-tgv) the step is 24.54-24.59 ms against the split's 24.75-24.85. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fd_impl.h"
#include "str.h"

/* One H200, stage 1 at 512^3 (float, a probe): 32 x 8 work-items and 32 planes 1.70 ms, 64 x 4
 * 1.73, 128 x 2 2.05, 64 x 8 2.08 (16 or 64 planes within 2 %). */
enum { WX = 32, WY = 8, KC = 32 };
_Static_assert(WY >= 4 && 4 * (WX + WY) <= WX * WY, "a halo value an item: 4 rows, 4 columns");

/* The arrays read: u0-2 then a0-2, what each is differentiated along, its name in the kernel and
 * its slot among the tiles (-1: none). */
typedef struct {
  char name[4];
  bool along[3];
  int slot;
} input;

typedef struct {
  const fcl_fd *op;
  const fcl_field *u;
  const char *real, *kernel;
  const char *letters; /* a, base ('-': none), out */
  double alpha, beta, gamma;
  input in[6];
  char vel;         /* the velocity's arrays: u, or m (u_mid, an extrapolating operator's) */
  bool extrapolate; /* the velocity is 3/2 u - 1/2 p, written to m at each point */
  int nslots;
  int lo[3], hi[3]; /* the points covered, interior indices (the grown domain) */
  bool wrap[3];     /* periodic images instead of ghosts along the axis (lo 0, hi n - 1) */
  bool guard; /* wrapped along x or y: the items past the points aim their (never made) stores at
                 ghosts */
  int origin[3];
  size_t padded[3];
} planes;

static void lit(fcl__str *t, const planes *p, double v) {
  fcl__str_printf(t, strcmp(p->real, "double") ? "%.9ef" : "%.17e", v);
}

/* The value of input x at offset s along axis from the work-item's point (tile, window or
 * centre register). */
static void value(fcl__str *t, const input *x, int axis, int s) {
  static const char *const sign[5] = {"m2", "m1", "0", "p1", "p2"};
  if (s == 0 && !x->along[2])
    fcl__str_printf(t, "c_%s", x->name);
  else if (axis == 2 || s == 0)
    fcl__str_printf(t, "z%s_%s", sign[s + 2], x->name);
  else
    fcl__str_printf(t, "T_%s[t0 %c %d]", x->name, s < 0 ? '-' : '+', abs(s) * (axis ? WX + 4 : 1));
}

/* C1 (x(+1) y(+1) - x(-1) y(-1)) - C2 (x(+2) y(+2) - x(-2) y(-2)): d_axis (x y), 4th order. */
static void flux(fcl__str *t, const planes *p, const input *x, const input *y, int axis) {
  const double dx = fcl_domain_spacing(fcl_topology_domain(fcl_field_topology(p->u)), axis);
  fcl__str_printf(t, "(");
  lit(t, p, 2.0 / 3.0 / dx);
  for (int s = 1; s <= 2; ++s) {
    fcl__str_printf(t, " * (");
    value(t, x, axis, s);
    fcl__str_printf(t, " * ");
    value(t, y, axis, s);
    fcl__str_printf(t, " - ");
    value(t, x, axis, -s);
    fcl__str_printf(t, " * ");
    value(t, y, axis, -s);
    fcl__str_printf(t, ")");
    if (s == 1) {
      fcl__str_printf(t, " - ");
      lit(t, p, 1.0 / 12.0 / dx);
    }
  }
  fcl__str_printf(t, ")");
}

/* c (16 (x(-1) + x(+1)) - 30 x - (x(-2) + x(+2))): d^2 x / d axis^2, 4th order. */
static void second(fcl__str *t, const planes *p, const input *x, int axis) {
  const double dx = fcl_domain_spacing(fcl_topology_domain(fcl_field_topology(p->u)), axis);
  lit(t, p, 1.0 / (12 * dx * dx));
  fcl__str_printf(t, " * (16 * (");
  value(t, x, axis, -1);
  fcl__str_printf(t, " + ");
  value(t, x, axis, 1);
  fcl__str_printf(t, ") - 30 * ");
  value(t, x, axis, 0);
  fcl__str_printf(t, " - (");
  value(t, x, axis, -2);
  fcl__str_printf(t, " + ");
  value(t, x, axis, 2);
  fcl__str_printf(t, "))");
}

/* The items that load input x's halo values: those of the halo rows (hy), of the halo columns
 * (hx), or both. */
static const char *halo_items(const input *x) {
  return x->along[0] && x->along[1] ? "hx || hy" : x->along[0] ? "hx" : "hy";
}

/* Input x's value at index at + offset: its element or, for the velocity of a stage that
 * extrapolates it, 3/2 u - 1/2 p of the two elements. */
static void element(fcl__str *t, const planes *p, const input *x, const char *at,
                    const char *offset) {
  if (!p->extrapolate || x->name[0] != p->vel) {
    fcl__str_printf(t, "%s[%s%s]", x->name, at, offset);
    return;
  }
  fcl__str_printf(t, "(");
  lit(t, p, 1.5);
  fcl__str_printf(t, " * %s[%s%s] - ", x->name, at, offset);
  lit(t, p, 0.5);
  fcl__str_printf(t, " * p%c[%s%s])", x->name[1], at, offset);
}

/* The loads of input x's plane at index expression `at` into its registers: the window's newest
 * plane (zp2, or zn for the next plane's) or the centre, and the item's halo value. */
static void loads(fcl__str *t, const planes *p, const input *x, const char *at, bool next) {
  const char *n = x->name;
  if (x->along[2])
    fcl__str_printf(t, "    %s_%s = ", next ? "zn" : "zp2", n),
        element(t, p, x, at, " + 2 * PL + ZW");
  else
    fcl__str_printf(t, "    c_%s = ", n), element(t, p, x, at, "");
  fcl__str_printf(t, ";\n");
  if (x->along[0] || x->along[1]) {
    fcl__str_printf(t, "    if (%s) H_%s = ", halo_items(x), n), element(t, p, x, at, " + dh");
    fcl__str_printf(t, ";\n");
  }
}

/* One plane, k + buf, its tile in buffer buf: the tile stored, the next plane's loads issued, the
 * barrier, the stage's values, the windows moved on. */
static void plane(fcl__str *t, const planes *p, int buf) {
  const char *r = p->real;
  const bool base = p->letters[1] != '-';
  for (int x = 0; x < 6; ++x) {
    const input *in = &p->in[x];
    const char *n = in->name;
    if (in->slot < 0) {
      if (!in->along[2]) fcl__str_printf(t, "    const %s cur_%s = c_%s;\n", r, n, n);
      continue;
    }
    fcl__str_printf(t, "    FCL_LOCAL_PTR %s *T_%s = T[%d][%d];\n    T_%s[t0] = ", r, n, buf,
                    in->slot, n);
    value(t, in, 0, 0);
    fcl__str_printf(t, ";\n");
    if (!in->along[2]) fcl__str_printf(t, "    const %s cur_%s = c_%s;\n", r, n, n);
    fcl__str_printf(t, "    if (%s) T_%s[th] = H_%s;\n", halo_items(in), n, n);
  }
  fcl__str_printf(t, "    if (k + %d < kn) {\n      const long d = c + PL;\n", buf + 1);
  fcl__str_printf(t, "#define ZW ZWRAP(k0 + k + %d)\n", buf + 3);
  for (int x = 0; x < 6; ++x) loads(t, p, &p->in[x], "d", true);
  fcl__str_printf(t, "#undef ZW\n    }\n");
  fcl__str_printf(t, "    FCL_BARRIER_LOCAL();\n    if (live) {\n");
  /* after the barrier: loaded before it, with the next plane's, the second RK2 stage took 94
   * registers and 2.41 ms at 512^3 on an H200, here 78 and 2.08 (more work-groups a core) */
  for (int c = 0; c < 3 && base; ++c)
    fcl__str_printf(t, "      const %s b%d = %c%d[AT];\n", r, c, p->letters[1], c);
  /* the centres used below are this plane's, not the next's just loaded */
  for (int x = 0; x < 6; ++x)
    if (!p->in[x].along[2])
      fcl__str_printf(t, "#define c_%s cur_%s\n", p->in[x].name, p->in[x].name);
  for (int q = 0; q < 3; ++q) {
    fcl__str_printf(t, "      const %s f%d = ", r, q);
    for (int axis = 0; axis < 3; ++axis) {
      if (axis) fcl__str_printf(t, " + ");
      flux(t, p, &p->in[q], &p->in[3 + axis], axis);
    }
    if (p->op->nu > 0) {
      fcl__str_printf(t, " + ");
      lit(t, p, p->op->nu);
      fcl__str_printf(t, " * (");
      for (int axis = 0; axis < 3; ++axis) {
        if (axis) fcl__str_printf(t, " + ");
        second(t, p, &p->in[3 + q], axis);
      }
      fcl__str_printf(t, ")");
    }
    fcl__str_printf(t, ";\n      %c%d[AT] = ", p->letters[2], q);
    if (base) {
      lit(t, p, p->alpha);
      fcl__str_printf(t, " * b%d + ", q);
    }
    lit(t, p, p->beta);
    fcl__str_printf(t, " * ");
    value(t, &p->in[3 + q], 0, 0);
    fcl__str_printf(t, " + ");
    lit(t, p, p->gamma);
    fcl__str_printf(t, " * dt * f%d;\n", q);
  }
  for (int q = 0; q < 3 && p->extrapolate; ++q) { /* the velocity extrapolated, for later use */
    fcl__str_printf(t, "      m%d[AT] = ", q);
    value(t, &p->in[q], 0, 0);
    fcl__str_printf(t, ";\n");
  }
  for (int x = 0; x < 6; ++x)
    if (!p->in[x].along[2]) fcl__str_printf(t, "#undef c_%s\n", p->in[x].name);
  fcl__str_printf(t, "    }\n");
  for (int x = 0; x < 6; ++x)
    if (p->in[x].along[2]) {
      const char *n = p->in[x].name;
      fcl__str_printf(
          t,
          "    zm2_%s = zm1_%s; zm1_%s = z0_%s; z0_%s = zp1_%s; zp1_%s = zp2_%s; zp2_%s = zn_%s;\n",
          n, n, n, n, n, n, n, n, n, n);
    }
}

static void source(fcl__str *t, const planes *p) {
  const char *r = p->real;
  const bool base = p->letters[1] != '-', in_place = base && p->letters[2] == p->letters[1];
  fcl__str_printf(t,
                  "#define PX %zuL\n#define PL %zuL\n#define TW %d\n#define TS %d\n"
                  "FCL_KERNEL FCL_GROUP_SIZE(%d, %d, 1)\nvoid %s(",
                  p->padded[0], p->padded[0] * p->padded[1], WX + 4, (WX + 4) * (WY + 4), WX, WY,
                  p->kernel);
  for (int x = 0; x < 6; ++x)
    fcl__str_printf(t, "FCL_GLOBAL const %s *restrict %s, ", r, p->in[x].name);
  for (int c = 0; c < 3; ++c)
    if (base && !in_place)
      fcl__str_printf(t, "FCL_GLOBAL const %s *restrict %c%d, ", r, p->letters[1], c);
  for (int c = 0; c < 3; ++c)
    fcl__str_printf(t, "FCL_GLOBAL %s *%s%c%d, ", r, in_place ? "" : "restrict ", p->letters[2], c);
  for (int c = 0; c < 3 && p->extrapolate; ++c)
    fcl__str_printf(t, "FCL_GLOBAL const %s *restrict p%d, ", r, c);
  for (int c = 0; c < 3 && p->extrapolate; ++c)
    fcl__str_printf(t, "FCL_GLOBAL %s *restrict m%d, ", r, c);
  fcl__str_printf(t, "const %s dt) {\n  FCL_LOCAL %s T[2][%d][TS];\n", r, r, p->nslots);
  fcl__str_printf(t,
                  "  const int lx = get_local_id(0), ly = get_local_id(1);\n"
                  "  const int gx = get_group_id(0), gy = get_group_id(1);\n"
                  "  const int k0 = %d + (int)get_group_id(2) * %d, kn = min(%d, %d - k0);\n",
                  p->lo[2], KC, KC, p->hi[2] + 1);
  fcl__str_printf(t,
                  "  const int i = %d + gx * %d + lx, j = %d + gy * %d + ly;\n"
                  "  const bool live = i <= %d && j <= %d;\n"
                  "  const int t0 = (ly + 2) * TW + lx + 2;\n",
                  p->lo[0], WX, p->lo[1], WY, p->hi[0], p->hi[1]);
  /* wrapped axes: every index a periodic image in the interior, the halos' offsets per item;
   * where a work-group's items run as one loop that the compiler is told has no dependences
   * (PoCL on a CPU), it may turn the items' guarded stores into loads and stores of every item:
   * those of the items past the points are then aimed at ghosts, not at the interior points
   * their loads wrap to (else they write back old values over the live items' results). Along
   * the other axes, the work-items past the points load inside the ghosts and write nothing. */
  const bool *w = p->wrap;
  if (w[0] || w[1] || w[2])
    fcl__str_printf(t, "#define NX %d\n#define NY %d\n#define NZ %d\n", p->hi[0] + 1, p->hi[1] + 1,
                    p->hi[2] + 1);
  fcl__str_printf(t, "#define ZWRAP(q) %s\n",
                  w[2] ? "((q) < 0 ? NZ * PL : (q) >= NZ ? -NZ * PL : 0L)" : "0L");
  char ic[32], jc[32];
  snprintf(ic, sizeof ic, w[0] ? "i %% NX" : "min(i, %d)", p->hi[0] + 2);
  snprintf(jc, sizeof jc, w[1] ? "j %% NY" : "min(j, %d)", p->hi[1] + 2);
  fcl__str_printf(t, "  const int ic = %s, jc = %s;\n", ic, jc);
  if (p->guard && (w[0] || w[1]))
    fcl__str_printf(t, "  const int sx = %s + %s;\n#define AT (c + sx)\n",
                    w[0] ? "min(i, NX + 1) - ic" : "0",
                    w[1] ? "(min(j, NY + 1) - jc) * (int)PX" : "0");
  else
    fcl__str_printf(t, "#define AT c\n");
  /* the halo values spread over the work-items, one each: the 4 halo rows by the first 4 rows of
   * items, the 4 halo columns by the next 4 WY items (4 a row); dh: an item's halo value's offset
   * from its c (wrapped: to the periodic image), th: its place in the tile. Loaded and stored by
   * the first 2 items of each row and column of items instead, 16 registers and unequal work
   * between the warps: stage 1 1.567 against 1.481 ms, stage 2 1.79 against 1.72 at 512^3 on an
   * H200. */
  fcl__str_printf(
      t,
      "  const int l = ly * %d + lx, lh = l - %d, ti0 = i - lx, tj0 = j - ly;\n"
      "  const bool hy = ly < 4, hx = lh >= 0 && lh < %d;\n"
      "  const int ti = hy ? i : ti0 + ((lh & 3) < 2 ? (lh & 3) - 2 : %d + (lh & 3));\n"
      "  const int tj = hy ? tj0 + (ly < 2 ? ly - 2 : %d + ly) : tj0 + (lh >> 2);\n"
      "  const int dh = %s - ic + (%s - jc) * (int)PX, th = (tj - tj0 + 2) * TW + ti - ti0 + 2;\n",
      WX, 4 * WX, 4 * WY, WX - 2, WY - 2, w[0] ? "(ti + NX) % NX" : "ti",
      w[1] ? "(tj + NY) % NY" : "tj");
  fcl__str_printf(t, "  long c = ((long)(k0 + %d) * %zuL + jc + %d) * PX + ic + %d;\n",
                  p->origin[2], p->padded[1], p->origin[1], p->origin[0]);
  for (int x = 0; x < 6; ++x) {
    const input *in = &p->in[x];
    const char *n = in->name;
    if (in->along[2]) {
      fcl__str_printf(t, "  %s zm2_%s = ", r, n),
          element(t, p, in, "c", " - 2 * PL + ZWRAP(k0 - 2)");
      fcl__str_printf(t, ", zm1_%s = ", n), element(t, p, in, "c", " - PL + ZWRAP(k0 - 1)");
      fcl__str_printf(t, ", z0_%s = ", n), element(t, p, in, "c", "");
      fcl__str_printf(t, ", zp1_%s = ", n), element(t, p, in, "c", " + PL + ZWRAP(k0 + 1)");
      fcl__str_printf(t, ", zp2_%s, zn_%s = 0;\n", n, n);
    } else
      fcl__str_printf(t, "  %s c_%s;\n", r, n);
    if (in->along[0] || in->along[1]) fcl__str_printf(t, "  %s H_%s = 0;\n", r, n);
  }
  fcl__str_printf(t, "  {\n");
  fcl__str_printf(t, "#define ZW ZWRAP(k0 + 2)\n");
  for (int x = 0; x < 6; ++x) loads(t, p, &p->in[x], "c", false);
  fcl__str_printf(t, "#undef ZW\n");
  /* two planes an iteration, each with its own tile buffer (a buffer is rewritten only after
   * the next barrier, which every reader of it has passed) */
  fcl__str_printf(t, "  }\n  for (int k = 0; k < kn; k += 2) {\n");
  plane(t, p, 0);
  fcl__str_printf(t, "    c += PL;\n    if (k + 1 < kn) {\n");
  plane(t, p, 1);
  fcl__str_printf(t, "    }\n    c += PL;\n");
  fcl__str_printf(t,
                  "  }\n}\n#undef PX\n#undef PL\n#undef TW\n#undef TS\n#undef ZWRAP\n#undef AT\n");
  if (w[0] || w[1] || w[2]) fcl__str_printf(t, "#undef NX\n#undef NY\n#undef NZ\n");
}

/* The linear index of interior point (i, j, k). */
static long long index_of(const planes *p, long long i, long long j, long long k) {
  return ((k + p->origin[2]) * (long long)p->padded[1] + j + p->origin[1]) *
             (long long)p->padded[0] +
         i + p->origin[0];
}

/* Whether the device and the fields take the kernel: one padded shape for all, work-groups of
 * WX x WY, the tiles in local memory, and every load inside the arrays: along the axes not
 * wrapped, the halos of the last tiles (WX, WY past the clamped point, in rows or planes the
 * arrays go on with) as well as the planes 2 past the last (wrapped, an interior point). */
static bool fits(const planes *p, const fcl_field *const *fields, int nfields,
                 const fcl_device_info *info, size_t real) {
  for (int f = 0; f < nfields; ++f)
    if (fields[f] && memcmp(fcl_field_padded_shape(fields[f]), p->padded, sizeof p->padded))
      return false;
  const bool *w = p->wrap;
  const long long size = (long long)(p->padded[0] * p->padded[1] * p->padded[2]),
                  i = w[0] ? p->hi[0] : p->hi[0] + 2, j = w[1] ? p->hi[1] : p->hi[1] + 2,
                  k = w[2] ? p->hi[2] : p->hi[2] + 2;
  if (index_of(p, w[0] ? i : i + WX, w[1] ? j : j + WY, p->hi[2]) >= size ||
      index_of(p, i, j, k) >= size)
    return false;
  return info->max_work_group_size >= WX * WY &&
         info->local_mem_size >= 2 * (size_t)p->nslots * (WX + 4) * (WY + 4) * real;
}

unsigned fcl__fd_planes_wraps(const fcl_topology *t) {
  const fcl_domain *d = fcl_topology_domain(t);
  unsigned mask = 0;
  for (int a = 0; a < 3 && d->dim == 3; ++a)
    if (fcl_topology_procs(t)[a] == 1 && d->bc[a][0] == FCL_BC_PERIODIC &&
        fcl_topology_local_resolution(t)[a] >= 2)
      mask |= 1u << a;
  return mask;
}

/* The launcher of p's kernel in prog over p's points, bytes a launch. */
static fcl_status launcher(fcl_program *prog, const planes *p, fcl_device *dev, fcl_queue *q,
                           double bytes, fcl_launcher **out) {
  const char *name = p->kernel;
  fcl_kernel *k = NULL;
  fcl_kernel_work_group_info wi;
  fcl_status st = fcl_kernel_create(prog, name, &k);
  if (st == FCL_OK) st = fcl_kernel_get_work_group_info(k, dev, &wi);
  fcl_kernel_destroy(&k);
  FCL_TRY(st);
  if (wi.work_group_size < WX * WY) return FCL_ERR_NOT_SUPPORTED; /* registers */
  /* the arguments in the kernel's order, each a parameter named after its array */
  const bool base = p->letters[1] != '-', in_place = base && p->letters[2] == p->letters[1];
  const bool f64 = !strcmp(p->real, "double");
  char names[19][4];
  fcl_param_spec params[20];
  unsigned np = 0;
  for (int x = 0; x < 6; ++x) strcpy(names[np++], p->in[x].name);
  for (int c = 0; c < 3 && base && !in_place; ++c)
    snprintf(names[np++], sizeof names[0], "%c%d", p->letters[1], c);
  for (int c = 0; c < 3; ++c) snprintf(names[np++], sizeof names[0], "%c%d", p->letters[2], c);
  for (int c = 0; c < 3 && p->extrapolate; ++c) snprintf(names[np++], sizeof names[0], "p%d", c);
  for (int c = 0; c < 3 && p->extrapolate; ++c) snprintf(names[np++], sizeof names[0], "m%d", c);
  for (unsigned i = 0; i < np; ++i) params[i] = (fcl_param_spec){names[i], i, FCL_TYPE_BUFFER};
  params[np] = (fcl_param_spec){"dt", np, f64 ? FCL_TYPE_F64 : FCL_TYPE_F32};
  ++np;
  fcl_launch_config cfg = {.queue = q, .work_dim = 3, .local = {WX, WY, 1}};
  const int64_t extent[3] = {p->hi[0] - p->lo[0] + 1, p->hi[1] - p->lo[1] + 1,
                             p->hi[2] - p->lo[2] + 1};
  cfg.global[0] = (size_t)((extent[0] + WX - 1) / WX * WX);
  cfg.global[1] = (size_t)((extent[1] + WY - 1) / WY * WY);
  cfg.global[2] = (size_t)((extent[2] + KC - 1) / KC);
  cfg.bytes_per_launch = (size_t)bytes;
  return fcl_launcher_create_kernel(prog, name, name, 0, NULL, np, params, &cfg, out);
}

fcl_status fcl__fd_planes_stage(fcl_fd *op, const char *kernel, fcl_field *u, fcl_field *a,
                                fcl_field *base, fcl_field *out, const char *letters, double alpha,
                                double beta, double gamma, unsigned wrap, double bytes,
                                fcl_launcher **out_launcher) {
  *out_launcher = NULL;
  fcl_queue *q = fcl_field_queue(u);
  fcl_device *dev;
  fcl_device_info info;
  FCL_TRY(fcl_queue_device(q, &dev));
  FCL_TRY(fcl_device_get_info(dev, &info));
  const fcl_topology *top = fcl_field_topology(u);
  const int64_t *n = fcl_topology_local_resolution(top);
  const bool f64 = fcl_field_dtype(u) == FCL_FLOAT64;
  planes p = {.op = op,
              .u = u,
              .real = f64 ? "double" : "float",
              .kernel = kernel,
              .letters = letters,
              .alpha = alpha,
              .beta = beta,
              .gamma = gamma,
              .wrap = {wrap & 1, wrap & 2, wrap & 4},
              .guard = !(info.type & FCL_DEVICE_GPU),
              .extrapolate = op->extrap[0] && u == op->extrap[0]};
  p.vel = op->extrap[0] && !p.extrapolate ? 'm' : 'u';
  for (int ax = 0; ax < 3; ++ax) {
    p.lo[ax] = -op->grow[ax];
    p.hi[ax] = (int)n[ax] - 1 + op->grow[ax];
    p.origin[ax] = fcl_topology_origin(top)[ax];
    p.padded[ax] = fcl_field_padded_shape(u)[ax];
  }
  /* u_q is differentiated along every axis (its fluxes), a_j along j; with diffusion, every a_q
   * along every axis (its Laplacian) */
  const bool diffuse = op->nu > 0;
  for (int x = 0; x < 6; ++x) {
    input *in = &p.in[x];
    snprintf(in->name, sizeof in->name, "%c%d", x < 3 ? p.vel : letters[0], x % 3);
    for (int ax = 0; ax < 3; ++ax) in->along[ax] = x < 3 || diffuse || x - 3 == ax;
    in->slot = in->along[0] || in->along[1] ? p.nslots++ : -1;
  }
  const fcl_field *fields[6] = {u, a, base, out, op->extrap[1], op->extrap[2]};
  if (!fits(&p, fields, 6, &info, f64 ? 8 : 4)) return FCL_ERR_NOT_SUPPORTED;
  fcl__str t = {0};
  source(&t, &p);
  if (t.failed) {
    free(t.s);
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "stretching plane-tile kernel text");
  }
  fcl_program *prog = NULL;
  fcl_status st = fcl_program_create_source(fcl_field_context(u), t.s, kernel, &prog);
  free(t.s);
  if (st == FCL_OK) st = fcl_program_build(prog, NULL);
  if (st == FCL_ERR_BUILD_FAILED) { /* a driver that cannot compile it: the generated kernels */
    fcl_log(FCL_LOG_WARNING, "%s: %s; the generated kernel runs instead", kernel, fcl_last_error());
    fcl_clear_error();
    fcl_program_release(&prog);
    return FCL_ERR_NOT_SUPPORTED;
  }
  if (st == FCL_OK) st = launcher(prog, &p, dev, q, bytes, out_launcher);
  fcl_program_release(&prog);
  FCL_TRY(st);
  memset(op->grow, 0, sizeof op->grow);
  return FCL_OK;
}
