/* Per-context memoization: objects keyed by name, created once, destroyed with the context. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "runtime_impl.h"

struct fcl__memo_entry {
  int context_refs; /* references to the context the object took when created */
  char *key;
  void *value;
  fcl_memo_destroy_fn destroy;
  fcl__memo_entry *next;
};

fcl_status fcl_context_memo(fcl_context *context, const char *key, fcl_memo_create_fn create,
                            void *user, fcl_memo_destroy_fn destroy, void **value) {
  FCL_CHECK_NULL(context, 1);
  FCL_CHECK_NULL(key, 2);
  FCL_CHECK_NULL(create, 3);
  FCL_CHECK_NULL(value, 6);
  *value = NULL;
  pthread_mutex_lock(&context->memo_lock);
  for (fcl__memo_entry *e = context->memo; e; e = e->next)
    if (strcmp(e->key, key) == 0) {
      *value = e->value;
      pthread_mutex_unlock(&context->memo_lock);
      return FCL_OK;
    }
  fcl__memo_entry *e = calloc(1, sizeof *e);
  char *k = strdup(key);
  int refs_before = atomic_load(&context->refs);
  fcl_status st = (e && k) ? create(context, user, value)
                           : FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "memo entry '%s'", key);
  if (st == FCL_OK) {
    int taken = atomic_load(&context->refs) - refs_before;
    *e = (fcl__memo_entry){taken > 0 ? taken : 0, k, *value, destroy, context->memo};
    context->memo = e;
    atomic_fetch_add(&context->memo_refs, e->context_refs);
  } else {
    free(e);
    free(k);
    *value = NULL;
  }
  pthread_mutex_unlock(&context->memo_lock);
  return st;
}

void fcl__context_memo_destroy_all(fcl_context *context) {
  pthread_mutex_lock(&context->memo_lock);
  fcl__memo_entry *e = context->memo;
  context->memo = NULL;
  atomic_store(&context->memo_refs, 0);
  pthread_mutex_unlock(&context->memo_lock);
  /* The context may be freed by the last destroy: do not touch it below. */
  while (e) {
    fcl__memo_entry *next = e->next;
    if (e->destroy) e->destroy(e->value);
    free(e->key);
    free(e);
    e = next;
  }
}

fcl_status fcl_context_memo_clear(fcl_context *context) {
  FCL_CHECK_NULL(context, 1);
  fcl__context_memo_destroy_all(context);
  return FCL_OK;
}

size_t fcl_context_memo_count(fcl_context *context) {
  if (!context) return 0;
  size_t n = 0;
  pthread_mutex_lock(&context->memo_lock);
  for (fcl__memo_entry *e = context->memo; e; e = e->next) ++n;
  pthread_mutex_unlock(&context->memo_lock);
  return n;
}
