/* Per-context memoization: created once (also under concurrent first use), one object per key
 * and context, destroyed with the context or by an explicit clear, and memoized objects that
 * hold the context (compiled programs) do not keep it alive. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "fcl_test.h"

static atomic_int created, destroyed;

static fcl_status make_counter(fcl_context *ctx, void *user, void **value) {
  (void)ctx;
  atomic_fetch_add(&created, 1);
  int *v = malloc(sizeof *v);
  if (!v) return FCL_ERR_OUT_OF_MEMORY;
  *v = *(int *)user;
  *value = v;
  return FCL_OK;
}
static void drop_counter(void *value) {
  atomic_fetch_add(&destroyed, 1);
  free(value);
}

static fcl_status make_program(fcl_context *ctx, void *user, void **value) {
  (void)user;
  atomic_fetch_add(&created, 1);
  fcl_program *p = NULL;
  fcl_status st = fcl_program_create_builtin(ctx, "selfcheck.cl", &p);
  if (st == FCL_OK) st = fcl_program_build(p, NULL);
  if (st != FCL_OK) fcl_program_release(&p);
  *value = p;
  return st;
}
static void drop_program(void *value) {
  atomic_fetch_add(&destroyed, 1);
  fcl_program *p = value;
  fcl_program_release(&p);
}

static fcl_status failing(fcl_context *ctx, void *user, void **value) {
  (void)ctx;
  (void)user;
  (void)value;
  return FCL_ERR_NOT_SUPPORTED;
}

typedef struct {
  fcl_context *ctx;
  void *got;
} racer;

static void *race(void *arg) {
  racer *r = arg;
  int seven = 7;
  fcl_context_memo(r->ctx, "shared", make_counter, &seven, drop_counter, &r->got);
  return NULL;
}

static void check_device(const fcl_device_entry *e, void *user) {
  (void)user;
  atomic_store(&created, 0);
  atomic_store(&destroyed, 0);
  fcl_context *ctx = NULL, *other = NULL;
  CHECK_OK(fcl_context_create(1, &e->device, &ctx));
  CHECK_OK(fcl_context_create(1, &e->device, &other));
  int one = 1, two = 2;
  void *a = NULL, *b = NULL, *c = NULL;
  CHECK_OK(fcl_context_memo(ctx, "counter", make_counter, &one, drop_counter, &a));
  CHECK_OK(fcl_context_memo(ctx, "counter", make_counter, &two, drop_counter, &b));
  CHECK(a && a == b && *(int *)a == 1 && atomic_load(&created) == 1);
  CHECK_OK(fcl_context_memo(other, "counter", make_counter, &two, drop_counter, &c));
  CHECK(c != a && *(int *)c == 2 && fcl_context_memo_count(other) == 1);
  void *none = (void *)1;
  CHECK_STATUS(fcl_context_memo(ctx, "broken", failing, NULL, NULL, &none), FCL_ERR_NOT_SUPPORTED,
               NULL);
  CHECK(none == NULL && fcl_context_memo_count(ctx) == 1);
  CHECK_OK(fcl_context_memo_clear(ctx));
  CHECK(atomic_load(&destroyed) == 1 && fcl_context_memo_count(ctx) == 0);

  /* Concurrent first use: one creation, one object for everyone. */
  atomic_store(&created, 0);
  pthread_t t[8];
  racer r[8];
  for (int i = 0; i < 8; ++i) {
    r[i] = (racer){ctx, NULL};
    pthread_create(&t[i], NULL, race, &r[i]);
  }
  for (int i = 0; i < 8; ++i) pthread_join(t[i], NULL);
  CHECK(atomic_load(&created) == 1);
  for (int i = 0; i < 8; ++i) CHECK(r[i].got == r[0].got && r[0].got);

  /* A memoized program retains the context; releasing the user's last reference still
   * destroys everything. */
  void *prog = NULL;
  CHECK_OK(fcl_context_memo(ctx, "selfcheck", make_program, NULL, drop_program, &prog));
  CHECK(prog != NULL);
  atomic_store(&destroyed, 0);
  fcl_context_release(&ctx);
  CHECK(atomic_load(&destroyed) == 2); /* the counter and the program */
  fcl_context_release(&other);
  CHECK(atomic_load(&destroyed) == 3);
}

int main(void) { return fcl_test_run_on_devices(check_device, NULL); }
