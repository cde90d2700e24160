/* The CUDA backend's links: NCCL communicators (libnccl.so.2, loaded on first use, so that the
 * library runs where NCCL is absent), grouped sends and receives on the queue's stream. NCCL
 * works on the calling thread's current device: the link's primary context is made current
 * before every call. Every exchange is watched (link_watch.c) until its group completes. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nccl.h>

#include "../check.h"
#include "cuda_backend.h"
#include "driver.h"

_Static_assert(NCCL_UNIQUE_ID_BYTES == FCL_LINK_ID_BYTES, "an NCCL id is a link id");

/* X(name, symbol, return type, parameters) for every entry used. */
#define FCL__NCCL_ENTRIES(X)                                                                       \
  X(GetVersion, "ncclGetVersion", ncclResult_t, (int *version))                                    \
  X(GetUniqueId, "ncclGetUniqueId", ncclResult_t, (ncclUniqueId * id))                             \
  X(CommInitRank, "ncclCommInitRank", ncclResult_t,                                                \
    (ncclComm_t * comm, int ranks, ncclUniqueId id, int rank))                                     \
  X(CommDestroy, "ncclCommDestroy", ncclResult_t, (ncclComm_t comm))                               \
  X(CommAbort, "ncclCommAbort", ncclResult_t, (ncclComm_t comm))                                   \
  X(CommGetAsyncError, "ncclCommGetAsyncError", ncclResult_t, (ncclComm_t comm, ncclResult_t * r)) \
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

/* One byte to and from every peer, once all have joined (cl watched): NCCL connects a pair on
 * its first exchange, on the host and with the peer's help, so that a later exchange a peer
 * never joins waits only on the device, where the watch sees it. The wait for this one's
 * completion is the watch's; a peer that stops before connecting leaves this rank in NCCL's
 * host-side connection (not watched: the ranks have just agreed to link). */
static fcl_status connect_peers(fcl_link *l, CUdeviceptr buf, CUstream stream) {
  const nccl_api *nc = nccl();
  fcl__cuda_link *cl = l->native;
  pthread_mutex_lock(&cl->lock);
  fcl__cuda_watched *w = NULL;
  fcl_status st = fcl__cuda_watch_prepare(cl, &w);
  ncclResult_t r = st == FCL_OK ? nc->GroupStart() : ncclSuccess;
  for (int p = 0; st == FCL_OK && r == ncclSuccess && p < l->ranks; ++p) {
    if (p == l->rank) continue;
    r = nc->Send((void *)(uintptr_t)(buf + (size_t)p), 1, ncclInt8, p, cl->comm, stream);
    if (r == ncclSuccess)
      r = nc->Recv((void *)(uintptr_t)(buf + (size_t)(l->ranks + p)), 1, ncclInt8, p, cl->comm,
                   stream);
  }
  if (st == FCL_OK) {
    const ncclResult_t end = nc->GroupEnd();
    if (r == ncclSuccess) r = end;
    if (r != ncclSuccess) {
      st = nccl_error(r, cl->comm, "connecting the link's peers", __func__, __LINE__);
      fcl__cuda_watch_unprepare(cl, w);
    } else {
      st = fcl__cuda_watch_exchange(cl, w, stream);
    }
  }
  pthread_mutex_unlock(&cl->lock);
  return st == FCL_OK ? fcl__cuda_watch_drain(cl) : st;
}

