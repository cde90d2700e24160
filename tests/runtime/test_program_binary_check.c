/* Incomplete driver binaries are never loaded: PoCL 3.x returns a binary with an empty
 * program.bc record when another process rebuilds the same program in PoCL's cache while the
 * binary is taken, and aborts the process (assertion `len > 0`) when such a binary is loaded.
 * Built here from a real binary: refused by fcl_program_create_binaries with a clear error, and,
 * planted in the flowcl cache with a valid checksum, removed and rebuilt instead of loaded.
 * Before the check existed, each of these aborted inside PoCL. */
#include <stdlib.h>
#include <string.h>

#include "fcl_test.h"
#include "sha256.h"
#include "flowcl/opencl.h"

static const char *src = "FCL_KERNEL void k(FCL_GLOBAL int *out) { out[0] = 4321; }\n";
static char log_text[16384];

static void capture_log(fcl_log_level level, const char *message, void *user) {
  (void)level;
  (void)user;
  size_t used = strlen(log_text);
  snprintf(log_text + used, sizeof log_text - used, "%s\n", message);
}

static uint64_t get_le(const unsigned char *p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= (uint64_t)p[i] << (8 * i);
  return v;
}
static void put_le(unsigned char *p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = (unsigned char)(v >> (8 * i));
}

/* The binary PoCL 3.x hands out when program.bc is missing from its cache while it serializes:
 * every root record (program.bc) has length 0 and no files; the kernel records are unchanged.
 * NULL when bin is not a PoCL binary of format 9 (PoCL 3.x). */
static unsigned char *without_program_bc(const unsigned char *bin, size_t size, size_t *out_size) {
  const size_t header = 8 + 8 + 4 + 4 + 8 + 4 + 41;
  if (size < header || memcmp(bin, "poclbin", 8) != 0 || get_le(bin + 16, 4) != 9) return NULL;
  uint32_t roots = (uint32_t)get_le(bin + 32, 4);
  size_t off = header;
  for (uint32_t i = 0; i < roots; ++i) off += 8 + (size_t)get_le(bin + off, 8);
  if (off > size) return NULL;
  unsigned char *out = malloc(header + 8 * (size_t)roots + (size - off));
  if (!out) return NULL;
  memcpy(out, bin, header);
  for (uint32_t i = 0; i < roots; ++i) put_le(out + header + 8 * i, 0, 8);
  memcpy(out + header + 8 * roots, bin + off, size - off);
  *out_size = header + 8 * (size_t)roots + (size - off);
  return out;
}

/* Build and run k; out[0], or -1. */
static int build_and_run(fcl_context *ctx, bool *from_cache) {
  fcl_program *p = NULL;
  fcl_kernel *k = NULL;
  fcl_queue *q = NULL;
  int value = -1;
  fcl_mem *out = NULL;
  CHECK_OK(fcl_mem_create(ctx, FCL_MEM_DEVICE, sizeof(int), NULL, &out));
  CHECK_OK(fcl_program_create_source(ctx, src, "binary check test", &p));
  CHECK_OK(fcl_program_build(p, NULL));
  *from_cache = fcl_program_from_cache(p);
  CHECK_OK(fcl_kernel_create(p, "k", &k));
  CHECK_OK(fcl_queue_create(ctx, NULL, 0, &q));
  if (k && q && out) {
    CHECK_OK(fcl_kernel_set_arg_buffer(k, 0, out));
    CHECK_OK(fcl_kernel_enqueue_task(k, q, 0, NULL, NULL));
    CHECK_OK(fcl_mem_read(q, out, 0, sizeof value, &value, FCL_BLOCKING, 0, NULL, NULL));
  }
  fcl_queue_release(&q);
  if (out) fcl_mem_release(&out);
  fcl_kernel_destroy(&k);
  fcl_program_release(&p);
  return value;
}

/* Replace the binary of the cache entry at path, keeping its key, log and metadata, with a valid
 * checksum (the entry layout of program_cache.c: magic, format, three sizes, SHA-256, key). */
