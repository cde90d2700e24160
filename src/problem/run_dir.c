/* A run's output directory: created with its parents, owned by one run (an earlier run's
 * diagnostics or checkpoints refused, or removed on request), and its diagnostics cut back to
 * the step a restart resumes from. Rank 0 touches the file system; every rank gets its verdict. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "problem_impl.h"

/* mkdir -p. 0, or -1 with errno. */
static int make_dirs(const char *path) {
  char tmp[4096];
  if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp) return errno = ENAMETOOLONG, -1;
  for (char *p = tmp + 1; *p; ++p)
    if (*p == '/') {
      *p = '\0';
      if (mkdir(tmp, 0777) != 0 && errno != EEXIST) return -1;
      *p = '/';
    }
  return mkdir(tmp, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

static bool is_checkpoint(const char *file, const char *name) {
  size_t n = strlen(file), m = strlen(name);
  return n > m + 8 && !strncmp(file, name, m) && file[m] == '_' && !strcmp(file + n - 7, ".chk.h5");
}

/* Rank 0's part of fcl_run_dir_prepare. */
static fcl_status prepare(const char *directory, const char *checkpoint_name,
                          const char *diagnostics, bool fresh, bool overwrite, int *removed) {
  if (make_dirs(directory) != 0)
    return FCL_ERROR(FCL_ERR_IO, "cannot create the output directory '%s': %s", directory,
                     strerror(errno));
  if (!fresh) return FCL_OK;
  DIR *d = opendir(directory);
  if (!d)
    return FCL_ERROR(FCL_ERR_IO, "cannot read the output directory '%s': %s", directory,
                     strerror(errno));
  int checkpoints = 0;
  bool csv = false;
  fcl_status st = FCL_OK;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    bool chk = checkpoint_name && is_checkpoint(e->d_name, checkpoint_name);
    csv = csv || (diagnostics && !strcmp(e->d_name, diagnostics));
    checkpoints += chk;
    if (chk && overwrite) {
      char path[4096];
      snprintf(path, sizeof path, "%s/%s", directory, e->d_name);
      if (remove(path) == 0)
        ++*removed;
      else if (st == FCL_OK)
        st = FCL_ERROR(FCL_ERR_IO, "cannot remove %s (an earlier run's checkpoint): %s", path,
                       strerror(errno));
    }
  }
  closedir(d);
  if ((csv || checkpoints) && !overwrite)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "the output directory '%s' holds an earlier run (%s%s%d checkpoint(s))",
                     directory, csv ? diagnostics : "", csv ? ", " : "", checkpoints);
  return st;
}

/* Rank 0's status, and its message, on every rank. */
static fcl_status agree(MPI_Comm comm, fcl_status st, const char *what) {
  int code = (int)st, rank = 0;
  char message[1024] = "";
  MPI_Comm_rank(comm, &rank);
  if (rank == 0 && st != FCL_OK) snprintf(message, sizeof message, "%s", fcl_last_error());
  if (MPI_Bcast(&code, 1, MPI_INT, 0, comm) != MPI_SUCCESS ||
      (code != FCL_OK && MPI_Bcast(message, sizeof message, MPI_CHAR, 0, comm) != MPI_SUCCESS))
    return FCL_ERROR(FCL_ERR_MPI, "%s: MPI_Bcast failed", what);
  if (rank == 0 || code == FCL_OK) return (fcl_status)code;
  return FCL_ERROR((fcl_status)code, "%s", message);
}

fcl_status fcl_run_dir_prepare(MPI_Comm comm, const char *directory, const char *checkpoint_name,
                               const char *diagnostics, bool fresh, bool overwrite, int *removed) {
  FCL_CHECK_ARG(comm != MPI_COMM_NULL, 1, "comm", "must not be MPI_COMM_NULL");
  FCL_CHECK_NULL(directory, 2);
  int rank = 0, none = 0;
  MPI_Comm_rank(comm, &rank);
  if (!removed) removed = &none;
  *removed = 0;
  fcl_status st = FCL_OK;
  if (rank == 0) st = prepare(directory, checkpoint_name, diagnostics, fresh, overwrite, removed);
  if (MPI_Bcast(removed, 1, MPI_INT, 0, comm) != MPI_SUCCESS)
    return FCL_ERROR(FCL_ERR_MPI, "output directory: MPI_Bcast failed");
  return agree(comm, st, "preparing the output directory");
}

/* Rank 0's part of fcl_run_dir_keep_rows. */
static fcl_status keep_rows(const char *path, int64_t step, int *dropped) {
  FILE *in = fopen(path, "r");
  if (!in) return FCL_OK; /* no rows yet */
  char tmp[4200], line[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *out = fopen(tmp, "w");
  bool ok = out != NULL;
  while (ok && fgets(line, sizeof line, in)) {
    char *end;
    long long row = strtoll(line, &end, 10);
    if (end != line && *end == ',' && row > step)
      ++*dropped;
    else
      ok = fputs(line, out) >= 0;
  }
  fclose(in);
  if (out && fclose(out) != 0) ok = false;
  if (ok && rename(tmp, path) != 0) ok = false;
  if (ok) return FCL_OK;
  fcl_status st = FCL_ERROR(FCL_ERR_IO, "cannot rewrite %s: %s", path, strerror(errno));
  remove(tmp);
  return st;
}

fcl_status fcl_run_dir_keep_rows(MPI_Comm comm, const char *path, int64_t step, int *dropped) {
  FCL_CHECK_ARG(comm != MPI_COMM_NULL, 1, "comm", "must not be MPI_COMM_NULL");
  FCL_CHECK_NULL(path, 2);
  int rank = 0, none = 0;
  MPI_Comm_rank(comm, &rank);
  if (!dropped) dropped = &none;
  *dropped = 0;
  fcl_status st = rank == 0 ? keep_rows(path, step, dropped) : FCL_OK;
  if (MPI_Bcast(dropped, 1, MPI_INT, 0, comm) != MPI_SUCCESS)
    return FCL_ERROR(FCL_ERR_MPI, "diagnostics rows: MPI_Bcast failed");
  return agree(comm, st, "cutting the diagnostics back");
}
