/* The seal of a checkpoint: a digest of the whole HDF5 file, kept in the file's user block (the
 * first FCL__IO_SEAL_SIZE bytes, which HDF5 skips), checked before HDF5 parses anything. HDF5
 * 1.10 can crash on a damaged file (a fuzzed checkpoint segfaulted in H5Aget_name_by_idx), so a
 * restart must not hand it a file that is not byte for byte the one written.
 *
 * The header is text: "flowcl-seal 1\nlength <bytes>\ndigest <16 hex>\n", NUL-padded. The
 * digest is the sum over the 8-byte words w_i of the body (the bytes after the header, the
 * last word zero-padded) of mix(w_i ^ i * golden), plus mix(length): any changed, inserted or
 * removed byte changes it, and the ranks can each sum a part. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "io_impl.h"

enum { SEAL_VERSION = 1, CHUNK = 8 << 20 };

/* Digest of this rank's share of the body of fd (size bytes in all), summed over comm. */
static fcl_status body_digest(int fd, uint64_t size, MPI_Comm comm, const char *path,
                              uint64_t *digest) {
  int rank, nranks;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  uint64_t body = size - FCL__IO_SEAL_SIZE, words = (body + 7) / 8;
  uint64_t first = words * (uint64_t)rank / (uint64_t)nranks;
  uint64_t last = words * (uint64_t)(rank + 1) / (uint64_t)nranks;
  unsigned char *buf = malloc(CHUNK);
  fcl_status st = buf ? FCL_OK : FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "seal of '%s'", path);
  uint64_t sum = 0;
  for (uint64_t w = first; st == FCL_OK && w < last;) {
    uint64_t n = last - w < CHUNK / 8 ? last - w : CHUNK / 8;
    uint64_t off = w * 8, want = n * 8 < body - off ? n * 8 : body - off;
    for (uint64_t got = 0; got < want;) {
      ssize_t r = pread(fd, buf + got, want - got, (off_t)(FCL__IO_SEAL_SIZE + off + got));
      if (r <= 0) {
        st = FCL_ERROR(FCL_ERR_IO, "'%s': reading for the seal failed: %s", path,
                       r < 0 ? strerror(errno) : "the file is shorter than it was");
        break;
      }
      got += (uint64_t)r;
    }
    if (want < n * 8) memset(buf + want, 0, n * 8 - want); /* the last word, zero-padded */
    for (uint64_t i = 0; st == FCL_OK && i < n; ++i) {
      uint64_t v;
      memcpy(&v, buf + 8 * i, 8);
      sum += fcl__io_mix(v ^ (w + i) * 0x9e3779b97f4a7c15ull);
    }
    w += n;
  }
  free(buf);
  st = fcl__io_agree(comm, st);
  uint64_t total = 0;
  MPI_Allreduce(&sum, &total, 1, MPI_UINT64_T, MPI_SUM, comm);
  *digest = total + fcl__io_mix(size);
  return st;
}

/* The size of fd, agreed by the ranks (rank 0's), or an error when it holds no body. */
static fcl_status file_size(int fd, MPI_Comm comm, const char *path, uint64_t *size) {
  struct stat sb;
  uint64_t mine = fstat(fd, &sb) == 0 ? (uint64_t)sb.st_size : 0;
  MPI_Bcast(&mine, 1, MPI_UINT64_T, 0, comm);
  *size = mine;
  if (mine <= FCL__IO_SEAL_SIZE)
    return FCL_ERROR(FCL_ERR_CORRUPT,
                     "'%s': %" PRIu64 " bytes, too short for a sealed "
                     "checkpoint",
                     path, mine);
  return FCL_OK;
}

fcl_status fcl__io_seal(const char *path, MPI_Comm comm) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  int fd = open(path, rank == 0 ? O_RDWR : O_RDONLY);
  fcl_status st = fd >= 0
                      ? FCL_OK
                      : FCL_ERROR(FCL_ERR_IO, "seal: cannot open '%s': %s", path, strerror(errno));
  st = fcl__io_agree(comm, st);
  uint64_t size = 0, digest = 0;
  if (st == FCL_OK) st = fcl__io_agree(comm, file_size(fd, comm, path, &size));
  if (st == FCL_OK) st = body_digest(fd, size, comm, path, &digest);
  if (st == FCL_OK && rank == 0) {
    char header[FCL__IO_SEAL_SIZE] = {0};
    snprintf(header, sizeof header, "flowcl-seal %d\nlength %" PRIu64 "\ndigest %016" PRIx64 "\n",
             SEAL_VERSION, size, digest);
    if (pwrite(fd, header, sizeof header, 0) != (ssize_t)sizeof header)
      st = FCL_ERROR(FCL_ERR_IO, "seal: writing the header of '%s' failed: %s", path,
                     strerror(errno));
  }
  if (fd >= 0) close(fd);
  return fcl__io_agree(comm, st);
}

fcl_status fcl__io_verify_seal(const char *path, MPI_Comm comm) {
  int fd = open(path, O_RDONLY);
  fcl_status st = fd >= 0 ? FCL_OK
                          : FCL_ERROR(FCL_ERR_IO, "restart: cannot open '%s': %s", path,
                                      strerror(errno));
  st = fcl__io_agree(comm, st);
  uint64_t size = 0, digest = 0, length = 0, stored = 0;
  if (st == FCL_OK) st = fcl__io_agree(comm, file_size(fd, comm, path, &size));
  if (st == FCL_OK) {
    char header[FCL__IO_SEAL_SIZE + 1] = {0};
    int version = 0;
    int ok = pread(fd, header, FCL__IO_SEAL_SIZE, 0) == FCL__IO_SEAL_SIZE &&
             sscanf(header, "flowcl-seal %d\nlength %" SCNu64 "\ndigest %" SCNx64, &version,
                    &length, &stored) == 3;
    if (!ok)
      st = FCL_ERROR(FCL_ERR_CORRUPT,
                     "'%s' carries no flowcl seal: not a checkpoint, written "
                     "before checkpoint format 2, or its first bytes are damaged",
                     path);
    else if (version != SEAL_VERSION)
      st = FCL_ERROR(FCL_ERR_NOT_SUPPORTED, "'%s': seal version %d, this flowcl reads %d", path,
                     version, SEAL_VERSION);
    else if (length != size)
      st = FCL_ERROR(FCL_ERR_CORRUPT,
                     "'%s' is %" PRIu64 " bytes, sealed at %" PRIu64 ": "
                     "truncated or appended to",
                     path, size, length);
  }
  st = fcl__io_agree(comm, st);
  if (st == FCL_OK) st = body_digest(fd, size, comm, path, &digest);
  if (st == FCL_OK && digest != stored)
    st = FCL_ERROR(FCL_ERR_CORRUPT,
                   "'%s' does not match its seal (digest %016" PRIx64 ", "
                   "sealed %016" PRIx64 "): damaged after it was written",
                   path, digest, stored);
  if (fd >= 0) close(fd);
  return fcl__io_agree(comm, st); /* each rank read the header itself: one answer for all */
}