static void plant_binary(const char *path, const unsigned char *bin, size_t nbin) {
  FILE *f = fopen(path, "rb");
  CHECKF(f != NULL, "cannot read %s", path);
  if (!f) return;
  unsigned char old[1 << 20];
  size_t n = fread(old, 1, sizeof old, f);
  fclose(f);
  const size_t header = 8 + 4 + 3 * 8 + 32 + 64;
  CHECK(n > header && n < sizeof old);
  size_t old_bin = (size_t)get_le(old + 12, 8), tail = n - header - old_bin;
  unsigned char *entry = malloc(header + nbin + tail);
  CHECK(entry != NULL);
  if (!entry) return;
  memcpy(entry, old, header);
  put_le(entry + 12, nbin, 8);
  memcpy(entry + header, bin, nbin);
  memcpy(entry + header + nbin, old + header + old_bin, tail);
  fcl__sha256 h;
  fcl__sha256_init(&h);
  fcl__sha256_update(&h, entry + header, nbin + tail);
  fcl__sha256_final(&h, entry + 36);
  f = fopen(path, "wb");
  CHECK(f != NULL);
  if (f) {
    CHECK(fwrite(entry, 1, header + nbin + tail, f) == header + nbin + tail);
    fclose(f);
  }
  free(entry);
}

static void check_device(const fcl_device_entry *e, void *user) {
  (void)user;
  char *dir = fcl_test_temp_dir("bincheck");
  CHECK(dir != NULL);
  if (!dir) return;
  setenv("FLOWCL_CACHE_DIR", dir, 1);
  fcl_context *ctx = NULL;
  CHECK_OK(fcl_context_create(1, &e->device, &ctx));
  bool hit = true;
  CHECK(build_and_run(ctx, &hit) == 4321 && !hit);

  /* The driver's own binary is complete: accepted as given. */
  fcl_program *p = NULL, *q = NULL;
  const unsigned char *bin = NULL;
  size_t size = 0;
  CHECK_OK(fcl_program_create_source(ctx, src, "binary check test", &p));
  CHECK_OK(fcl_program_build(p, NULL));
  CHECK_OK(fcl_program_binary(p, e->device, &bin, &size));
  CHECK_OK(fcl_program_create_binaries(ctx, 1, &e->device, &size, &bin, &q));
  fcl_program_release(&q);

  size_t bad_size = 0;
  unsigned char *bad = bin ? without_program_bc(bin, size, &bad_size) : NULL;
  if (bad) {
    const unsigned char *b = bad;
    CHECK_STATUS(fcl_program_create_binaries(ctx, 1, &e->device, &bad_size, &b, &q),
                 FCL_ERR_INVALID_ARGUMENT, "program.bc");
    CHECK(q == NULL);
    size_t cut = size - 3; /* the last kernel record overruns the binary */
    CHECK_STATUS(fcl_program_create_binaries(ctx, 1, &e->device, &cut, &bin, &q),
                 FCL_ERR_INVALID_ARGUMENT, "kernel");

    char path[4400];
    fcl_test_find_file(dir, ".clbin", path, sizeof path);
    plant_binary(path, bad, bad_size);
    log_text[0] = '\0';
    fcl_log_set_handler(capture_log, NULL);
    CHECK(build_and_run(ctx, &hit) == 4321 && !hit);
    fcl_log_set_handler(NULL, NULL);
    CHECKF(fcl_test_contains(log_text, "program.bc"), "no warning for the planted entry: %s",
           log_text);
    CHECK(build_and_run(ctx, &hit) == 4321 && hit); /* rewritten, complete */
    free(bad);
  } else {
    printf("%s: not a PoCL 3.x binary; only the complete binary was checked\n",
           fcl_test_device_name(e->device));
  }
  fcl_program_release(&p);
  fcl_context_release(&ctx);
  fcl_test_remove_dir(dir);
  free(dir);
}

int main(void) { return fcl_test_run_on_devices(check_device, NULL); }
