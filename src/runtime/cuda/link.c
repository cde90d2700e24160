/* The CUDA backend's links: NCCL communicators (libnccl.so.2, loaded on first use, so that the
 * library runs where NCCL is absent), grouped sends and receives on the queue's stream. NCCL
 * works on the calling thread's current device: the link's primary context is made current
 * before every call. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <nccl.h>

#include "../check.h"
#include "cuda_backend.h"

_Static_assert(NCCL_UNIQUE_ID_BYTES == FCL_LINK_ID_BYTES, "an NCCL id is a link id");

/* X(name, symbol, return type, parameters) for every entry used. */
#define FCL__NCCL_ENTRIES(X)                                                                       \
  X(GetVersion, "ncclGetVersion", ncclResult_t, (int *version))                                    \
  X(GetUniqueId, "ncclGetUniqueId", ncclResult_t, (ncclUniqueId * id))                             \
  X(CommInitRank, "ncclCommInitRank", ncclResult_t,                                                \
    (ncclComm_t * comm, int ranks, ncclUniqueId id, int rank))                                     \
  X(CommDestroy, "ncclCommDestroy", ncclResult_t, (ncclComm_t comm))                               \
  X(CommAbort, "ncclCommAbort", ncclResult_t, (ncclComm_t comm))                                   \
  X(GetErrorString, "ncclGetErrorString", const char *, (ncclResult_t r))                          \
  X(GetLastError, "ncclGetLastError", const char *, (ncclComm_t comm))                             \
  X(GroupStart, "ncclGroupStart", ncclResult_t, (void))                                            \
  X(GroupEnd, "ncclGroupEnd", ncclResult_t, (void))                                                \
  X(Send, "ncclSend", ncclResult_t,                                                                \
    (const void *buf, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,                \
     cudaStream_t stream))                                                                         \
  X(Recv, "ncclRecv", ncclResult_t,                                                                \
    (void *buf, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,                      \
     cudaStream_t stream))

typedef struct {
#define FCL__NCCL_POINTER(name, symbol, ret, params) ret(*name) params;
  FCL__NCCL_ENTRIES(FCL__NCCL_POINTER)
#undef FCL__NCCL_POINTER
} nccl_api;

static nccl_api api;
static const nccl_api *loaded;
static char reason[256] = "";
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
  void *lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(reason, sizeof reason, "NCCL not found (libnccl.so.2: %s)", dlerror());
    return;
  }
#define FCL__NCCL_LOAD(name, symbol, ret, params)                                                  \
  *(void **)&api.name = dlsym(lib, symbol);                                                        \
  if (!api.name) {                                                                                 \
    snprintf(reason, sizeof reason, "libnccl.so.2 has no %s (an NCCL older than 2.13)", symbol);   \
    return;                                                                                        \
  }
  FCL__NCCL_ENTRIES(FCL__NCCL_LOAD)
#undef FCL__NCCL_LOAD
  loaded = &api; /* open for the life of the process */
}

static const nccl_api *nccl(void) {
  pthread_once(&once, load);
  return loaded;
}

static fcl_status nccl_error(ncclResult_t r, ncclComm_t comm, const char *call, const char *func,
                             int line) {
  const char *detail = comm && loaded ? loaded->GetLastError(comm) : NULL;
  return fcl__error_set(FCL_ERR_CUDA, (int)r, func, __FILE__, line, "%s: %s%s%s", call,
                        loaded ? loaded->GetErrorString(r) : "NCCL not loaded",
                        detail && *detail ? ": " : "", detail ? detail : "");
}
#define NCCL_TRY(expr, comm, call)                                                                 \
  do {                                                                                             \
    ncclResult_t r_ = (expr);                                                                      \
    if (r_ != ncclSuccess) return nccl_error(r_, (comm), (call), __func__, __LINE__);              \
  } while (0)

fcl_status fcl__cuda_link_supported(const fcl_device *d) {
  (void)d;
  if (!nccl()) return FCL_ERROR(FCL_ERR_NOT_SUPPORTED, "CUDA links need NCCL: %s", reason);
  return FCL_OK;
}

fcl_status fcl__cuda_link_id(const fcl_device *d, unsigned char *id) {
  FCL_TRY(fcl__cuda_current(d));
  ncclUniqueId u;
  NCCL_TRY(nccl()->GetUniqueId(&u), NULL, "ncclGetUniqueId");
  memcpy(id, u.internal, sizeof u.internal);
  return FCL_OK;
}

fcl_status fcl__cuda_link_create(fcl_link *l, const unsigned char *id) {
  FCL_TRY(fcl__cuda_current(l->context->devices[0]));
  ncclUniqueId u;
  memcpy(u.internal, id, sizeof u.internal);
  ncclComm_t comm = NULL;
  NCCL_TRY(nccl()->CommInitRank(&comm, l->ranks, u, l->rank), NULL, "ncclCommInitRank");
  l->native = comm;
  return FCL_OK;
}

fcl_status fcl__cuda_link_exchange(fcl_link *l, fcl_queue *q, unsigned n,
                                   const fcl_link_message *msg) {
  FCL_TRY(fcl__cuda_current(q->device));
  const nccl_api *nc = nccl();
  ncclComm_t comm = l->native;
  CUstream stream = q->native;
  NCCL_TRY(nc->GroupStart(), comm, "ncclGroupStart");
  ncclResult_t r = ncclSuccess;
  const char *call = "ncclSend";
  for (unsigned i = 0; r == ncclSuccess && i < n; ++i) {
    const fcl_link_message *m = &msg[i];
    if (!m->bytes) continue;
    const fcl__cuda_mem *mem = m->mem->native;
    char *at = (char *)(uintptr_t)mem->ptr + m->offset;
    call = m->send ? "ncclSend" : "ncclRecv";
    r = m->send ? nc->Send(at, m->bytes, ncclInt8, m->peer, comm, stream)
                : nc->Recv(at, m->bytes, ncclInt8, m->peer, comm, stream);
  }
  ncclResult_t end = nc->GroupEnd(); /* closes the group also after a failed call */
  if (r != ncclSuccess) return nccl_error(r, comm, call, __func__, __LINE__);
  if (end != ncclSuccess) return nccl_error(end, comm, "ncclGroupEnd", __func__, __LINE__);
  return FCL_OK;
}

void fcl__cuda_link_destroy(fcl_link *l, bool abort) {
  if (!l->native || fcl__cuda_current(l->context->devices[0]) != FCL_OK) return;
  if (abort)
    nccl()->CommAbort(l->native);
  else
    nccl()->CommDestroy(l->native);
  l->native = NULL;
}
