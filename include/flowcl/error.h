/** @file
 * flowcl error model and logging.
 *
 * Every fallible flowcl function returns an fcl_status: FCL_OK (0) on success, a negative value
 * on failure. The failing call also records a message with context (function, file:line, the
 * objects involved, the build log of a failed build) and, for OpenCL / MPI / HDF5 / VkFFT
 * failures, the native error code; read them with fcl_last_error() and fcl_last_native_error()
 * on the same thread. The library never prints to stdout and never calls exit or abort:
 * diagnostics go through the log handler (default: stderr, warnings and above; FLOWCL_LOG_LEVEL
 * changes it).
 *
 * Errors common to every function, which the headers do not repeat: a NULL where a pointer is
 * required, or a value out of its range, is FCL_ERR_INVALID_ARGUMENT naming the argument (its
 * position and name); a failing OpenCL call is FCL_ERR_OPENCL (FCL_ERR_OUT_OF_MEMORY for
 * CL_MEM_OBJECT_ALLOCATION_FAILURE and CL_OUT_OF_HOST_MEMORY) with its cl_int as the native
 * code; a failed host allocation is FCL_ERR_OUT_OF_MEMORY. The headers name the other errors.
 *
 * Ownership, common to every object: what fcl_x_create (or another constructor) returns in *out
 * belongs to the caller, who frees it with fcl_x_destroy or, for reference-counted objects,
 * fcl_x_release; destroy and release functions accept NULL and set the pointer to NULL. */
#ifndef FLOWCL_ERROR_H
#define FLOWCL_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

/** One table generates the enum, fcl_status_name() and fcl_status_string(): X(name, value,
 * description) per status. */
#define FCL_STATUS_TABLE(X)                                                                        \
  X(FCL_OK, 0, "success")                                                                          \
  X(FCL_ERR_INVALID_ARGUMENT, -1, "invalid argument")                                              \
  X(FCL_ERR_OUT_OF_MEMORY, -2, "out of memory")                                                    \
  X(FCL_ERR_NOT_FOUND, -3, "not found")                                                            \
  X(FCL_ERR_NOT_SUPPORTED, -4, "not supported by this device or build")                            \
  X(FCL_ERR_BUILD_FAILED, -5, "program build failed")                                              \
  X(FCL_ERR_OPENCL, -6, "OpenCL error")                                                            \
  X(FCL_ERR_MPI, -7, "MPI error")                                                                  \
  X(FCL_ERR_HDF5, -8, "HDF5 error")                                                                \
  X(FCL_ERR_IO, -9, "file input/output error")                                                     \
  X(FCL_ERR_CORRUPT, -10, "corrupted or truncated data")                                           \
  X(FCL_ERR_INVALID_STATE, -11, "object not in a state that allows this operation")                \
  X(FCL_ERR_INTERNAL, -12, "internal error (a flowcl bug)")                                        \
  X(FCL_ERR_FFT, -13, "FFT library error (VkFFT or FFTW)")                                         \
  X(FCL_ERR_CUDA, -14, "CUDA error (driver API, NVRTC or NCCL)")

/** What a fallible flowcl call returned: FCL_OK (0), or a negative error code. */
typedef enum {
#define FCL_X_ENUM(name, value, text) name = value,
  FCL_STATUS_TABLE(FCL_X_ENUM)
#undef FCL_X_ENUM
} fcl_status;
/** @var FCL_OK
 * Success. */
/** @var FCL_ERR_INVALID_ARGUMENT
 * An argument is wrong (NULL, out of range, inconsistent with another); the message names it. */
/** @var FCL_ERR_OUT_OF_MEMORY
 * Host or device memory ran out. */
/** @var FCL_ERR_NOT_FOUND
 * A named thing (device, kernel, file, dataset, parameter) does not exist; the message names
 * it, and often lists what there is. */
/** @var FCL_ERR_NOT_SUPPORTED
 * The device or this build cannot do it (a missing OpenCL capability, a layer left out). */
/** @var FCL_ERR_BUILD_FAILED
 * A program did not build (OpenCL's compiler, NVRTC); the message holds the build log. */
/** @var FCL_ERR_OPENCL
 * An OpenCL call failed; fcl_last_native_error() gives its cl_int code. */
/** @var FCL_ERR_MPI
 * An MPI call failed; fcl_last_native_error() gives its code. */
/** @var FCL_ERR_HDF5
 * An HDF5 call failed. */
/** @var FCL_ERR_IO
 * A file could not be read or written. */
/** @var FCL_ERR_CORRUPT
 * Data is corrupted or truncated (a checksum or seal mismatch). */
/** @var FCL_ERR_INVALID_STATE
 * The object is not in a state that allows the operation (a program not built yet, a
 * reduction finished with no start in flight). */
/** @var FCL_ERR_INTERNAL
 * An internal error: a flowcl bug. */
/** @var FCL_ERR_FFT
 * The FFT library (VkFFT or FFTW) failed. */
/** @var FCL_ERR_CUDA
 * A call of CUDA's driver API, NVRTC or NCCL failed (the CUDA backend); the message names the
 * call and CUDA's error. */

/** "FCL_ERR_NOT_FOUND" for FCL_ERR_NOT_FOUND; "FCL_UNKNOWN_STATUS" for values not in the table. */
const char *fcl_status_name(fcl_status status);
/** A short English description of the status ("not found"). */
const char *fcl_status_string(fcl_status status);
/** "CL_INVALID_WORK_GROUP_SIZE" for -54; "CL_UNKNOWN_ERROR" for codes OpenCL does not define. */
const char *fcl_cl_error_name(int code);

/** The message of the last failing flowcl call on this thread ("" if none). Valid until the
 * next flowcl call on this thread. Thread safe (thread-local). */
const char *fcl_last_error(void);
/** The status of the last failing flowcl call on this thread (FCL_OK if none). */
fcl_status fcl_last_status(void);
/** The native code of the last failure (an OpenCL cl_int, an MPI or HDF5 code), 0 if the
 * failure had none. */
int fcl_last_native_error(void);
/** Forget the last error of this thread. */
void fcl_clear_error(void);

/** Severity of a log record, and the minimum level that is logged. */
typedef enum {
  FCL_LOG_DEBUG = 0,   /**< details for developers (every error as it is recorded, build logs) */
  FCL_LOG_INFO = 1,    /**< what flowcl chose or did (tuning, traces, fallbacks) */
  FCL_LOG_WARNING = 2, /**< something went wrong and flowcl carried on; the default level */
  FCL_LOG_ERROR = 3,   /**< a failure nobody returns (OpenCL's context errors, a freed block) */
  FCL_LOG_NONE = 4     /**< as a level: log nothing */
} fcl_log_level;

/** Receives every log record at or above the current level. May be called from any thread
 * (OpenCL error callbacks run on driver threads); it must be thread safe. */
typedef void (*fcl_log_handler)(fcl_log_level level, const char *message, void *user);

/** Route log records to handler (NULL restores the stderr handler). Not thread safe: call it
 * before other threads use flowcl. */
void fcl_log_set_handler(fcl_log_handler handler, void *user);
/** Set the minimum level that is logged. The initial level comes from FLOWCL_LOG_LEVEL
 * (debug|info|warning|error|none), default warning. */
void fcl_log_set_level(fcl_log_level level);
/** The minimum level that is logged now. */
fcl_log_level fcl_log_get_level(void);
/** Emit a log record (printf-style). Thread safe. */
void fcl_log(fcl_log_level level, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#ifdef __cplusplus
}
#endif
#endif /* FLOWCL_ERROR_H */
