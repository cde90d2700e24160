/* Checkpoints: a field file (hdf5_write.c, temporary name + rename) with the run's state as
 * root attributes, rotation of old checkpoints, and restart with format and checksum checks. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "io_impl.h"
#include "sha256.h"

/* A checksum of the run's state (time, dt, step and the named parameters, in any order), so a
 * damaged attribute is caught like damaged data. */
static uint64_t state_checksum(const fcl_checkpoint_state *s) {
  uint64_t sum = 0;
  for (size_t i = 0; i <= s->nparams; ++i) {
    fcl__sha256 h;
    unsigned char d[32];
    fcl__sha256_init(&h);
    if (i == s->nparams) { /* the state itself */
      fcl__sha256_update(&h, "state", 6);
      fcl__sha256_update(&h, &s->time, sizeof s->time);
      fcl__sha256_update(&h, &s->dt, sizeof s->dt);
      fcl__sha256_update(&h, &s->step, sizeof s->step);
      uint64_t n = s->nparams;
      fcl__sha256_update(&h, &n, sizeof n);
    } else {
      fcl__sha256_update(&h, s->names[i], strlen(s->names[i]) + 1);
      fcl__sha256_update(&h, &s->values[i], sizeof s->values[i]);
    }
    fcl__sha256_final(&h, d);
    uint64_t v = 0;
    for (int b = 0; b < 8; ++b) v |= (uint64_t)d[b] << (8 * b);
    sum += v; /* a sum: the parameters come back sorted by name */
  }
  return sum;
}

static fcl_status write_state(void *user, hid_t file) {
  const fcl_checkpoint_state *s = user;
  int format = FCL_CHECKPOINT_FORMAT;
  int64_t nparams = (int64_t)s->nparams;
  uint64_t sum = state_checksum(s);
  int rc = fcl__io_attr(file, "checkpoint_format", H5T_NATIVE_INT, 1, &format);
  if (rc == 0) rc = fcl__io_attr(file, "state_checksum", H5T_NATIVE_UINT64, 1, &sum);
  if (rc == 0) rc = fcl__io_attr(file, "dt", H5T_NATIVE_DOUBLE, 1, &s->dt);
  if (rc == 0) rc = fcl__io_attr(file, "nparams", H5T_NATIVE_INT64, 1, &nparams);
  for (size_t i = 0; rc == 0 && i < s->nparams; ++i) {
    char key[64];
    snprintf(key, sizeof key, "param_%s", s->names[i]);
    rc = fcl__io_attr(file, key, H5T_NATIVE_DOUBLE, 1, &s->values[i]);
  }
  return rc == 0 ? FCL_OK : FCL_ERROR(FCL_ERR_HDF5, "checkpoint: writing the state failed");
}

/* Steps of the files <name>_<step><suffix> in directory (sorted, newest last); *n entries. */
static int64_t *list_steps(const char *directory, const char *name, const char *suffix, size_t *n) {
  *n = 0;
  DIR *d = opendir(directory);
  if (!d) return NULL;
  size_t cap = 16;
  int64_t *steps = malloc(cap * sizeof *steps);
  size_t len = strlen(name);
  for (struct dirent *e; steps && (e = readdir(d));) {
    long long step;
    char tail[16];
    if (strncmp(e->d_name, name, len) || e->d_name[len] != '_') continue;
    if (sscanf(e->d_name + len + 1, "%lld%15s", &step, tail) != 2 || strcmp(tail, suffix)) continue;
    if (*n == cap) {
      int64_t *grown = realloc(steps, 2 * cap * sizeof *steps);
      if (!grown) break;
      steps = grown, cap *= 2;
    }
    steps[(*n)++] = step;
  }
  closedir(d);
  for (size_t i = 1; steps && i < *n; ++i) /* insertion sort: few files */
    for (size_t j = i; j > 0 && steps[j - 1] > steps[j]; --j) {
      int64_t x = steps[j];
      steps[j] = steps[j - 1], steps[j - 1] = x;
    }
  return steps;
}

/* Rank 0's list of the checkpoints' steps, on every rank: ranks that listed the directory
 * themselves could see different files (one written in between) and try different ones. */
static fcl_status shared_steps(const fcl_topology *t, const char *directory, const char *name,
                               int64_t **steps, size_t *n) {
  long long count = 0;
  if (t->rank == 0) {
    *steps = list_steps(directory, name, ".chk.h5", n);
    count = *steps || !*n ? (long long)*n : -1;
  }
  FCL_MPI_TRY(MPI_Bcast(&count, 1, MPI_LONG_LONG, 0, t->comm), "restart: the checkpoint list");
  if (count < 0) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "restart: the checkpoint list");
  if (t->rank != 0) {
    *n = (size_t)count;
    *steps = count ? malloc((size_t)count * sizeof **steps) : NULL;
  }
  int ok = !count || *steps, all;
  FCL_MPI_TRY(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, t->comm), "restart: the list");
  if (!all) {
    free(*steps);
    *steps = NULL;
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "restart: %lld checkpoint steps", count);
  }
  if (count)
    FCL_MPI_TRY(MPI_Bcast(*steps, (int)count, MPI_INT64_T, 0, t->comm),
                "restart: the checkpoint list");
  return FCL_OK;
}

