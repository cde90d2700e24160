/* Writes the kernel sources that flowcl's generators produce into a folder, one file each, for
 * portable_kernels_check.sh to read: the code generator's kernels over every path of its emitter
 * that prints vocabulary (vector loads and stores, aligned blocks with shuffled and masked lanes,
 * broadcast values, local prefetches and tiles with their barriers, complex helpers, literals,
 * widening and reductions, double precision) and the column FFT's programs for
 * every size and both precisions (kernels/ itself is read by the script). No device is needed.
 * Usage: portable_kernels_dump DIR. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fft_columns_impl.h"
#include "flowcl/flowcl.h"

static int failures = 0;

static void check(fcl_status st, const char *what) {
  if (st == FCL_OK) return;
  fprintf(stderr, "%s: %s\n", what, fcl_last_error());
  failures++;
}

static void write_text(const char *dir, const char *name, const char *text) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.cl", dir, name);
  FILE *f = fopen(path, "w");
  if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
    fprintf(stderr, "cannot write %s\n", path);
    failures++;
  }
}

/* One generated kernel: its declarations and instructions, then its transformations. */
typedef struct {
  const char *name;
  fcl_dtype type;
  const char *params, *arrays, *local_tile, *domain, *instructions, *assume;
  void (*schedule)(fcl_kbuilder *kb);
} recipe;

static void map_vec(fcl_kbuilder *kb) {
  check(fcl_kbuilder_split_iname(kb, "i", 256, "g.0", NULL), "split i");
  check(fcl_kbuilder_split_iname(kb, "i_inner", 4, "l.0", "vec"), "split i_inner");
}

static void stencil_blocks(fcl_kbuilder *kb) {
  check(fcl_kbuilder_align_iname(kb, "i", 4), "align i");
  check(fcl_kbuilder_split_iname(kb, "i", 32, "g.0", NULL), "split i");
  check(fcl_kbuilder_split_iname(kb, "i_inner", 4, "l.0", "vec"), "split i_inner");
  check(fcl_kbuilder_split_iname(kb, "j", 4, "g.1", "l.1"), "split j");
  check(fcl_kbuilder_tag_inames(kb, "k:g.2"), "tag k");
}

static void stencil_prefetch(fcl_kbuilder *kb) {
  check(fcl_kbuilder_split_iname(kb, "i", 16, "g.0", "l.0"), "split i");
  check(fcl_kbuilder_split_iname(kb, "j", 8, "g.1", "l.1"), "split j");
  check(fcl_kbuilder_add_prefetch(
            kb, (fcl_prefetch){.array = "u", .sweep = "i_inner, j_inner", .pad = 1}),
        "prefetch u");
}

static void tile_groups(fcl_kbuilder *kb) {
  check(fcl_kbuilder_tag_inames(kb, "bi:g.0, bj:g.1, li:l.0, lj:l.1"), "tag");
}

static void groups_of_32(fcl_kbuilder *kb) {
  check(fcl_kbuilder_split_iname(kb, "i", 32, "g.0", "l.0"), "split i");
}

static void matvec_prefetch(fcl_kbuilder *kb) {
  groups_of_32(kb);
  check(fcl_kbuilder_add_prefetch(kb, (fcl_prefetch){.array = "v", .sweep = "k"}), "prefetch v");
}

#define STENCIL                                                                                    \
  "out[k, j, i] = alpha * u[k, j, i] + u[k, j, i - 1] + u[k, j, i + 1] + u[k, j - 1, i] + "        \
  "u[k, j + 1, i] + u[k - 1, j, i] + u[k + 1, j, i]"

/* Arrays: "name type shape; ...", type f float, d double, c cfloat, z cdouble. */
static const recipe recipes[] = {
    /* vloadN/vstoreN, the remainder unrolled; a broadcast scalar stored as a vector */
    {"map_vec", FCL_FLOAT32, "n", "x f n; y f n; out f n; fill f n", NULL, "{ [i]: 0 <= i < n }",
     "out[i] = alpha * x[i] + sin(y[i])\nfill[i] = alpha", NULL, map_vec},
    /* the same on aligned blocks with a masked tail: lanes stored one by one */
    {"map_blocks", FCL_FLOAT64, "n", "x d n; y d n; out d n; fill d n", NULL, "{ [i]: 0 <= i < n }",
     "out[i] = alpha * x[i] + sin(y[i])\nfill[i] = alpha", "n mod 4 = 0", map_vec},
    /* aligned blocks, i -+ 1 shuffled from two blocks, edge blocks loaded under a test */
    {"stencil_blocks", FCL_FLOAT32, "nx, ny, nz", "u f nz, ny, nx; out f nz, ny, nx", NULL,
     "{ [i, j, k]: 1 <= i < nx - 1 and 1 <= j < ny - 1 and 1 <= k < nz - 1 }", STENCIL,
     "nx mod 8 = 0", stencil_blocks},
    /* a padded local prefetch marching along k */
    {"stencil_prefetch", FCL_FLOAT32, "nx, ny, nz", "u f nz, ny, nx; out f nz, ny, nx", NULL,
     "{ [i, j, k]: 1 <= i < nx - 1 and 1 <= j < ny - 1 and 1 <= k < nz - 1 }", STENCIL, NULL,
     stencil_prefetch},
    /* an explicit local tile reused for a second array: barriers before and after */
    {"local_tile", FCL_FLOAT32, "n, m", "a f m, n; out f n, m; b f m, n; out2 f n, m", "16, 17",
     "{ [bi, bj, li, lj]: 0 <= bi < n / 16 and 0 <= bj < m / 16 and 0 <= li < 16 and "
     "0 <= lj < 16 }",
     "tile[lj, li] = a[bj * 16 + lj, bi * 16 + li]  {id=load}\n"
     "out[bi * 16 + lj, bj * 16 + li] = tile[li, lj]  {id=store}\n"
     "tile[lj, li] = b[bj * 16 + lj, bi * 16 + li]  {id=load2, dep=store}\n"
     "out2[bi * 16 + lj, bj * 16 + li] = tile[li, lj]  {id=store2, dep=load2}",
     NULL, tile_groups},
    /* complex helpers, complex(re, im), reals promoted to complex values */
    {"complex_arith", FCL_COMPLEX64, "n", "b c n; c c n; x f n; o1 c n; o2 c n; r f n", NULL,
     "{ [i]: 0 <= i < n }",
     "o1[i] = b[i] * c[i] + x[i] - b[i] / c[i] + conj(b[i]) * exp(c[i])\n"
     "o2[i] = complex(x[i], 1.5) - b[i] / x[i] + (x[i] > 0 ? b[i] : x[i])\n"
     "r[i] = abs(b[i]) + real(c[i]) * imag(b[i])",
     NULL, groups_of_32},
    /* cfloat widened to cdouble, a double promoted */
    {"complex_widen", FCL_COMPLEX128, "n", "zf c n; zd z n; d d n; w z n", NULL,
     "{ [i]: 0 <= i < n }", "w[i] = zf[i] * zd[i] + zf[i] + d[i]", NULL, groups_of_32},
    /* a complex sum reduction over a prefetched vector */
    {"complex_matvec", FCL_COMPLEX128, "n", "m z n, 16; v z 16; y z n", NULL,
     "{ [i, k]: 0 <= i < n and 0 <= k < 16 }", "y[i] = sum(k, m[i, k] * v[k])", NULL,
     matvec_prefetch},
};

