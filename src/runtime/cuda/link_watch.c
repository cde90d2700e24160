/* The links' watchdog. Every exchange is marked by an event recorded after its group; a thread
 * of its own looks at the links ten times a second. It aborts a link that NCCL or CUDA reports
 * an error of, or whose exchange has not completed FLOWCL_LINK_TIMEOUT seconds (default 600; 0:
 * never) after it was enqueued; one a look, the link with the oldest unfinished exchange of all
 * first: an abort waits for the stream to reach the link's kernels, which may sit behind another
 * link's hung exchange, so the oldest goes first and a link whose kernels wait behind a busy one
 * waits for a later look. The abort ends the link's kernels, so that the streams waiting on
 * them go on, and from then until the link is released every host wait on its device fails
 * with the reason (fcl__cuda_waited): a peer that failed inside an exchange, or never joined
 * it, ends the other ranks with an error instead of a hang. The limit counts from the enqueue,
 * which a host that runs ahead of its device moves earlier: it must exceed how far ahead the
 * host runs plus the longest wait a peer may legitimately make (a checkpoint, say). Not seen: a
 * host blocked inside an enqueue (its stream's launch queue full) holds the link, which the
 * watch then skips; flowcl's steps wait on the host at least once per step, far from that. */
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

/* cl's oldest unfinished exchange, kept where the watch reads it without cl's lock. */
static void note_oldest(fcl__cuda_link *cl) {
  const int64_t ns = cl->pending ? (int64_t)(cl->pending->since * 1e9) : 0;
  __atomic_store_n(&cl->oldest_ns, ns, __ATOMIC_RELAXED);
}
static double oldest(const fcl__cuda_link *cl) {
  return 1e-9 * (double)__atomic_load_n(&cl->oldest_ns, __ATOMIC_RELAXED);
}

/* Moves cl's completed exchanges, oldest first, to its spare events; the first query that says
 * neither done nor not ready (an error of the stream) is returned. */
static CUresult prune(fcl__cuda_link *cl) {
  const fcl__cu_api *cu = fcl__cu(NULL);
  CUresult r = CUDA_SUCCESS;
  while (cl->pending && (r = cu->EventQuery(cl->pending->done)) == CUDA_SUCCESS) {
    fcl__cuda_watched *w = cl->pending;
    cl->pending = w->next;
    w->next = cl->spare;
    cl->spare = w;
  }
  note_oldest(cl);
  return r == CUDA_ERROR_NOT_READY ? CUDA_SUCCESS : r;
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

/* Looks at cl without waiting for it (an exchange in progress holds it): its finished
 * exchanges let go, an error NCCL or CUDA reports kept in cl->trouble. */
static void look_at(fcl__cuda_link *cl) {
  if (pthread_mutex_trylock(&cl->lock) != 0) return;
  if (cl->comm && !cl->trouble[0] && fcl__cuda_current(cl->device) == FCL_OK) {
    const CUresult r = prune(cl);
    if (r != CUDA_SUCCESS) {
      const char *name = NULL;
      if (fcl__cu(NULL)->GetErrorName(r, &name) != CUDA_SUCCESS) name = NULL;
      snprintf(cl->trouble, sizeof cl->trouble, "CUDA reported %s (%d) on an exchange's stream",
               name ? name : "an error", (int)r);
    } else {
      fcl__cuda_link_failed(cl, cl->trouble, sizeof cl->trouble);
    }
  }
  pthread_mutex_unlock(&cl->lock);
}

/* Aborts cl if it is still in trouble or overdue at t (its lock taken again: it may have moved
 * on; busy: a later look). */
static void abort_if_due(fcl__cuda_link *cl, double t) {
  if (pthread_mutex_trylock(&cl->lock) != 0) return;
  if (cl->comm && fcl__cuda_current(cl->device) == FCL_OK) {
    if (cl->trouble[0]) {
      fail(cl, cl->trouble);
    } else if (prune(cl) == CUDA_SUCCESS && cl->pending && cl->timeout > 0 &&
               t - cl->pending->since > cl->timeout) {
      char why[200];
      snprintf(why, sizeof why,
               "an exchange enqueued %.0f s ago has not completed (FLOWCL_LINK_TIMEOUT = %g s): "
               "a peer failed or never joined it",
               t - cl->pending->since, cl->timeout);
      fail(cl, why);
    }
  }
  pthread_mutex_unlock(&cl->lock);
}

/* One look: every link looked at; one in trouble with nothing unfinished aborted at once (no
 * kernel to wait for); else the link with the oldest unfinished exchange of all, where it is in
 * trouble or overdue. */
static void look(double t) {
  fcl__cuda_link *first = NULL;
  double first_since = 0;
  for (fcl__cuda_link *cl = watched; cl; cl = cl->next) {
    look_at(cl);
    const double since = oldest(cl);
    if (since > 0 && (!first || since < first_since)) {
      first = cl;
      first_since = since;
    }
  }
  for (fcl__cuda_link *cl = watched; cl; cl = cl->next)
    if (cl->trouble[0] && oldest(cl) == 0) {
      abort_if_due(cl, t);
      return;
    }
  if (first) abort_if_due(first, t);
}

static void *watch(void *arg) {
  (void)arg;
  pthread_mutex_lock(&lock);
  while (watched) {
    look(now());
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
  if (r != CUDA_SUCCESS) { /* the group is enqueued: unwatched, it could hang for ever */
    fcl__cuda_watch_unprepare(cl, w);
    fail(cl, "an exchange's completion could not be recorded (cuEventRecord failed)");
    return FCL_CU_ERROR(r, "cuEventRecord (link watch): the link was aborted");
  }
  w->since = now();
  w->next = NULL;
  fcl__cuda_watched **end = &cl->pending;
  while (*end) end = &(*end)->next;
  *end = w;
  note_oldest(cl);
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
  pthread_once(&wake_once, init_wake); /* also for a link never added */
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
  note_oldest(cl);
  if (cl->counted) {
    fcl__cuda_device_link_released(cl->device);
    cl->counted = false;
  }
}
