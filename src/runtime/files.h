/* Small file helpers shared by the on-disk caches (not installed). */
#ifndef FLOWCL_SRC_RUNTIME_FILES_H
#define FLOWCL_SRC_RUNTIME_FILES_H

#include <stdbool.h>
#include <stddef.h>

/* mkdir -p; an existing directory is fine. 0 on success, -1 with errno. */
int fcl__make_dirs(const char *path);
/* Whether code may be loaded from dir: false (with the reason in why) when it exists and belongs
 * to another user or others may write to it, as a cache that hands out executable code must not
 * trust such a directory. A missing directory is trusted (flowcl creates it, 0755). */
bool fcl__dir_trusted(const char *dir, char *why, size_t size);
/* The whole file, NUL-terminated (malloc'd), or NULL. */
char *fcl__file_read(const char *path, size_t *size);
/* Write under a unique temporary name, then rename onto path: readers and concurrent writers
 * (many MPI ranks) never see a partial file. 0 on success, -1 with errno (nothing left). */
int fcl__file_write_atomic(const char *path, const void *data, size_t size);

#endif
