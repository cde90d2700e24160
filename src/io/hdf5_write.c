/* Writing fields to one HDF5 file through MPI-IO (one shared file): each rank writes its interior
 * as a hyperslab of the global dataset; the file is written under a temporary name and renamed
 * by rank 0 once every rank has succeeded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "check.h"
#include "flowcl/version.h"
#include "io_impl.h"

void fcl__io_dataset_name(const fcl_field *f, int c, char *buf, size_t size) {
  if (f->ncomp == 1)
    snprintf(buf, size, "%s", f->name);
  else
    snprintf(buf, size, "%s_%c", f->name, "xyz"[c]);
}

int fcl__io_global_dims(const fcl_topology *t, hsize_t *dims) {
  const int dim = t->domain.dim;
  for (int a = 0; a < dim; ++a) dims[dim - 1 - a] = (hsize_t)t->domain.resolution[a];
  return dim;
}

static herr_t attr(hid_t obj, const char *name, hid_t type, int n, const void *value);

uint64_t fcl__io_checksum(const fcl_field *f, const void *host) {
  const fcl_topology *t = f->topo;
  const int64_t *n = t->local, *o = t->offset, *N = t->domain.resolution;
  uint64_t sum = 0;
  size_t at = 0;
  for (int64_t k = 0; k < n[2]; ++k)
    for (int64_t j = 0; j < n[1]; ++j)
      for (int64_t i = 0; i < n[0]; ++i, ++at) {
        uint64_t bits = 0;
        if (f->dtype == FCL_FLOAT64)
          memcpy(&bits, (const double *)host + at, 8);
        else
          memcpy(&bits, (const float *)host + at, 4);
        uint64_t g = (uint64_t)(((o[2] + k) * N[1] + o[1] + j) * N[0] + o[0] + i);
        sum += fcl__io_mix(g * 0x9e3779b97f4a7c15ull ^ bits);
      }
  uint64_t total = sum;
  MPI_Allreduce(&sum, &total, 1, MPI_UINT64_T, MPI_SUM, t->comm);
  return total;
}

int fcl__io_attr(hid_t obj, const char *name, hid_t type, int n, const void *value) {
  return attr(obj, name, type, n, value) < 0 ? -1 : 0;
}

int fcl__io_attr_read(hid_t obj, const char *name, hid_t type, int n, void *value) {
  if (H5Aexists(obj, name) <= 0) return -1;
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  hid_t space = a < 0 ? -1 : H5Aget_space(a);
  int rc = space < 0 || H5Sget_simple_extent_npoints(space) != n ? -1 : 0;
  if (rc == 0 && H5Aread(a, type, value) < 0) rc = -1;
  if (space >= 0) H5Sclose(space);
  if (a >= 0) H5Aclose(a);
  return rc;
}

static herr_t attr(hid_t obj, const char *name, hid_t type, int n, const void *value) {
  hsize_t len = (hsize_t)n;
  hid_t space = H5Screate_simple(1, &len, NULL);
  hid_t a = space < 0 ? -1 : H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
  herr_t rc = a < 0 ? -1 : H5Awrite(a, type, value);
  if (a >= 0) H5Aclose(a);
  if (space >= 0) H5Sclose(space);
  return rc;
}

static herr_t attr_string(hid_t obj, const char *name, const char *value) {
  hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, strlen(value) + 1);
  hid_t space = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
  herr_t rc = a < 0 ? -1 : H5Awrite(a, type, value);
  if (a >= 0) H5Aclose(a);
  H5Sclose(space);
  H5Tclose(type);
  return rc;
}

/* One component: dataset, attributes, collective hyperslab write. */
static fcl_status write_component(hid_t file, const fcl_field *f, int c, void *host,
                                  const char *path) {
  const fcl_topology *t = f->topo;
  const int dim = t->domain.dim;
  hsize_t dims[3], start[3], count[3];
  fcl__io_global_dims(t, dims);
  for (int a = 0; a < dim; ++a) {
    start[dim - 1 - a] = (hsize_t)t->offset[a];
    count[dim - 1 - a] = (hsize_t)t->local[a];
  }
  char name[256];
  fcl__io_dataset_name(f, c, name, sizeof name);
  hid_t type = f->dtype == FCL_FLOAT64 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT;
  hid_t fspace = H5Screate_simple(dim, dims, NULL);
  hid_t dset = H5Dcreate2(file, name, f->dtype == FCL_FLOAT64 ? H5T_IEEE_F64LE : H5T_IEEE_F32LE,
                          fspace, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  hid_t mspace = H5Screate_simple(dim, count, NULL);
  hid_t xfer = H5Pcreate(H5P_DATASET_XFER);
  herr_t rc = dset < 0 || mspace < 0 || xfer < 0 ? -1 : 0;
  /* independent transfers: with Open MPI 4.1's default MPI-IO component (OMPIO, Debian 12)
   * collective hyperslab writes corrupted one rank's block on 4 ranks (tests/io) */
  if (rc >= 0) rc = H5Pset_dxpl_mpio(xfer, H5FD_MPIO_INDEPENDENT);
  if (rc >= 0) rc = H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL);
  if (rc >= 0) rc = H5Dwrite(dset, type, mspace, fspace, xfer, host);
  double origin[3], spacing[3];
  int64_t res[3];
  for (int a = 0; a < dim; ++a) {
    origin[a] = t->domain.origin[a];
    spacing[a] = fcl_domain_spacing(&t->domain, a);
    res[a] = t->domain.resolution[a];
  }
  if (rc >= 0) rc = attr(dset, "origin", H5T_NATIVE_DOUBLE, dim, origin);
  if (rc >= 0) rc = attr(dset, "spacing", H5T_NATIVE_DOUBLE, dim, spacing);
  if (rc >= 0) rc = attr(dset, "resolution", H5T_NATIVE_INT64, dim, res);
  if (rc >= 0) rc = attr_string(dset, "precision", f->dtype == FCL_FLOAT64 ? "double" : "float");
  uint64_t checksum = fcl__io_checksum(f, host);
  if (rc >= 0) rc = attr(dset, "checksum", H5T_NATIVE_UINT64, 1, &checksum);
  if (xfer >= 0) H5Pclose(xfer);
  if (mspace >= 0) H5Sclose(mspace);
  if (dset >= 0) H5Dclose(dset);
  if (fspace >= 0) H5Sclose(fspace);
  if (rc < 0)
    return FCL_ERROR(FCL_ERR_HDF5, "write '%s': dataset '%s' (%s, %d-D) could not be written", path,
                     name, f->dtype == FCL_FLOAT64 ? "double" : "float", dim);
  return FCL_OK;
}

