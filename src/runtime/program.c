/* Programs: creation from source, embedded kernels or binaries; build through the binary cache;
 * build logs and warnings; binaries; the work done by the context's backend (OpenCL's own kinds
 * of program: src/runtime/opencl/program_other.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "runtime_impl.h"

/* The text compiled from a source: the backend's prelude (whose last line restarts the
 * numbering, so that build logs name the source's own lines), then the source. Kept whole: the
 * cache key and captured reproducers take what the compiler read. */
static char *with_prelude(const char *prelude, const char *source) {
  size_t a = strlen(prelude), b = strlen(source);
  char *text = malloc(a + b + 1);
  if (text) {
    memcpy(text, prelude, a);
    memcpy(text + a, source, b + 1);
  }
  return text;
}

fcl_status fcl__program_new(fcl_context *context, const char *source, const char *origin,
                            fcl_program **out) {
  fcl_program *p = calloc(1, sizeof *p);
  if (!p) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "program object");
  atomic_init(&p->refs, 1);
  p->context = fcl_context_retain(context);
  p->source = source ? with_prelude(context->backend->prelude, source) : NULL;
  p->origin = strdup(origin ? origin : "<source string>");
  p->options = strdup("");
  p->logs = calloc(context->num_devices, sizeof *p->logs);
  p->binaries = calloc(context->num_devices, sizeof *p->binaries);
  p->binary_sizes = calloc(context->num_devices, sizeof *p->binary_sizes);
  pthread_mutex_init(&p->lock, NULL);
  if ((source && !p->source) || !p->origin || !p->options || !p->logs || !p->binaries ||
      !p->binary_sizes) {
    fcl_program_release(&p);
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "program object");
  }
  *out = p;
  return FCL_OK;
}

fcl_status fcl_program_create_source(fcl_context *context, const char *source, const char *origin,
                                     fcl_program **out) {
  FCL_CHECK_NULL(context, 1);
  FCL_CHECK_NULL(source, 2);
  FCL_CHECK_NULL(out, 4);
  *out = NULL;
  fcl_program *p;
  FCL_TRY(fcl__program_new(context, source, origin, &p));
  fcl_status st = context->backend->program_create_source(p);
  if (st != FCL_OK) {
    fcl_program_release(&p);
    return st;
  }
  *out = p;
  return FCL_OK;
}

fcl_status fcl_program_create_builtin(fcl_context *context, const char *file_name,
                                      fcl_program **out) {
  FCL_CHECK_NULL(file_name, 2);
  const char *source;
  FCL_TRY(fcl_builtin_source(file_name, &source));
  char origin[512];
  snprintf(origin, sizeof origin, "kernels/%s (embedded)", file_name);
  return fcl_program_create_source(context, source, origin, out);
}

fcl_status fcl_program_create_binaries(fcl_context *context, unsigned num_devices,
                                       fcl_device *const *devices, const size_t *sizes,
                                       const unsigned char *const *binaries, fcl_program **out) {
  FCL_CHECK_NULL(context, 1);
  FCL_CHECK_ARG(num_devices > 0, 2, "num_devices", "must be > 0");
  FCL_CHECK_NULL(devices, 3);
  FCL_CHECK_NULL(sizes, 4);
  FCL_CHECK_NULL(binaries, 5);
  FCL_CHECK_NULL(out, 6);
  *out = NULL;
  for (unsigned i = 0; i < num_devices; ++i) {
    if (fcl__context_device_index(context, devices[i]) < 0)
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                       "argument 3 (devices): entry %u is not a device "
                       "of the context",
                       i);
    if (!binaries[i] || sizes[i] == 0)
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 5 (binaries): entry %u is empty", i);
    const char *why;
    if (!fcl__binary_complete(binaries[i], sizes[i], &why))
      return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 5 (binaries): entry %u: %s", i, why);
  }
  fcl_program *p;
  FCL_TRY(fcl__program_new(context, NULL, "<binaries>", &p));
  fcl_status st = context->backend->program_create_binaries(p, num_devices, devices, sizes,
                                                            binaries);
  if (st != FCL_OK) {
    fcl_program_release(&p);
    return st;
  }
  *out = p;
  return FCL_OK;
}

fcl_program *fcl_program_retain(fcl_program *program) {
  if (program) atomic_fetch_add(&program->refs, 1);
  return program;
}

static void free_logs(fcl_program *p) {
  for (unsigned i = 0; p->logs && i < p->context->num_devices; ++i) {
    free(p->logs[i]);
    p->logs[i] = NULL;
  }
}

void fcl_program_release(fcl_program **program) {
  if (!program || !*program) return;
  fcl_program *p = *program;
  *program = NULL;
  if (atomic_fetch_sub(&p->refs, 1) != 1) return;
  if (p->native) p->context->backend->program_destroy(p);
  free_logs(p);
  for (unsigned i = 0; p->binaries && i < p->context->num_devices; ++i) free(p->binaries[i]);
  fcl__program_meta_free(p);
  pthread_mutex_destroy(&p->lock);
  free(p->logs);
  free(p->binaries);
  free(p->binary_sizes);
  free(p->source);
  free(p->origin);
  free(p->options);
  fcl_context_release(&p->context);
  free(p);
}

