/* The links' watchdog. Every exchange is marked by an event recorded after its group; a thread
 * of its own looks at the links ten times a second and aborts the link whose oldest exchange
 * has waited longest past FLOWCL_LINK_TIMEOUT seconds from its enqueue (default 600; 0: never;
 * one a look, oldest first: an abort waits for the stream to reach the link's kernels, which
 * may sit behind another link's hung exchange), or one that NCCL or CUDA reports an error of.
 * The abort ends the link's kernels, so that the streams waiting on them go on, and from then
 * until the link is released every host wait on its device fails with the reason
 * (fcl__cuda_waited): a peer that failed inside an exchange, or never joined it, ends the other
 * ranks with an error instead of a hang. The limit counts from the enqueue, which a host that
 * runs ahead of its device moves earlier: it must exceed how far ahead the host runs plus the
 * longest wait a peer may legitimately make (a checkpoint, say). Not seen: a host blocked
 * inside an enqueue (its stream's launch queue full) holds the link, which the watch then
 * skips; flowcl's steps wait on the host at least once per step, far from that depth. */
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
static pthread_cond_t wake;                              /* on CLOCK_MONOTONIC */
static pthread_once_t wake_once = PTHREAD_ONCE_INIT;
static fcl__cuda_link *watched; /* every link watched */
static bool running;            /* the thread runs while the list is not empty */

static void init_wake(void) {
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&wake, &attr);
  pthread_condattr_destroy(&attr);
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Moves cl's completed exchanges, oldest first, to its spare events; the first query that says
 * neither done nor not ready (an error of the stream) is returned. */
static CUresult prune(fcl__cuda_link *cl) {
  const fcl__cu_api *cu = fcl__cu(NULL);
  while (cl->pending) {
    const CUresult r = cu->EventQuery(cl->pending->done);
    if (r != CUDA_SUCCESS) return r == CUDA_ERROR_NOT_READY ? CUDA_SUCCESS : r;
    fcl__cuda_watched *w = cl->pending;
    cl->pending = w->next;
    w->next = cl->spare;
    cl->spare = w;
  }
  return CUDA_SUCCESS;
}

/* Aborts cl (its lock held), saying why; its device's waits fail from before the abort lets
 * any of them go on. */
static void fail(fcl__cuda_link *cl, const char *why) {
  snprintf(cl->failure, sizeof cl->failure, "%s", why);
  fcl__cuda_device_link_failed(cl->device, why);
  cl->counted = true;
  fprintf(stderr, "flowcl: CUDA device %d: a link was aborted: %s\n",
          ((const fcl__cuda_device *)cl->device->native)->ordinal, why);
  fcl__cuda_link_abort(cl);
}

/* Looks at cl without waiting for it (an exchange in progress holds it): a failure NCCL or
 * CUDA reports is acted on at once; else *overdue is how long its oldest exchange is past the
 * limit (<= 0: not). */
static void look_at(fcl__cuda_link *cl, double t, double *overdue) {
  *overdue = 0;
  if (pthread_mutex_trylock(&cl->lock) != 0) return;
  if (cl->comm && fcl__cuda_current(cl->device) == FCL_OK) {
    char why[200];
    const CUresult r = prune(cl);
    if (r != CUDA_SUCCESS) {
      const char *name = NULL;
      if (fcl__cu(NULL)->GetErrorName(r, &name) != CUDA_SUCCESS) name = NULL;
      snprintf(why, sizeof why, "CUDA reported %s (%d) on an exchange's stream",
               name ? name : "an error", (int)r);
      fail(cl, why);
    } else if (fcl__cuda_link_failed(cl, why, sizeof why)) {
      fail(cl, why);
    } else if (cl->pending && cl->timeout > 0) {
      *overdue = t - cl->pending->since - cl->timeout;
    }
  }
  pthread_mutex_unlock(&cl->lock);
}

/* The most overdue link of a look, aborted (its lock taken again: it may have moved on). */
static void abort_overdue(fcl__cuda_link *cl, double t) {
  if (pthread_mutex_trylock(&cl->lock) != 0) return;
  if (cl->comm && fcl__cuda_current(cl->device) == FCL_OK && prune(cl) == CUDA_SUCCESS &&
      cl->pending && t - cl->pending->since > cl->timeout) {
    char why[200];
    snprintf(why, sizeof why,
             "an exchange enqueued %.0f s ago has not completed (FLOWCL_LINK_TIMEOUT = %g s): "
             "a peer failed or never joined it",
             t - cl->pending->since, cl->timeout);
    fail(cl, why);
  }
  pthread_mutex_unlock(&cl->lock);
}

static void *watch(void *arg) {
  (void)arg;
  pthread_mutex_lock(&lock);
  while (watched) {
    const double t = now();
    fcl__cuda_link *worst = NULL;
    double most = 0;
    for (fcl__cuda_link *cl = watched; cl; cl = cl->next) {
      double overdue;
      look_at(cl, t, &overdue);
      if (overdue > most) {
        most = overdue;
        worst = cl;
      }
    }
    if (worst) abort_overdue(worst, t);
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
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
  pthread_once(&wake_once, init_wake);
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

fcl_status fcl__cuda_watch_prepare(fcl__cuda_link *cl, fcl__cuda_watched **out) {
  *out = NULL;
  prune(cl);
  fcl__cuda_watched *w = cl->spare;
  if (w) {
    cl->spare = w->next;
  } else {
    w = calloc(1, sizeof *w);
    if (!w) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "link watch");
    CUresult r = fcl__cu(NULL)->EventCreate(&w->done, CU_EVENT_DISABLE_TIMING);
    if (r != CUDA_SUCCESS) {
      free(w);
      return FCL_CU_ERROR(r, "cuEventCreate (link watch)");
    }
  }
  *out = w;
  return FCL_OK;
}

fcl_status fcl__cuda_watch_exchange(fcl__cuda_link *cl, fcl__cuda_watched *w, CUstream stream) {
  CUresult r = fcl__cu(NULL)->EventRecord(w->done, stream);
  if (r != CUDA_SUCCESS) {
    fcl__cuda_watch_unprepare(cl, w);
    return FCL_CU_ERROR(r, "cuEventRecord (link watch): the exchange is enqueued, not watched");
  }
  w->since = now();
  w->next = NULL;
  fcl__cuda_watched **end = &cl->pending;
  while (*end) end = &(*end)->next;
  *end = w;
  return FCL_OK;
}

void fcl__cuda_watch_unprepare(fcl__cuda_link *cl, fcl__cuda_watched *w) {
  if (!w) return;
  w->next = cl->spare;
  cl->spare = w;
}

fcl_status fcl__cuda_watch_drain(fcl__cuda_link *cl) {
  for (;;) {
    pthread_mutex_lock(&cl->lock);
    const bool aborted = !cl->comm;
    const CUresult r = aborted ? CUDA_SUCCESS : prune(cl);
    const bool done = aborted || r != CUDA_SUCCESS || !cl->pending;
    pthread_mutex_unlock(&cl->lock);
    if (aborted) return FCL_ERROR(FCL_ERR_CUDA, "the link was aborted: %s", cl->failure);
    if (r != CUDA_SUCCESS) return FCL_CU_ERROR(r, "an exchange of the link");
    if (done) return FCL_OK;
    const struct timespec pause = {0, 200000}; /* the watch aborts it past the limit */
    nanosleep(&pause, NULL);
  }
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
    fcl__cuda_device_link_released(cl->device);
    cl->counted = false;
  }
}
