/* Memory objects of any kind: what they are, and destructor callbacks. */
#include <stdlib.h>

#include "../check.h"
#include "flowcl/image.h"
#include "../runtime_impl.h"
#include "opencl_backend.h"

fcl_status fcl_mem_get_info(cl_mem mem, fcl_mem_info *out) {
  FCL_CHECK_NULL(mem, 1);
  FCL_CHECK_NULL(out, 2);
  *out = (fcl_mem_info){0};
  FCL_CL_TRY(clGetMemObjectInfo(mem, CL_MEM_TYPE, sizeof out->type, &out->type, NULL),
             "clGetMemObjectInfo(CL_MEM_TYPE)");
  FCL_CL_TRY(clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof out->size, &out->size, NULL),
             "clGetMemObjectInfo(CL_MEM_SIZE)");
  FCL_CL_TRY(clGetMemObjectInfo(mem, CL_MEM_FLAGS, sizeof out->flags, &out->flags, NULL),
             "clGetMemObjectInfo(CL_MEM_FLAGS)");
  FCL_CL_TRY(clGetMemObjectInfo(mem, CL_MEM_HOST_PTR, sizeof out->host_ptr, &out->host_ptr, NULL),
             "clGetMemObjectInfo(CL_MEM_HOST_PTR)");
  FCL_CL_TRY(clGetMemObjectInfo(mem, CL_MEM_CONTEXT, sizeof out->context, &out->context, NULL),
             "clGetMemObjectInfo(CL_MEM_CONTEXT)");
  FCL_CL_TRY(
      clGetMemObjectInfo(mem, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof out->base, &out->base, NULL),
      "clGetMemObjectInfo(CL_MEM_ASSOCIATED_MEMOBJECT)");
  FCL_CL_TRY(clGetMemObjectInfo(mem, CL_MEM_OFFSET, sizeof out->offset, &out->offset, NULL),
             "clGetMemObjectInfo(CL_MEM_OFFSET)");
  FCL_CL_TRY(clGetMemObjectInfo(mem, CL_MEM_REFERENCE_COUNT, sizeof out->references,
                                &out->references, NULL),
             "clGetMemObjectInfo(CL_MEM_REFERENCE_COUNT)");
  return FCL_OK;
}

typedef struct {
  fcl_mem_destructor_fn fn;
  void *user;
} destructor;

static void CL_CALLBACK run_destructor(cl_mem mem, void *data) {
  destructor *d = data;
  d->fn(mem, d->user);
  free(d);
}

fcl_status fcl_mem_add_destructor(cl_mem mem, fcl_mem_destructor_fn fn, void *user) {
  FCL_CHECK_NULL(mem, 1);
  FCL_CHECK_NULL(fn, 2);
  destructor *d = malloc(sizeof *d);
  if (!d) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "destructor callback");
  *d = (destructor){fn, user};
  cl_int err = clSetMemObjectDestructorCallback(mem, run_destructor, d);
  if (err != CL_SUCCESS) {
    free(d);
    return FCL_CL_ERROR(err, "clSetMemObjectDestructorCallback");
  }
  return FCL_OK;
}
