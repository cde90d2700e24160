#include "op_fields.h"

#include <math.h>
#include <stdlib.h>

static void init_cb(void *user, const double *x, double *v) { ((values_fn)user)(x, v); }

fcl_topology *op_box(int dim, int64_t n, int ghosts) {
  fcl_domain d = fcl_domain_periodic(dim, n, 2 * PI);
  int g[3] = {ghosts, ghosts, ghosts};
  fcl_topology *t = NULL;
  CHECK_OK(fcl_topology_create(MPI_COMM_WORLD, &d, NULL, g, &t));
  return t;
}

fcl_field *op_field(fcl_test_mpi_env *e, fcl_topology *t, const char *name, int ncomp,
                    fcl_dtype dtype, values_fn fn) {
  fcl_field *f = NULL;
  CHECK_OK(fcl_field_create(t, e->ctx, e->q, e->pool, name, ncomp, dtype, &f));
  if (f && fn) CHECK_OK(fcl_field_init(f, init_cb, (void *)fn));
  return f;
}

double op_rel_error(fcl_field *f, exact_fn exact, const void *p) {
  fcl_topology *t = fcl_field_topology(f);
  const fcl_domain *d = fcl_topology_domain(t);
  const int64_t *n = fcl_topology_local_resolution(t), *off = fcl_topology_offset(t);
  const size_t count = (size_t)(n[0] * n[1] * n[2]);
  double *v = malloc(count * sizeof *v), err = 0, norm = 0;
  for (int c = 0; c < fcl_field_ncomp(f); ++c) {
    CHECK_OK(fcl_field_read(f, c, false, v));
    for (size_t at = 0; at < count; ++at) {
      int64_t i[3] = {(int64_t)at % n[0], ((int64_t)at / n[0]) % n[1], (int64_t)at / (n[0] * n[1])};
      double x[3] = {0, 0, 0}, w[3];
      for (int a = 0; a < d->dim; ++a) x[a] = (double)(i[a] + off[a]) * fcl_domain_spacing(d, a);
      exact(x, w, p);
      double got = fcl_field_dtype(f) == FCL_FLOAT64 ? v[at] : ((float *)v)[at];
      err = fmax(err, fabs(got - w[c]));
      norm = fmax(norm, fabs(w[c]));
    }
  }
  free(v);
  double l[2] = {err, norm}, all[2];
  MPI_Allreduce(l, all, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return all[0] / all[1];
}

void op_vel3(const double *x, double *v) {
  v[0] = sin(x[0]) * cos(x[1]) * cos(x[2]);
  v[1] = -cos(x[0]) * sin(x[1]) * cos(x[2]);
  v[2] = 0.3 * sin(x[2] + x[0]);
}

void op_vel3_gradient(const double *x, double g[3][3]) {
  const double sx = sin(x[0]), cx = cos(x[0]), sy = sin(x[1]), cy = cos(x[1]), sz = sin(x[2]),
               cz = cos(x[2]);
  g[0][0] = cx * cy * cz, g[0][1] = -sx * sy * cz, g[0][2] = -sx * cy * sz;
  g[1][0] = sx * sy * cz, g[1][1] = -cx * cy * cz, g[1][2] = cx * sy * sz;
  g[2][0] = 0.3 * cos(x[2] + x[0]), g[2][1] = 0, g[2][2] = 0.3 * cos(x[2] + x[0]);
}
