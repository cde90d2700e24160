/** @file
 * flowcl memory layer: allocators and a binned, thread-safe, event-fenced memory pool.
 *
 * An allocator creates device memory one way (deferred, immediate, host-pinned, SVM, or a
 * caller's own ops table). A pool sits on one allocator and keeps freed blocks in bins for
 * reuse: a bin is identified by the size's exponent and its next L leading bits, so a request is
 * rounded up by at most a factor 1 + 2^-L and served from its own bin, most recently freed
 * first. All pool functions are thread safe.
 *
 * Event-fenced reuse: fcl_pool_free_after(pool, block, n, events) hands a block back while
 * commands (on any queue) may still use it; the pool reuses it only once every event has
 * completed. fcl_pool_free() is for blocks with no pending use. */
#ifndef FLOWCL_POOL_H
#define FLOWCL_POOL_H

#include "flowcl/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------ */
/* Allocators                                                                                  */
/* ------------------------------------------------------------------------------------------ */

/** One piece of memory from an allocator: a buffer, or an SVM pointer (buffer NULL). */
typedef struct {
  fcl_mem *buffer; /**< the buffer (NULL for SVM) */
  void *svm;       /**< the SVM pointer (NULL for a buffer) */
  size_t size;     /**< bytes */
} fcl_allocation;

/** Operations of an allocator (SUNDIALS-style ops table). alloc returns FCL_ERR_OUT_OF_MEMORY
 * when the device has no room, so that pools can release held memory and retry. */
typedef struct {
  /** Allocate size bytes into *out (FCL_ERR_OUT_OF_MEMORY when there is no room). */
  fcl_status (*alloc)(void *impl, size_t size, fcl_allocation *out);
  /** Free what alloc returned. */
  void (*free)(void *impl, fcl_allocation *allocation);
  void (*destroy)(void *impl); /**< may be NULL */
} fcl_allocator_ops;

/** Makes device memory one way (opaque, reference counted, thread safe). */
typedef struct fcl_allocator fcl_allocator;

/** Memory as fcl_mem_create makes it: the driver may defer the allocation to first use, so running out
 * of memory can surface at a later enqueue. A request that would make this allocator hold more
 * than the device's memory is refused here (FCL_ERR_OUT_OF_MEMORY with the figures): some
 * drivers accept it and fail at first use (PoCL aborts). kind: FCL_MEM_DEVICE or FCL_MEM_PINNED
 * (what fcl_mem_create makes). Release *out with fcl_allocator_release, as every allocator below. */
fcl_status fcl_allocator_create_deferred(fcl_context *context, fcl_mem_kind kind,
                                         fcl_allocator **out);
/** Buffers made resident at allocation time (a migration enqueued on queue and waited for), so
 * out-of-memory is reported by the allocation. The queue is retained. */
fcl_status fcl_allocator_create_immediate(fcl_context *context, fcl_queue *queue, fcl_mem_kind kind,
                                          fcl_allocator **out);
/** Host-pinned staging buffers (FCL_MEM_PINNED), for fast mapped transfers. */
fcl_status fcl_allocator_create_host_pinned(fcl_context *context, fcl_allocator **out);
/** Shared virtual memory (clSVMAlloc): fine-grained when every device of the context supports
 * it, else coarse-grained. FCL_ERR_NOT_SUPPORTED naming the device when a device has no SVM. */
fcl_status fcl_allocator_create_svm(fcl_context *context, fcl_allocator **out);
/** An allocator over the caller's ops; impl is passed to them and destroyed with ops->destroy. */
fcl_status fcl_allocator_create_custom(const fcl_allocator_ops *ops, void *impl,
                                       fcl_allocator **out);
/** Add a reference (the caller then releases it too); returns allocator. Accepts NULL. */
fcl_allocator *fcl_allocator_retain(fcl_allocator *allocator);
/** Drop one reference; destroys at zero (memory allocated from it must be freed before);
 * accepts NULL; sets *allocator = NULL. */
void fcl_allocator_release(fcl_allocator **allocator);
/** size bytes (> 0) straight from the allocator, no pool: FCL_ERR_OUT_OF_MEMORY when there is
 * no room. Free with fcl_allocator_free. */
fcl_status fcl_allocator_alloc(fcl_allocator *allocator, size_t size, fcl_allocation *out);
/** Free an allocation of this allocator (its size becomes 0). NULL is ignored. */
void fcl_allocator_free(fcl_allocator *allocator, fcl_allocation *allocation);

/* ------------------------------------------------------------------------------------------ */
/* Pool                                                                                        */
/* ------------------------------------------------------------------------------------------ */

/** A binned, event-fenced memory pool over an allocator (opaque, reference counted, thread
 * safe). */
typedef struct fcl_pool fcl_pool;
/** A block handed out by a pool (opaque; owned by the pool, given back with fcl_pool_free). */
typedef struct fcl_pool_block fcl_pool_block;