/* The real type of t's precision. */
static fcl_dtype real_of(fcl_dtype t) {
  return t == FCL_COMPLEX128 || t == FCL_FLOAT64 ? FCL_FLOAT64 : FCL_FLOAT32;
}

static void add_arrays(fcl_kbuilder *kb, const char *list) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", list);
  for (char *item = strtok(buf, ";"); item; item = strtok(NULL, ";")) {
    char name[16], type;
    int used = 0;
    if (sscanf(item, " %15s %c %n", name, &type, &used) != 2) {
      fprintf(stderr, "bad array '%s'\n", item);
      failures++;
      continue;
    }
    const fcl_dtype t = type == 'f'   ? FCL_FLOAT32
                        : type == 'd' ? FCL_FLOAT64
                        : type == 'c' ? FCL_COMPLEX64
                                      : FCL_COMPLEX128;
    check(fcl_kbuilder_add_array(kb, name, t, item + used), name);
  }
}

static void dump_generated(const char *dir, const recipe *r) {
  fcl_kbuilder *kb = NULL;
  check(fcl_kbuilder_create(r->name, &kb), r->name);
  if (!kb) return;
  char params[64];
  snprintf(params, sizeof params, "%s", r->params);
  for (char *p = strtok(params, ", "); p; p = strtok(NULL, ", "))
    check(fcl_kbuilder_add_param(kb, p), p);
  check(fcl_kbuilder_add_scalar(kb, "alpha", real_of(r->type)), "scalar alpha");
  add_arrays(kb, r->arrays);
  if (r->local_tile)
    check(fcl_kbuilder_add_temporary(kb, "tile", r->type, FCL_TEMP_LOCAL, r->local_tile),
          "local tile");
  check(fcl_kbuilder_add_domain(kb, r->domain), r->domain);
  check(fcl_kbuilder_add_instructions(kb, r->instructions), r->name);
  if (r->assume) check(fcl_kbuilder_assume(kb, r->assume), r->assume);
  r->schedule(kb);
  char *source = NULL;
  check(fcl_kbuilder_generate(kb, &source), r->name);
  if (source) write_text(dir, r->name, source);
  free(source);
  fcl_kbuilder_destroy(&kb);
}

/* flowcl's column FFT, periodic and mirrored (walls), is built with the FFT layer's VkFFT
 * backend (MPI and VkFFT) */
#if FLOWCL_ENABLE_MPI && FLOWCL_ENABLE_VKFFT
static void dump_fft_columns(const char *dir) {
  for (int64_t n = 4; n <= 4096; n *= 2)
    for (int v = 0; v < 4; ++v) {
      const int dbl = v & 1, walls = v >> 1;
      fcl__fft_columns_shape s = {
          .columns = 4, .dtype_double = dbl, .walls = walls, .split = walls && dbl};
      char name[64];
      snprintf(name, sizeof name, "fft_%s_%lld_%s", walls ? "walls" : "columns", (long long)n,
               dbl ? "double" : "float");
      char *source = fcl__fft_columns_split(n, &s.n1, &s.n2) ? fcl__fft_columns_source(&s) : NULL;
      if (!source) {
        fprintf(stderr, "%s: no source\n", name);
        failures++;
        continue;
      }
      write_text(dir, name, source);
      free(source);
    }
}
#else
static void dump_fft_columns(const char *dir) { (void)dir; }
#endif

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  for (size_t i = 0; i < sizeof recipes / sizeof *recipes; ++i)
    dump_generated(argv[1], &recipes[i]);
  dump_fft_columns(argv[1]);
  return failures ? 1 : 0;
}
