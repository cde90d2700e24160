/* MPI failures as flowcl errors: FCL_ERR_MPI with MPI's own message and code. */
#include "check.h"
#include "comm_impl.h"

fcl_status fcl__mpi_error(int code, const char *what) {
  char text[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  MPI_Error_string(code, text, &len);
  return fcl__error_set(FCL_ERR_MPI, code, __func__, __FILE__, __LINE__, "%s: %s (%d)", what, text,
                        code);
}