fcl_status fcl__cuda_link_create(fcl_link *l, const unsigned char *id) {
  FCL_TRY(fcl__cuda_current(l->context->devices[0]));
  const fcl__cu_api *cu = fcl__cu(NULL);
  ncclUniqueId u;
  memcpy(u.internal, id, sizeof u.internal);
  fcl__cuda_link *cl = calloc(1, sizeof *cl);
  if (!cl) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "link");
  pthread_mutex_init(&cl->lock, NULL);
  cl->device = l->context->devices[0];
  cl->timeout = l->timeout;
  l->native = cl;
  /* most of what can fail alone comes before the peers' rendezvous */
  CUdeviceptr buf = 0;
  CUstream stream = NULL;
  fcl_status st = FCL_OK;
  CUresult cr = cu->MemAlloc(&buf, 2 * (size_t)l->ranks);
  if (cr == CUDA_SUCCESS) cr = cu->StreamCreate(&stream, CU_STREAM_NON_BLOCKING);
  if (cr != CUDA_SUCCESS) st = FCL_CU_ERROR(cr, "the link's connection buffer");
  if (st == FCL_OK) {
    const ncclResult_t r = nccl()->CommInitRank(&cl->comm, l->ranks, u, l->rank);
    if (r != ncclSuccess) st = nccl_error(r, NULL, "ncclCommInitRank", __func__, __LINE__);
  }
  if (st == FCL_OK) st = fcl__cuda_watch_add(cl);
  if (st == FCL_OK) st = connect_peers(l, buf, stream);
  if (st != FCL_OK) fcl__cuda_link_destroy(l, true); /* its kernels end before buf goes */
  if (fcl__cuda_current(l->context->devices[0]) == FCL_OK) {
    if (stream) cu->StreamDestroy(stream);
    if (buf) cu->MemFree(buf);
  }
  return st;
}

/* The group of messages of an exchange on q's stream. */
static fcl_status send_receive(fcl__cuda_link *cl, fcl_queue *q, unsigned n,
                               const fcl_link_message *msg) {
  const nccl_api *nc = nccl();
  ncclComm_t comm = cl->comm;
  CUstream stream = fcl__cuda_stream(q);
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

fcl_status fcl__cuda_link_exchange(fcl_link *l, fcl_queue *q, unsigned n,
                                   const fcl_link_message *msg) {
  FCL_TRY(fcl__cuda_current(q->device));
  fcl__cuda_link *cl = l->native;
  pthread_mutex_lock(&cl->lock); /* against the watch's abort */
  fcl__cuda_watched *w = NULL;
  fcl_status st = cl->comm ? fcl__cuda_watch_prepare(cl, &w)
                           : FCL_ERROR(FCL_ERR_CUDA, "the link was aborted: %s", cl->failure);
  if (st == FCL_OK) st = send_receive(cl, q, n, msg);
  if (st == FCL_OK)
    st = fcl__cuda_watch_exchange(cl, w, fcl__cuda_stream(q));
  else
    fcl__cuda_watch_unprepare(cl, w);
  pthread_mutex_unlock(&cl->lock);
  return st;
}

bool fcl__cuda_link_failed(fcl__cuda_link *cl, char *why, size_t size) {
  ncclResult_t r = ncclSuccess;
  if (nccl()->CommGetAsyncError(cl->comm, &r) != ncclSuccess || r == ncclSuccess ||
      r == ncclInProgress)
    return false;
  const char *detail = nccl()->GetLastError(cl->comm);
  snprintf(why, size, "NCCL reported %s%s%s", nccl()->GetErrorString(r),
           detail && *detail ? ": " : "", detail ? detail : "");
  return true;
}

void fcl__cuda_link_abort(fcl__cuda_link *cl) {
  nccl()->CommAbort(cl->comm);
  cl->comm = NULL;
}

void fcl__cuda_link_destroy(fcl_link *l, bool abort) {
  fcl__cuda_link *cl = l->native;
  if (!cl) return;
  /* NCCL's destroy waits for the link's work: done first under the watch, which aborts what a
   * failed peer left unfinished (an abort: nothing is waited for); the drain reads the
   * communicator under the link's lock (the watch may be aborting it) */
  const bool current = fcl__cuda_current(l->context->devices[0]) == FCL_OK;
  if (!abort && (!current || fcl__cuda_watch_drain(cl) != FCL_OK)) {
    fcl_clear_error();
    abort = true;
  }
  fcl__cuda_watch_remove(cl); /* the watch no longer sees it: cl->comm is this thread's now */
  if (cl->comm && current) {
    if (abort)
      nccl()->CommAbort(cl->comm);
    else
      nccl()->CommDestroy(cl->comm);
  }
  fcl__cuda_watch_forget(cl);
  pthread_mutex_destroy(&cl->lock);
  free(cl);
  l->native = NULL;
}
