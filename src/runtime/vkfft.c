/* VkFFT plans: checked here, made by the queue's backend (vkfft.h). */
#include "vkfft.h"

#include "backend.h"
#include "check.h"

fcl_status fcl__vkfft_plan(fcl_queue *queue, const fcl__vkfft_config *config, const char *what,
                           fcl__vkfft **out) {
  /* internal: the FFT layer's own mistakes, not the user's */
  if (!queue || !config || !out || config->dims < 1 || config->dims > 3 || !config->buffer)
    return FCL_ERROR(FCL_ERR_INTERNAL, "VkFFT plan (%s): a NULL argument, dims %u or no buffer",
                     what, config ? config->dims : 0);
  *out = NULL;
  if (!queue->backend->vkfft_plan)
    return FCL_ERROR(FCL_ERR_NOT_SUPPORTED, "VkFFT is not built for the '%s' backend",
                     queue->backend->name);
  return queue->backend->vkfft_plan(queue, config, what, out);
}

fcl_status fcl__vkfft_append(fcl__vkfft *plan, fcl_queue *queue, fcl_mem *input, fcl_mem *buffer,
                             int direction, const char *what) {
  if (!plan || !queue || !buffer || (direction != -1 && direction != 1) ||
      queue->backend != plan->backend)
    return FCL_ERROR(FCL_ERR_INTERNAL,
                     "VkFFT launch (%s): a NULL argument, direction %d or a queue of another "
                     "backend",
                     what, direction);
  return plan->backend->vkfft_append(plan, queue, input, buffer, direction, what);
}

fcl_status fcl__vkfft_local_mem(fcl_queue *queue, size_t *bytes) {
  if (!queue || !bytes) return FCL_ERROR(FCL_ERR_INTERNAL, "VkFFT local memory: a NULL argument");
  *bytes = 0;
  if (!queue->backend->vkfft_local_mem)
    return FCL_ERROR(FCL_ERR_NOT_SUPPORTED, "VkFFT is not built for the '%s' backend",
                     queue->backend->name);
  return queue->backend->vkfft_local_mem(queue->device, bytes);
}

void fcl__vkfft_destroy(fcl__vkfft **plan) {
  if (!plan || !*plan) return;
  (*plan)->backend->vkfft_destroy(*plan);
  *plan = NULL;
}
