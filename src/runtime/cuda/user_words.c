/* The words user events are made of (cuda_backend.h, fcl__cuda_word): mapped page-locked pages
 * of a device, handed out a word at a time and taken back, never freed while the device's
 * primary context lives. */
#include <pthread.h>
#include <stdlib.h>

#include "../check.h"
#include "cuda_backend.h"
#include "driver.h"

enum { WORDS_PER_PAGE = 1024 };

struct fcl__cuda_word_page {
  struct fcl__cuda_word_page *next;
  void *host;
  fcl__cuda_word words[WORDS_PER_PAGE];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* every device's lists */

/* A new page of d's words into its free list (lock held, the context current). */
static fcl_status add_page(fcl__cuda_device *d) {
  const fcl__cu_api *cu = fcl__cu(NULL);
  struct fcl__cuda_word_page *p = calloc(1, sizeof *p);
  if (!p) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "user event words");
  CUdeviceptr base = 0;
  CUresult r = cu->MemHostAlloc(&p->host, WORDS_PER_PAGE * sizeof(unsigned),
                                CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE);
  if (r == CUDA_SUCCESS) r = cu->MemHostGetDevicePointer(&base, p->host, 0);
  if (r != CUDA_SUCCESS) {
    if (p->host) cu->MemFreeHost(p->host);
    free(p);
    return FCL_CU_ERROR(r, "cuMemHostAlloc (user event words)");
  }
  for (int i = 0; i < WORDS_PER_PAGE; ++i) {
    fcl__cuda_word *w = &p->words[i];
    w->host = (volatile unsigned *)p->host + i;
    *w->host = 0;
    w->device = base + (CUdeviceptr)i * sizeof(unsigned);
    w->next = d->free_words;
    d->free_words = w;
  }
  p->next = d->word_pages;
  d->word_pages = p;
  return FCL_OK;
}

fcl_status fcl__cuda_word_take(const fcl_device *device, fcl__cuda_word **out) {
  fcl__cuda_device *d = device->native;
  pthread_mutex_lock(&lock);
  fcl_status st = d->free_words ? FCL_OK : add_page(d);
  if (st == FCL_OK) {
    *out = d->free_words;
    d->free_words = (*out)->next;
  }
  pthread_mutex_unlock(&lock);
  return st;
}

void fcl__cuda_word_give(const fcl_device *device, fcl__cuda_word *word) {
  fcl__cuda_device *d = device->native;
  pthread_mutex_lock(&lock);
  word->next = d->free_words;
  d->free_words = word;
  pthread_mutex_unlock(&lock);
}

void fcl__cuda_words_free(fcl__cuda_device *d) {
  pthread_mutex_lock(&lock);
  for (struct fcl__cuda_word_page *p = d->word_pages, *next; p; p = next) {
    next = p->next;
    fcl__cu(NULL)->MemFreeHost(p->host);
    free(p);
  }
  d->word_pages = NULL;
  d->free_words = NULL;
  pthread_mutex_unlock(&lock);
}