char *fcl__program_full_options(const fcl_context *context, const char *options) {
  const char *env = getenv("FLOWCL_BUILD_OPTIONS"), *always = context->backend->build_options;
  size_t n = (options ? strlen(options) : 0) + (env ? strlen(env) : 0) + strlen(always) + 3;
  char *s = malloc(n);
  if (s)
    snprintf(s, n, "%s%s%s%s%s", options ? options : "", options && *options ? " " : "",
             env ? env : "", env && *env ? " " : "", always);
  return s;
}

static bool blank(const char *s) {
  for (; s && *s; ++s)
    if (*s != ' ' && *s != '\n' && *s != '\r' && *s != '\t') return false;
  return true;
}

void fcl__program_collect_logs(fcl_program *p) {
  free_logs(p);
  for (unsigned i = 0; i < p->context->num_devices; ++i)
    p->logs[i] = p->context->backend->program_build_log(p, i);
}

/* The name of device i of p's context ("" when unknown). */
static void device_name(const fcl_program *p, unsigned i, char name[256]) {
  fcl_device_info info;
  name[0] = '\0';
  if (fcl_device_get_info(p->context->devices[i], &info) == FCL_OK)
    snprintf(name, 256, "%s", info.name);
}

/* The NVIDIA compiler notes on every kernel that it overrides a noinline attribute it adds
 * itself: a log made only of such lines says nothing to the user. */
static bool only_benign(const char *log) {
  for (const char *line = log; line && *line;) {
    const char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) : strlen(line);
    char text[512];
    snprintf(text, sizeof text, "%.*s", (int)(len < sizeof text ? len : sizeof text - 1), line);
    if (!blank(text) && !strstr(text, "so overriding noinline attribute") &&
        !strstr(text, "The function may be inlined when called"))
      return false;
    line = end ? end + 1 : NULL;
  }
  return true;
}

void fcl__program_show_warnings(const fcl_program *p, const char *when) {
  for (unsigned i = 0; i < p->context->num_devices; ++i) {
    if (blank(p->logs[i])) continue;
    char name[256];
    device_name(p, i, name);
    fcl_log(only_benign(p->logs[i]) ? FCL_LOG_DEBUG : FCL_LOG_WARNING,
            "build messages for %s on '%s'%s:\n%s", p->origin, name, when, p->logs[i]);
  }
}

fcl_status fcl__program_build_failure(fcl_program *p, const char *what, const char *options) {
  char why[1024];
  snprintf(why, sizeof why, "%s", fcl_last_error());
  const int native = fcl_last_native_error();
  fcl__program_collect_logs(p);
  char logs[12000] = "";
  size_t used = 0;
  for (unsigned i = 0; i < p->context->num_devices && used < sizeof logs; ++i) {
    if (blank(p->logs[i])) continue;
    char name[256];
    device_name(p, i, name);
    int w = snprintf(logs + used, sizeof logs - used, "\n--- build log on '%s' ---\n%s", name,
                     p->logs[i]);
    if (w > 0) used += (size_t)w;
  }
  return fcl__error_set(FCL_ERR_BUILD_FAILED, native, __func__, __FILE__, __LINE__,
                        "%s of %s failed: %s; options: \"%s\"%s", what, p->origin, why, options,
                        used ? logs : " (empty build log)");
}

static void drop_binaries(fcl_program *p) {
  for (unsigned i = 0; i < p->context->num_devices; ++i) {
    free(p->binaries[i]);
    p->binaries[i] = NULL;
    p->binary_sizes[i] = 0;
  }
}

/* Try to build from cached binaries for every device; false on any miss or driver refusal. */
static bool build_from_cache(fcl_program *p, const char *options, char (*keys)[65]) {
  unsigned n = p->context->num_devices;
  fcl__cache_entry *entries = calloc(n, sizeof *entries);
  if (!entries) return false;
  bool all = true;
  for (unsigned i = 0; i < n && all; ++i) all = fcl__cache_load(keys[i], &entries[i]);
  if (all) {
    size_t *sizes = malloc(n * sizeof *sizes);
    const unsigned char **bins = malloc(n * sizeof *bins);
    fcl_status st;
    if (sizes && bins) {
      for (unsigned i = 0; i < n; ++i) {
        sizes[i] = entries[i].binary_size;
        bins[i] = entries[i].binary;
      }
      st = p->context->backend->program_load(p, sizes, bins, options);
    } else {
      st = FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "binary list");
    }
    free(sizes);
    free(bins);
    if (st != FCL_OK) {
      fcl_log(FCL_LOG_WARNING, "driver refused the cached binary of %s (%s): building from source",
              p->origin, fcl_last_error());
      fcl_clear_error();
      all = false;
    }
  }
  if (all) {
    free_logs(p);
    for (unsigned i = 0; i < n; ++i) {
      p->logs[i] = entries[i].log;
      entries[i].log = NULL;
    }
    all = fcl__program_load_meta(p, entries[0].meta) == FCL_OK;
  }
  for (unsigned i = 0; i < n; ++i) fcl__cache_entry_free(&entries[i]);
  free(entries);
  return all;
}

