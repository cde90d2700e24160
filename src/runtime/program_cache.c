/* On-disk cache of program binaries.
 *
 * One file per (source, options, headers, device, driver, flowcl version) key, named by the
 * key's SHA-256. A file is written under a unique temporary name and renamed into place, so
 * concurrent writers (many MPI ranks) need no lock and readers never see half a file. Each
 * entry carries its key and a checksum of its payload; an entry that is corrupt, truncated or
 * filed under another key is logged, removed and rebuilt. A build takes the key's lock file
 * (flock), so that processes building one program wait for the first and load its entry:
 * PoCL 3.1 crashes when it serializes a program (CL_PROGRAM_BINARIES) while another process
 * rewrites the same program in PoCL's own cache, and the ranks compile it once, not N times.
 * The same holds for the programs of libraries that build their own (cached_program.c). A
 * directory of another user, or one others may write to, is not used (code is loaded from it).
 * Warnings about the directory come once per run. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/file.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "files.h"
#include "flowcl/version.h"
#include "runtime_impl.h"
#include "sha256.h"

#define CACHE_MAGIC "FCLCACHE"
#define CACHE_FORMAT 2u /* 2: the key follows the checksum */
#define KEY_AT (8 + 4 + 3 * 8 + 32)
#define HEADER_SIZE (KEY_AT + 64)

/* A warning about the cache directory, once per run for each text. */
static void warn_once(const char *text) {
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  static char said[8][256];
  static int nsaid;
  pthread_mutex_lock(&lock);
  bool fresh = true;
  for (int i = 0; i < nsaid && fresh; ++i) fresh = strncmp(said[i], text, sizeof said[i] - 1) != 0;
  if (fresh) {
    snprintf(said[nsaid % 8], sizeof said[0], "%s", text);
    if (nsaid < 8) nsaid++;
  }
  pthread_mutex_unlock(&lock);
  if (fresh) fcl_log(FCL_LOG_WARNING, "%s", text);
}

bool fcl__cache_enabled(void) {
  const char *off = getenv("FLOWCL_NO_CACHE");
  return !(off && *off && strcmp(off, "0") != 0);
}

fcl_status fcl_program_cache_dir(char *buf, size_t size) {
  FCL_CHECK_NULL(buf, 1);
  FCL_CHECK_ARG(size > 0, 2, "size", "must be > 0");
  buf[0] = '\0';
  if (!fcl__cache_enabled()) return FCL_OK;
  const char *dir = getenv("FLOWCL_CACHE_DIR");
  const char *xdg = getenv("XDG_CACHE_HOME");
  const char *home = getenv("HOME");
  int n;
  if (dir && *dir)
    n = snprintf(buf, size, "%s", dir);
  else if (xdg && *xdg)
    n = snprintf(buf, size, "%s/flowcl", xdg);
  else if (home && *home)
    n = snprintf(buf, size, "%s/.cache/flowcl", home);
  else
    n = snprintf(buf, size, "/tmp/flowcl-cache-%u", (unsigned)getuid());
  if (n < 0 || (size_t)n >= size)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "argument 2 (size): %zu bytes cannot hold the "
                     "cache directory path",
                     size);
  char why[128], text[4400];
  if (!fcl__dir_trusted(buf, why, sizeof why)) {
    snprintf(text, sizeof text, "program cache: not using %s: %s", buf, why);
    warn_once(text);
    buf[0] = '\0';
  }
  return FCL_OK;
}

/* The device's identity: its platform's name, vendor and version, its name, vendor, version
 * and driver version. */
static void hash_device(fcl__sha256 *h, const fcl_device *device) {
  fcl_platform_info p;
  fcl_device_info d;
  if (fcl_platform_get_info(device->platform, &p) != FCL_OK) memset(&p, 0, sizeof p);
  if (fcl_device_get_info(device, &d) != FCL_OK) memset(&d, 0, sizeof d);
  const char *platform[] = {p.name, p.vendor, p.version};
  const char *dev[] = {d.name, d.vendor, d.version, d.driver_version};
  for (size_t i = 0; i < sizeof platform / sizeof *platform; ++i)
    fcl__sha256_field(h, "platform", platform[i]);
  for (size_t i = 0; i < sizeof dev / sizeof *dev; ++i) fcl__sha256_field(h, "device", dev[i]);
}

