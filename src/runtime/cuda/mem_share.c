/* Device memory shared between processes of one host: CUDA IPC. A share holds a tag, the
 * sharer's process id (a process cannot open its own handle), the size and the allocation's
 * cuIpcGetMemHandle; the opener maps it with peer access enabled as needed, so that its kernels
 * and copies reach the sharer's device directly. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../check.h"
#include "../runtime_impl.h"
#include "cuda_backend.h"
#include "driver.h"

static const char tag[8] = "fclshare";

typedef struct {
  char tag[8];
  uint64_t pid;
  uint64_t size;
  CUipcMemHandle handle;
} share_bytes;
_Static_assert(sizeof(share_bytes) <= FCL_MEM_SHARE_BYTES, "a share fits its bytes");

fcl_status fcl__cuda_mem_share(const fcl_mem *m, unsigned char *share) {
  const fcl__cuda_mem *cm = m->native;
  if (cm->opened)
    return FCL_ERROR(FCL_ERR_NOT_SUPPORTED, "memory opened from another process cannot be shared");
  FCL_TRY(fcl__cuda_current(cm->device));
  share_bytes s = {.pid = (uint64_t)getpid(), .size = m->size};
  memcpy(s.tag, tag, sizeof tag);
  FCL_CU_TRY(fcl__cu(NULL)->IpcGetMemHandle(&s.handle, cm->ptr), "cuIpcGetMemHandle");
  memset(share, 0, FCL_MEM_SHARE_BYTES);
  memcpy(share, &s, sizeof s);
  return FCL_OK;
}

fcl_status fcl__cuda_mem_open_shared(fcl_context *context, fcl_mem *m, const unsigned char *share) {
  share_bytes s;
  memcpy(&s, share, sizeof s);
  if (memcmp(s.tag, tag, sizeof tag) != 0 || s.size == 0)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "share: not a share of CUDA memory (made by fcl_mem_share)");
  if (s.pid == (uint64_t)getpid())
    return FCL_ERROR(FCL_ERR_NOT_SUPPORTED,
                     "a share of this process's own memory (use the memory)");
  const fcl_device *device = context->devices[0];
  FCL_TRY(fcl__cuda_current(device));
  fcl__cuda_mem *cm = calloc(1, sizeof *cm);
  if (!cm) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "CUDA memory object");
  CUresult r = fcl__cu(NULL)->IpcOpenMemHandle(&cm->ptr, s.handle,
                                               CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
  if (r != CUDA_SUCCESS) { /* e.g. devices without peer access: the caller takes another way */
    free(cm);
    const char *name = "?";
    fcl__cu(NULL)->GetErrorName(r, &name);
    return FCL_ERROR(FCL_ERR_NOT_SUPPORTED,
                     "cuIpcOpenMemHandle: %s (another process's memory cannot be opened here)",
                     name);
  }
  cm->device = device;
  cm->kind = FCL_MEM_DEVICE;
  cm->opened = true;
  m->native = cm;
  m->size = (size_t)s.size;
  return FCL_OK;
}
