/* Page-locked blocks that stage the caller's pageable memory in non-blocking transfers
 * (cuda_backend.h, fcl__cuda_stage_take). A write packs the caller's rows into a block at once
 * (runtime.h lets the caller change them only after the event, so reading them earlier is
 * allowed), and the block is free again once an event recorded after the device's copy has
 * completed (looked at by later takes: the stream does not stop for it). A read's rows are copied
 * out by a host function that runs on the stream after the device's copy and before anything
 * enqueued later, so the transfer's event and every later wait see them; the stream waits for
 * it (microseconds), so flowcl's own reads in a step go to page-locked memory. Blocks are kept
 * (sizes in powers of two) until the primary context goes: freeing page-locked memory would wait
 * for the whole device. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "../runtime_impl.h"
#include "cuda_backend.h"
#include "driver.h"

enum { SMALLEST = 4096 };

struct fcl__cuda_stage {
  struct fcl__cuda_stage *next, *next_free;
  fcl__cuda_device *device;
  void *block;
  size_t size;
  fcl__cuda_rows rows; /* while taken */
  CUevent written;     /* a write's: recorded after the device's copy */
  bool writing;        /* free once written has completed */
  bool lent;           /* to fcl_host_alloc's caller */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* every device's lists */

static size_t packed(const fcl__cuda_rows *r) { return r->width * r->height * r->depth; }

/* Copy between the caller's rows and the packed block, either way. */
static void copy_rows(const fcl__cuda_rows *r, unsigned char *block, bool into_block) {
  if (r->height == 1 && r->depth == 1) {
    if (into_block)
      memcpy(block, r->host, r->width);
    else
      memcpy(r->host, block, r->width);
    return;
  }
  for (size_t z = 0; z < r->depth; ++z)
    for (size_t y = 0; y < r->height; ++y) {
      unsigned char *h = r->host + z * r->slice_pitch + y * r->row_pitch;
      unsigned char *b = block + (z * r->height + y) * r->width;
      if (into_block)
        memcpy(b, h, r->width);
      else
        memcpy(h, b, r->width);
    }
}

/* Whether the byte at p is page-locked memory the driver knows (cuMemHostAlloc, registered).
 * The plural call answers a memory type of 0 for memory CUDA does not know where the singular
 * one fails (an error return that compute-sanitizer's API check reports). */
static bool pinned_at(const unsigned char *p) {
  unsigned type = 0;
  CUpointer_attribute what = CU_POINTER_ATTRIBUTE_MEMORY_TYPE;
  void *data = &type;
  return fcl__cu(NULL)->PointerGetAttributes(1, &what, &data, (CUdeviceptr)(uintptr_t)p) ==
             CUDA_SUCCESS &&
         type == CU_MEMORYTYPE_HOST;
}

bool fcl__cuda_rows_pinned(const fcl_device *device, const fcl__cuda_rows *r) {
  if (!packed(r)) return true;
  const size_t last = (r->depth - 1) * r->slice_pitch + (r->height - 1) * r->row_pitch + r->width;
  /* the device's own blocks (fcl_host_alloc's) without asking the driver */
  const fcl__cuda_device *d = device->native;
  bool own = false;
  pthread_mutex_lock(&lock);
  for (const fcl__cuda_stage *s = d->stages; s && !own; s = s->next)
    own = r->host >= (unsigned char *)s->block &&
          r->host + last <= (unsigned char *)s->block + s->size;
  pthread_mutex_unlock(&lock);
  return own || (pinned_at(r->host) && pinned_at(r->host + last - 1));
}

fcl_status fcl__cuda_stage_take(const fcl_device *device, const fcl__cuda_rows *rows, bool write,
                                fcl__cuda_stage **stage, void **block) {
  fcl__cuda_device *d = device->native;
  if (packed(rows) > SIZE_MAX / 2)
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "%zu bytes of page-locked memory", packed(rows));
  size_t size = SMALLEST;
  while (size < packed(rows)) size *= 2;
  pthread_mutex_lock(&lock);
  for (fcl__cuda_stage *w = d->stages; w; w = w->next)
    if (w->writing && fcl__cu(NULL)->EventQuery(w->written) == CUDA_SUCCESS) {
      w->writing = false;
      w->next_free = d->free_stages;
      d->free_stages = w;
    }
  fcl__cuda_stage **pp = &d->free_stages;
  while (*pp && (*pp)->size != size) pp = &(*pp)->next_free;
  fcl__cuda_stage *s = *pp;
  if (s) *pp = s->next_free;
  pthread_mutex_unlock(&lock);
  if (!s) {
    s = calloc(1, sizeof *s);
    if (!s) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "a staging block");
    const char *call = "cuMemHostAlloc (page-locked block)";
    CUresult r = fcl__cu(NULL)->MemHostAlloc(&s->block, size, CU_MEMHOSTALLOC_PORTABLE);
    if (r == CUDA_SUCCESS) {
      call = "cuEventCreate (page-locked block)";
      r = fcl__cu(NULL)->EventCreate(&s->written, CU_EVENT_DISABLE_TIMING);
    }
    if (r != CUDA_SUCCESS) {
      if (s->block) fcl__cu(NULL)->MemFreeHost(s->block);
      free(s);
      return r == CUDA_ERROR_OUT_OF_MEMORY
                 ? FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "%s of %zu bytes", call, size)
                 : FCL_CU_ERROR(r, call);
    }
    s->device = d;
    s->size = size;
    pthread_mutex_lock(&lock);
    s->next = d->stages;
    d->stages = s;
    pthread_mutex_unlock(&lock);
  }
  s->rows = *rows;
  if (write) copy_rows(rows, s->block, true);
  *stage = s;
  *block = s->block;
  return FCL_OK;
}

