/* Small file helpers shared by the on-disk caches (not installed). */
#ifndef FLOWCL_SRC_RUNTIME_FILES_H
#define FLOWCL_SRC_RUNTIME_FILES_H

#include <stddef.h>

/* mkdir -p; an existing directory is fine. 0 on success, -1 with errno. */
int fcl__make_dirs(const char *path);
/* The whole file, NUL-terminated (malloc'd), or NULL. */
char *fcl__file_read(const char *path, size_t *size);
/* Write under a unique temporary name, then rename onto path: readers and concurrent writers
 * (many MPI ranks) never see a partial file. 0 on success, -1 with errno (nothing left). */
int fcl__file_write_atomic(const char *path, const void *data, size_t size);

#endif