fcl_status fcl__io_agree(MPI_Comm comm, fcl_status st) {
  int mine = st, worst = st;
  MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MIN, comm);
  if (worst == st) return st;
  if (st == FCL_OK)
    return FCL_ERROR((fcl_status)worst, "another rank failed (status %s); see its message",
                     fcl_status_name((fcl_status)worst));
  /* this rank failed otherwise: every rank returns one status (callers branch on it, and
   * ranks that branched apart would wait on each other's collectives), its own words kept */
  char own[768];
  snprintf(own, sizeof own, "%s", fcl_last_error());
  return FCL_ERROR((fcl_status)worst,
                   "%s (status %s here, %s on another rank: all ranks return "
                   "the latter)",
                   own, fcl_status_name(st), fcl_status_name((fcl_status)worst));
}

fcl_status fcl_io_write(const char *path, size_t nfields, fcl_field *const *fields, double time,
                        int64_t step) {
  FCL_CHECK_NULL(path, 1);
  FCL_CHECK_ARG(nfields >= 1, 2, "nfields", "must be >= 1");
  FCL_CHECK_NULL(fields, 3);
  return fcl__io_write_file(path, nfields, fields, time, step, NULL, NULL, false);
}

/* fsync of a file or directory by path: 0, or -1 with errno. */
static int sync_path(const char *p) {
  int fd = open(p, O_RDONLY);
  if (fd < 0) return -1;
  int rc = fsync(fd);
  int saved = errno;
  close(fd);
  errno = saved;
  return rc;
}

/* The directory entry of a renamed file, best effort (some filesystems refuse it). */
static void sync_directory_of(const char *path) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (!slash)
    snprintf(dir, sizeof dir, ".");
  else if (slash == dir)
    dir[1] = '\0';
  else
    *slash = '\0';
  (void)sync_path(dir);
}

fcl_status fcl__io_check_path(const char *path, size_t extra) {
  size_t n = strlen(path) + extra;
  if (n > FCL_IO_MAX_PATH)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "'%s': a path of %zu characters%s; MPI-IO (Open "
                     "MPI's shared file pointers) takes at most %d: use a shorter directory",
                     path, n, extra ? " with its temporary name" : "", FCL_IO_MAX_PATH);
  return FCL_OK;
}

