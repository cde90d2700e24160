/* Pinned host staging from the pool's host-pinned allocator (CL_MEM_ALLOC_HOST_PTR), mapped
 * once for the staging's lifetime: transfers by pointer to and from it run at the link's speed. */
#include "check.h"
#include "comm_impl.h"

fcl_status fcl__pinned_create(fcl_context *context, fcl_queue *queue, size_t bytes,
                              fcl__pinned *out) {
  *out = (fcl__pinned){0};
  FCL_TRY(fcl_allocator_create_host_pinned(context, &out->allocator));
  fcl_status st = fcl_allocator_alloc(out->allocator, bytes, &out->memory);
  if (st == FCL_OK)
    st = fcl_array_wrap_buffer(out->memory.buffer, queue, FCL_UINT8, 1, &bytes, NULL, 0,
                               &out->view);
  void *host = NULL;
  if (st == FCL_OK) st = fcl_array_map(out->view, queue, FCL_MAP_READ | FCL_MAP_WRITE, &host);
  out->host = host;
  if (st != FCL_OK) fcl__pinned_destroy(out);
  return st;
}

void fcl__pinned_destroy(fcl__pinned *p) {
  if (p->host) {
    fcl_queue *q = fcl_array_queue(p->view);
    if (fcl_array_unmap(p->view, q, p->host, NULL) == FCL_OK) fcl_queue_finish(q);
  }
  fcl_array_destroy(&p->view);
  fcl_allocator_free(p->allocator, &p->memory);
  fcl_allocator_release(&p->allocator);
  *p = (fcl__pinned){0};
}
