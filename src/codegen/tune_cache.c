/* The tuner's memory: one small text file per (kernel, axes, options, device, size class),
 * checksummed, written atomically. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "files.h"
#include "sha256.h"
#include "tune_impl.h"

fcl_status fcl__tune_key(const fcl_kbuilder *base, size_t num_axes, const fcl_tune_axis *axes,
                         const char *options, const fcl_device *device, const int64_t *params,
                         char key[65]) {
  char *desc = NULL;
  FCL_TRY(fcl_kbuilder_describe(base, &desc));
  fcl_device_info *info = malloc(sizeof *info);
  if (!info) {
    free(desc);
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "tune key");
  }
  fcl_status st = fcl_device_get_info(device, info);
  if (st == FCL_OK) {
    fcl__sha256 h;
    fcl__sha256_init(&h);
    fcl__sha256_field(&h, "format", "flowcl-tune 1");
    fcl__sha256_field(&h, "kernel", desc);
    for (size_t a = 0; a < num_axes; ++a) {
      fcl__sha256_field(&h, "axis", axes[a].name);
      fcl__sha256_update(&h, &axes[a].count, sizeof axes[a].count);
      fcl__sha256_update(&h, axes[a].values, axes[a].count * sizeof *axes[a].values);
    }
    fcl__sha256_field(&h, "options", options);
    fcl__sha256_field(&h, "device", info->name);
    fcl__sha256_field(&h, "vendor", info->vendor);
    fcl__sha256_field(&h, "version", info->version);
    fcl__sha256_field(&h, "driver", info->driver_version);
    /* problem size class: each parameter rounded up to a power of two */
    for (size_t p = 0; p < fcl_kbuilder_num_params(base); ++p) {
      int cls = 0;
      while (cls < 62 && ((int64_t)1 << cls) < params[p]) cls++;
      fcl__sha256_update(&h, &cls, sizeof cls);
    }
    unsigned char digest[32];
    fcl__sha256_final(&h, digest);
    fcl__sha256_hex(digest, key);
  }
  free(info);
  free(desc);
  return st;
}

static bool entry_path(const char *key, char *path, size_t size, char *dir, size_t dsize) {
  char root[4096];
  if (fcl_program_cache_dir(root, sizeof root) != FCL_OK || !root[0]) return false;
  snprintf(dir, dsize, "%s/tune", root);
  snprintf(path, size, "%s/%s.txt", dir, key);
  return true;
}

static void body_checksum(const char *body, size_t len, char hex[65]) {
  fcl__sha256 h;
  unsigned char digest[32];
  fcl__sha256_init(&h);
  fcl__sha256_update(&h, body, len);
  fcl__sha256_final(&h, digest);
  fcl__sha256_hex(digest, hex);
}

static bool corrupted(const char *path, const char *why, char *text) {
  fcl_log(FCL_LOG_WARNING, "tune cache entry %s is corrupted (%s): ignored, tuning again", path,
          why);
  free(text);
  remove(path);
  return false;
}

bool fcl__tune_cache_load(const char *key, size_t num_axes, const fcl_tune_axis *axes,
                          fcl__tune_entry *entry) {
  char dir[4200], path[4400];
  if (!entry_path(key, path, sizeof path, dir, sizeof dir)) return false;
  size_t size = 0;
  char *text = fcl__file_read(path, &size);
  if (!text) return false;
  char *sum = strstr(text, "checksum ");
  if (!sum) return corrupted(path, "no checksum", text);
  char hex[65];
  body_checksum(text, (size_t)(sum - text), hex);
  if (strncmp(sum + 9, hex, 64) != 0) return corrupted(path, "checksum mismatch", text);
  memset(entry, 0, sizeof *entry);
  char effort[32] = "";
  const char *line = strstr(text, "effort ");
  if (!line || sscanf(line, "effort %31s", effort) != 1 ||
      fcl_tune_effort_parse(effort, &entry->effort) != FCL_OK)
    return corrupted(path, "bad effort", text);
  line = strstr(text, "median_ns ");
  if (!line || sscanf(line, "median_ns %lf", &entry->median_ns) != 1)
    return corrupted(path, "bad time", text);
  line = strstr(text, "choice");
  if (!line) return corrupted(path, "no choice", text);
  line += 6;
  for (size_t a = 0; a < num_axes; ++a) {
    char *end;
    long long v = strtoll(line, &end, 10);
    if (end == line) return corrupted(path, "too few choice values", text);
    line = end;
    bool valid = false;
    for (size_t k = 0; k < axes[a].count; ++k) valid = valid || axes[a].values[k] == v;
    if (!valid) return corrupted(path, "a choice value outside its axis", text);
    entry->choice[a] = v;
  }
  free(text);
  return true;
}

void fcl__tune_cache_store(const char *key, const char *kernel, size_t num_axes,
                           const fcl__tune_entry *entry) {
  char dir[4200], path[4400];
  if (!entry_path(key, path, sizeof path, dir, sizeof dir)) return;
  if (fcl__make_dirs(dir) != 0) {
    fcl_log(FCL_LOG_WARNING, "tune cache: cannot create %s: %s (not remembering)", dir,
            strerror(errno));
    return;
  }
  char text[2048];
  int n = snprintf(text, sizeof text, "flowcl-tune 1\nkernel %s\neffort %s\nmedian_ns %.1f\nchoice",
                   kernel, fcl_tune_effort_name(entry->effort), entry->median_ns);
  for (size_t a = 0; a < num_axes && n > 0 && (size_t)n < sizeof text; ++a)
    n += snprintf(text + n, sizeof text - (size_t)n, " %lld", (long long)entry->choice[a]);
  if (n <= 0 || (size_t)n + 80 >= sizeof text) return;
  n += snprintf(text + n, sizeof text - (size_t)n, "\n");
  char hex[65];
  body_checksum(text, (size_t)n, hex);
  n += snprintf(text + n, sizeof text - (size_t)n, "checksum %s\n", hex);
  if (fcl__file_write_atomic(path, text, (size_t)n) != 0)
    fcl_log(FCL_LOG_WARNING, "tune cache: cannot write %s: %s (not remembering)", path,
            strerror(errno));
}
