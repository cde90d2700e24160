/* VkFFT plans: checked here, made by the queue's backend (vkfft.h). */
#include "vkfft.h"

#include "backend.h"
#include "check.h"

fcl_status fcl__vkfft_plan(fcl_queue *queue, const fcl__vkfft_config *config, const char *what,
                           fcl__vkfft **out) {
  FCL_CHECK_NULL(queue, 1);
  FCL_CHECK_NULL(config, 2);
  FCL_CHECK_NULL(out, 4);
  *out = NULL;
  FCL_CHECK_ARG(config->dims >= 1 && config->dims <= 3, 2, "config", "dims must be 1, 2 or 3");
  FCL_CHECK_ARG(config->buffer != NULL, 2, "config", "a buffer to plan with is needed");
  if (!queue->backend->vkfft_plan)
    return FCL_ERROR(FCL_ERR_NOT_SUPPORTED, "VkFFT is not built for the '%s' backend",
                     queue->backend->name);
  return queue->backend->vkfft_plan(queue, config, what, out);
}

fcl_status fcl__vkfft_append(fcl__vkfft *plan, fcl_queue *queue, fcl_mem *input, fcl_mem *buffer,
                             int direction, const char *what) {
  FCL_CHECK_NULL(plan, 1);
  FCL_CHECK_NULL(queue, 2);
  FCL_CHECK_NULL(buffer, 4);
  FCL_CHECK_ARG(direction == -1 || direction == 1, 5, "direction", "-1 forward or 1 backward");
  FCL_CHECK_ARG(queue->backend == plan->backend, 2, "queue", "a queue of another backend");
  return plan->backend->vkfft_append(plan, queue, input, buffer, direction, what);
}

void fcl__vkfft_destroy(fcl__vkfft **plan) {
  if (!plan || !*plan) return;
  (*plan)->backend->vkfft_destroy(*plan);
  *plan = NULL;
}
