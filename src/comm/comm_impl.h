/* The comm layer (src/comm): moving device data between MPI ranks. Below src/field; knows
 * OpenCL buffers and MPI communicators, nothing of fields.
 *
 * Two exchanges run on one table of transports (transport.c), one transport a pair of files:
 *   the all-to-all of device blocks (alltoall.c: FFT transposes, field redistribution) and
 *   point-to-point messages through host staging (p2p.c: ghost faces).
 *   staged  transport_shm.c, p2p_shm.c  ranks of one node: each rank reads its outgoing data
 *                            from the device into its segment of an MPI-3 shared-memory window
 *                            that the OpenCL driver pins (wrapped by CL_MEM_USE_HOST_PTR
 *                            buffers), and its peers write it straight from there into their
 *                            devices: no host memcpy, no MPI copy of the data;
 *   mpi     transport_mpi.c, p2p_mpi.c  any ranks: pinned host staging (the pool's host-pinned
 *                            allocator, pinned.c) and MPI messages (the reference).
 *   device  transport_device.c  ranks whose devices link (fcl_link: NCCL between CUDA devices,
 *                            device_link.c): blocks go from device memory to device memory
 *                            (NVLink where the GPUs have it) in grouped sends and receives on
 *                            the caller's queue; no host copy and no host wait. Its all-to-all
 *                            goes by peer writes where FLOWCL_PEER_WRITES asks (default: on
 *                            two ranks) and every rank can open its peers' memory
 *                            (alltoall_peer.c, alltoall_peer_buffers.c).
 * A rank's block to itself never leaves the device. FLOWCL_TRANSPORT=auto|device|staged|mpi
 * chooses for both exchanges; auto takes device where every rank's device links (each its own
 * device), else staged where every rank of the communicator shares one node and the driver
 * accepts the window, mpi otherwise. */
#ifndef FLOWCL_COMM_IMPL_H
#define FLOWCL_COMM_IMPL_H

#include <mpi.h>
#include <stdbool.h>

#include "flowcl/array.h"
#include "flowcl/launch.h"
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
fcl_status fcl__shm_stage_create(fcl_context *context, fcl_queue *queue, MPI_Comm comm,
                                 size_t bytes, fcl__shm_stage **out);
void fcl__shm_stage_destroy(fcl__shm_stage **stage);
/* Rank's segment in this process's address space: the device reads into the own segment and
 * writes from the peers' (clEnqueueReadBuffer/WriteBuffer on these pointers, pinned). */
char *fcl__shm_stage_host(const fcl__shm_stage *stage, int rank);
/* MPI_Win_sync of the window: between host stores or loads and the messages that order them. */
fcl_status fcl__shm_stage_sync(fcl__shm_stage *stage);

/* Pinned host staging (pinned.c): a buffer of the pool's host-pinned allocator, mapped for its
 * lifetime. */
typedef struct {
  fcl_allocator *allocator;
  fcl_allocation memory;
  fcl_array *view; /* over memory, for the map */
  char *host;
} fcl__pinned;
fcl_status fcl__pinned_create(fcl_context *context, fcl_queue *queue, size_t bytes,
                              fcl__pinned *out);
/* Unmaps (waiting for the queue) and frees; a zeroed fcl__pinned is left alone. */
void fcl__pinned_destroy(fcl__pinned *pinned);

/* The link of comm's ranks on context's device (device_link.c; collective): shared with the
 * plans of a congruent communicator, released by fcl__link_leave. FCL_ERR_NOT_SUPPORTED on
 * every rank alike where a rank's device cannot link or two ranks share a device;
 * FCL_ERR_INVALID_ARGUMENT on every rank where FLOWCL_LINK_TIMEOUT is not a number. */
fcl_status fcl__link_join(fcl_context *context, MPI_Comm comm, fcl_link **out);
/* Leaves (collective where it is the last holder: the link is freed; aborted where an exchange
 * on it failed, fcl__link_failed). */
void fcl__link_leave(fcl_link **link);
void fcl__link_failed(fcl_link *link);
/* Every rank's verdict on ok (collective): FCL_OK on every rank where all are true, else
 * FCL_ERR_NOT_SUPPORTED on every rank with this rank's reason why, or the first failing
 * rank's number. */
fcl_status fcl__all_ok(MPI_Comm comm, bool ok, const char *why);

typedef enum {
  FCL__TRANSPORT_AUTO,
  FCL__TRANSPORT_DEVICE,
  FCL__TRANSPORT_STAGED,
  FCL__TRANSPORT_MPI
} fcl__transport;

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

/* Point-to-point messages between ranks of a communicator through host staging (ghost faces):
 * the caller copies a send's bytes from the device into the staging the transport gives
 * (fcl__p2p_group.host), and a receive's bytes from there into the device, around the
 * transport's host steps. Messages travel in groups, each posted and completed at once. */
typedef struct fcl__p2p fcl__p2p;
typedef struct fcl__p2p_group fcl__p2p_group;