/* Hash the contents of every header the source includes ("#include" lines resolved against the
 * -I directories of the options), recursively, so that editing a header changes the key. */
static void hash_includes(fcl__sha256 *h, const char *source, const char *options, int depth) {
  if (depth > 16 || !source) return;
  for (const char *line = source; line && *line;
       line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
    const char *p = line;
    while (*p == ' ' || *p == '\t') ++p;
    if (*p != '#') continue;
    ++p;
    while (*p == ' ' || *p == '\t') ++p;
    if (strncmp(p, "include", 7) != 0) continue;
    p += 7;
    while (*p == ' ' || *p == '\t') ++p;
    char close = *p == '"' ? '"' : *p == '<' ? '>' : 0;
    if (!close) continue;
    const char *end = strchr(p + 1, close);
    if (!end || end - p > 1024) continue;
    char name[1100];
    snprintf(name, sizeof name, "%.*s", (int)(end - p - 1), p + 1);
    /* Look in each -I directory. */
    for (const char *o = options ? strstr(options, "-I") : NULL; o; o = strstr(o + 2, "-I")) {
      const char *d = o + 2;
      while (*d == ' ') ++d;
      size_t len = strcspn(d, " ");
      char path[2300];
      snprintf(path, sizeof path, "%.*s/%s", (int)len, d, name);
      size_t size = 0;
      char *text = fcl__file_read(path, &size);
      if (!text) continue;
      fcl__sha256_field(h, "include", name);
      fcl__sha256_field(h, "contents", text);
      hash_includes(h, text, options, depth + 1);
      free(text);
      break;
    }
  }
}

fcl_status fcl__cache_key(const char *source, const char *options, const fcl_device *device,
                          char key[65]) {
  fcl__sha256 h;
  fcl__sha256_init(&h);
  fcl__sha256_field(&h, "flowcl", FLOWCL_VERSION_STRING);
  fcl__sha256_field(&h, "format", "2");
  hash_device(&h, device);
  fcl__sha256_field(&h, "options", options);
  fcl__sha256_field(&h, "source", source);
  hash_includes(&h, source, options, 0);
  unsigned char digest[32];
  fcl__sha256_final(&h, digest);
  fcl__sha256_hex(digest, key);
  return FCL_OK;
}

static void entry_path(const char *dir, const char *key, char *path, size_t size) {
  snprintf(path, size, "%s/%s.clbin", dir, key);
}

static void put_u64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = (unsigned char)(v >> (8 * i));
}
static uint64_t get_u64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

static void payload_digest(const unsigned char *payload, size_t size, unsigned char digest[32]) {
  fcl__sha256 h;
  fcl__sha256_init(&h);
  fcl__sha256_update(&h, payload, size);
  fcl__sha256_final(&h, digest);
}

static bool reject(const char *path, const char *why, unsigned char *data) {
  free(data);
  char text[4600];
  if (remove(path) == 0) {
    fcl_log(FCL_LOG_WARNING, "program cache entry %s is corrupted (%s): removed, rebuilding", path,
            why);
  } else {
    snprintf(text, sizeof text,
             "program cache entry %s is corrupted (%s) and cannot be removed "
             "(%s): rebuilding without it",
             path, why, strerror(errno));
    warn_once(text);
  }
  return false;
}