static void store_in_cache(fcl_program *p, char (*keys)[65]) {
  char *meta = fcl__program_meta_serialize(p);
  if (!meta) return;
  for (unsigned i = 0; i < p->context->num_devices; ++i) {
    const unsigned char *bin;
    size_t size;
    if (fcl_program_binary(p, fcl_context_device(p->context, i), &bin, &size) != FCL_OK ||
        size == 0) {
      fcl_clear_error();
      continue;
    }
    fcl__cache_entry e = {(unsigned char *)bin, size, p->logs[i], meta};
    fcl__cache_store(keys[i], &e);
  }
  free(meta);
}

fcl_status fcl_program_build(fcl_program *program, const char *options) {
  FCL_CHECK_NULL(program, 1);
  if (program->built_in) return FCL_OK; /* nothing to compile (PoCL refuses to try) */
  fcl_program *p = program;
  fcl__program_save(p, options);
  char *opts = fcl__program_full_options(p->context, options);
  if (!opts) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "build options");
  free(p->options);
  p->options = opts;
  p->from_cache = false;
  drop_binaries(p);
  fcl__program_meta_free(p);
  unsigned n = p->context->num_devices;
  char(*keys)[65] = NULL;
  bool cache = p->source && fcl__cache_enabled();
  int lock = -1;
  if (cache) {
    keys = malloc(n * sizeof *keys);
    if (!keys) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "cache keys");
    for (unsigned i = 0; i < n; ++i)
      fcl__cache_key(p->source, opts, p->context->devices[i], keys[i]);
    lock = fcl__cache_lock(keys[0]); /* until stored: see program_cache.c */
    if (build_from_cache(p, opts, keys)) {
      fcl__cache_unlock(lock);
      p->from_cache = true;
      free(keys);
      fcl__program_show_warnings(p, " (from the program cache)");
      fcl__count_program_built();
      return FCL_OK;
    }
  }
  if (p->context->backend->program_build(p, opts) != FCL_OK) {
    fcl__cache_unlock(lock);
    free(keys);
    return fcl__program_build_failure(p, "build", opts);
  }
  fcl__program_collect_logs(p);
  fcl__program_show_warnings(p, "");
  fcl_status st = fcl__program_load_meta(p, NULL);
  if (st == FCL_OK && cache) store_in_cache(p, keys);
  fcl__cache_unlock(lock);
  free(keys);
  if (st == FCL_OK) {
    fcl__count_program_built();
    fcl__count_program_compiled();
  }
  return st;
}

fcl_context *fcl_program_context(const fcl_program *program) {
  return program ? program->context : NULL;
}
const char *fcl_program_source(const fcl_program *program) {
  return program && program->source ? program->source + strlen(program->context->backend->prelude)
                                    : "";
}
const char *fcl_program_origin(const fcl_program *program) {
  return program ? program->origin : "";
}
const char *fcl_program_options(const fcl_program *program) {
  return program ? program->options : "";
}
bool fcl_program_from_cache(const fcl_program *program) { return program && program->from_cache; }

fcl_status fcl_program_build_status(const fcl_program *program, const fcl_device *device,
                                    fcl_build_status *status) {
  FCL_CHECK_NULL(program, 1);
  FCL_CHECK_NULL(device, 2);
  FCL_CHECK_NULL(status, 3);
  if (fcl__context_device_index(program->context, device) < 0)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT,
                     "argument 2 (device): not a device of the program's context");
  return program->context->backend->program_build_status(program, device, status);
}

const char *fcl_program_build_log(const fcl_program *program, const fcl_device *device) {
  if (!program) return "";
  int i = fcl__context_device_index(program->context, device);
  return (i >= 0 && program->logs[i]) ? program->logs[i] : "";
}

fcl_status fcl_program_binary(fcl_program *program, const fcl_device *device,
                              const unsigned char **binary, size_t *size) {
  FCL_CHECK_NULL(program, 1);
  FCL_CHECK_NULL(binary, 3);
  FCL_CHECK_NULL(size, 4);
  fcl_program *p = program;
  int idx = fcl__context_device_index(p->context, device);
  if (idx < 0)
    return FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 2 (device): not a device of "
                                               "the program's context");
  fcl_status st = FCL_OK;
  pthread_mutex_lock(&p->lock);
  if (!p->binaries[idx]) {
    unsigned n = p->context->num_devices;
    size_t *sizes = calloc(n, sizeof *sizes);
    unsigned char **bins = calloc(n, sizeof *bins);
    st = sizes && bins ? p->context->backend->program_binaries(p, sizes, bins)
                       : FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "binary list");
    for (unsigned i = 0; st == FCL_OK && i < n; ++i) {
      free(p->binaries[i]);
      p->binaries[i] = bins[i];
      p->binary_sizes[i] = sizes[i];
    }
    free(sizes);
    free(bins);
  }
  *binary = p->binaries[idx];
  *size = p->binary_sizes[idx];
  pthread_mutex_unlock(&p->lock);
  return st;
}
