/* FLOWCL_SAVE_PROGRAMS: every program built from source written to a folder, with the options
 * its caller gave, so that a run's kernels can be read, replayed or compiled by another backend's
 * compiler (tests/cuda compiles them with NVRTC). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"
#include "runtime_impl.h"
#include "sha256.h"

void fcl__program_save(const fcl_program *p, const char *options) {
  const char *dir = getenv("FLOWCL_SAVE_PROGRAMS");
  if (!dir || !*dir || !p->source) return;
  const char *source = fcl_program_source(p);
  options = options ? options : "";
  fcl__sha256 h;
  unsigned char digest[32];
  char hex[65], path[4096];
  fcl__sha256_init(&h);
  fcl__sha256_field(&h, "source", source);
  fcl__sha256_field(&h, "options", options);
  fcl__sha256_final(&h, digest);
  fcl__sha256_hex(digest, hex);
  hex[16] = '\0';
  /* the options file: the options on its first line, the program's origin on its second */
  size_t n = strlen(p->origin) + strlen(options) + 2;
  char *meta = malloc(n + 1);
  bool ok = meta && fcl__make_dirs(dir) == 0;
  if (ok) {
    snprintf(meta, n + 1, "%s\n%s\n", options, p->origin);
    snprintf(path, sizeof path, "%s/%s.cl", dir, hex);
    ok = fcl__file_write_atomic(path, source, strlen(source)) == 0;
    snprintf(path, sizeof path, "%s/%s.options", dir, hex);
    ok = ok && fcl__file_write_atomic(path, meta, strlen(meta)) == 0;
  }
  if (!ok)
    fcl_log(FCL_LOG_WARNING, "FLOWCL_SAVE_PROGRAMS: cannot write %s into '%s'", p->origin, dir);
  free(meta);
}
