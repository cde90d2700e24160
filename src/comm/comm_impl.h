/* The comm layer (src/comm): moving device data between MPI ranks. Below src/field; knows
 * OpenCL buffers and MPI communicators, nothing of fields.
 *
 * One exchange, the all-to-all of device blocks (alltoall.c), runs on a transport chosen from a
 * table of backends, one file each:
 *   staged  transport_shm.c  ranks of one node: each rank reads its outgoing blocks from the
 *                            device into its segment of an MPI-3 shared-memory window that the
 *                            OpenCL driver pins (wrapped by CL_MEM_USE_HOST_PTR buffers), and
 *                            its peers write them straight from there into their devices: no
 *                            host memcpy, no MPI copy of the data;
 *   mpi     transport_mpi.c  any ranks: pinned host staging and MPI_Alltoallv (the reference).
 * A rank's block to itself never leaves the device. FLOWCL_TRANSPORT=auto|staged|mpi chooses;
 * auto takes staged where every rank of the communicator shares one node and the driver accepts
 * the window, mpi otherwise. */
#ifndef FLOWCL_COMM_IMPL_H
#define FLOWCL_COMM_IMPL_H

#include <mpi.h>
#include <stdbool.h>

#include "flowcl/runtime.h"

/* MPI failure -> FCL_ERR_MPI with MPI's own message. */
fcl_status fcl__mpi_error(int code, const char *what);
#define FCL_MPI_TRY(call, what)                                                                    \
  do {                                                                                             \
    int mpi_rc_ = (call);                                                                          \
    if (mpi_rc_ != MPI_SUCCESS) return fcl__mpi_error(mpi_rc_, what);                              \
  } while (0)

/* A 3D rectangle of bytes in a buffer, as OpenCL's *BufferRect calls take it: region[0] in
 * bytes, rows of row_pitch bytes, slices of slice_pitch bytes, starting at byte offset. A block
 * travels packed (region[0] * region[1] * region[2] contiguous bytes, rows in order). */
typedef struct {
  size_t offset;
  size_t region[3];
  size_t row_pitch, slice_pitch;
} fcl__block;

static inline size_t fcl__block_bytes(const fcl__block *b) {
  return b->region[0] * b->region[1] * b->region[2];
}

/* A contiguous run of bytes as a block. */
static inline fcl__block fcl__block_range(size_t offset, size_t bytes) {
  fcl__block b = {offset, {bytes, 1, 1}, bytes, bytes};
  return b;
}

/* Whether a block is one contiguous run of bytes. */
bool fcl__block_contiguous(const fcl__block *b);
/* The finest split of a block into contiguous parts of its packed bytes: unit for a contiguous
 * block, else a slice (or a row, for a single slice). */
size_t fcl__block_grain(const fcl__block *b, size_t unit);
/* Packed bytes [lo, hi) of a block as a block (lo and hi multiples of its grain). */
fcl__block fcl__block_part(const fcl__block *b, size_t lo, size_t hi);

/* Enqueue a copy of block s of src into block d of dst (same bytes; where the shapes differ, one
 * of them must be contiguous). */
fcl_status fcl__block_copy(fcl_queue *queue, fcl_mem *src, const fcl__block *s, fcl_mem *dst,
                           const fcl__block *d);
/* Enqueue a copy of block b of buf to or from packed host memory (not blocking). */
fcl_status fcl__block_read(fcl_queue *queue, fcl_mem *buf, const fcl__block *b, void *host);
fcl_status fcl__block_write(fcl_queue *queue, fcl_mem *buf, const fcl__block *b, const void *host);

/* Host staging shared by the ranks of one node (shm_stage.c): each rank's segment of an MPI-3
 * shared-memory window, pinned by the driver for every rank. Ordering is the caller's: a read
 * into the own segment is complete (its event waited for), the window synced, then the peers
 * told (a message or a barrier); they sync and write from it. */
