/* Status table, OpenCL error names and the thread-local last error. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

#define FCL_ERROR_MESSAGE_MAX 16384

typedef struct {
  fcl_status status;
  int native;
  char message[FCL_ERROR_MESSAGE_MAX];
} fcl_error_record;

static _Thread_local fcl_error_record last_error;

const char *fcl_status_name(fcl_status status) {
  switch (status) {
#define FCL_X_NAME(name, value, text)                                                              \
  case name: return #name;
    FCL_STATUS_TABLE(FCL_X_NAME)
#undef FCL_X_NAME
  }
  return "FCL_UNKNOWN_STATUS";
}

const char *fcl_status_string(fcl_status status) {
  switch (status) {
#define FCL_X_TEXT(name, value, text)                                                              \
  case name: return text;
    FCL_STATUS_TABLE(FCL_X_TEXT)
#undef FCL_X_TEXT
  }
  return "unknown status";
}

/* Every error code of the OpenCL 3.0 core headers, plus common extension codes. */
/* clang-format off */
#define FCL_CL_ERROR_TABLE(X)                                                                  \
  X(CL_SUCCESS, 0) X(CL_DEVICE_NOT_FOUND, -1) X(CL_DEVICE_NOT_AVAILABLE, -2)                   \
  X(CL_COMPILER_NOT_AVAILABLE, -3) X(CL_MEM_OBJECT_ALLOCATION_FAILURE, -4)                     \
  X(CL_OUT_OF_RESOURCES, -5) X(CL_OUT_OF_HOST_MEMORY, -6)                                      \
  X(CL_PROFILING_INFO_NOT_AVAILABLE, -7) X(CL_MEM_COPY_OVERLAP, -8)                            \
  X(CL_IMAGE_FORMAT_MISMATCH, -9) X(CL_IMAGE_FORMAT_NOT_SUPPORTED, -10)                        \
  X(CL_BUILD_PROGRAM_FAILURE, -11) X(CL_MAP_FAILURE, -12)                                      \
  X(CL_MISALIGNED_SUB_BUFFER_OFFSET, -13) X(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, -14) \
  X(CL_COMPILE_PROGRAM_FAILURE, -15) X(CL_LINKER_NOT_AVAILABLE, -16)                           \
  X(CL_LINK_PROGRAM_FAILURE, -17) X(CL_DEVICE_PARTITION_FAILED, -18)                           \
  X(CL_KERNEL_ARG_INFO_NOT_AVAILABLE, -19) X(CL_INVALID_VALUE, -30)                            \
  X(CL_INVALID_DEVICE_TYPE, -31) X(CL_INVALID_PLATFORM, -32) X(CL_INVALID_DEVICE, -33)         \
  X(CL_INVALID_CONTEXT, -34) X(CL_INVALID_QUEUE_PROPERTIES, -35)                               \
  X(CL_INVALID_COMMAND_QUEUE, -36) X(CL_INVALID_HOST_PTR, -37) X(CL_INVALID_MEM_OBJECT, -38)   \
  X(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR, -39) X(CL_INVALID_IMAGE_SIZE, -40)                     \
  X(CL_INVALID_SAMPLER, -41) X(CL_INVALID_BINARY, -42) X(CL_INVALID_BUILD_OPTIONS, -43)        \
  X(CL_INVALID_PROGRAM, -44) X(CL_INVALID_PROGRAM_EXECUTABLE, -45)                             \
  X(CL_INVALID_KERNEL_NAME, -46) X(CL_INVALID_KERNEL_DEFINITION, -47) X(CL_INVALID_KERNEL, -48) \
  X(CL_INVALID_ARG_INDEX, -49) X(CL_INVALID_ARG_VALUE, -50) X(CL_INVALID_ARG_SIZE, -51)        \
  X(CL_INVALID_KERNEL_ARGS, -52) X(CL_INVALID_WORK_DIMENSION, -53)                             \
  X(CL_INVALID_WORK_GROUP_SIZE, -54) X(CL_INVALID_WORK_ITEM_SIZE, -55)                         \
  X(CL_INVALID_GLOBAL_OFFSET, -56) X(CL_INVALID_EVENT_WAIT_LIST, -57) X(CL_INVALID_EVENT, -58) \
  X(CL_INVALID_OPERATION, -59) X(CL_INVALID_GL_OBJECT, -60) X(CL_INVALID_BUFFER_SIZE, -61)     \
  X(CL_INVALID_MIP_LEVEL, -62) X(CL_INVALID_GLOBAL_WORK_SIZE, -63) X(CL_INVALID_PROPERTY, -64) \
  X(CL_INVALID_IMAGE_DESCRIPTOR, -65) X(CL_INVALID_COMPILER_OPTIONS, -66)                      \
  X(CL_INVALID_LINKER_OPTIONS, -67) X(CL_INVALID_DEVICE_PARTITION_COUNT, -68)                  \
  X(CL_INVALID_PIPE_SIZE, -69) X(CL_INVALID_DEVICE_QUEUE, -70) X(CL_INVALID_SPEC_ID, -71)      \
  X(CL_MAX_SIZE_RESTRICTION_EXCEEDED, -72) X(CL_PLATFORM_NOT_FOUND_KHR, -1001)                 \
  X(CL_DEVICE_PARTITION_FAILED_EXT, -1057) X(CL_INVALID_PARTITION_COUNT_EXT, -1058)            \
  X(CL_INVALID_PARTITION_NAME_EXT, -1059) X(CL_CONTEXT_TERMINATED_KHR, -1121)                  \
  X(CL_INVALID_COMMAND_BUFFER_KHR, -1138) X(CL_INVALID_SYNC_POINT_WAIT_LIST_KHR, -1139)        \
  X(CL_INCOMPATIBLE_COMMAND_QUEUE_KHR, -1140)
