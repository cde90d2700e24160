/* The CUDA backend's kernels: a module's function; by-value arguments as the runtime keeps them,
 * buffers as device pointers, local-memory parameters as offsets into the launch's dynamic
 * shared memory (the CUDA prelude's FCL_LOCAL_PARAM); a launch of whole blocks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "../runtime_impl.h"
#include "cuda_backend.h"
#include "driver.h"

/* A kernel: its function, one parameter pointer per argument, the local parameters' offsets. */
typedef struct {
  CUfunction function;
  void **params;
  unsigned *offsets;
} cuda_kernel;

fcl_status fcl__cuda_kernel_create(fcl_program *p, const char *name, fcl_kernel *k) {
  CUfunction f = fcl__cuda_program_function(p, name);
  if (!f) return FCL_ERROR(FCL_ERR_NOT_FOUND, "no kernel '%s' in %s", name, p->origin);
  /* a module's functions load lazily (CUDA_MODULE_LOADING=LAZY, the default) */
  FCL_TRY(fcl__cuda_current(p->context->devices[0]));
  FCL_CU_TRY(fcl__cu(NULL)->FuncLoad(f), "cuFuncLoad");
  cuda_kernel *ck = calloc(1, sizeof *ck);
  const unsigned n = k->meta->num_args;
  if (ck) {
    ck->params = calloc(n ? n : 1, sizeof *ck->params);
    ck->offsets = calloc(n ? n : 1, sizeof *ck->offsets);
  }
  if (!ck || !ck->params || !ck->offsets) {
    if (ck) {
      free(ck->params);
      free(ck->offsets);
    }
    free(ck);
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "CUDA kernel");
  }
  ck->function = f;
  k->native = ck;
  return FCL_OK;
}

void fcl__cuda_kernel_destroy(fcl_kernel *k) {
  cuda_kernel *ck = k->native;
  free(ck->params);
  free(ck->offsets);
  free(ck);
}

fcl_status fcl__cuda_kernel_set_arg(fcl_kernel *k, unsigned index, int how, size_t size,
                                    const void *value) {
  (void)size; /* by-value bytes are kept by the runtime (k->values) until the launch */
  if (how == FCL__BUFFER) {
    const fcl_mem *m = value;
    const CUdeviceptr ptr = m ? ((const fcl__cuda_mem *)m->native)->ptr : 0;
    k->values[index].native = (void *)(uintptr_t)ptr;
  }
  return FCL_OK;
}

fcl_status fcl__cuda_kernel_enqueue(fcl_kernel *k, fcl_queue *q, unsigned dim, const size_t *global,
                                    const size_t *local, const size_t *offset, unsigned num_wait,
                                    fcl_event *const *wait, fcl_event **event) {
  cuda_kernel *ck = k->native;
  for (unsigned d = 0; offset && d < dim; ++d)
    if (offset[d])
      return FCL_ERROR(FCL_ERR_NOT_SUPPORTED,
                       "a global offset (%zu along %u): CUDA grids have none", offset[d], d);
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  for (unsigned d = 0; d < dim; ++d) {
    size_t l = local ? local[d] : 1;
    if (!local && d == 0) /* the runtime's choice: the largest divisor of the size up to 256 */
      for (l = global[0] < 256 ? global[0] : 256; l > 1 && global[0] % l; --l) continue;
    if (l == 0 || global[d] % l)
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "global size %zu along %u is not a multiple of the local size %zu (CUDA "
                       "launches whole blocks)",
                       global[d], d, l);
    block[d] = (unsigned)l;
    grid[d] = (unsigned)(global[d] / l);
  }
  /* parameters, and local memory laid out in order, 16-byte aligned */
  unsigned shared = 0;
  for (unsigned i = 0; i < k->meta->num_args; ++i) {
    fcl__arg_value *v = &k->values[i];
    switch (v->how) {
      case FCL__VALUE: ck->params[i] = v->size > sizeof v->value ? (void *)v->big : v->value; break;
      case FCL__BUFFER: ck->params[i] = &v->native; break;
      case FCL__LOCAL:
        ck->offsets[i] = shared;
        shared += (unsigned)((v->size + 15) / 16 * 16);
        ck->params[i] = &ck->offsets[i];
        break;
      default:
        return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument %u of kernel '%s' is not set", i,
                         k->meta->name);
    }
  }
  const fcl__cu_api *cu = fcl__cu(NULL);
  fcl__cuda_event *e;
  FCL_TRY(fcl__cuda_before(q, num_wait, wait, event != NULL, &e));
  if (shared > 48 * 1024) { /* beyond the default: the kernel opts in */
    CUresult r = cu->FuncSetAttribute(ck->function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                      (int)shared);
    if (r != CUDA_SUCCESS) {
      fcl__cuda_event_free(e);
      return FCL_CU_ERROR(r, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
    }
  }
  CUresult r = cu->LaunchKernel(ck->function, grid[0], grid[1], grid[2], block[0], block[1],
                                block[2], shared, fcl__cuda_stream(q), ck->params, NULL);
  if (r != CUDA_SUCCESS) {
    fcl__cuda_event_free(e);
    return FCL_CU_ERROR(r, "cuLaunchKernel");
  }
  return fcl__cuda_after(q, e, event);
}

fcl_status fcl__cuda_kernel_work_group_info(const fcl_kernel *k, const fcl_device *d,
                                            fcl_kernel_work_group_info *info) {
  FCL_TRY(fcl__cuda_current(d));
  const cuda_kernel *ck = k->native;
  const fcl__cu_api *cu = fcl__cu(NULL);
  int threads = 0, shared = 0, local = 0;
  FCL_CU_TRY(cu->FuncGetAttribute(&threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, ck->function),
             "cuFuncGetAttribute(MAX_THREADS_PER_BLOCK)");
  FCL_CU_TRY(cu->FuncGetAttribute(&shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, ck->function),
             "cuFuncGetAttribute(SHARED_SIZE_BYTES)");
  FCL_CU_TRY(cu->FuncGetAttribute(&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, ck->function),
             "cuFuncGetAttribute(LOCAL_SIZE_BYTES)");
  info->work_group_size = (size_t)threads;
  uint64_t dynamic = 0;
  for (unsigned i = 0; i < k->meta->num_args; ++i)
    if (k->values[i].how == FCL__LOCAL) dynamic += k->values[i].size;
  info->local_mem_size = (uint64_t)shared + dynamic;
  info->private_mem_size = (uint64_t)local;
  info->preferred_work_group_size_multiple = 32;
  return FCL_OK;
}