static void file_name(char *buf, size_t size, const char *dir, const char *name, int64_t step) {
  snprintf(buf, size, "%s/%s_%09lld.chk.h5", dir, name, (long long)step);
}

/* Remove the temporary files of checkpoints of name whose writer was killed. */
static void remove_stale_temporaries(const char *directory, const char *name) {
  size_t n = 0;
  int64_t *steps = list_steps(directory, name, ".chk.h5.tmp", &n);
  for (size_t i = 0; steps && i < n; ++i) {
    char old[1024];
    file_name(old, sizeof old - 4, directory, name, steps[i]);
    strcat(old, ".tmp");
    unlink(old);
  }
  free(steps);
}

fcl_status fcl_checkpoint_write(const char *directory, const char *name, int keep, size_t nfields,
                                fcl_field *const *fields, const fcl_checkpoint_state *state,
                                char *path, size_t size) {
  FCL_CHECK_NULL(directory, 1);
  FCL_CHECK_NULL(name, 2);
  FCL_CHECK_ARG(nfields >= 1, 4, "nfields", "must be >= 1");
  FCL_CHECK_NULL(fields, 5);
  FCL_CHECK_NULL(state, 6);
  FCL_CHECK_ARG(state->nparams <= FCL_CHECKPOINT_MAX_PARAMS, 6, "state",
                "has more than FCL_CHECKPOINT_MAX_PARAMS parameters");
  for (size_t i = 0; i < nfields; ++i)
    for (size_t j = 0; j < i; ++j)
      if (!strcmp(fields[i]->name, fields[j]->name))
        return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "checkpoint '%s': two fields are named '%s'",
                         name, fields[i]->name);
  char file[1024];
  file_name(file, sizeof file, directory, name, state->step);
  FCL_TRY(fcl__io_write_file(file, nfields, fields, state->time, state->step, write_state,
                             (void *)state, true));
  if (path) snprintf(path, size, "%s", file);
  if (fields[0]->topo->rank == 0) remove_stale_temporaries(directory, name);
  if (keep > 0 && fields[0]->topo->rank == 0) {
    size_t n = 0;
    int64_t *steps = list_steps(directory, name, ".chk.h5", &n);
    for (size_t i = 0; steps && i + (size_t)keep < n; ++i) {
      char old[1024];
      file_name(old, sizeof old, directory, name, steps[i]);
      unlink(old);
    }
    free(steps);
  }
  MPI_Barrier(fields[0]->topo->comm);
  return FCL_OK;
}

fcl_status fcl_checkpoint_latest(const char *directory, const char *name, char *path, size_t size) {
  FCL_CHECK_NULL(directory, 1);
  FCL_CHECK_NULL(name, 2);
  FCL_CHECK_NULL(path, 3);
  size_t n = 0;
  int64_t *steps = list_steps(directory, name, ".chk.h5", &n);
  fcl_status st = FCL_OK;
  if (!n)
    st = FCL_ERROR(FCL_ERR_NOT_FOUND, "no checkpoint '%s_*.chk.h5' in '%s'", name, directory);
  else
    file_name(path, size, directory, name, steps[n - 1]);
  free(steps);
  return st;
}

