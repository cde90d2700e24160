/* Binned memory pool: per-bin LIFO stacks of held blocks under one mutex, event-fenced reuse,
 * an optional cap, largest-first release on out-of-memory, and debug poisoning. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "flowcl/opencl.h" /* shared virtual memory (fcl_svm_*): OpenCL alone has it */
#include "flowcl/pool.h"

#define INLINE_FENCES 4

struct fcl_pool_block {
  fcl_allocation mem;
  size_t bin;
  fcl_pool_block *next; /* in its bin's stack while held */
  unsigned num_fences;
  fcl_event *fences_inline[INLINE_FENCES];
  fcl_event **fences; /* fences_inline or heap */
  bool active;
  fcl_queue *bound; /* fcl_pool_block_bind: freeing fences the block with its work */
};

struct fcl_pool {
  atomic_int refs;
  pthread_mutex_t lock;
  fcl_allocator *allocator;
  unsigned L;
  size_t cap;
  bool debug, holding;
  fcl_queue *debug_queue;
  size_t num_bins;
  fcl_pool_block **bins; /* stack tops */
  fcl_pool_stats stats;
};

fcl_pool_options fcl_pool_default_options(void) {
  const char *env = getenv("FLOWCL_POOL_DEBUG");
  return (fcl_pool_options){4, 0, env && *env && strcmp(env, "0") != 0, NULL};
}

fcl_status fcl_pool_create(fcl_allocator *allocator, const fcl_pool_options *options,
                           fcl_pool **out) {
  FCL_CHECK_NULL(allocator, 1);
  FCL_CHECK_NULL(out, 3);
  *out = NULL;
  fcl_pool_options o = options ? *options : fcl_pool_default_options();
  if (o.leading_bits > FCL_POOL_MAX_LEADING_BITS)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 2 (options): leading_bits %u exceeds %u",
                     o.leading_bits, FCL_POOL_MAX_LEADING_BITS);
  fcl_pool *p = calloc(1, sizeof *p);
  size_t num_bins = (size_t)64 << o.leading_bits;
  fcl_pool_block **bins = calloc(num_bins, sizeof *bins);
  if (!p || !bins) {
    free(p);
    free(bins);
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "pool with %zu bins", num_bins);
  }
  atomic_init(&p->refs, 1);
  pthread_mutex_init(&p->lock, NULL);
  p->allocator = fcl_allocator_retain(allocator);
  p->L = o.leading_bits;
  p->cap = o.max_managed_bytes;
  p->debug = o.debug;
  p->holding = true;
  if (o.debug_queue) {
    fcl_queue_retain(o.debug_queue);
    p->debug_queue = o.debug_queue;
  }
  p->num_bins = num_bins;
  p->bins = bins;
  if (p->debug && !p->debug_queue)
    fcl_log(FCL_LOG_WARNING, "memory pool debug mode without a debug_queue: freed blocks cannot "
                             "be poisoned (set fcl_pool_options.debug_queue)");
  *out = p;
  return FCL_OK;
}

fcl_pool *fcl_pool_retain(fcl_pool *pool) {
  if (pool) atomic_fetch_add(&pool->refs, 1);
  return pool;
}

static void release_fences(fcl_pool_block *b) {
  for (unsigned i = 0; i < b->num_fences; ++i) fcl_event_release(&b->fences[i]);
  if (b->fences != b->fences_inline) free(b->fences);
  b->fences = b->fences_inline;
  b->num_fences = 0;
}

/* Whether every fence has completed (or failed: the commands are over either way). */
static bool ready(fcl_pool_block *b) {
  for (unsigned i = 0; i < b->num_fences; ++i) {
    int s = FCL_EVENT_COMPLETE;
    fcl_event_status(b->fences[i], &s);
    if (s > FCL_EVENT_COMPLETE) return false;
  }
  release_fences(b);
  return true;
}

/* Return a block's memory to the allocator (lock held). */
static void destroy_block(fcl_pool *p, fcl_pool_block *b) {
  release_fences(b);
  p->stats.managed_bytes -= b->mem.size;
  fcl_allocator_free(p->allocator, &b->mem);
  free(b);
}

/* Free the largest held block that is ready, or, when wait is set, the largest held block after
 * waiting for its fences. Returns false when there is none (lock held). */
static bool free_largest_held(fcl_pool *p, bool wait) {
  for (size_t bin = p->num_bins; bin-- > 0;) {
    for (fcl_pool_block **link = &p->bins[bin]; *link; link = &(*link)->next) {
      fcl_pool_block *b = *link;
      if (wait && b->num_fences) fcl_events_wait(b->num_fences, b->fences); /* a host sync */
      if (!ready(b)) continue;
      *link = b->next;
      p->stats.held_blocks--;
      destroy_block(p, b);
      return true;
    }
  }
  return false;
}

