/* See files.h. */
#include "files.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int fcl__make_dirs(const char *path) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s", path);
  for (char *p = tmp + 1; *p; ++p) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(tmp, 0755) != 0 && errno != EEXIST) return -1;
    *p = '/';
  }
  if (mkdir(tmp, 0755) != 0 && errno != EEXIST) return -1;
  return 0;
}

bool fcl__dir_trusted(const char *dir, char *why, size_t size) {
  struct stat st;
  if (stat(dir, &st) != 0) return true;
  if (st.st_uid != geteuid()) {
    snprintf(why, size, "owned by uid %u, not by this user (uid %u)", (unsigned)st.st_uid,
             (unsigned)geteuid());
    return false;
  }
  if (st.st_mode & S_IWOTH) {
    snprintf(why, size, "writable by other users (mode %03o)", (unsigned)(st.st_mode & 0777));
    return false;
  }
  return true;
}

char *fcl__file_read(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *data = NULL;
  if (fseek(f, 0, SEEK_END) == 0) {
    long n = ftell(f);
    if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (data = malloc((size_t)n + 1)) != NULL) {
      *size = fread(data, 1, (size_t)n, f);
      data[*size] = '\0';
    }
  }
  fclose(f);
  return data;
}

int fcl__file_write_atomic(const char *path, const void *data, size_t size) {
  static atomic_uint counter;
  char tmp[4400];
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&counter, 1));
  FILE *f = fopen(tmp, "wb");
  int ok = f && fwrite(data, 1, size, f) == size;
  if (f && fclose(f) != 0) ok = 0;
  if (ok && rename(tmp, path) == 0) return 0;
  int saved = errno;
  remove(tmp);
  errno = saved;
  return -1;
}
