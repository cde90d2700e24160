/* The OpenCL backend's VkFFT plans (VkFFT's OpenCL build, VKFFT_BACKEND 3), for vkfft.h. */
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "../runtime_impl.h"
#include "../vkfft.h"
#include "cached_program.h"
#include "opencl_backend.h"

/* VkFFT (1.2.26) creates and builds every kernel with these two OpenCL calls and offers no
 * other hook: its own binary save/load (saveApplicationToString) writes OpenCL binaries with
 * sprintf("%s") and reads them back two bytes short, so a binary holding a zero byte (PoCL's)
 * does not survive. In this file only they go to the runtime's cached builds. */
#define clCreateProgramWithSource(context, count, strings, lengths, err)                           \
  fcl__cached_program_create(context, count, strings, lengths, "vkfft", err)
#define clBuildProgram fcl__cached_program_build
#define VKFFT_BACKEND 3 /* OpenCL */
#include <vkFFT.h>

#include "../vkfft_shape.h"

typedef struct {
  fcl__vkfft base;
  VkFFTApplication app;
  /* VkFFT keeps pointers to these and reads them at every append: they live with the plan */
  cl_device_id device;
  cl_context context;
  cl_command_queue queue;
  uint64_t input_bytes, bytes;
} plan;

static fcl_status vk_error(VkFFTResult r, const char *what) {
  return fcl__error_set(FCL_ERR_FFT, (int)r, __func__, __FILE__, __LINE__,
                        "VkFFT %d: %s (VkFFTResult %d; VkFFT %d)", (int)r, what, (int)r,
                        VkFFTGetVersion());
}

fcl_status fcl__opencl_vkfft_plan(fcl_queue *queue, const fcl__vkfft_config *config,
                                  const char *what, fcl__vkfft **out) {
  plan *p = calloc(1, sizeof *p);
  if (!p) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "VkFFT plan");
  p->base.backend = &fcl__opencl_backend;
  p->device = fcl__device_cl(queue->device);
  p->queue = queue->native;
  cl_int err = clGetCommandQueueInfo(p->queue, CL_QUEUE_CONTEXT, sizeof p->context, &p->context,
                                     NULL);
  if (err != CL_SUCCESS) {
    free(p);
    return FCL_CL_ERROR(err, "clGetCommandQueueInfo(CL_QUEUE_CONTEXT)");
  }
  p->input_bytes = config->input_bytes;
  p->bytes = config->bytes;
  cl_mem input = config->input ? config->input->native : NULL, buffer = config->buffer->native;
  VkFFTConfiguration c;
  memset(&c, 0, sizeof c);
  c.device = &p->device;
  c.context = &p->context;
  c.commandQueue = &p->queue;
  fcl__vkfft_shape(&c, config);
  if (input) {
    c.inputBuffer = &input;
    c.inputBufferSize = &p->input_bytes;
  }
  c.buffer = &buffer;
  c.bufferSize = &p->bytes;
  VkFFTResult r = initializeVkFFT(&p->app, c);
  if (r == VKFFT_ERROR_FAILED_TO_COMPILE_PROGRAM) { /* once more: see vkfft.h */
    deleteVkFFT(&p->app);
    memset(&p->app, 0, sizeof p->app);
    fcl_log(FCL_LOG_WARNING, "fft: VkFFT kernel build failed while %s; trying once more", what);
    r = initializeVkFFT(&p->app, c);
  }
  if (r != VKFFT_SUCCESS) {
    deleteVkFFT(&p->app);
    free(p);
    return vk_error(r, what);
  }
  *out = &p->base;
  return FCL_OK;
}

fcl_status fcl__opencl_vkfft_append(fcl__vkfft *base, fcl_queue *queue, fcl_mem *input,
                                    fcl_mem *buffer, int direction, const char *what) {
  plan *p = (plan *)base;
  p->queue = queue->native;
  cl_mem native = buffer->native, native_in = input ? input->native : NULL;
  VkFFTLaunchParams lp = {0};
  lp.commandQueue = &p->queue;
  lp.buffer = &native;
  if (input) lp.inputBuffer = &native_in;
  VkFFTResult r = VkFFTAppend(&p->app, direction, &lp);
  return r == VKFFT_SUCCESS ? FCL_OK : vk_error(r, what);
}

void fcl__opencl_vkfft_destroy(fcl__vkfft *base) {
  plan *p = (plan *)base;
  deleteVkFFT(&p->app);
  free(p);
}

fcl_status fcl__opencl_vkfft_local_mem(const fcl_device *d, size_t *bytes) {
  cl_ulong size = 0; /* what VkFFT's OpenCL build sets its sharedMemorySize to */
  FCL_CL_TRY(clGetDeviceInfo(fcl__device_cl(d), CL_DEVICE_LOCAL_MEM_SIZE, sizeof size, &size, NULL),
             "clGetDeviceInfo(CL_DEVICE_LOCAL_MEM_SIZE)");
  *bytes = (size_t)size;
  return FCL_OK;
}
