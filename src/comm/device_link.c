/* The device transport's links (fcl_link), one per MPI communicator and context: made by the
 * first plan that asks (rank 0 makes the id, MPI_Bcast hands it to the others), shared by the
 * later plans over a congruent communicator (same ranks, same order), freed with the last. A
 * link is one NCCL communicator, whose set-up costs a collective and device memory: the FFT
 * plans, ghost plans and redistributions of one topology share it. Every decision is taken by
 * all ranks together (an allreduce of each rank's verdict), so that no rank waits in a
 * collective its peers left; leaving is collective too (the plans are destroyed together,
 * before MPI_Finalize). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "comm_impl.h"

typedef struct shared_link {
  MPI_Comm comm; /* a duplicate, for the comparison */
  fcl_context *context;
  fcl_link *link;
  int refs;
  bool broken; /* an exchange failed on it: released by aborting */
  struct shared_link *next;
} shared_link;

static shared_link *links;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* This rank's device as "host/PCI address" (unique on a host whatever devices each process is
 * shown), or "host/platform:device" where the backend has no PCI address (devices are made
 * once, so the list names it); false on a failure. */
static bool device_key(fcl_device *dev, char *key, size_t size) {
  char host[MPI_MAX_PROCESSOR_NAME] = "";
  int len = 0;
  fcl_device_info info;
  if (MPI_Get_processor_name(host, &len) != MPI_SUCCESS ||
      fcl_device_get_info(dev, &info) != FCL_OK)
    return false;
  if (info.pci_bus_id[0]) {
    snprintf(key, size, "%s/%s", host, info.pci_bus_id);
    return true;
  }
  fcl_device_entry *list = NULL;
  size_t n = 0;
  if (fcl_device_list(&list, &n) != FCL_OK) return false;
  snprintf(key, size, "%s/?", host);
  for (size_t i = 0; i < n; ++i)
    if (list[i].device == dev)
      snprintf(key, size, "%s/%u:%u", host, list[i].platform_index, list[i].device_index);
  free(list);
  return true;
}

enum { KEY = MPI_MAX_PROCESSOR_NAME + 48 };

fcl_status fcl__all_ok(MPI_Comm comm, bool ok, const char *why) {
  char reason[512]; /* why may be the error text that the error below rewrites */
  snprintf(reason, sizeof reason, "%s", why ? why : "");
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int mine = ok, all = 0, bad = ok ? size : rank, first = size;
  FCL_MPI_TRY(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm), "device link: MPI_Allreduce");
  FCL_MPI_TRY(MPI_Allreduce(&bad, &first, 1, MPI_INT, MPI_MIN, comm), "device link: MPI_Allreduce");
  if (all) return FCL_OK;
  if (!ok) return FCL_ERROR(FCL_ERR_NOT_SUPPORTED, "%s", reason);
  return FCL_ERROR(FCL_ERR_NOT_SUPPORTED,
                   "rank %d cannot take part in a device link (see its error)", first);
}

/* FCL_OK on every rank where each rank's device can link and no two ranks share a device;
 * else FCL_ERR_NOT_SUPPORTED on every rank, saying why (FCL_ERR_INVALID_ARGUMENT where they
 * could but FLOWCL_LINK_TIMEOUT is not a number). Every rank reaches every collective. */
static fcl_status agree(fcl_context *context, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  fcl_device *dev = fcl_context_device(context, 0);
  char why[512] = "", mine[KEY] = "";
  bool ok = fcl_context_device(context, 1) == NULL && fcl_link_supported(dev) == FCL_OK;
  if (!ok) snprintf(why, sizeof why, "%s", fcl_last_error());
  if (ok && !device_key(dev, mine, sizeof mine)) {
    ok = false;
    snprintf(why, sizeof why, "device link: this rank's device cannot be named: %s",
             fcl_last_error());
  }
  fcl_clear_error();
  char *keys = calloc((size_t)size, KEY);
  if (!keys) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "device link: %d device names", size);
  int rc = MPI_Allgather(mine, KEY, MPI_CHAR, keys, KEY, MPI_CHAR, comm);
  for (int q = 0; rc == MPI_SUCCESS && ok && q < size; ++q)
    if (q != rank && strcmp(keys + (size_t)q * KEY, mine) == 0) {
      ok = false;
      snprintf(why, sizeof why, "ranks %d and %d share device %s (a link needs a device per rank)",
               rank, q, mine);
    }
  free(keys);
  if (rc != MPI_SUCCESS) return fcl__mpi_error(rc, "device link: MPI_Allgather");
  FCL_TRY(fcl__all_ok(comm, ok, why));
  /* the watchdog's limit: a bad value is the user's error on every rank, not a fallback */
  double limit;
  int bad = fcl_link_timeout(&limit) != FCL_OK, any = 0;
  if (bad) snprintf(why, sizeof why, "%s", fcl_last_error());
  FCL_MPI_TRY(MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm), "device link: MPI_Allreduce");
  if (any)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "device link: %s",
                     bad ? why : "FLOWCL_LINK_TIMEOUT is not a number of seconds on another rank");
  return FCL_OK;
}