/* clang-format on */

const char *fcl_cl_error_name(int code) {
  switch (code) {
#define FCL_X_CL(name, value)                                                                      \
  case value: return #name;
    FCL_CL_ERROR_TABLE(FCL_X_CL)
#undef FCL_X_CL
  }
  return "CL_UNKNOWN_ERROR";
}

const char *fcl_last_error(void) { return last_error.message; }
fcl_status fcl_last_status(void) { return last_error.status; }
int fcl_last_native_error(void) { return last_error.native; }

void fcl_clear_error(void) {
  last_error.status = FCL_OK;
  last_error.native = 0;
  last_error.message[0] = '\0';
}

static const char *short_path(const char *file) {
  /* Keep paths relative to the source tree ("src/runtime/kernel.c"). */
  const char *p = strstr(file, "src/");
  if (!p) p = strstr(file, "operators/");
  return p ? p : file;
}

static fcl_status record(fcl_status status, int native, const char *func, const char *file,
                         int line, const char *format, va_list ap) {
  /* The message may be built from the previous message (e.g. to add context), so format into
   * a scratch buffer first. */
  static _Thread_local char scratch[FCL_ERROR_MESSAGE_MAX];
  int n = snprintf(scratch, sizeof scratch, "%s (%s:%d): ", func, short_path(file), line);
  if (n < 0) n = 0;
  if ((size_t)n < sizeof scratch) vsnprintf(scratch + n, sizeof scratch - (size_t)n, format, ap);
  memcpy(last_error.message, scratch, sizeof scratch);
  last_error.status = status;
  last_error.native = native;
  fcl_log(FCL_LOG_DEBUG, "%s: %s", fcl_status_name(status), last_error.message);
  return status;
}

fcl_status fcl__error_set(fcl_status status, int native, const char *func, const char *file,
                          int line, const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  record(status, native, func, file, line, format, ap);
  va_end(ap);
  return status;
}
