/* Internal helpers of the io layer (src/io). */
#ifndef FLOWCL_IO_IMPL_H
#define FLOWCL_IO_IMPL_H

#include <hdf5.h>

#include "field_impl.h"
#include "flowcl/io.h"

/* Dataset name of component c of a field ("u", or "u_x"...); buf of at least 256 bytes. */
void fcl__io_dataset_name(const fcl_field *f, int c, char *buf, size_t size);
/* The global shape in HDF5 order (slowest first): rank = dim. */
int fcl__io_global_dims(const fcl_topology *t, hsize_t *dims);
/* Checksum of a rank's interior block (host, packed) of a field, summed over ranks: the sum of
 * a mix of each value's bits with its global index, so it does not depend on the
 * decomposition. Collective. */
uint64_t fcl__io_checksum(const fcl_field *f, const void *host);
/* More root attributes, written before the file is closed. */
typedef fcl_status (*fcl__io_extra_fn)(void *user, hid_t file);
/* fcl_io_write with extra root attributes (extra may be NULL); sealed: with a user block that
 * holds the file's seal (fcl__io_seal), written before the file takes its name. The caller
 * checks path, nfields and fields (their positions are its own). */
fcl_status fcl__io_write_file(const char *path, size_t nfields, fcl_field *const *fields,
                              double time, int64_t step, fcl__io_extra_fn extra, void *user,
                              bool sealed);
/* The worst status over the ranks of comm, so that all ranks take the same branch; a rank that
 * succeeded gets an error saying another rank failed. Collective. */
fcl_status fcl__io_agree(MPI_Comm comm, fcl_status st);
/* FCL_ERR_INVALID_ARGUMENT when path (plus extra characters of a temporary name) is longer than
 * FCL_IO_MAX_PATH. */
fcl_status fcl__io_check_path(const char *path, size_t extra);
/* splitmix64's finalizer: a bijection of 64-bit words that spreads every input bit. */
static inline uint64_t fcl__io_mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
/* Bytes of a checkpoint's user block, which holds its seal (seal.c). */
#define FCL__IO_SEAL_SIZE 512
/* Seal the closed HDF5 file path (written with a user block of FCL__IO_SEAL_SIZE): a digest of
 * its bytes written into the user block. Collective. */
fcl_status fcl__io_seal(const char *path, MPI_Comm comm);
/* FCL_OK when path carries a seal that matches its bytes; otherwise FCL_ERR_CORRUPT (or
 * FCL_ERR_IO, FCL_ERR_NOT_SUPPORTED) saying what does not match. Before any HDF5 call on the
 * file. Collective. */
fcl_status fcl__io_verify_seal(const char *path, MPI_Comm comm);
/* Root attribute helpers (0 on success). */
int fcl__io_attr(hid_t obj, const char *name, hid_t type, int n, const void *value);
int fcl__io_attr_read(hid_t obj, const char *name, hid_t type, int n, void *value);

#endif
