/* Structural check of a driver's program binary before it is cached or handed back to the driver.
 *
 * Why: PoCL (3.x, Debian 12) serializes a program by reading the files of its own kernel cache.
 * When another process builds the same program at the same time, PoCL replaces `program.bc` by
 * removing it and renaming a new copy into place; a process that takes its binary
 * (CL_PROGRAM_BINARIES) inside that window gets a binary whose `program.bc` entry is empty.
 * PoCL returns it with CL_SUCCESS, and every later clCreateProgramWithBinary of it aborts the
 * process (`pocl_binary.c: pocl_binary_get_kernels_metadata: Assertion 'len > 0'`). MPI ranks
 * that build the same kernels on a cold cache hit that window. flowcl therefore walks the
 * records of a PoCL binary (format versions 9 to 11: PoCL 3.0 to 6) and never stores or loads
 * one with an empty or overrunning record. Binaries of other drivers are opaque and pass. */
#include <stdint.h>
#include <string.h>

#include "runtime_impl.h"

#define POCL_MAGIC "poclbin"        /* 8 bytes with its NUL */
#define POCL_HASH_BYTES 41          /* SHA-1 in 40 characters and a NUL */
#define POCL_FLAG_SCOPE_VARS 2u     /* version >= 10: a u64 of program-scope bytes follows */
#define POCL_KERNEL_FIXED_BYTES 20u /* struct size, binaries size, arginfo size */

typedef struct {
  const unsigned char *p;
  size_t left;
} reader;

static bool take(reader *r, size_t n, const unsigned char **out) {
  if (n > r->left) return false;
  if (out) *out = r->p;
  r->p += n;
  r->left -= n;
  return true;
}

static bool take_u32(reader *r, uint32_t *v) {
  const unsigned char *b;
  if (!take(r, 4, &b)) return false;
  *v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
  return true;
}

static bool take_u64(reader *r, uint64_t *v) {
  uint32_t lo, hi;
  if (!take_u32(r, &lo) || !take_u32(r, &hi)) return false;
  *v = (uint64_t)hi << 32 | lo;
  return true;
}

/* A run of serialized files (u32 path length, path, u32 content length, content) that fills
 * exactly `bytes`; every path is non-empty, and so is every content when `need_content`. */
static bool files_complete(reader *r, uint64_t bytes, bool need_content) {
  if (bytes > r->left) return false;
  reader files = {r->p, (size_t)bytes};
  while (files.left > 0) {
    uint32_t path_len, content_len;
    if (!take_u32(&files, &path_len) || path_len == 0 || !take(&files, path_len, NULL))
      return false;
    if (!take_u32(&files, &content_len) || (need_content && content_len == 0) ||
        !take(&files, content_len, NULL))
      return false;
  }
  return take(r, (size_t)bytes, NULL);
}

static bool pocl_complete(const unsigned char *binary, size_t size, const char **why) {
  reader r = {binary, size};
  uint32_t version, num_kernels, root_entries;
  uint64_t device_id, flags;
  if (!take(&r, 8, NULL) || !take_u64(&r, &device_id) || !take_u32(&r, &version) ||
      !take_u32(&r, &num_kernels) || !take_u64(&r, &flags) || !take_u32(&r, &root_entries) ||
      !take(&r, POCL_HASH_BYTES, NULL)) {
    *why = "PoCL binary shorter than its header";
    return false;
  }
  if (version < 9 || version > 11) return true; /* a layout this check does not know */
  uint64_t scope_bytes;
  if (version >= 10 && (flags & POCL_FLAG_SCOPE_VARS) && !take_u64(&r, &scope_bytes)) {
    *why = "PoCL binary shorter than its header";
    return false;
  }
  for (uint32_t i = 0; i < root_entries; ++i) {
    uint64_t bytes;
    if (!take_u64(&r, &bytes) || bytes == 0 || !files_complete(&r, bytes, true)) {
      *why = "PoCL binary with an empty or cut program.bc record (another process was "
             "rebuilding the same program in PoCL's cache)";
      return false;
    }
  }
  for (uint32_t k = 0; k < num_kernels; ++k) {
    uint64_t struct_size, binaries_size;
    reader rec = r;
    if (!take_u64(&rec, &struct_size) || !take_u64(&rec, &binaries_size) ||
        struct_size < POCL_KERNEL_FIXED_BYTES || struct_size > r.left ||
        binaries_size > struct_size - POCL_KERNEL_FIXED_BYTES) {
      *why = "PoCL binary with a cut kernel record";
      return false;
    }
    reader files = {r.p + (struct_size - binaries_size), (size_t)binaries_size};
    if (!files_complete(&files, binaries_size, false)) {
      *why = "PoCL binary with a damaged kernel file record";
      return false;
    }
    take(&r, (size_t)struct_size, NULL);
  }
  if (r.left != 0) {
    *why = "PoCL binary longer than its records";
    return false;
  }
  return true;
}

bool fcl__binary_complete(const unsigned char *binary, size_t size, const char **why) {
  *why = NULL;
  if (!binary || size == 0) {
    *why = "empty binary";
    return false;
  }
  if (size >= 8 && memcmp(binary, POCL_MAGIC, 8) == 0) return pocl_complete(binary, size, why);
  return true;
}