typedef struct fcl__shm_stage fcl__shm_stage;
/* Collective: bytes per rank (the largest asked by any rank is given to all);
 * FCL_ERR_NOT_SUPPORTED on every rank when the ranks span nodes or the driver refuses. */
fcl_status fcl__shm_stage_create(fcl_context *context, MPI_Comm comm, size_t bytes,
                                 fcl__shm_stage **out);
void fcl__shm_stage_destroy(fcl__shm_stage **stage);
/* Rank's segment in this process's address space: the device reads into the own segment and
 * writes from the peers' (clEnqueueReadBuffer/WriteBuffer on these pointers, pinned). */
char *fcl__shm_stage_host(const fcl__shm_stage *stage, int rank);
/* MPI_Win_sync of the window: between host stores or loads and the messages that order them. */
fcl_status fcl__shm_stage_sync(fcl__shm_stage *stage);

typedef enum { FCL__TRANSPORT_AUTO, FCL__TRANSPORT_STAGED, FCL__TRANSPORT_MPI } fcl__transport;

/* FLOWCL_TRANSPORT (unset or empty: auto); an unknown value is an error naming it. */
fcl_status fcl__transport_from_env(fcl__transport *out);
const char *fcl__transport_name(fcl__transport t);

/* The all-to-all between two buffers, A and B, of every rank of comm. send[q] is the block of A
 * exchanged with rank q, recv[q] the block of B exchanged with rank q; forward moves each rank's
 * send[q] into rank q's recv[me], backward the reverse. The byte counts must match pairwise and
 * be multiples of unit (the element size); blocks may be empty. A run may move up to `batch`
 * pairs of buffers (the components of a field) with the same blocks at once: one exchange, one
 * pipeline, one synchronization for all of them. */
typedef struct fcl__alltoall fcl__alltoall;

typedef struct {
  const char *name;
  /* Collective. FCL_ERR_NOT_SUPPORTED (on every rank alike) when it cannot run here. */
  fcl_status (*setup)(fcl__alltoall *x);
  /* n (<= batch) pairs a[i], b[i] */
  fcl_status (*run)(fcl__alltoall *x, int n, fcl_mem *const *a, fcl_mem *const *b, bool forward);
  void (*destroy)(fcl__alltoall *x);
} fcl__transport_ops;

struct fcl__alltoall {
  const fcl__transport_ops *ops;
  fcl_context *context;
  fcl_queue *queue;
  MPI_Comm comm; /* duplicated: ours */
  int rank, size;
  size_t unit;
  int batch;                 /* most buffer pairs per run */
  fcl__block *send, *recv;   /* per peer */
  size_t *send_at, *recv_at; /* packed offsets of the peers' blocks (own block excluded) */
  size_t send_total, recv_total;
  void *state;
};

extern const fcl__transport_ops fcl__transport_mpi;
extern const fcl__transport_ops fcl__transport_staged;

/* Plan (collective): copies the block lists; batch >= 1 pairs per run at most (the staged
 * transport's shared staging holds that many); kind AUTO tries staged, then mpi. */
fcl_status fcl__alltoall_create(fcl_context *context, fcl_queue *queue, MPI_Comm comm, size_t unit,
                                const fcl__block *send, const fcl__block *recv, int batch,
                                fcl__transport kind, fcl__alltoall **out);
/* Collective; returns when a and b may be reused (the queue is finished). */
fcl_status fcl__alltoall_run(fcl__alltoall *x, fcl_mem *a, fcl_mem *b, bool forward);
/* The same for n pairs (1 <= n <= batch) in one exchange. */
fcl_status fcl__alltoall_run_batch(fcl__alltoall *x, int n, fcl_mem *const *a, fcl_mem *const *b,
                                   bool forward);
const char *fcl__alltoall_transport(const fcl__alltoall *x);
void fcl__alltoall_destroy(fcl__alltoall **x);

#endif
