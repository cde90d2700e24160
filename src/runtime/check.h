/* Internal error-recording macros used by every layer (not installed).
 *
 * FCL_ERROR records a message with the calling function and file:line and returns the status,
 * so failures read like "fcl_kernel_create (src/runtime/kernel.c:88): no kernel 'foo' in ...". */
#ifndef FLOWCL_SRC_RUNTIME_CHECK_H
#define FLOWCL_SRC_RUNTIME_CHECK_H

#include "flowcl/error.h"

fcl_status fcl__error_set(fcl_status status, int native, const char *func, const char *file,
                          int line, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;
#define FCL_ERROR(status, ...)                                                                     \
  fcl__error_set((status), 0, __func__, __FILE__, __LINE__, __VA_ARGS__)

/* Argument validation with the argument's position and name, as DESIGN.md asks. */
#define FCL_CHECK_ARG(cond, pos, name, what)                                                       \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument %d (%s): %s", (pos), (name), (what));   \
  } while (0)
#define FCL_CHECK_NULL(ptr, pos) FCL_CHECK_ARG((ptr) != NULL, (pos), #ptr, "must not be NULL")

/* Propagate a failing status unchanged (its message is already recorded). */
#define FCL_TRY(expr)                                                                              \
  do {                                                                                             \
    fcl_status fcl_try_status_ = (expr);                                                           \
    if (fcl_try_status_ != FCL_OK) return fcl_try_status_;                                         \
  } while (0)

#ifdef NDEBUG
#define FCL_ASSERT(cond) ((void)0)
#else
#define FCL_ASSERT(cond)                                                                           \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fcl_log(FCL_LOG_ERROR, "flowcl internal assertion failed: %s (%s:%d)", #cond, __FILE__,      \
              __LINE__);                                                                           \
      return FCL_ERROR(FCL_ERR_INTERNAL, "assertion failed: %s", #cond);                           \
    }                                                                                              \
  } while (0)
#endif

#endif
