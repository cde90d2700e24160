/* OpenCL failures recorded as flowcl errors (FCL_CL_ERROR, FCL_CL_TRY). */
#include <stdarg.h>
#include <stdio.h>

#include "../check.h"
#include "opencl_backend.h"

fcl_status fcl__error_cl(int code, const char *func, const char *file, int line, const char *format,
                         ...) {
  char what[1024];
  va_list ap;
  va_start(ap, format);
  vsnprintf(what, sizeof what, format, ap);
  va_end(ap);
  fcl_status status = (code == -4 || code == -6) ? FCL_ERR_OUT_OF_MEMORY : FCL_ERR_OPENCL;
  return fcl__error_set(status, code, func, file, line, "%s: %s (%d)", what,
                        fcl_cl_error_name(code), code);
}
