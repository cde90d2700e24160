/* Internal helpers of the io layer (src/io). */
#ifndef FLOWCL_IO_IMPL_H
#define FLOWCL_IO_IMPL_H

#include <hdf5.h>

#include "field_impl.h"
#include "flowcl/io.h"

/* Dataset name of component c of a field ("u", or "u_x"...); buf of at least 256 bytes. */
void fcl__io_dataset_name(const fcl_field *f, int c, char *buf, size_t size);
/* The global shape in HDF5 order (slowest first): rank = dim. */
int fcl__io_global_dims(const fcl_topology *t, hsize_t *dims);

#endif
