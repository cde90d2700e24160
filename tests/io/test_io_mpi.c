/* Field I/O on 1, 2 or 4 ranks (under mpirun): a float vector field and a double scalar field
 * written as a series, read back into another decomposition exactly; the file read by h5dump
 * has the expected values and attributes; the XDMF sidecar parses (xmllint) and names existing
 * datasets of the right shape; every bad-input case gets its error and leaves no partial file. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fcl_test_mpi.h"

static int rank_, size_;

static double code(const int64_t *g) { return (double)(g[0] + 40 * g[1] + 1600 * g[2]); }

static void init_code(void *user, const double *x, double *v) {
  const fcl_domain *d = user;
  int64_t g[3] = {0, 0, 0};
  for (int a = 0; a < d->dim; ++a) g[a] = llround((x[a] - d->origin[a]) / fcl_domain_spacing(d, a));
  v[0] = code(g), v[1] = -code(g), v[2] = 0.5 * code(g);
}

typedef fcl_test_mpi_env env;

static double at(const void *host, fcl_dtype t, size_t i) {
  return t == FCL_FLOAT64 ? ((const double *)host)[i] : ((const float *)host)[i];
}

/* The numbers after "DATA {" in h5dump's output of command (rank 0 only). */
static size_t h5dump_numbers(const char *command, double *out, size_t cap) {
  FILE *p = popen(command, "r");
  if (!p) return 0;
  static char text[1 << 20];
  size_t len = fread(text, 1, sizeof text - 1, p);
  text[len] = '\0';
  pclose(p);
  char *s = strstr(text, "DATA {");
  size_t n = 0;
  for (s = s ? s + 6 : NULL; s && *s && *s != '}' && n < cap;) {
    char *end;
    double v = strtod(s, &end);
    if (end == s) {
      s++;
      continue;
    }
    out[n++] = v;
    s = end;
  }
  return n;
}

/* Whole-domain interior of component c compared with code() * scale. */
static size_t wrong_values(const fcl_field *f, int c, double scale) {
  const fcl_topology *t = fcl_field_topology(f);
  const int64_t *n = fcl_topology_local_resolution(t), *o = fcl_topology_offset(t);
  fcl_dtype dt = fcl_field_dtype(f);
  size_t count = (size_t)(n[0] * n[1] * n[2]), wrong = 0;
  void *host = malloc(count * fcl_dtype_size(dt));
  CHECK_OK(fcl_field_read(f, c, false, host));
  for (int64_t k = 0; k < n[2]; ++k)
    for (int64_t j = 0; j < n[1]; ++j)
      for (int64_t i = 0; i < n[0]; ++i) {
        int64_t g[3] = {o[0] + i, o[1] + j, o[2] + k};
        if (at(host, dt, (size_t)((k * n[1] + j) * n[0] + i)) != scale * code(g)) wrong++;
      }
  free(host);
  return wrong;
}