void fcl_pool_release(fcl_pool **pool) {
  if (!pool || !*pool) return;
  fcl_pool *p = *pool;
  *pool = NULL;
  if (atomic_fetch_sub(&p->refs, 1) != 1) return;
  pthread_mutex_lock(&p->lock);
  while (free_largest_held(p, true)) {}
  if (p->stats.active_blocks)
    fcl_log(FCL_LOG_WARNING, "memory pool released with %zu active blocks (%zu bytes) not freed",
            p->stats.active_blocks, p->stats.active_bytes);
  pthread_mutex_unlock(&p->lock);
  pthread_mutex_destroy(&p->lock);
  fcl_queue_release(&p->debug_queue);
  fcl_allocator_release(&p->allocator);
  free(p->bins);
  free(p);
}

static fcl_status out_of_memory(fcl_pool *p, size_t size, size_t bin_size, const char *why) {
  const fcl_pool_stats *s = &p->stats;
  char cap[64] = "none";
  if (p->cap) snprintf(cap, sizeof cap, "%zu bytes", p->cap);
  return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY,
                   "pool cannot provide %zu bytes (bin of %zu bytes): %s; pool: managed %zu "
                   "bytes (cap %s), active %zu bytes in %zu blocks, held %zu blocks, high-water "
                   "%zu bytes",
                   size, bin_size, why, s->managed_bytes, cap, s->active_bytes, s->active_blocks,
                   s->held_blocks, s->high_water_bytes);
}

/* New memory for a bin, making room by releasing held blocks when needed (lock held). */
static fcl_status allocate(fcl_pool *p, size_t size, size_t bin_size, fcl_allocation *mem) {
  while (p->cap && p->stats.managed_bytes + bin_size > p->cap)
    if (!free_largest_held(p, false) && !free_largest_held(p, true))
      return out_of_memory(p, size, bin_size, "the pool's cap would be exceeded");
  for (;;) {
    fcl_status st = fcl_allocator_alloc(p->allocator, bin_size, mem);
    if (st == FCL_OK) return FCL_OK;
    if (st != FCL_ERR_OUT_OF_MEMORY) return st;
    char device_says[512];
    snprintf(device_says, sizeof device_says, "%s", fcl_last_error());
    if (!free_largest_held(p, false) && !free_largest_held(p, true))
      return out_of_memory(p, size, bin_size, device_says);
  }
}

fcl_status fcl_pool_alloc(fcl_pool *pool, size_t size, fcl_pool_block **block) {
  FCL_CHECK_NULL(pool, 1);
  FCL_CHECK_ARG(size > 0, 2, "size", "must be > 0");
  FCL_CHECK_NULL(block, 3);
  fcl_pool *p = pool;
  size_t bin = fcl_pool_bin_number(p->L, size);
  pthread_mutex_lock(&p->lock);
  for (fcl_pool_block **link = &p->bins[bin]; *link; link = &(*link)->next) {
    fcl_pool_block *b = *link;
    if (b->num_fences && !ready(b)) continue;
    *link = b->next;
    b->active = true;
    p->stats.held_blocks--;
    p->stats.active_blocks++;
    p->stats.active_bytes += b->mem.size;
    p->stats.reuses++;
    pthread_mutex_unlock(&p->lock);
    *block = b;
    return FCL_OK;
  }
  size_t bin_size = fcl_pool_bin_size(p->L, bin);
  fcl_pool_block *b = calloc(1, sizeof *b);
  fcl_status st = b ? allocate(p, size, bin_size, &b->mem)
                    : FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "pool block record");
  if (st == FCL_OK) {
    b->bin = bin;
    b->fences = b->fences_inline;
    b->active = true;
    p->stats.allocations++;
    p->stats.active_blocks++;
    p->stats.active_bytes += b->mem.size;
    p->stats.managed_bytes += b->mem.size;
    if (p->stats.managed_bytes > p->stats.high_water_bytes)
      p->stats.high_water_bytes = p->stats.managed_bytes;
    *block = b;
  } else {
    free(b);
    *block = NULL;
  }
  pthread_mutex_unlock(&p->lock);
  return st;
}

/* Debug mode: fill the block with the poison byte after its fences; the fill becomes the fence. */
static void poison(fcl_pool *p, fcl_pool_block *b) {
  if (!p->debug_queue) return;
  const unsigned char byte = FCL_POOL_POISON_BYTE;
  fcl_event *ev = NULL;
  fcl_status st = b->mem.buffer ? fcl_mem_fill(p->debug_queue, b->mem.buffer, &byte, 1, 0,
                                               b->mem.size, b->num_fences, b->fences, &ev)
                                : fcl_svm_fill(p->debug_queue, b->mem.svm, &byte, 1, b->mem.size,
                                               b->num_fences, b->fences, &ev);
  if (st != FCL_OK) {
    fcl_log(FCL_LOG_WARNING, "pool debug: poisoning a %zu-byte block failed: %s", b->mem.size,
            fcl_last_error());
    return;
  }
  fcl_queue_flush(p->debug_queue);
  release_fences(b);
  b->fences_inline[0] = ev;
  b->num_fences = 1;
}

