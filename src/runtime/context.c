/* Reference-counted contexts over one or more devices of one backend, with their memo of
 * per-context objects (context_memo.c). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "runtime_impl.h"

fcl_status fcl__context_new(const fcl__backend *backend, fcl_context **out) {
  fcl_context *c = calloc(1, sizeof *c);
  if (!c) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "context object");
  c->backend = backend;
  atomic_init(&c->refs, 1);
  atomic_init(&c->memo_refs, 0);
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&c->memo_lock, &attr);
  pthread_mutexattr_destroy(&attr);
  *out = c;
  return FCL_OK;
}

void fcl__context_free(fcl_context *c) {
  pthread_mutex_destroy(&c->memo_lock);
  free(c);
}

fcl_status fcl_context_create(unsigned num_devices, fcl_device *const *devices, fcl_context **out) {
  FCL_CHECK_ARG(num_devices > 0, 1, "num_devices", "must be > 0");
  FCL_CHECK_NULL(devices, 2);
  FCL_CHECK_NULL(out, 3);
  *out = NULL;
  for (unsigned i = 0; i < num_devices; ++i) {
    if (!devices[i])
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 2 (devices): device %u is NULL", i);
    if (devices[i]->backend != devices[0]->backend)
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "argument 2 (devices): device %u is of backend '%s', device 0 of '%s'", i,
                       devices[i]->backend->name, devices[0]->backend->name);
  }
  fcl_context *c = NULL;
  FCL_TRY(fcl__context_new(devices[0]->backend, &c));
  fcl_status st = c->backend->context_create(devices, num_devices, c);
  if (st != FCL_OK) {
    fcl__context_free(c);
    return st;
  }
  *out = c;
  return FCL_OK;
}

fcl_status fcl_context_create_from_type(const fcl_platform *platform, fcl_device_type type,
                                        fcl_context **out) {
  FCL_CHECK_NULL(platform, 1);
  FCL_CHECK_NULL(out, 3);
  *out = NULL;
  fcl_platform_info p;
  FCL_TRY(fcl_platform_get_info(platform, &p));
  fcl_device **devices = malloc((p.num_devices ? p.num_devices : 1) * sizeof *devices);
  if (!devices) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "device list");
  unsigned n = 0;
  fcl_status st = FCL_OK;
  for (unsigned i = 0; i < p.num_devices && st == FCL_OK; ++i) {
    fcl_device_info d;
    st = fcl_platform_get_device(platform, i, &devices[n]);
    if (st == FCL_OK) st = fcl_device_get_info(devices[n], &d);
    if (st == FCL_OK && (d.type & type)) ++n;
  }
  if (st == FCL_OK && n == 0)
    st = FCL_ERROR(FCL_ERR_NOT_FOUND, "no %s device on platform '%s' (%u devices of other types)",
                   type == FCL_DEVICE_ALL ? "" : fcl_device_type_name(type), p.name, p.num_devices);
  if (st == FCL_OK) st = fcl_context_create(n, devices, out);
  free(devices);
  return st;
}

fcl_status fcl_context_create_default(fcl_context **out) {
  FCL_CHECK_NULL(out, 1);
  *out = NULL;
  fcl_device_entry e;
  FCL_TRY(fcl_device_select(NULL, &e));
  return fcl_context_create(1, &e.device, out);
}

fcl_context *fcl_context_retain(fcl_context *context) {
  if (context) atomic_fetch_add(&context->refs, 1);
  return context;
}

void fcl_context_release(fcl_context **context) {
  if (!context || !*context) return;
  fcl_context *c = *context;
  *context = NULL;
  int left = atomic_fetch_sub(&c->refs, 1) - 1;
  if (left > 0) {
    /* Only memoized objects still hold the context: destroy them; the last one's release
     * comes back here with left == 0 and frees the context. */
    if (left == atomic_load(&c->memo_refs)) fcl__context_memo_destroy_all(c);
    return;
  }
  fcl__context_memo_destroy_all(c);
  c->backend->context_destroy(c);
  fcl__context_free(c);
}

unsigned fcl_context_num_devices(const fcl_context *context) {
  return context ? context->num_devices : 0;
}
fcl_device *fcl_context_device(const fcl_context *context, unsigned index) {
  return (context && index < context->num_devices) ? context->devices[index] : NULL;
}

int fcl__context_device_index(const fcl_context *context, const fcl_device *device) {
  for (unsigned i = 0; i < context->num_devices; ++i)
    if (context->devices[i] == device) return (int)i;
  return -1;
}
