/* Output series: one HDF5 file per output and an XDMF sidecar (a temporal collection of
 * uniform co-rectilinear grids, one scalar attribute per dataset) rewritten atomically by
 * rank 0 after each output. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "files.h"
#include "io_impl.h"

typedef struct {
  double time;
  int64_t step;
  char *file; /* base name, relative to the sidecar */
} output;

struct fcl_io_series {
  char *dir, *name, *xdmf;
  output *outputs;
  size_t n, cap;
  char *grid; /* topology + geometry of the first output, reused (one domain per series) */
  char **datasets;
  char **precision;
  char **vector; /* per dataset: the name of the 3-component field it starts, else NULL */
  size_t ndatasets;
  char dims[96];
};

fcl_status fcl_io_series_create(const char *directory, const char *name, fcl_io_series **out) {
  FCL_CHECK_NULL(directory, 1);
  FCL_CHECK_NULL(name, 2);
  FCL_CHECK_NULL(out, 3);
  FCL_CHECK_ARG(*name && !strchr(name, '/'), 2, "name", "must be a plain file name");
  *out = NULL;
  if (fcl__make_dirs(directory) != 0)
    return FCL_ERROR(FCL_ERR_IO, "series '%s': cannot create directory '%s': %s", name, directory,
                     strerror(errno));
  fcl_io_series *s = calloc(1, sizeof *s);
  size_t len = strlen(directory) + strlen(name) + 8;
  if (!s || !(s->dir = strdup(directory)) || !(s->name = strdup(name)) ||
      !(s->xdmf = malloc(len))) {
    fcl_io_series_destroy(&s);
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "series '%s'", name);
  }
  snprintf(s->xdmf, len, "%s/%s.xdmf", directory, name);
  *out = s;
  return FCL_OK;
}

void fcl_io_series_destroy(fcl_io_series **series) {
  if (!series || !*series) return;
  fcl_io_series *s = *series;
  for (size_t i = 0; i < s->n; ++i) free(s->outputs[i].file);
  for (size_t i = 0; i < s->ndatasets; ++i)
    free(s->datasets[i]), free(s->precision[i]), free(s->vector[i]);
  free(s->vector);
  free(s->datasets);
  free(s->precision);
  free(s->outputs);
  free(s->grid);
  free(s->dir);
  free(s->name);
  free(s->xdmf);
  free(s);
  *series = NULL;
}

const char *fcl_io_series_xdmf(const fcl_io_series *s) { return s ? s->xdmf : NULL; }

/* The grid description (topology and geometry, XDMF 2 CoRectMesh) of a topology's domain. */
static char *grid_text(const fcl_topology *t, char *dims, size_t dims_size) {
  const int dim = t->domain.dim;
  char origin[128] = "", spacing[128] = "";
  dims[0] = '\0';
  for (int a = dim - 1; a >= 0; --a) { /* slowest first */
    snprintf(dims + strlen(dims), dims_size - strlen(dims), "%s%lld", a < dim - 1 ? " " : "",
             (long long)t->domain.resolution[a]);
    snprintf(origin + strlen(origin), sizeof origin - strlen(origin), "%s%.17g",
             a < dim - 1 ? " " : "", t->domain.origin[a]);
    snprintf(spacing + strlen(spacing), sizeof spacing - strlen(spacing), "%s%.17g",
             a < dim - 1 ? " " : "", fcl_domain_spacing(&t->domain, a));
  }
  const char *geo = dim == 3 ? "ORIGIN_DXDYDZ" : "ORIGIN_DXDY";
  size_t size = 1024;
  char *g = malloc(size);
  if (g)
    snprintf(g, size,
             "      <Topology TopologyType=\"%dDCoRectMesh\" Dimensions=\"%s\"/>\n"
             "      <Geometry GeometryType=\"%s\">\n"
             "        <DataItem Dimensions=\"%d\" NumberType=\"Float\" Precision=\"8\" "
             "Format=\"XML\">%s</DataItem>\n"
             "        <DataItem Dimensions=\"%d\" NumberType=\"Float\" Precision=\"8\" "
             "Format=\"XML\">%s</DataItem>\n"
             "      </Geometry>\n",
             dim, dims, geo, dim, origin, dim, spacing);
  return g;
}