/* Put an active block back (lock held); its fences are already set. */
static void give_back(fcl_pool *p, fcl_pool_block *b) {
  b->active = false;
  if (b->bound) { /* fenced by the caller (fcl_pool_free_after): the binding ends here */
    fcl_queue_release(&b->bound);
    b->bound = NULL;
  }
  p->stats.active_blocks--;
  p->stats.active_bytes -= b->mem.size;
  if (!p->holding) {
    if (b->num_fences) fcl_events_wait(b->num_fences, b->fences);
    destroy_block(p, b);
    return;
  }
  if (p->debug) poison(p, b);
  b->next = p->bins[b->bin];
  p->bins[b->bin] = b;
  p->stats.held_blocks++;
}

fcl_status fcl_pool_block_bind(fcl_pool_block *block, fcl_queue *queue) {
  FCL_CHECK_NULL(block, 1);
  if (!block->active)
    return FCL_ERROR(FCL_ERR_INVALID_STATE, "block %p is not active (freed?)", (void *)block);
  fcl_queue_retain(queue);
  fcl_queue_release(&block->bound);
  block->bound = queue;
  return FCL_OK;
}

fcl_queue *fcl_pool_block_bound_queue(const fcl_pool_block *block) {
  return block ? block->bound : NULL;
}

void fcl_pool_free(fcl_pool *pool, fcl_pool_block *block) {
  if (!pool || !block) return;
  if (!block->active) {
    fcl_log(FCL_LOG_ERROR, "fcl_pool_free: block %p is not active (freed twice?); ignored",
            (void *)block);
    return;
  }
  if (block->bound) { /* reused once the work enqueued so far on its queue is done */
    fcl_queue *q = block->bound;
    fcl_event *done = NULL;
    block->bound = NULL;
    fcl_status st = fcl_queue_marker(q, 0, NULL, &done);
    if (st == FCL_OK) st = fcl_pool_free_after(pool, block, 1, &done);
    if (done) fcl_event_release(&done);
    if (st != FCL_OK) { /* no fence could be made: wait for the queue instead */
      fcl_queue_finish(q);
      fcl_pool_free(pool, block);
    }
    fcl_queue_release(&q);
    return;
  }
  pthread_mutex_lock(&pool->lock);
  give_back(pool, block);
  pthread_mutex_unlock(&pool->lock);
}

fcl_status fcl_pool_free_after(fcl_pool *pool, fcl_pool_block *block, unsigned num_events,
                               fcl_event *const *events) {
  FCL_CHECK_NULL(pool, 1);
  FCL_CHECK_NULL(block, 2);
  FCL_CHECK_ARG(num_events == 0 || events, 4, "events", "must not be NULL when num_events > 0");
  if (!block->active)
    return FCL_ERROR(FCL_ERR_INVALID_STATE, "block %p is not active (freed twice?)", (void *)block);
  fcl_event **fences = block->fences_inline;
  if (num_events > INLINE_FENCES && !(fences = malloc(num_events * sizeof *fences)))
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "fence list of %u events", num_events);
  for (unsigned i = 0; i < num_events; ++i) fences[i] = fcl_event_retain(events[i]);
  pthread_mutex_lock(&pool->lock);
  block->fences = fences;
  block->num_fences = num_events;
  give_back(pool, block);
  pthread_mutex_unlock(&pool->lock);
  return FCL_OK;
}

fcl_mem *fcl_pool_block_buffer(const fcl_pool_block *block) {
  return block ? block->mem.buffer : NULL;
}
void *fcl_pool_block_svm(const fcl_pool_block *block) { return block ? block->mem.svm : NULL; }
size_t fcl_pool_block_size(const fcl_pool_block *block) { return block ? block->mem.size : 0; }

fcl_status fcl_pool_statistics(fcl_pool *pool, fcl_pool_stats *stats) {
  FCL_CHECK_NULL(pool, 1);
  FCL_CHECK_NULL(stats, 2);
  pthread_mutex_lock(&pool->lock);
  *stats = pool->stats;
  pthread_mutex_unlock(&pool->lock);
  return FCL_OK;
}

fcl_status fcl_pool_free_held(fcl_pool *pool) {
  FCL_CHECK_NULL(pool, 1);
  pthread_mutex_lock(&pool->lock);
  while (free_largest_held(pool, false)) {}
  pthread_mutex_unlock(&pool->lock);
  return FCL_OK;
}

fcl_status fcl_pool_stop_holding(fcl_pool *pool) {
  FCL_CHECK_NULL(pool, 1);
  pthread_mutex_lock(&pool->lock);
  pool->holding = false;
  while (free_largest_held(pool, true)) {}
  pthread_mutex_unlock(&pool->lock);
  return FCL_OK;
}
