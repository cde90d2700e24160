/* Reading one dataset into a field component of any decomposition: checks first (file exists
 * and is HDF5, dataset exists, shape and precision match), then a collective hyperslab read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "io_impl.h"

/* Rank 0 looks at the file before anyone opens it through MPI-IO. */
static fcl_status probe(const char *path, MPI_Comm comm, int rank) {
  int code = 0; /* 0 fine, 1 missing, 2 not HDF5 */
  if (rank == 0) {
    if (access(path, R_OK) != 0)
      code = 1;
    else if (H5Fis_hdf5(path) <= 0)
      code = 2;
  }
  MPI_Bcast(&code, 1, MPI_INT, 0, comm);
  if (code == 1) return FCL_ERROR(FCL_ERR_IO, "read '%s': no such file (or not readable)", path);
  if (code == 2)
    return FCL_ERROR(FCL_ERR_IO,
                     "read '%s': not an HDF5 file (or truncated before its "
                     "superblock)",
                     path);
  return FCL_OK;
}

static fcl_status read_open(const char *path, const char *dataset, fcl_field *f, hid_t file,
                            void *host) {
  const fcl_topology *t = f->topo;
  const int dim = t->domain.dim;
  if (H5Lexists(file, dataset, H5P_DEFAULT) <= 0)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "read '%s': no dataset '%s'", path, dataset);
  hid_t dset = H5Dopen2(file, dataset, H5P_DEFAULT);
  if (dset < 0)
    return FCL_ERROR(FCL_ERR_IO, "read '%s': dataset '%s' cannot be opened (truncated file?)", path,
                     dataset);
  hid_t type = H5Dget_type(dset), space = H5Dget_space(dset);
  fcl_status st = FCL_OK;
  const char *want = f->dtype == FCL_FLOAT64 ? "double" : "float";
  if (H5Tget_class(type) != H5T_FLOAT || H5Tget_size(type) != f->itemsize)
    st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                   "read '%s': dataset '%s' holds %s of %zu bytes; "
                   "field '%s' expects %s",
                   path, dataset,
                   H5Tget_class(type) == H5T_FLOAT ? "floats" : "non-floating-point values",
                   H5Tget_size(type), f->name, want);
  hsize_t dims[3] = {0, 0, 0}, want_dims[3];
  fcl__io_global_dims(t, want_dims);
  int rank = H5Sget_simple_extent_ndims(space);
  if (st == FCL_OK && (rank != dim || H5Sget_simple_extent_dims(space, dims, NULL) < 0 ||
                       memcmp(dims, want_dims, (size_t)dim * sizeof *dims))) {
    char got[96] = "", exp[96] = "";
    for (int a = 0; a < rank && a < 3; ++a)
      snprintf(got + strlen(got), sizeof got - strlen(got), "%s%llu", a ? " x " : "",
               (unsigned long long)dims[a]);
    for (int a = 0; a < dim; ++a)
      snprintf(exp + strlen(exp), sizeof exp - strlen(exp), "%s%llu", a ? " x " : "",
               (unsigned long long)want_dims[a]);
    st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                   "read '%s': dataset '%s' has shape %s (%d-D); "
                   "field '%s' expects %s (slowest axis first)",
                   path, dataset, got, rank, f->name, exp);
  }
  if (st == FCL_OK) {
    hsize_t start[3], count[3];
    for (int a = 0; a < dim; ++a) {
      start[dim - 1 - a] = (hsize_t)t->offset[a];
      count[dim - 1 - a] = (hsize_t)t->local[a];
    }
    hid_t mspace = H5Screate_simple(dim, count, NULL), xfer = H5Pcreate(H5P_DATASET_XFER);
    /* independent transfers: with Open MPI 4.1's default MPI-IO component (OMPIO, Debian 12)
     * collective hyperslab writes corrupted one rank's block on 4 ranks (tests/io) */
    herr_t rc = H5Pset_dxpl_mpio(xfer, H5FD_MPIO_INDEPENDENT);
    if (rc >= 0) rc = H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
    if (rc >= 0)
      rc = H5Dread(dset, f->dtype == FCL_FLOAT64 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT, mspace,
                   space, xfer, host);
    if (rc < 0)
      st = FCL_ERROR(FCL_ERR_IO, "read '%s': reading dataset '%s' failed (truncated file?)", path,
                     dataset);
    uint64_t stored = 0; /* files written by flowcl carry a checksum; others (h5py) do not */
    if (st == FCL_OK && fcl__io_attr_read(dset, "checksum", H5T_NATIVE_UINT64, 1, &stored) == 0) {
      uint64_t computed = fcl__io_checksum(f, host);
      if (computed != stored)
        st = FCL_ERROR(FCL_ERR_CORRUPT,
                       "read '%s': dataset '%s' does not match its checksum "
                       "(%016llx stored, %016llx read): the file is corrupted",
                       path, dataset, (unsigned long long)stored, (unsigned long long)computed);
    }
    H5Pclose(xfer);
    H5Sclose(mspace);
  }
  H5Sclose(space);
  H5Tclose(type);
  H5Dclose(dset);
  return st;
}

fcl_status fcl_io_read(const char *path, const char *dataset, fcl_field *f, int comp) {
  FCL_CHECK_NULL(path, 1);
  FCL_CHECK_NULL(dataset, 2);
  FCL_CHECK_NULL(f, 3);
  FCL_TRY(fcl__field_check_comp(f, comp, 4));
  const fcl_topology *t = f->topo;
  H5E_auto2_t old_fn;
  void *old_data;
  H5Eget_auto2(H5E_DEFAULT, &old_fn, &old_data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  fcl_status st = fcl__io_check_path(path, 0);
  if (st == FCL_OK) st = probe(path, t->comm, t->rank);
  hid_t file = -1;
  if (st == FCL_OK) {
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, t->comm, MPI_INFO_NULL);
    file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    H5Pclose(fapl);
    if (file < 0)
      st = FCL_ERROR(FCL_ERR_IO, "read '%s': cannot open (truncated or damaged?)", path);
  }
  void *host = st == FCL_OK ? malloc(fcl__field_count(t->local) * f->itemsize + 1) : NULL;
  if (st == FCL_OK && !host) st = FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "read '%s'", path);
  if (st == FCL_OK) st = read_open(path, dataset, f, file, host);
  if (file >= 0) H5Fclose(file);
  H5Eset_auto2(H5E_DEFAULT, old_fn, old_data);
  if (st == FCL_OK) st = fcl_field_write(f, comp, false, host);
  free(host);
  return st;
}