static fcl_status write_xdmf(const fcl_io_series *s) {
  size_t cap = 4096 + s->n * (1024 + s->ndatasets * 512);
  char *x = malloc(cap);
  if (!x) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "series '%s': XDMF", s->name);
  size_t n = (size_t)snprintf(x, cap,
                              "<?xml version=\"1.0\" ?>\n<!DOCTYPE Xdmf SYSTEM "
                              "\"Xdmf.dtd\" []>\n<Xdmf Version=\"2.0\">\n  <Domain>\n    <Grid "
                              "Name=\"%s\" GridType=\"Collection\" CollectionType=\"Temporal\">\n",
                              s->name);
  for (size_t o = 0; o < s->n && n < cap; ++o) {
    n += (size_t)snprintf(x + n, cap - n,
                          "    <Grid Name=\"step_%lld\" GridType=\"Uniform\">\n"
                          "      <Time Value=\"%.17g\"/>\n%s",
                          (long long)s->outputs[o].step, s->outputs[o].time, s->grid);
    for (size_t d = 0; d < s->ndatasets && n < cap; ++d) {
      if (s->vector[d]) { /* one vector attribute: its three datasets joined (XDMF 2 JOIN) */
        n += (size_t)snprintf(x + n, cap - n,
                              "      <Attribute Name=\"%s\" AttributeType=\"Vector\" "
                              "Center=\"Node\">\n"
                              "        <DataItem ItemType=\"Function\" Function=\"JOIN($0, $1, "
                              "$2)\" Dimensions=\"%s 3\">\n",
                              s->vector[d], s->dims);
        for (size_t c = 0; c < 3 && n < cap; ++c)
          n += (size_t)snprintf(x + n, cap - n,
                                "          <DataItem Dimensions=\"%s\" NumberType=\"Float\" "
                                "Precision=\"%s\" Format=\"HDF\">%s:/%s</DataItem>\n",
                                s->dims, s->precision[d + c], s->outputs[o].file,
                                s->datasets[d + c]);
        if (n < cap)
          n += (size_t)snprintf(x + n, cap - n, "        </DataItem>\n      </Attribute>\n");
        d += 2;
        continue;
      }
      n += (size_t)snprintf(
          x + n, cap - n,
          "      <Attribute Name=\"%s\" AttributeType=\"Scalar\" Center=\"Node\">\n"
          "        <DataItem Dimensions=\"%s\" NumberType=\"Float\" "
          "Precision=\"%s\" Format=\"HDF\">%s:/%s</DataItem>\n"
          "      </Attribute>\n",
          s->datasets[d], s->dims, s->precision[d], s->outputs[o].file, s->datasets[d]);
    }
    if (n < cap) n += (size_t)snprintf(x + n, cap - n, "    </Grid>\n");
  }
  if (n < cap) n += (size_t)snprintf(x + n, cap - n, "    </Grid>\n  </Domain>\n</Xdmf>\n");
  fcl_status st = FCL_OK;
  if (n >= cap)
    st = FCL_ERROR(FCL_ERR_INTERNAL, "series '%s': XDMF text overflow", s->name);
  else if (fcl__file_write_atomic(s->xdmf, x, n) != 0)
    st = FCL_ERROR(FCL_ERR_IO, "series '%s': cannot write '%s': %s", s->name, s->xdmf,
                   strerror(errno));
  free(x);
  return st;
}

/* Dataset names and precisions of the first output. */
static fcl_status remember_layout(fcl_io_series *s, size_t nfields, fcl_field *const *fields) {
  size_t total = 0;
  for (size_t i = 0; i < nfields; ++i) total += (size_t)fields[i]->ncomp;
  s->datasets = calloc(total, sizeof *s->datasets);
  s->precision = calloc(total, sizeof *s->precision);
  s->vector = calloc(total, sizeof *s->vector);
  if (!s->datasets || !s->precision || !s->vector)
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "series");
  for (size_t i = 0; i < nfields; ++i)
    for (int c = 0; c < fields[i]->ncomp; ++c) {
      char name[256];
      fcl__io_dataset_name(fields[i], c, name, sizeof name);
      s->datasets[s->ndatasets] = strdup(name);
      s->precision[s->ndatasets] = strdup(fields[i]->dtype == FCL_FLOAT64 ? "8" : "4");
      /* a 3-component field is one vector for ParaView and VisIt */
      if (c == 0 && fields[i]->ncomp == 3 && !(s->vector[s->ndatasets] = strdup(fields[i]->name)))
        return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "series");
      if (!s->datasets[s->ndatasets++] || !s->precision[s->ndatasets - 1])
        return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "series");
    }
  s->grid = grid_text(fields[0]->topo, s->dims, sizeof s->dims);
  return s->grid ? FCL_OK : FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "series");
}

fcl_status fcl_io_series_write(fcl_io_series *s, size_t nfields, fcl_field *const *fields,
                               double time, int64_t step) {
  FCL_CHECK_NULL(s, 1);
  FCL_CHECK_ARG(nfields >= 1, 2, "nfields", "must be >= 1");
  FCL_CHECK_NULL(fields, 3);
  if (fields[0]->topo->domain.dim < 2)
    return FCL_ERROR(FCL_ERR_NOT_SUPPORTED,
                     "series '%s': XDMF sidecars describe 2D and 3D "
                     "domains; write 1D fields with fcl_io_write",
                     s->name);
  if (s->n == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 16;
    output *grown = realloc(s->outputs, cap * sizeof *grown);
    if (!grown) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "series '%s'", s->name);
    s->outputs = grown;
    s->cap = cap;
  }
  char file[512], path[1024];
  snprintf(file, sizeof file, "%s_%06lld.h5", s->name, (long long)step);
  snprintf(path, sizeof path, "%s/%s", s->dir, file);
  FCL_TRY(fcl_io_write(path, nfields, fields, time, step));
  if (!s->grid) FCL_TRY(remember_layout(s, nfields, fields));
  char *dup = strdup(file);
  if (!dup) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "series '%s'", s->name);
  s->outputs[s->n++] = (output){time, step, dup};
  fcl_status st = fields[0]->topo->rank == 0 ? write_xdmf(s) : FCL_OK;
  return fcl__io_agree(fields[0]->topo->comm, st);
}