fcl_status fcl__io_write_file(const char *path, size_t nfields, fcl_field *const *fields,
                              double time, int64_t step, fcl__io_extra_fn extra, void *user,
                              bool sealed) {
  FCL_TRY(fcl__io_check_path(path, 4)); /* ".tmp" */
  const fcl_topology *t = fields[0]->topo;
  for (size_t i = 1; i < nfields; ++i) {
    int same = MPI_UNEQUAL;
    MPI_Comm_compare(fields[i]->topo->comm, t->comm, &same);
    if (same != MPI_IDENT && same != MPI_CONGRUENT)
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "write '%s': fields '%s' and '%s' are not on "
                       "the same ranks",
                       path, fields[0]->name, fields[i]->name);
  }
  MPI_Comm comm = t->comm;
  size_t len = strlen(path);
  char *tmp = malloc(len + 5);
  if (!tmp) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "write '%s'", path);
  snprintf(tmp, len + 5, "%s.tmp", path);
  H5E_auto2_t old_fn;
  void *old_data;
  H5Eget_auto2(H5E_DEFAULT, &old_fn, &old_data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* our messages say what failed */
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL);
  hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
  if (sealed) H5Pset_userblock(fcpl, FCL__IO_SEAL_SIZE);
  hid_t file = H5Fcreate(tmp, H5F_ACC_TRUNC, fcpl, fapl);
  H5Pclose(fcpl);
  H5Pclose(fapl);
  fcl_status st = file < 0 ? FCL_ERROR(FCL_ERR_IO,
                                       "write '%s': cannot create '%s' (does the "
                                       "directory exist and is it writable?)",
                                       path, tmp)
                           : FCL_OK;
  if (st == FCL_OK) {
    int64_t s = step;
    if (attr(file, "time", H5T_NATIVE_DOUBLE, 1, &time) < 0 ||
        attr(file, "step", H5T_NATIVE_INT64, 1, &s) < 0 ||
        attr_string(file, "flowcl_version", FLOWCL_VERSION_STRING) < 0)
      st = FCL_ERROR(FCL_ERR_HDF5, "write '%s': root attributes", path);
  }
  for (size_t i = 0; file >= 0 && i < nfields; ++i) {
    const fcl_field *f = fields[i];
    size_t count = fcl__field_count(f->topo->local);
    void *host = malloc(count * f->itemsize + 1);
    for (int c = 0; c < f->ncomp; ++c) {
      fcl_status sc = host ? fcl_field_read(f, c, false, host)
                           : FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "write '%s'", path);
      if (st != FCL_OK || sc != FCL_OK) { /* keep the collective calls matched: write zeros */
        if (st == FCL_OK) st = sc;
        if (host) memset(host, 0, count * f->itemsize);
      }
      if (host) {
        fcl_status sw = write_component(file, f, c, host, path);
        if (st == FCL_OK) st = sw;
      }
    }
    free(host);
  }
  if (file >= 0 && st == FCL_OK && extra) st = extra(user, file);
  if (file >= 0 && H5Fclose(file) < 0 && st == FCL_OK)
    st = FCL_ERROR(FCL_ERR_HDF5, "write '%s': closing the file failed", path);
  H5Eset_auto2(H5E_DEFAULT, old_fn, old_data);
  st = fcl__io_agree(comm, st);
  if (st == FCL_OK && sealed) st = fcl__io_seal(tmp, comm);
  int rank = t->rank;
  if (rank == 0) {
    /* the data reaches the disk before the name does, and the name before the call returns:
     * a power loss leaves the old file or the new one, never a new name over no data */
    if (st == FCL_OK && sync_path(tmp) != 0)
      st = FCL_ERROR(FCL_ERR_IO, "write '%s': fsync of '%s' failed: %s", path, tmp,
                     strerror(errno));
    if (st == FCL_OK && rename(tmp, path) != 0)
      st = FCL_ERROR(FCL_ERR_IO, "write '%s': rename from '%s' failed: %s", path, tmp,
                     strerror(errno));
    if (st == FCL_OK) sync_directory_of(path);
    if (st != FCL_OK) unlink(tmp);
  }
  free(tmp);
  return fcl__io_agree(comm, st);
}