static void round_trip(env *e) {
  fcl_domain d = fcl_domain_periodic(3, 0, 2.0);
  d.resolution[0] = 11, d.resolution[1] = 9, d.resolution[2] = 10;
  d.origin[1] = -1.0;
  fcl_topology *blocks = NULL, *slabs = NULL;
  CHECK_OK(fcl_topology_create(MPI_COMM_WORLD, &d, NULL, (int[]){1, 1, 1}, &blocks));
  CHECK_OK(fcl_topology_create(MPI_COMM_WORLD, &d, (int[]){1, 1, size_}, NULL, &slabs));
  fcl_field *w = NULL, *p = NULL, *w2 = NULL, *p2 = NULL;
  CHECK_OK(fcl_field_create(blocks, e->ctx, e->q, e->pool, "w", 3, FCL_FLOAT32, &w));
  CHECK_OK(fcl_field_create(blocks, e->ctx, e->q, e->pool, "p", 1, FCL_FLOAT64, &p));
  CHECK_OK(fcl_field_create(slabs, e->ctx, e->q, e->pool, "w", 3, FCL_FLOAT32, &w2));
  CHECK_OK(fcl_field_create(slabs, e->ctx, e->q, e->pool, "p", 1, FCL_FLOAT64, &p2));
  if (fcl_test_failures) return;
  CHECK_OK(fcl_field_init(w, init_code, &d));
  CHECK_OK(fcl_field_init(p, init_code, &d));
  fcl_io_series *s = NULL;
  CHECK_OK(fcl_io_series_create(e->dir, "flow", &s));
  fcl_field *both[2] = {w, p};
  CHECK_OK(fcl_io_series_write(s, 2, both, 0.0, 0));
  CHECK_OK(fcl_io_series_write(s, 2, both, 0.25, 7));
  char path[1024];
  snprintf(path, sizeof path, "%s/flow_000007.h5", e->dir);
  static const char *comps[3] = {"w_x", "w_y", "w_z"};
  static const double scale[3] = {1, -1, 0.5};
  for (int c = 0; c < 3; ++c) CHECK_OK(fcl_io_read(path, comps[c], w2, c));
  CHECK_OK(fcl_io_read(path, "p", p2, 0));
  for (int c = 0; c < 3; ++c)
    CHECKF(!wrong_values(w2, c, scale[c]), "%s read back into slabs (rank %d of %d): wrong values",
           comps[c], rank_, size_);
  CHECKF(!wrong_values(p2, 0, 1), "p read back into slabs (rank %d of %d): wrong values", rank_,
         size_);
  if (rank_ == 0) {
    /* h5dump: values in C order and attributes */
    static double v[1000];
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "h5dump -y -w 0 -m %%.17g -d /w_y '%s'", path);
    size_t n = h5dump_numbers(cmd, v, 1000), bad = 0;
    for (int64_t k = 0; k < 10; ++k)
      for (int64_t j = 0; j < 9; ++j)
        for (int64_t i = 0; i < 11; ++i) {
          int64_t g[3] = {i, j, k};
          size_t at_ = (size_t)((k * 9 + j) * 11 + i);
          if (at_ >= n || v[at_] != -code(g)) bad++;
        }
    CHECKF(n == 990 && !bad, "h5dump of /w_y: %zu values, %zu wrong", n, bad);
    snprintf(cmd, sizeof cmd, "h5dump -y -a /time '%s'", path);
    CHECKF(h5dump_numbers(cmd, v, 4) == 1 && v[0] == 0.25, "h5dump /time: %g", v[0]);
    snprintf(cmd, sizeof cmd, "h5dump -y -a /step '%s'", path);
    CHECKF(h5dump_numbers(cmd, v, 4) == 1 && v[0] == 7, "h5dump /step: %g", v[0]);
    snprintf(cmd, sizeof cmd, "h5dump -y -a /p/resolution '%s'", path);
    CHECKF(h5dump_numbers(cmd, v, 4) == 3 && v[0] == 11 && v[1] == 9 && v[2] == 10,
           "h5dump /p/resolution");
    snprintf(cmd, sizeof cmd, "h5dump -y -m %%.17g -a /p/spacing '%s'", path);
    CHECKF(h5dump_numbers(cmd, v, 4) == 3 && v[0] == 2.0 / 11 && v[1] == 2.0 / 9 && v[2] == 0.2,
           "h5dump /p/spacing: %g %g %g", v[0], v[1], v[2]);
    snprintf(cmd, sizeof cmd, "h5dump -a /p/precision '%s' | grep -q '\"double\"'", path);
    CHECKF(system(cmd) == 0, "h5dump /p/precision is not \"double\"");
    /* XDMF: well formed, and every HDF item names an existing dataset of its dimensions */
    const char *xdmf = fcl_io_series_xdmf(s);
    snprintf(cmd, sizeof cmd, "xmllint --noout '%s'", xdmf);
    CHECKF(system(cmd) == 0, "xmllint rejects %s", xdmf);
    FILE *xf = fopen(xdmf, "r");
    static char text[1 << 16];
    size_t len = xf ? fread(text, 1, sizeof text - 1, xf) : 0;
    if (xf) fclose(xf);
    text[len] = '\0';
    int items = 0;
    for (char *q = strstr(text, "Format=\"HDF\">"); q; q = strstr(q + 1, "Format=\"HDF\">")) {
      char ref[256] = "", file[256] = "", ds[128] = "";
      sscanf(q + 13, "%255[^<]", ref);
      char *colon = strstr(ref, ":/");
      if (colon) {
        snprintf(file, sizeof file, "%.*s", (int)(colon - ref), ref);
        snprintf(ds, sizeof ds, "%s", colon + 2);
      }
      char *dims = NULL; /* the Dimensions of this DataItem: search back */
      for (char *b = q; b > text && !dims; --b)
        if (!strncmp(b, "Dimensions=\"", 12)) dims = b + 12;
      snprintf(cmd, sizeof cmd, "h5dump -H -d '/%s' '%s/%s' | grep -q 'SIMPLE { ( 10, 9, 11 )'", ds,
               e->dir, file);
      CHECKF(dims && !strncmp(dims, "10 9 11\"", 8) && system(cmd) == 0,
             "XDMF item '%s' does not name a 10 x 9 x 11 dataset", ref);
      items++;
    }
    CHECKF(items == 8, "XDMF lists %d datasets, expected 2 outputs x 4", items);
    CHECKF(strstr(text, "<Time Value=\"0.25\"/>") != NULL, "XDMF misses the time 0.25");
    /* w (3 components) is one vector of its three datasets joined, p a scalar */
    const char *vec = strstr(text, "<Attribute Name=\"w\" AttributeType=\"Vector\"");
    CHECKF(vec && strstr(vec, "Function=\"JOIN($0, $1, $2)\" Dimensions=\"10 9 11 3\"") &&
               strstr(vec, ":/w_x<") < strstr(vec, ":/w_y<") &&
               strstr(vec, ":/w_y<") < strstr(vec, ":/w_z<"),
           "XDMF does not describe w as a vector of w_x, w_y, w_z:\n%s", text);
    CHECKF(strstr(text, "<Attribute Name=\"p\" AttributeType=\"Scalar\"") != NULL,
           "XDMF does not describe p as a scalar");
    CHECKF(!strstr(text, "Name=\"w_x\""), "XDMF still lists w_x as an attribute of its own");
  }
  fcl_io_series_destroy(&s);
  fcl_field_destroy(&w);
  fcl_field_destroy(&p);
  fcl_field_destroy(&w2);
  fcl_field_destroy(&p2);
  fcl_topology_destroy(&blocks);
  fcl_topology_destroy(&slabs);
}