fcl_status fcl_checkpoint_read(const char *path, size_t nfields, fcl_field *const *fields,
                               fcl_checkpoint_state *state) {
  FCL_CHECK_NULL(path, 1);
  FCL_CHECK_NULL(fields, 3);
  FCL_CHECK_NULL(state, 4);
  FCL_CHECK_ARG(nfields >= 1, 2, "nfields", "must be >= 1");
  /* the seal first, before HDF5 parses the file; then the fields: their reads check the
   * datasets and their checksums */
  FCL_TRY(fcl__io_verify_seal(path, fields[0]->topo->comm));
  for (size_t i = 0; i < nfields; ++i)
    for (int c = 0; c < fields[i]->ncomp; ++c) {
      char ds[256];
      fcl__io_dataset_name(fields[i], c, ds, sizeof ds);
      FCL_TRY(fcl_io_read(path, ds, fields[i], c));
    }
  H5E_auto2_t old_fn;
  void *old_data;
  H5Eget_auto2(H5E_DEFAULT, &old_fn, &old_data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_mpio(fapl, fields[0]->topo->comm, MPI_INFO_NULL);
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
  H5Pclose(fapl);
  fcl_checkpoint_state s = {0};
  int format = 0;
  int64_t nparams = 0;
  fcl_status st = FCL_OK;
  if (file < 0)
    st = FCL_ERROR(FCL_ERR_IO, "restart '%s': cannot open", path);
  else if (fcl__io_attr_read(file, "checkpoint_format", H5T_NATIVE_INT, 1, &format) != 0)
    st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                   "restart '%s': not a flowcl checkpoint (no "
                   "checkpoint_format attribute)",
                   path);
  else if (format != FCL_CHECKPOINT_FORMAT)
    st = FCL_ERROR(FCL_ERR_NOT_SUPPORTED,
                   "restart '%s': checkpoint format %d, this flowcl "
                   "reads format %d",
                   path, format, FCL_CHECKPOINT_FORMAT);
  else if (fcl__io_attr_read(file, "time", H5T_NATIVE_DOUBLE, 1, &s.time) != 0 ||
           fcl__io_attr_read(file, "dt", H5T_NATIVE_DOUBLE, 1, &s.dt) != 0 ||
           fcl__io_attr_read(file, "step", H5T_NATIVE_INT64, 1, &s.step) != 0 ||
           fcl__io_attr_read(file, "nparams", H5T_NATIVE_INT64, 1, &nparams) != 0 || nparams < 0 ||
           nparams > FCL_CHECKPOINT_MAX_PARAMS)
    st = FCL_ERROR(FCL_ERR_CORRUPT, "restart '%s': the state attributes are missing or damaged",
                   path);
  /* parameter names come from the attribute names */
  for (hsize_t i = 0; st == FCL_OK && (int64_t)s.nparams < nparams; ++i) {
    char key[64];
    if (H5Aget_name_by_idx(file, ".", H5_INDEX_NAME, H5_ITER_INC, i, key, sizeof key, H5P_DEFAULT) <
        0) {
      st = FCL_ERROR(FCL_ERR_CORRUPT, "restart '%s': %lld parameters announced, fewer found", path,
                     (long long)nparams);
      break;
    }
    if (strncmp(key, "param_", 6)) continue;
    size_t kl = strlen(key + 6) < sizeof s.names[0] ? strlen(key + 6) : sizeof s.names[0] - 1;
    memcpy(s.names[s.nparams], key + 6, kl);
    s.names[s.nparams][kl] = '\0';
    if (fcl__io_attr_read(file, key, H5T_NATIVE_DOUBLE, 1, &s.values[s.nparams]) != 0)
      st = FCL_ERROR(FCL_ERR_CORRUPT, "restart '%s': parameter '%s' unreadable", path, key + 6);
    s.nparams++;
  }
  uint64_t stored = 0; /* checkpoints of older flowcl versions carry none */
  if (st == FCL_OK &&
      fcl__io_attr_read(file, "state_checksum", H5T_NATIVE_UINT64, 1, &stored) == 0 &&
      stored != state_checksum(&s))
    st = FCL_ERROR(FCL_ERR_CORRUPT,
                   "restart '%s': the state (time %g, dt %g, step %lld, %zu "
                   "parameter(s)) does not match its checksum",
                   path, s.time, s.dt, (long long)s.step, s.nparams);
  if (st == FCL_OK && (!isfinite(s.time) || !isfinite(s.dt) || s.dt < 0 || s.step < 0))
    st = FCL_ERROR(FCL_ERR_CORRUPT, "restart '%s': impossible state (time %g, dt %g, step %lld)",
                   path, s.time, s.dt, (long long)s.step);
  if (file >= 0) H5Fclose(file);
  H5Eset_auto2(H5E_DEFAULT, old_fn, old_data);
  if (st == FCL_OK) *state = s;
  return st;
}

fcl_status fcl_checkpoint_read_latest(const char *directory, const char *name, size_t nfields,
                                      fcl_field *const *fields, fcl_checkpoint_state *state,
                                      char *path, size_t size) {
  FCL_CHECK_NULL(directory, 1);
  FCL_CHECK_NULL(name, 2);
  FCL_CHECK_NULL(fields, 4);
  FCL_CHECK_NULL(state, 5);
  size_t n = 0;
  int64_t *steps = NULL;
  fcl_status st = shared_steps(fields[0]->topo, directory, name, &steps, &n);
  if (st != FCL_OK) {
    free(steps);
    return st;
  }
  if (n == 0) {
    free(steps);
    return FCL_ERROR(FCL_ERR_NOT_FOUND, "no checkpoint '%s_*.chk.h5' in '%s'", name, directory);
  }
  for (size_t i = n; i-- > 0;) { /* newest first */
    char file[1024];
    file_name(file, sizeof file, directory, name, steps[i]);
    st = fcl_checkpoint_read(file, nfields, fields, state);
    if (st == FCL_OK) {
      if (path) snprintf(path, size, "%s", file);
      break;
    }
    if (st == FCL_ERR_OUT_OF_MEMORY) break;
    if (i > 0 && fields[0]->topo->rank == 0)
      fcl_log(FCL_LOG_WARNING, "restart: skipping %s (%s): trying the one before", file,
              fcl_last_error());
  }
  free(steps);
  return st;
}
