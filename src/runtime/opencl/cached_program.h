/* Programs that another library creates and builds itself through OpenCL's own calls (VkFFT),
 * cached like flowcl's: the two functions stand in for clCreateProgramWithSource and
 * clBuildProgram, with their arguments and return conventions. The cache entry is keyed by the
 * source, a tag naming the library (its programs kept apart from flowcl's of the same text),
 * the device and driver and flowcl's version (fcl__cache_key); entries are checksummed and
 * written atomically by the cache (program_cache.c). Internal to flowcl's layers. */
#ifndef FLOWCL_CACHED_PROGRAM_H
#define FLOWCL_CACHED_PROGRAM_H

#include "flowcl/opencl.h"

/* The program of the count strings (lengths as clCreateProgramWithSource takes them) for the
 * context's device, built without options: from the cached binary when there is one, else
 * compiled and its binary stored. The key's lock is held from the lookup to the store, so that
 * processes compiling one program wait for the first and load its entry. Uncached (a context of
 * several devices, FLOWCL_NO_CACHE): created only, as clCreateProgramWithSource does. A failed
 * compile returns the program unbuilt: fcl__cached_program_build then reports it. */
cl_program fcl__cached_program_create(cl_context context, cl_uint count, const char **strings,
                                      const size_t *lengths, const char *tag, cl_int *err);
/* clBuildProgram for a program of fcl__cached_program_create: nothing to do (notify called) when
 * it is built already for the devices (every device of the program when num_devices is 0). */
cl_int fcl__cached_program_build(cl_program program, cl_uint num_devices,
                                 const cl_device_id *devices, const char *options,
                                 void(CL_CALLBACK *notify)(cl_program, void *), void *user);

#endif