/* The host steps of a group, in the order a caller runs them:
 *   REUSE     before the device writes into the group's send staging;
 *   POST      after those writes were enqueued (a transport that needs them done waits);
 *   COMPLETE  when the received bytes are needed: after it, the device may read them;
 *   RELEASE   after the reads from the receive staging were enqueued.
 * A transport that has nothing to do at a step leaves it NULL. */
typedef enum {
  FCL__P2P_REUSE,
  FCL__P2P_POST,
  FCL__P2P_COMPLETE,
  FCL__P2P_RELEASE,
  FCL__P2P_STEPS
} fcl__p2p_step;

/* A transport's all-to-all. */
typedef struct {
  /* Collective. FCL_ERR_NOT_SUPPORTED (on every rank alike) when it cannot run here. */
  fcl_status (*setup)(fcl__alltoall *x);
  /* n (<= batch) pairs a[i], b[i] */
  fcl_status (*run)(fcl__alltoall *x, int n, fcl_mem *const *a, fcl_mem *const *b, bool forward);
  void (*destroy)(fcl__alltoall *x);
} fcl__alltoall_ops;

/* A transport's point-to-point messages. */
typedef struct {
  /* Collective: staging of p->bytes. FCL_ERR_NOT_SUPPORTED (on every rank alike) when it
   * cannot run here. */
  fcl_status (*setup)(fcl__p2p *p);
  /* Plan time, with the group's peers only: sets g->host. */
  fcl_status (*connect)(fcl__p2p_group *g);
  /* The host steps (fcl_host_fn: the group, the caller's queue); NULL: nothing to do. */
  fcl_host_fn step[FCL__P2P_STEPS];
  void (*destroy)(fcl__p2p *p);
  /* The steps only enqueue on the caller's queue (fcl_launcher_create_host_enqueue), and the
   * staging is device memory (fcl__p2p_group.stage): the caller packs and unpacks there. */
  bool on_device;
} fcl__p2p_ops;

/* The transport table: each transport's exchanges. */
typedef struct {
  const char *name;
  const fcl__alltoall_ops *alltoall;
  const fcl__p2p_ops *p2p;
} fcl__transport_ops;

extern const fcl__transport_ops fcl__transport_mpi;
extern const fcl__transport_ops fcl__transport_staged;
extern const fcl__transport_ops fcl__transport_device;
extern const fcl__alltoall_ops fcl__alltoall_mpi, fcl__alltoall_staged, fcl__alltoall_device;
extern const fcl__p2p_ops fcl__p2p_mpi, fcl__p2p_staged, fcl__p2p_device;

/* Sets up object on the transport kind asks for: try_ sets it up on one transport (on failure
 * leaving nothing behind); AUTO tries device, then staged, then mpi, each where the one before
 * is FCL_ERR_NOT_SUPPORTED (logged at info level with what). Collective where try_ is. */
typedef fcl_status (*fcl__transport_try)(void *object, const fcl__transport_ops *transport);
fcl_status fcl__transport_select(fcl__transport kind, const char *what, fcl__transport_try try_,
                                 void *object);

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
  bool peer_writes; /* the device transport stores into the peers' memory (alltoall_peer.c) */
  void *state;
};

/* Peer writes of the device transport's all-to-all (alltoall_peer.c): each rank stores its
 * blocks straight into its peers' buffers or staging, opened in its process
 * (fcl_mem_open_shared). create (collective, after x's layout, on x's link): *out NULL and
 * FCL_OK where some rank cannot (logged) or FLOWCL_PEER_WRITES does not ask for them (auto: two
 * ranks; on: any number; off: none); FCL_ERR_INVALID_ARGUMENT on
 * every rank where that variable is none of auto, on and off. run: as the transport's run, on x's
 * queue, no host wait. destroy: after x's queue has finished; settled: collective, every rank's
 * queue finished without an error (the ranks meet before freeing what the others opened);
 * otherwise what this rank shared is left allocated (never freed under a peer's mapping). */
typedef struct fcl__peer_writes fcl__peer_writes;
fcl_status fcl__peer_writes_create(fcl__alltoall *x, fcl_link *link, fcl__peer_writes **out);
fcl_status fcl__peer_writes_run(fcl__peer_writes *w, fcl__alltoall *x, int n, fcl_mem *const *a,
                                fcl_mem *const *b, bool forward);
void fcl__peer_writes_destroy(fcl__peer_writes **w, bool settled);
/* The peers' destination buffers of peer writes, opened here (alltoall_peer_buffers.c).
 * exchange (collective, on the host): this rank's n destination buffers described to every rank
 * and theirs opened (kept open; mine[i] NULL: not to be stored into by the peers);
 * theirs[q * batch + i]: peer q's i-th, NULL where its block goes through q's staging;
 * shared[i]: whether this rank's i-th takes the peers' stores (else its blocks come through the
 * staging). close: the peers' buffers closed. release: closes, and lets go of the buffers this
 * rank shared: only once every rank has closed (their memory must not be freed while open). */