bool fcl__cache_load(const char *key, fcl__cache_entry *entry) {
  memset(entry, 0, sizeof *entry);
  char dir[4096], path[4200];
  if (fcl_program_cache_dir(dir, sizeof dir) != FCL_OK || !dir[0]) return false;
  entry_path(dir, key, path, sizeof path);
  size_t size = 0;
  unsigned char *data = (unsigned char *)fcl__file_read(path, &size);
  if (!data) return false;
  if (size < HEADER_SIZE) return reject(path, "shorter than its header", data);
  if (memcmp(data, CACHE_MAGIC, 8) != 0) return reject(path, "bad magic", data);
  uint32_t format = (uint32_t)get_u64(data + 8) & 0xffffffffu;
  if (format != CACHE_FORMAT) return reject(path, "unknown format version", data);
  uint64_t nbin = get_u64(data + 12), nlog = get_u64(data + 20), nmeta = get_u64(data + 28);
  if (nbin == 0 || nbin > size || nlog > size || nmeta > size ||
      HEADER_SIZE + nbin + nlog + nmeta != size)
    return reject(path, "truncated or sizes do not match the file", data);
  unsigned char digest[32];
  payload_digest(data + HEADER_SIZE, size - HEADER_SIZE, digest);
  if (memcmp(digest, data + 36, 32) != 0) return reject(path, "checksum mismatch", data);
  if (memcmp(data + KEY_AT, key, 64) != 0)
    return reject(path, "filed under another key: built for other sources, options or device",
                  data);
  const char *why;
  if (!fcl__binary_complete(data + HEADER_SIZE, nbin, &why)) return reject(path, why, data);
  const unsigned char *p = data + HEADER_SIZE;
  entry->binary = malloc(nbin);
  entry->log = malloc(nlog + 1);
  entry->meta = malloc(nmeta + 1);
  if (!entry->binary || !entry->log || !entry->meta) {
    fcl__cache_entry_free(entry);
    free(data);
    return false;
  }
  memcpy(entry->binary, p, nbin);
  entry->binary_size = nbin;
  memcpy(entry->log, p + nbin, nlog);
  entry->log[nlog] = '\0';
  memcpy(entry->meta, p + nbin + nlog, nmeta);
  entry->meta[nmeta] = '\0';
  free(data);
  return true;
}

void fcl__cache_store(const char *key, const fcl__cache_entry *entry) {
  char dir[4096], path[4200];
  if (fcl_program_cache_dir(dir, sizeof dir) != FCL_OK || !dir[0]) return;
  if (fcl__make_dirs(dir) != 0) {
    char text[4400];
    snprintf(text, sizeof text, "program cache: cannot create %s: %s (not caching)", dir,
             strerror(errno));
    warn_once(text);
    return;
  }
  entry_path(dir, key, path, sizeof path);
  const char *why;
  if (!fcl__binary_complete(entry->binary, entry->binary_size, &why)) {
    fcl_log(FCL_LOG_INFO, "program cache: not storing %s: %s", path, why);
    return;
  }
  size_t nlog = entry->log ? strlen(entry->log) : 0, nmeta = entry->meta ? strlen(entry->meta) : 0;
  size_t total = HEADER_SIZE + entry->binary_size + nlog + nmeta;
  unsigned char *data = malloc(total);
  if (!data) return;
  memcpy(data, CACHE_MAGIC, 8);
  unsigned char fmt[8];
  put_u64(fmt, CACHE_FORMAT);
  memcpy(data + 8, fmt, 4);
  put_u64(data + 12, entry->binary_size);
  put_u64(data + 20, nlog);
  put_u64(data + 28, nmeta);
  unsigned char *p = data + HEADER_SIZE;
  memcpy(p, entry->binary, entry->binary_size);
  if (nlog) memcpy(p + entry->binary_size, entry->log, nlog);
  if (nmeta) memcpy(p + entry->binary_size + nlog, entry->meta, nmeta);
  payload_digest(data + HEADER_SIZE, total - HEADER_SIZE, data + 36);
  memcpy(data + KEY_AT, key, 64);
  if (fcl__file_write_atomic(path, data, total) != 0) {
    char text[4400];
    snprintf(text, sizeof text, "program cache: cannot write in %s: %s (not caching)", dir,
             strerror(errno));
    warn_once(text);
  }
  free(data);
}

int fcl__cache_lock(const char *key) {
  char dir[4096], path[4200];
  if (fcl_program_cache_dir(dir, sizeof dir) != FCL_OK || !dir[0] || fcl__make_dirs(dir) != 0) {
    fcl_clear_error();
    return -1;
  }
  snprintf(path, sizeof path, "%s/%s.lock", dir, key);
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return -1; /* a read-only cache: no entry will be written either */
  while (flock(fd, LOCK_EX) != 0)
    if (errno != EINTR) {
      close(fd);
      return -1;
    }
  return fd;
}

void fcl__cache_unlock(int fd) {
  if (fd >= 0) close(fd); /* releases the flock */
}

void fcl__cache_entry_free(fcl__cache_entry *entry) {
  free(entry->binary);
  free(entry->log);
  free(entry->meta);
  memset(entry, 0, sizeof *entry);
}