/* A new link over comm (collective): the id from rank 0, every rank's verdict shared; a
 * failure is FCL_ERR_NOT_SUPPORTED on every rank (auto then takes another transport). */
static fcl_status join(fcl_context *context, MPI_Comm comm, fcl_link **out) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  unsigned char id[FCL_LINK_ID_BYTES] = {0};
  char why[512] = "";
  bool ok = rank != 0 || fcl_link_id(fcl_context_device(context, 0), id) == FCL_OK;
  if (!ok) snprintf(why, sizeof why, "%s", fcl_last_error());
  FCL_TRY(fcl__all_ok(comm, ok, why));
  FCL_MPI_TRY(MPI_Bcast(id, FCL_LINK_ID_BYTES, MPI_BYTE, 0, comm), "device link: MPI_Bcast");
  /* the broadcast complete everywhere before the library's own rendezvous, which makes no MPI
   * call that would progress it */
  FCL_MPI_TRY(MPI_Barrier(comm), "device link: MPI_Barrier");
  ok = fcl_link_create(context, id, size, rank, out) == FCL_OK;
  if (!ok) snprintf(why, sizeof why, "%s", fcl_last_error());
  fcl_status st = fcl__all_ok(comm, ok, why);
  if (st != FCL_OK) fcl_link_release(out, true);
  return st;
}

/* This rank's cached link over a communicator congruent with comm, on context; NULL: none. */
static shared_link *cached(fcl_context *context, MPI_Comm comm) {
  for (shared_link *e = links; e; e = e->next) {
    int same = MPI_UNEQUAL;
    if (e->context == context && MPI_Comm_compare(e->comm, comm, &same) == MPI_SUCCESS &&
        (same == MPI_IDENT || same == MPI_CONGRUENT))
      return e;
  }
  return NULL;
}

fcl_status fcl__link_join(fcl_context *context, MPI_Comm comm, fcl_link **out) {
  *out = NULL;
  FCL_TRY(agree(context, comm));
  /* a cached link serves only where every rank has one (else all make a new one) */
  pthread_mutex_lock(&lock);
  shared_link *e = cached(context, comm);
  if (e) e->refs++; /* held while the others are asked */
  pthread_mutex_unlock(&lock);
  int hit = e != NULL, all = 0;
  int rc = MPI_Allreduce(&hit, &all, 1, MPI_INT, MPI_MIN, comm);
  if (rc == MPI_SUCCESS && all) {
    *out = e->link;
    return FCL_OK;
  }
  if (e) {
    fcl_link *held = e->link;
    fcl__link_leave(&held);
  }
  if (rc != MPI_SUCCESS) return fcl__mpi_error(rc, "device link: MPI_Allreduce");
  shared_link *fresh = calloc(1, sizeof *fresh);
  if (fresh) fresh->comm = MPI_COMM_NULL;
  bool ok = fresh && MPI_Comm_dup(comm, &fresh->comm) == MPI_SUCCESS;
  fcl_status st = fcl__all_ok(comm, ok, "device link: out of memory or MPI_Comm_dup failed");
  if (st == FCL_OK) st = join(context, comm, &fresh->link);
  if (st != FCL_OK) {
    if (fresh && fresh->comm != MPI_COMM_NULL) MPI_Comm_free(&fresh->comm);
    free(fresh);
    return st;
  }
  fresh->context = fcl_context_retain(context);
  fresh->refs = 1;
  pthread_mutex_lock(&lock);
  fresh->next = links;
  links = fresh;
  pthread_mutex_unlock(&lock);
  *out = fresh->link;
  return FCL_OK;
}

void fcl__link_failed(fcl_link *link) {
  pthread_mutex_lock(&lock);
  for (shared_link *e = links; e; e = e->next)
    if (e->link == link) e->broken = true;
  pthread_mutex_unlock(&lock);
}

bool fcl__link_broken(fcl_link *link) {
  bool broken = false;
  pthread_mutex_lock(&lock);
  for (shared_link *e = links; e; e = e->next)
    if (e->link == link) broken = e->broken;
  pthread_mutex_unlock(&lock);
  return broken;
}

void fcl__link_leave(fcl_link **link) {
  if (!link || !*link) return;
  shared_link *gone = NULL;
  pthread_mutex_lock(&lock);
  for (shared_link **at = &links; *at; at = &(*at)->next) {
    shared_link *e = *at;
    if (e->link != *link) continue;
    if (--e->refs == 0) {
      *at = e->next;
      gone = e;
    }
    break;
  }
  pthread_mutex_unlock(&lock);
  if (gone) { /* outside the lock: the library may wait for its peers */
    fcl_link_release(&gone->link, gone->broken);
    MPI_Comm_free(&gone->comm);
    fcl_context_release(&gone->context);
    free(gone);
  }
  *link = NULL;
}