/** Largest number L of leading bits after the exponent that identify a bin. */
#define FCL_POOL_MAX_LEADING_BITS 8u
/** Freed blocks are filled with this byte in debug mode: 0xFF...FF is a NaN as float and as
 * double, so reading stale data shows up as NaN. */
#define FCL_POOL_POISON_BYTE 0xFF

/** How a pool bins and checks its blocks (fcl_pool_default_options, then changes). */
typedef struct {
  unsigned leading_bits;    /**< L, 0..FCL_POOL_MAX_LEADING_BITS; default 4 */
  size_t max_managed_bytes; /**< cap on managed bytes (held + active); 0 = none */
  bool debug;               /**< poison freed blocks (also: FLOWCL_POOL_DEBUG=1) */
  fcl_queue *debug_queue;   /**< queue used to poison buffers in debug mode */
} fcl_pool_options;

/** Defaults: L = 4, no cap, debug from FLOWCL_POOL_DEBUG. */
fcl_pool_options fcl_pool_default_options(void);

/** A pool over allocator (retained). options NULL = defaults. Debug mode needs debug_queue for
 * buffer allocators. Release *out with fcl_pool_release. */
fcl_status fcl_pool_create(fcl_allocator *allocator, const fcl_pool_options *options,
                           fcl_pool **out);
/** Add a reference (the caller then releases it too); returns pool. Accepts NULL. */
fcl_pool *fcl_pool_retain(fcl_pool *pool);
/** Drops a reference; at zero, every held block is freed. Blocks still active keep nothing
 * alive: free them before the last release (a leak is logged). */
void fcl_pool_release(fcl_pool **pool);

/** A block of at least size bytes (size > 0). Reuses a ready held block of the same bin, most
 * recently freed first; otherwise allocates. On out-of-memory (or the cap) it frees held blocks,
 * largest first, waits for fenced blocks, and retries; if that fails too: FCL_ERR_OUT_OF_MEMORY
 * with the request and the pool's figures in the message. Never hands out NULL. */
fcl_status fcl_pool_alloc(fcl_pool *pool, size_t size, fcl_pool_block **block);
/** Give a block back for reuse now (no command may still use it). NULL is ignored. */
void fcl_pool_free(fcl_pool *pool, fcl_pool_block *block);
/** Give a block back that commands may still use: reused only once every event has completed
 * (the events are retained). */
fcl_status fcl_pool_free_after(fcl_pool *pool, fcl_pool_block *block, unsigned num_events,
                               fcl_event *const *events);

/** Bind an active block to a queue (PyOpenCL's PooledSVM.bind_to_queue): fcl_pool_free then
 * fences it with a marker on that queue, so that the block is reused only after the work
 * enqueued there before the free has completed (fcl_pool_free_after with that marker). The
 * queue is retained until the free; NULL unbinds. For SVM blocks above all, which kernels use
 * by pointer without a buffer that OpenCL could track. */
fcl_status fcl_pool_block_bind(fcl_pool_block *block, fcl_queue *queue);
fcl_queue *fcl_pool_block_bound_queue(const fcl_pool_block *block); /**< NULL: unbound */

/** The block's buffer (owned by the pool). */
fcl_mem *fcl_pool_block_buffer(const fcl_pool_block *block); /**< NULL for SVM pools */
/** The block's SVM pointer (owned by the pool). */
void *fcl_pool_block_svm(const fcl_pool_block *block); /**< NULL for buffer pools */
/** The block's bytes. */
size_t fcl_pool_block_size(const fcl_pool_block *block); /**< the bin's size, >= request */

/** A pool's figures (fcl_pool_statistics). */
typedef struct {
  size_t held_blocks;      /**< freed blocks kept for reuse (fenced ones included) */
  size_t active_blocks;    /**< blocks handed out and not yet freed */
  size_t managed_bytes;    /**< bytes of held + active blocks */
  size_t active_bytes;     /**< bytes of active blocks */
  size_t high_water_bytes; /**< largest managed_bytes seen */
  size_t allocations;      /**< calls to the allocator (pool misses) */
  size_t reuses;           /**< requests served from held blocks */
} fcl_pool_stats;
/** The pool's figures now into stats. */
fcl_status fcl_pool_statistics(fcl_pool *pool, fcl_pool_stats *stats);
/** Free every held block whose fence has completed. */
fcl_status fcl_pool_free_held(fcl_pool *pool);
/** Free held blocks now and free blocks on release from now on, instead of holding them. */
fcl_status fcl_pool_stop_holding(fcl_pool *pool);

/** Bin arithmetic, exposed for tests and capacity planning: the bin of a request of size bytes
 * (the size's exponent and its next leading_bits bits), and the bytes of the blocks of a bin
 * (the largest request it serves). @{ */
size_t fcl_pool_bin_number(unsigned leading_bits, size_t size);
size_t fcl_pool_bin_size(unsigned leading_bits, size_t bin);
/** @} */

#ifdef __cplusplus
}
#endif
#endif /* FLOWCL_POOL_H */
