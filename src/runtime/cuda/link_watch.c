/* The links' watchdog. Every exchange is marked by an event recorded after its group; a thread
 * of its own looks at the links ten times a second, and aborts one whose oldest exchange has
 * not completed FLOWCL_LINK_TIMEOUT seconds (default 600; 0: never) after it was enqueued, or
 * that NCCL reports an error of. The abort ends the link's kernels, so that the streams waiting
 * on them go on, and from then until the link is released every host wait on its device fails
 * with the reason (fcl__cuda_waited): a peer that failed inside an exchange, or never joined
 * it, ends the other ranks with an error instead of a hang. The limit counts from the enqueue,
 * which a host that runs ahead of its device moves earlier: it must exceed how far ahead the
 * host runs plus the longest wait a peer may legitimately make (a checkpoint, say). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../check.h"
#include "cuda_backend.h"
#include "driver.h"

/* An exchange enqueued: the event after its group, and when. */
struct fcl__cuda_watched {
  CUevent done;
  double since;
  fcl__cuda_watched *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* the list and the thread's state */
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static fcl__cuda_link *watched; /* every link watched */
static bool running;            /* the thread runs while the list is not empty */

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Moves cl's completed exchanges, oldest first, to its spare events. */
static void prune(fcl__cuda_link *cl) {
  const fcl__cu_api *cu = fcl__cu(NULL);
  while (cl->pending && cu->EventQuery(cl->pending->done) == CUDA_SUCCESS) {
    fcl__cuda_watched *w = cl->pending;
    cl->pending = w->next;
    w->next = cl->spare;
    cl->spare = w;
  }
}

/* Aborts cl, saying why, and makes its device's waits fail: marked first, so that no wait the
 * abort lets go on returns before the failure shows. */
static void fail(fcl__cuda_link *cl, const char *why) {
  snprintf(cl->failure, sizeof cl->failure, "%s", why);
  fcl__cuda_device *d = cl->device->native;
  if (__atomic_load_n(&d->failed_links, __ATOMIC_ACQUIRE) == 0)
    snprintf(d->link_failure, sizeof d->link_failure, "a link was aborted: %s", why);
  __atomic_add_fetch(&d->failed_links, 1, __ATOMIC_RELEASE);
  cl->counted = true;
  fprintf(stderr, "flowcl: CUDA device %d: a link was aborted: %s\n", d->ordinal, why);
  fcl__cuda_link_abort(cl);
}

static void look_at(fcl__cuda_link *cl, double t) {
  pthread_mutex_lock(&cl->lock);
  if (cl->comm && fcl__cuda_current(cl->device) == FCL_OK) {
    prune(cl);
    char why[200];
    if (cl->pending && cl->timeout > 0 && t - cl->pending->since > cl->timeout) {
      snprintf(why, sizeof why,
               "an exchange enqueued %.0f s ago has not completed (FLOWCL_LINK_TIMEOUT = %g s): "
               "a peer failed or never joined it",
               t - cl->pending->since, cl->timeout);
      fail(cl, why);
    } else if (fcl__cuda_link_failed(cl, why, sizeof why)) {
      fail(cl, why);
    }
  }
  pthread_mutex_unlock(&cl->lock);
}

static void *watch(void *arg) {
  (void)arg;
  pthread_mutex_lock(&lock);
  while (watched) {
    const double t = now();
    for (fcl__cuda_link *cl = watched; cl; cl = cl->next) look_at(cl, t);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += 100000000;
    if (until.tv_nsec >= 1000000000) {
      until.tv_nsec -= 1000000000;
      ++until.tv_sec;
    }
    pthread_cond_timedwait(&wake, &lock, &until);
  }
  running = false;
  pthread_mutex_unlock(&lock);
  return NULL;
}

fcl_status fcl__cuda_watch_add(fcl__cuda_link *cl) {
  const char *v = getenv("FLOWCL_LINK_TIMEOUT");
  cl->timeout = 600;
  if (v && *v) {
    char *end;
    errno = 0;
    cl->timeout = strtod(v, &end);
    if (errno || *end || !(cl->timeout >= 0))
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "FLOWCL_LINK_TIMEOUT='%s': seconds an exchange may take (0: no limit)", v);
  }
  pthread_mutex_lock(&lock);
  cl->next = watched;
  watched = cl;
  fcl_status st = FCL_OK;
  if (!running) {
    pthread_t thread;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&thread, &attr, watch, NULL) == 0)
      running = true;
    else
      st = FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "the links' watchdog thread (pthread_create)");
    pthread_attr_destroy(&attr);
  }
  if (st != FCL_OK) watched = cl->next;
  pthread_mutex_unlock(&lock);
  return st;
}

fcl_status fcl__cuda_watch_exchange(fcl__cuda_link *cl, CUstream stream) {
  const fcl__cu_api *cu = fcl__cu(NULL);
  prune(cl);
  fcl__cuda_watched *w = cl->spare;
  if (w) {
    cl->spare = w->next;
  } else {
    w = calloc(1, sizeof *w);
    if (!w) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "link watch");
    CUresult r = cu->EventCreate(&w->done, CU_EVENT_DISABLE_TIMING);
    if (r != CUDA_SUCCESS) {
      free(w);
      return FCL_CU_ERROR(r, "cuEventCreate (link watch)");
    }
  }
  CUresult r = cu->EventRecord(w->done, stream);
  if (r != CUDA_SUCCESS) {
    w->next = cl->spare;
    cl->spare = w;
    return FCL_CU_ERROR(r, "cuEventRecord (link watch)");
  }
  w->since = now();
  w->next = NULL;
  fcl__cuda_watched **end = &cl->pending;
  while (*end) end = &(*end)->next;
  *end = w;
  return FCL_OK;
}

void fcl__cuda_watch_remove(fcl__cuda_link *cl) {
  pthread_mutex_lock(&lock);
  for (fcl__cuda_link **p = &watched; *p; p = &(*p)->next)
    if (*p == cl) {
      *p = cl->next;
      break;
    }
  pthread_cond_signal(&wake); /* the thread ends when the list is empty */
  pthread_mutex_unlock(&lock);
}

static void free_events(fcl__cuda_watched *w, bool current) {
  while (w) {
    fcl__cuda_watched *next = w->next;
    if (current) fcl__cu(NULL)->EventDestroy(w->done);
    free(w);
    w = next;
  }
}

void fcl__cuda_watch_forget(fcl__cuda_link *cl) {
  const bool current = fcl__cuda_current(cl->device) == FCL_OK;
  free_events(cl->pending, current);
  free_events(cl->spare, current);
  cl->pending = cl->spare = NULL;
  if (cl->counted) {
    fcl__cuda_device *d = cl->device->native;
    __atomic_sub_fetch(&d->failed_links, 1, __ATOMIC_RELEASE);
    cl->counted = false;
  }
}
