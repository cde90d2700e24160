/** @file
 * flowcl field I/O: HDF5 files written collectively through MPI-IO (parallel HDF5), an XDMF
 * sidecar per output series so that ParaView / VisIt open the time series directly, and reading
 * a dataset back into a field of any decomposition.
 *
 * Layout of a file: one dataset per field component at the root, named after the field
 * ("u" for a scalar, "u_x", "u_y", "u_z" for a vector), of the global interior (no ghosts) in C
 * order with x fastest: shape (nz, ny, nx) in 3D, (ny, nx) in 2D, (nx) in 1D; float or double
 * as the field. Attributes: on the root "time", "step", "flowcl_version"; on each dataset
 * "origin", "spacing", "resolution" (x first) and "precision" ("float" or "double").
 *
 * Files are written to "<path>.tmp" and renamed when complete: a failed or interrupted write
 * never leaves a partial file under the final name. Functions that take fields are Collective
 * over the communicator of the fields' topology. */
#ifndef FLOWCL_IO_H
#define FLOWCL_IO_H

#include "flowcl/field.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The longest path of a file opened through MPI-IO, temporary name included: Open MPI 4.1's
 * shared file pointer component overflows a buffer (the process aborts) on longer ones, seen
 * from 245 characters. Longer paths are refused (FCL_ERR_INVALID_ARGUMENT) before anything is
 * written; a code can check its output paths with it before computing. */
#define FCL_IO_MAX_PATH 224

/** Write every component of fields[nfields] (one topology) to path. */
fcl_status fcl_io_write(const char *path, size_t nfields, fcl_field *const *fields, double time,
                        int64_t step);

/** Read dataset (e.g. "u_x") of path into component comp of field. The dataset must hold the
 * field's global resolution in the field's precision; a missing file, a file that is not HDF5
 * (or is truncated), a missing dataset, another shape or precision is FCL_ERR_IO /
 * FCL_ERR_INVALID_ARGUMENT naming the file and what was expected. Files from h5py work. The
 * file's structure is parsed by HDF5, which may crash on a damaged file (HDF5 1.10 does on some
 * fuzzed ones): read a file of unknown integrity as a checkpoint, whose seal is checked first. */
fcl_status fcl_io_read(const char *path, const char *dataset, fcl_field *field, int comp);

/** An output series: `directory/<name>_<step>.h5` per output and `directory/<name>.xdmf`
 * listing every output so far as a temporal collection (rewritten atomically after each output;
 * 2D and 3D domains). The directory is created if missing. */
typedef struct fcl_io_series fcl_io_series;
/** A series of outputs called name in directory (created if missing: FCL_ERR_IO when it cannot
 * be); nothing is written yet. Destroy *out with fcl_io_series_destroy. */
fcl_status fcl_io_series_create(const char *directory, const char *name, fcl_io_series **out);
/** Write fields[nfields] at (time, step) as the series' next output (fcl_io_write) and rewrite
 * the XDMF sidecar; a 1D domain is FCL_ERR_NOT_SUPPORTED (write it with fcl_io_write).
 * Collective. */
fcl_status fcl_io_series_write(fcl_io_series *series, size_t nfields, fcl_field *const *fields,
                               double time, int64_t step);
/** Path of the XDMF sidecar (owned by the series). */
const char *fcl_io_series_xdmf(const fcl_io_series *series);
/** Destroy the series (its files stay); accepts NULL; sets *series = NULL. */
void fcl_io_series_destroy(fcl_io_series **series);

/* ---------------- checkpoint and restart ---------------- */

/** Most named numbers a checkpoint state carries (fcl_checkpoint_state.names). */
#define FCL_CHECKPOINT_MAX_PARAMS 16
/** The checkpoint format version this build writes and reads (2: sealed files). */
#define FCL_CHECKPOINT_FORMAT 2

/** What a run needs to continue besides its fields. */
typedef struct {
  /** The time reached and the last time step. @{ */
  double time, dt;
  /** @} */
  int64_t step;                              /**< steps taken */
  size_t nparams;                            /**< named numbers (Reynolds number, CFL...) */
  char names[FCL_CHECKPOINT_MAX_PARAMS][32]; /**< their names (NUL-terminated, 31 characters) */
  double values[FCL_CHECKPOINT_MAX_PARAMS];  /**< their values, values[i] named names[i] */
} fcl_checkpoint_state;

/** Write `directory/<name>_<step>.chk.h5` holding every field component (global data, so any rank
 * count can restart from it), the state, the format version and a checksum per dataset. Its
 * first 512 bytes (an HDF5 user block, which h5py and ParaView skip) hold a seal: a digest of
 * every byte after them, so a damaged file is refused before HDF5 parses it. It is written
 * under a temporary name, synced and renamed when complete, so a crash during writing leaves
 * the previous checkpoints intact; then all but the newest keep checkpoints of this name are
 * removed (keep <= 0: none), with any temporary file of this name that a killed writer left.
 * path (may be NULL, size bytes) receives the file written. */
fcl_status fcl_checkpoint_write(const char *directory, const char *name, int keep, size_t nfields,
                                fcl_field *const *fields, const fcl_checkpoint_state *state,
                                char *path, size_t size);
/** The newest complete checkpoint of name in directory (by step), or FCL_ERR_NOT_FOUND. */
fcl_status fcl_checkpoint_latest(const char *directory, const char *name, char *path, size_t size);
/** Restore fields (matched by name, any decomposition) and the state from a checkpoint. A file
 * that does not match its seal (or has none: written before format 2), a wrong format
 * version, a missing field, a checksum mismatch (FCL_ERR_CORRUPT) are errors naming the file.
 * The parameters come back sorted by name. */
fcl_status fcl_checkpoint_read(const char *path, size_t nfields, fcl_field *const *fields,
                               fcl_checkpoint_state *state);
/** Restore from the newest checkpoint of name in directory that reads back whole: a damaged or
 * unreadable newer one is skipped with a warning naming it and why, and the next older one is
 * tried. path (may be NULL, size bytes) receives the file used. FCL_ERR_NOT_FOUND when there is
 * none; when every one fails, the error of the oldest. Collective. */
fcl_status fcl_checkpoint_read_latest(const char *directory, const char *name, size_t nfields,
                                      fcl_field *const *fields, fcl_checkpoint_state *state,
                                      char *path, size_t size);

#ifdef __cplusplus
}
#endif
#endif /* FLOWCL_IO_H */
