/* The scalar types: sizes and OpenCL C names of fcl_dtype. */
#include "flowcl/runtime.h"

size_t fcl_dtype_size(fcl_dtype dtype) {
  static const size_t sizes[] = {1, 1, 2, 2, 4, 4, 8, 8, 4, 8, 8, 16};
  return (unsigned)dtype < sizeof sizes / sizeof *sizes ? sizes[dtype] : 0;
}

const char *fcl_dtype_cl_name(fcl_dtype dtype) {
  static const char *names[] = {"char", "uchar", "short", "ushort", "int",    "uint",
                                "long", "ulong", "float", "double", "float2", "double2"};
  return (unsigned)dtype < sizeof names / sizeof *names ? names[dtype] : "invalid";
}
