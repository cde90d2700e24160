/* The launchers' way to set kernel arguments (not installed): the kind and size of each were
 * checked once, when the launcher was made, so a launch skips the public setters' checks. */
#ifndef FLOWCL_SRC_RUNTIME_KERNEL_FAST_H
#define FLOWCL_SRC_RUNTIME_KERNEL_FAST_H

#include "flowcl/runtime.h"

/* Argument index (a by-value one) of kernel to size bytes at value. */
fcl_status fcl__kernel_set_value(fcl_kernel *kernel, unsigned index, size_t size,
                                 const void *value);
/* Argument index (a buffer pointer) of kernel to mem (NULL: a NULL pointer). */
fcl_status fcl__kernel_set_buffer(fcl_kernel *kernel, unsigned index, const fcl_mem *mem);

#endif
