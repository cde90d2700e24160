/* Host staging that the ranks of one node share: each rank's segment of an MPI-3 shared-memory
 * window, wrapped for every rank by its OpenCL driver (CL_MEM_USE_HOST_PTR) so that the driver
 * pins it: a device read into a segment, or a write from one, by plain pointer
 * (clEnqueueReadBuffer/WriteBuffer) then runs at the PCIe link's speed (NVIDIA's OpenCL, two
 * ranks on two H100 of one host copying at once: 52.3 GB/s device->host and 51.8 host->device per
 * rank, against 54.3 / 52.2 for mapped CL_MEM_ALLOC_HOST_PTR memory), and a peer reads what a rank
 * wrote with no host memcpy and no MPI copy. The wrapping buffers themselves are never used by
 * commands: reading through them (a device copy into the buffer, then a map) took twice as long
 * for a ghost exchange (1.91 against 0.94 ms, two ranks sharing one H100). Ordering between ranks
 * is the caller's (comm_impl.h). */
#include <stdlib.h>
#include <sys/statvfs.h>

#include "check.h"
#include "comm_impl.h"

#define SEGMENT_ALIGN ((size_t)1 << 16)

struct fcl__shm_stage {
  MPI_Win win;
  int size;
  size_t segment;
  fcl_mem **wrap; /* per rank */
  char **base;    /* per rank */
};

void fcl__shm_stage_destroy(fcl__shm_stage **sp) {
  if (!sp || !*sp) return;
  fcl__shm_stage *s = *sp;
  for (int q = 0; s->wrap && q < s->size; ++q)
    if (s->wrap[q]) fcl_mem_release(&s->wrap[q]);
  if (s->win != MPI_WIN_NULL) MPI_Win_free(&s->win);
  free(s->wrap);
  free(s->base);
  free(s);
  *sp = NULL;
}

/* Every rank's verdict: FCL_OK only where all succeeded, else FCL_ERR_NOT_SUPPORTED naming the
 * step (with the failing rank's own error where it failed). */
static fcl_status agree(MPI_Comm comm, fcl_status mine, const char *step) {
  int ok = mine == FCL_OK, all = 0;
  FCL_MPI_TRY(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm), "shared staging: agree");
  if (all) return FCL_OK;
  if (mine != FCL_OK)
    return FCL_ERROR(FCL_ERR_NOT_SUPPORTED, "shared staging: %s: %s", step, fcl_last_error());
  return FCL_ERROR(FCL_ERR_NOT_SUPPORTED, "shared staging: %s failed on another rank", step);
}

/* Open MPI backs shared windows with files in /dev/shm (osc_sm_backing_directory): a window
 * larger than the space there is mapped all the same and faults (SIGBUS) when touched, so the
 * space is checked first. Other MPIs: no check. */
static fcl_status check_backing(size_t node_bytes) {
  const char *dir = getenv("OMPI_MCA_osc_sm_backing_directory");
  if (!dir || !*dir) dir = "/dev/shm";
  struct statvfs v;
  if (statvfs(dir, &v) != 0) return FCL_OK;
  unsigned long long avail = (unsigned long long)v.f_bavail * v.f_frsize;
  if (avail >= node_bytes + node_bytes / 8) return FCL_OK;
  return FCL_ERROR(FCL_ERR_NOT_SUPPORTED,
                   "shared staging: %zu MiB of windows for this node, "
                   "%llu MiB free in %s",
                   node_bytes >> 20, avail >> 20, dir);
}

static fcl_status create(fcl__shm_stage *s, fcl_context *context, MPI_Comm comm, size_t bytes) {
  MPI_Comm node;
  FCL_MPI_TRY(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
              "shared staging: MPI_Comm_split_type");
  int node_size = 0, one_node = 0;
  MPI_Comm_size(node, &node_size);
  MPI_Comm_free(&node);
  int mine = node_size == s->size;
  FCL_MPI_TRY(MPI_Allreduce(&mine, &one_node, 1, MPI_INT, MPI_MIN, comm), "shared staging: agree");
  if (!one_node)
    return FCL_ERROR(FCL_ERR_NOT_SUPPORTED,
                     "shared staging: the %d ranks are not all on one "
                     "node",
                     s->size);
  unsigned long long need = bytes, most = 0;
  FCL_MPI_TRY(MPI_Allreduce(&need, &most, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm),
              "shared staging: segment size");
  s->segment = ((size_t)most + SEGMENT_ALIGN - 1) / SEGMENT_ALIGN * SEGMENT_ALIGN;
  if (!s->segment) s->segment = SEGMENT_ALIGN;
  FCL_TRY(agree(comm, check_backing(s->segment * (size_t)s->size), "space for the window"));
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "alloc_shared_noncontig", "true");
  char *mybase = NULL;
  int rc = MPI_Win_allocate_shared((MPI_Aint)s->segment, 1, info, comm, &mybase, &s->win);
  MPI_Info_free(&info);
  FCL_TRY(agree(comm, rc == MPI_SUCCESS ? FCL_OK : fcl__mpi_error(rc, "MPI_Win_allocate_shared"),
                "shared window"));
  s->wrap = calloc((size_t)s->size, sizeof *s->wrap);
  s->base = calloc((size_t)s->size, sizeof *s->base);
  fcl_status st = s->wrap && s->base ? FCL_OK : FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "shared staging");
  for (int q = 0; st == FCL_OK && q < s->size; ++q) {
    MPI_Aint size;
    int disp;
    char *base;
    rc = MPI_Win_shared_query(s->win, q, &size, &disp, &base);
    if (rc != MPI_SUCCESS) {
      st = fcl__mpi_error(rc, "shared staging: MPI_Win_shared_query");
      break;
    }
    s->base[q] = base;
    st = fcl_mem_create(context, FCL_MEM_HOST, s->segment, base, &s->wrap[q]);
  }
  return agree(comm, st, "wrapping the window");
}

fcl_status fcl__shm_stage_create(fcl_context *context, MPI_Comm comm, size_t bytes,
                                 fcl__shm_stage **out) {
  *out = NULL;
  fcl__shm_stage *s = calloc(1, sizeof *s);
  if (!s) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "shared staging");
  s->win = MPI_WIN_NULL;
  MPI_Comm_size(comm, &s->size);
  fcl_status st = create(s, context, comm, bytes);
  if (st != FCL_OK) {
    fcl__shm_stage_destroy(&s);
    return st;
  }
  *out = s;
  return FCL_OK;
}

char *fcl__shm_stage_host(const fcl__shm_stage *s, int rank) { return s->base[rank]; }

fcl_status fcl__shm_stage_sync(fcl__shm_stage *s) {
  FCL_MPI_TRY(MPI_Win_sync(s->win), "shared staging: MPI_Win_sync");
  return FCL_OK;
}