typedef struct fcl__peer_buffers fcl__peer_buffers;
fcl_status fcl__peer_buffers_create(const fcl__alltoall *x, fcl__peer_buffers **out);
fcl_status fcl__peer_buffers_exchange(fcl__peer_buffers *pb, fcl__alltoall *x, int n,
                                      fcl_mem *const *mine, fcl_mem **theirs, bool *shared);
void fcl__peer_buffers_close(fcl__peer_buffers *pb);
void fcl__peer_buffers_release(fcl__peer_buffers **pb);
/* Whether an exchange on link failed (fcl__link_failed): its peers may never meet again. */
bool fcl__link_broken(fcl_link *link);

/* Plan (collective): copies the block lists; batch >= 1 pairs per run at most (the staged
 * transport's shared staging holds that many); kind AUTO tries device, staged, then mpi. */
fcl_status fcl__alltoall_create(fcl_context *context, fcl_queue *queue, MPI_Comm comm, size_t unit,
                                const fcl__block *send, const fcl__block *recv, int batch,
                                fcl__transport kind, fcl__alltoall **out);
/* Collective. Ordered on the plan's queue: its later commands see b (a backward run: a); on
 * the staged and mpi transports the queue is finished on return, the device transport does
 * not wait. */
fcl_status fcl__alltoall_run(fcl__alltoall *x, fcl_mem *a, fcl_mem *b, bool forward);
/* The same for n pairs (1 <= n <= batch) in one exchange. */
fcl_status fcl__alltoall_run_batch(fcl__alltoall *x, int n, fcl_mem *const *a, fcl_mem *const *b,
                                   bool forward);
const char *fcl__alltoall_transport(const fcl__alltoall *x);
/* Whether x's runs go by peer writes (the device transport where every rank can). */
bool fcl__alltoall_peer_writes(const fcl__alltoall *x);
void fcl__alltoall_destroy(fcl__alltoall **x);

enum {
  FCL__P2P_MAX_MESSAGES = 12, /* per group */
  FCL__P2P_TAGS = 32          /* callers' tags are below; the transports' own ride above */
};

/* One message of a group: bytes with one peer, at an offset of this rank's staging, or where a
 * device transport's (fcl__p2p_on_device) message has a buffer of its own, of that buffer. */
typedef struct {
  int peer, tag;
  bool send;
  size_t bytes, at;
  fcl_mem *buf; /* NULL: the staging */
} fcl__message;

struct fcl__p2p_group {
  fcl__p2p *p2p;
  int n;
  fcl__message msg[FCL__P2P_MAX_MESSAGES];
  /* where message i's bytes are: a send's to be filled, a receive's to be read (connect):
   * host memory, or on a device transport (ops on_device) device memory at msg[i].at */
  char *host[FCL__P2P_MAX_MESSAGES];
  fcl_mem *stage;
  MPI_Request req[FCL__P2P_MAX_MESSAGES];  /* the transport's, for the exchange in flight */
  MPI_Request done[FCL__P2P_MAX_MESSAGES]; /* the transport's, completed after an exchange */
  bool done_pending;                       /* done's requests are waited for on destroy */
  fcl__p2p_group *next;
};

struct fcl__p2p {
  const fcl__transport_ops *ops;
  fcl_context *context;
  fcl_queue *queue;
  MPI_Comm comm; /* the caller's (its tags too), not duplicated */
  int rank, size;
  size_t bytes; /* staging of this rank */
  fcl__p2p_group *groups;
  void *state;
};

/* Collective over comm: staging of bytes on the transport kind chooses (queue: the caller's,
 * which must outlive p; the staging's copies go on it). */
fcl_status fcl__p2p_create(fcl_context *context, fcl_queue *queue, MPI_Comm comm, size_t bytes,
                           fcl__transport kind, fcl__p2p **out);
/* A group of n messages (owned by p), made together with the peers it names, which make their
 * groups with this rank in the same order; tags below FCL__P2P_TAGS. */
fcl_status fcl__p2p_group_create(fcl__p2p *p, int n, const fcl__message *msg, fcl__p2p_group **out);
/* A host launcher running a step of the group; *out NULL where the transport has none. */
fcl_status fcl__p2p_launcher(fcl__p2p_group *g, fcl__p2p_step step, const char *name,
                             fcl_launcher **out);
const char *fcl__p2p_transport(const fcl__p2p *p);
/* Whether p's staging is device memory (the groups' stage) and its steps only enqueue. */
bool fcl__p2p_on_device(const fcl__p2p *p);
/* The messages' own buffers old[i] replaced by now[i] (a field's buffers swapped). */
void fcl__p2p_rebind(fcl__p2p *p, size_t n, fcl_mem *const *old, fcl_mem *const *now);
/* Waits for the transport's pending requests; the caller's queue must be idle. */
void fcl__p2p_destroy(fcl__p2p **p);

#endif
