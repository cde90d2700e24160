/* The device transport's links (fcl_link), one per MPI communicator and context: made by the
 * first plan that asks (rank 0 makes the id, MPI_Bcast hands it to the others), shared by the
 * later plans over a congruent communicator (same ranks, same order), freed with the last. A
 * link is one NCCL communicator, whose set-up costs a collective and device memory: the FFT
 * plans, ghost plans and redistributions of one topology share it. */
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
  struct shared_link *next;
} shared_link;

static shared_link *links;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* This rank's device as "host/platform:device" (devices are made once, so the list names it). */
static fcl_status device_key(fcl_device *dev, char *key, size_t size) {
  char host[MPI_MAX_PROCESSOR_NAME] = "";
  int len = 0;
  FCL_MPI_TRY(MPI_Get_processor_name(host, &len), "device link: MPI_Get_processor_name");
  fcl_device_entry *list = NULL;
  size_t n = 0;
  FCL_TRY(fcl_device_list(&list, &n));
  snprintf(key, size, "%s/?", host);
  for (size_t i = 0; i < n; ++i)
    if (list[i].device == dev)
      snprintf(key, size, "%s/%u:%u", host, list[i].platform_index, list[i].device_index);
  free(list);
  return FCL_OK;
}

enum { KEY = 96 };

/* FCL_OK on every rank where each rank's device can link and no two ranks share a device;
 * else FCL_ERR_NOT_SUPPORTED on every rank, saying why. */
static fcl_status agree(fcl_context *context, MPI_Comm comm) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  fcl_device *dev = fcl_context_device(context, 0);
  char why[256] = "";
  int ok = fcl_context_device(context, 1) == NULL && fcl_link_supported(dev) == FCL_OK;
  if (!ok) snprintf(why, sizeof why, "%s", fcl_last_error());
  fcl_clear_error();
  char mine[KEY] = "";
  char *keys = calloc((size_t)size, KEY);
  if (!keys) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "device link");
  fcl_status st = ok ? device_key(dev, mine, sizeof mine) : FCL_OK;
  int rc = MPI_Allgather(mine, KEY, MPI_CHAR, keys, KEY, MPI_CHAR, comm);
  if (rc != MPI_SUCCESS) {
    free(keys);
    return fcl__mpi_error(rc, "device link: MPI_Allgather");
  }
  int twin = -1;
  for (int q = 0; ok && st == FCL_OK && q < size; ++q)
    if (q != rank && strcmp(keys + (size_t)q * KEY, mine) == 0) twin = q;
  free(keys);
  if (st != FCL_OK) return st;
  if (twin >= 0) {
    ok = 0;
    snprintf(why, sizeof why, "ranks %d and %d share device %s (a link needs a device per rank)",
             rank, twin, mine);
  }
  int all = 0, first_bad = size;
  int bad_rank = ok ? size : rank;
  FCL_MPI_TRY(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm), "device link: MPI_Allreduce");
  FCL_MPI_TRY(MPI_Allreduce(&bad_rank, &first_bad, 1, MPI_INT, MPI_MIN, comm),
              "device link: MPI_Allreduce");
  if (all) return FCL_OK;
  if (!ok) return FCL_ERROR(FCL_ERR_NOT_SUPPORTED, "%s", why);
  return FCL_ERROR(FCL_ERR_NOT_SUPPORTED, "rank %d's device cannot link", first_bad);
}

/* A new link over comm (collective): the id from rank 0, every rank's verdict shared. */
static fcl_status join(fcl_context *context, MPI_Comm comm, fcl_link **out) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  unsigned char id[FCL_LINK_ID_BYTES] = {0};
  int ok = rank != 0 || fcl_link_id(fcl_context_device(context, 0), id) == FCL_OK;
  FCL_MPI_TRY(MPI_Bcast(&ok, 1, MPI_INT, 0, comm), "device link: MPI_Bcast");
  if (!ok)
    return rank == 0 ? fcl_last_status()
                     : FCL_ERROR(FCL_ERR_CUDA, "device link: rank 0 could not make an id");
  FCL_MPI_TRY(MPI_Bcast(id, FCL_LINK_ID_BYTES, MPI_BYTE, 0, comm), "device link: MPI_Bcast");
  fcl_status st = fcl_link_create(context, id, size, rank, out);
  int mine = st == FCL_OK, all = 0;
  FCL_MPI_TRY(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm), "device link: MPI_Allreduce");
  if (all) return FCL_OK;
  fcl_link_release(out, true);
  return st != FCL_OK ? st : FCL_ERROR(FCL_ERR_CUDA, "device link: another rank failed to join");
}

fcl_status fcl__link_join(fcl_context *context, MPI_Comm comm, fcl_link **out) {
  *out = NULL;
  FCL_TRY(agree(context, comm));
  pthread_mutex_lock(&lock);
  shared_link *e = links;
  for (; e; e = e->next) {
    int same = MPI_UNEQUAL;
    if (e->context == context && MPI_Comm_compare(e->comm, comm, &same) == MPI_SUCCESS &&
        (same == MPI_IDENT || same == MPI_CONGRUENT))
      break;
  }
  fcl_status st = FCL_OK;
  if (!e) {
    e = calloc(1, sizeof *e);
    st = e ? join(context, comm, &e->link) : FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "device link");
    int rc = st == FCL_OK ? MPI_Comm_dup(comm, &e->comm) : MPI_SUCCESS;
    if (rc != MPI_SUCCESS) {
      st = fcl__mpi_error(rc, "device link: MPI_Comm_dup");
      fcl_link_release(&e->link, false);
    }
    if (st == FCL_OK) {
      e->context = fcl_context_retain(context);
      e->next = links;
      links = e;
    } else {
      free(e);
      e = NULL;
    }
  }
  if (e) {
    e->refs++;
    *out = e->link;
  }
  pthread_mutex_unlock(&lock);
  return st;
}

void fcl__link_leave(fcl_link **link) {
  if (!link || !*link) return;
  pthread_mutex_lock(&lock);
  for (shared_link **at = &links; *at; at = &(*at)->next) {
    shared_link *e = *at;
    if (e->link != *link) continue;
    if (--e->refs == 0) {
      *at = e->next;
      fcl_link_release(&e->link, false);
      MPI_Comm_free(&e->comm);
      fcl_context_release(&e->context);
      free(e);
    }
    break;
  }
  pthread_mutex_unlock(&lock);
  *link = NULL;
}