static void give_back(fcl__cuda_stage *s) {
  pthread_mutex_lock(&lock);
  s->next_free = s->device->free_stages;
  s->device->free_stages = s;
  pthread_mutex_unlock(&lock);
}

/* On the driver's thread, in stream order: no CUDA call. */
static void CUDA_CB after_read(void *user) {
  fcl__cuda_stage *s = user;
  copy_rows(&s->rows, s->block, false);
  give_back(s);
}

/* The block free for a later take once the stream has passed this point (an event). */
static CUresult free_after(fcl__cuda_stage *s, CUstream stream) {
  const CUresult r = fcl__cu(NULL)->EventRecord(s->written, stream);
  if (r != CUDA_SUCCESS) return r;
  pthread_mutex_lock(&lock);
  s->writing = true;
  pthread_mutex_unlock(&lock);
  return CUDA_SUCCESS;
}

fcl_status fcl__cuda_stage_give(fcl__cuda_stage *s, bool read, CUstream stream) {
  if (read) {
    const CUresult r = fcl__cu(NULL)->LaunchHostFunc(stream, after_read, s);
    if (r == CUDA_SUCCESS) return FCL_OK;
    free_after(s, stream);
    return FCL_CU_ERROR(r, "cuLaunchHostFunc (staged read)");
  }
  const CUresult r = free_after(s, stream);
  return r == CUDA_SUCCESS ? FCL_OK : FCL_CU_ERROR(r, "cuEventRecord (staged write)");
}

void fcl__cuda_stage_cancel(fcl__cuda_stage *s, CUstream stream) { free_after(s, stream); }

fcl_status fcl__cuda_host_alloc(fcl_context *context, size_t bytes, void **host) {
  const fcl__cuda_rows rows = {NULL, bytes, 1, 1, bytes, bytes};
  fcl__cuda_stage *s = NULL;
  FCL_TRY(fcl__cuda_current(context->devices[0]));
  FCL_TRY(fcl__cuda_stage_take(context->devices[0], &rows, false, &s, host));
  pthread_mutex_lock(&lock);
  s->lent = true;
  pthread_mutex_unlock(&lock);
  return FCL_OK;
}

/* Only a block lent and not yet given back: a second free of the same memory does nothing. */
void fcl__cuda_host_free(fcl_context *context, void *host) {
  fcl__cuda_device *d = context->devices[0]->native;
  pthread_mutex_lock(&lock);
  fcl__cuda_stage *s = d->stages;
  while (s && !(s->lent && s->block == host)) s = s->next;
  if (s) {
    s->lent = false;
    s->next_free = d->free_stages;
    d->free_stages = s;
  }
  pthread_mutex_unlock(&lock);
}

/* A read's host function may still be to run (a released queue's commands do): the device is
 * waited for first, outside the lock the host function takes; with a user event still pending,
 * which nobody may ever set, the blocks are left instead. */
void fcl__cuda_stages_free(const fcl_device *device) {
  fcl__cuda_device *d = device->native;
  pthread_mutex_lock(&lock);
  fcl__cuda_stage *list = d->stages;
  d->stages = d->free_stages = NULL;
  pthread_mutex_unlock(&lock);
  if (!list || fcl__cuda_user_events_pending(device) ||
      fcl__cu(NULL)->CtxSynchronize() != CUDA_SUCCESS)
    return;
  for (fcl__cuda_stage *s = list, *next; s; s = next) {
    next = s->next;
    fcl__cu(NULL)->EventDestroy(s->written);
    fcl__cu(NULL)->MemFreeHost(s->block);
    free(s);
  }
}