static void bad_input(env *e) {
  fcl_domain d = fcl_domain_periodic(3, 8, 1.0), other = fcl_domain_periodic(3, 6, 1.0);
  fcl_topology *t = NULL, *t6 = NULL;
  CHECK_OK(fcl_topology_create(MPI_COMM_WORLD, &d, NULL, NULL, &t));
  CHECK_OK(fcl_topology_create(MPI_COMM_WORLD, &other, NULL, NULL, &t6));
  fcl_field *u = NULL, *ud = NULL, *u6 = NULL;
  CHECK_OK(fcl_field_create(t, e->ctx, e->q, e->pool, "u", 1, FCL_FLOAT32, &u));
  CHECK_OK(fcl_field_create(t, e->ctx, e->q, e->pool, "u", 1, FCL_FLOAT64, &ud));
  CHECK_OK(fcl_field_create(t6, e->ctx, e->q, e->pool, "u", 1, FCL_FLOAT32, &u6));
  if (fcl_test_failures) return;
  char good[1024], missing[1024], text[1024], cut[1024], nodir[1024];
  snprintf(good, sizeof good, "%s/good.h5", e->dir);
  snprintf(missing, sizeof missing, "%s/missing.h5", e->dir);
  snprintf(text, sizeof text, "%s/text.h5", e->dir);
  snprintf(cut, sizeof cut, "%s/cut.h5", e->dir);
  snprintf(nodir, sizeof nodir, "%s/no/such/dir/out.h5", e->dir);
  fcl_field *one[1] = {u};
  CHECK_OK(fcl_io_write(good, 1, one, 1.0, 1));
  if (rank_ == 0) {
    FILE *f = fopen(text, "w");
    fputs("this is not HDF5\n", f);
    fclose(f);
    char cmd[2200];
    snprintf(cmd, sizeof cmd, "head -c 1200 '%s' > '%s'", good, cut);
    CHECK(system(cmd) == 0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_STATUS(fcl_io_read(missing, "u", u, 0), FCL_ERR_IO, "no such file");
  CHECK_STATUS(fcl_io_read(text, "u", u, 0), FCL_ERR_IO, "not an HDF5 file");
  fcl_status st = fcl_io_read(cut, "u", u, 0);
  CHECKF(st == FCL_ERR_IO && fcl_test_contains(fcl_last_error(), "cut.h5"),
         "truncated file: %s: %s", fcl_status_name(st), fcl_last_error());
  CHECK_STATUS(fcl_io_read(good, "v", u, 0), FCL_ERR_INVALID_ARGUMENT, "no dataset 'v'");
  CHECK_STATUS(fcl_io_read(good, "u", ud, 0), FCL_ERR_INVALID_ARGUMENT,
               "holds floats of 4 bytes; field 'u' expects double");
  CHECK_STATUS(fcl_io_read(good, "u", u6, 0), FCL_ERR_INVALID_ARGUMENT,
               "has shape 8 x 8 x 8 (3-D); field 'u' expects 6 x 6 x 6");
  CHECK_STATUS(fcl_io_write(nodir, 1, one, 0, 0), FCL_ERR_IO, "cannot create");
  /* a path MPI-IO cannot take (Open MPI aborted the process) is refused before anything */
  char longpath[sizeof e->dir + FCL_IO_MAX_PATH + 8];
  snprintf(longpath, sizeof longpath, "%s/%0*d.h5", e->dir, FCL_IO_MAX_PATH, 0);
  CHECK_STATUS(fcl_io_write(longpath, 1, one, 0, 0), FCL_ERR_INVALID_ARGUMENT, "MPI-IO");
  CHECK_STATUS(fcl_io_read(longpath, "u", u, 0), FCL_ERR_INVALID_ARGUMENT, "MPI-IO");
  /* nothing partial is left behind: no temporary files anywhere */
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank_ == 0) CHECKF(fcl_test_count_files(e->dir, ".tmp") == 0, "temporary files left");
  fcl_field_destroy(&u);
  fcl_field_destroy(&ud);
  fcl_field_destroy(&u6);
  fcl_topology_destroy(&t);
  fcl_topology_destroy(&t6);
}

static void run_all(env *e) {
  rank_ = e->rank, size_ = e->size;
  if (!e->fp64)
    fcl_test_skip_part(NULL, "the double field (no cl_khr_fp64)");
  else
    round_trip(e);
  if (!fcl_test_failures) bad_input(e);
}

int main(int argc, char **argv) { return fcl_test_mpi_main(&argc, &argv, "io", run_all); }
