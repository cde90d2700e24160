/* Memory shared between processes (fcl_mem_share): arguments checked here, the share made and
 * opened by the memory's backend. */
#include <stdlib.h>

#include "backend.h"
#include "check.h"
#include "runtime_impl.h"

fcl_status fcl_mem_share(fcl_mem *mem, unsigned char *share) {
  FCL_CHECK_NULL(mem, 1);
  FCL_CHECK_NULL(share, 2);
  if (!mem->backend->mem_share)
    return FCL_ERROR(FCL_ERR_NOT_SUPPORTED, "%s memory cannot be shared between processes",
                     mem->backend->name);
  if (mem->kind != FCL_MEM_DEVICE)
    return FCL_ERROR(FCL_ERR_NOT_SUPPORTED, "only device memory can be shared between processes");
  return mem->backend->mem_share(mem, share);
}

fcl_status fcl_mem_open_shared(fcl_context *context, const unsigned char *share, fcl_mem **out) {
  FCL_CHECK_NULL(context, 1);
  FCL_CHECK_NULL(share, 2);
  FCL_CHECK_NULL(out, 3);
  *out = NULL;
  FCL_CHECK_ARG(context->num_devices == 1, 1, "context",
                "shared memory opens in a context of one device");
  if (!context->backend->mem_open_shared)
    return FCL_ERROR(FCL_ERR_NOT_SUPPORTED, "%s devices cannot open another process's memory",
                     context->backend->name);
  fcl_mem *m = fcl__mem_new(context->backend, FCL_MEM_DEVICE, 0); /* the backend sets the size */
  if (!m) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "memory object");
  fcl_status st = m->backend->mem_open_shared(context, m, share);
  if (st != FCL_OK) {
    free(m);
    return st;
  }
  *out = m;
  return FCL_OK;
}
