/* Programs: creation from source, embedded kernels, binaries or SPIR-V; build through the
 * binary cache; compile and link; build logs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "opencl/opencl_backend.h"
#include "runtime_impl.h"

/* Always asked for so that kernels know their argument names and types (typed arguments). */
#define ARG_INFO_OPTION "-cl-kernel-arg-info"

/* The text compiled from a source: the prelude (whose last line restarts the numbering, so that
 * build logs name the source's own lines), then the source. Kept whole: the cache key and
 * captured reproducers take what the compiler read. */
static char *with_prelude(const char *source) {
  size_t a = strlen(fcl__prelude_opencl), b = strlen(source);
  char *text = malloc(a + b + 1);
  if (text) {
    memcpy(text, fcl__prelude_opencl, a);
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
  p->source = source ? with_prelude(source) : NULL;
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
  cl_int err;
  p->cl = clCreateProgramWithSource(fcl__context_cl(context), 1, (const char **)&p->source, NULL,
                                    &err);
  if (err != CL_SUCCESS) {
    fcl_program_release(&p);
    return FCL_CL_ERROR(err, "clCreateProgramWithSource(%s)", origin ? origin : "<source>");
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
  for (cl_uint i = 0; i < num_devices; ++i) {
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
  cl_int err = CL_OUT_OF_HOST_MEMORY;
  cl_int *status = calloc(num_devices, sizeof *status);
  cl_device_id *native = malloc(num_devices * sizeof *native);
  if (native) {
    for (unsigned i = 0; i < num_devices; ++i) native[i] = fcl__device_cl(devices[i]);
    p->cl = clCreateProgramWithBinary(fcl__context_cl(context), num_devices, native, sizes,
                                      (const unsigned char **)binaries, status, &err);
  }
  free(native);
  if (err != CL_SUCCESS) {
    cl_int first = status ? status[0] : 0;
    free(status);
    fcl_program_release(&p);
    return FCL_CL_ERROR(err, "clCreateProgramWithBinary (first device's binary status %s)",
                        fcl_cl_error_name(first));
  }
  free(status);
  *out = p;
  return FCL_OK;
}

fcl_status fcl_program_create_il(fcl_context *context, const void *il, size_t size,
                                 fcl_program **out) {
  FCL_CHECK_NULL(context, 1);
  FCL_CHECK_NULL(il, 2);
  FCL_CHECK_ARG(size >= 4, 3, "size", "must hold at least the SPIR-V magic number");
  FCL_CHECK_NULL(out, 4);
  *out = NULL;
  for (cl_uint i = 0; i < context->num_devices; ++i) {
    fcl_device_info info;
    FCL_TRY(fcl_device_get_info(fcl_context_device(context, i), &info));
    if (!info.il_version[0])
      return FCL_ERROR(FCL_ERR_NOT_SUPPORTED,
                       "SPIR-V / IL programs are not supported by this device ('%s', %s)",
                       info.name, info.version);
  }
  fcl_program *p;
  FCL_TRY(fcl__program_new(context, NULL, "<SPIR-V>", &p));
  cl_int err;
  p->cl = clCreateProgramWithIL(fcl__context_cl(context), il, size, &err);
  if (err != CL_SUCCESS) {
    fcl_program_release(&p);
    return FCL_CL_ERROR(err, "clCreateProgramWithIL(%zu bytes)", size);
  }
  *out = p;
  return FCL_OK;
}

fcl_program *fcl_program_retain(fcl_program *program) {
  if (program) atomic_fetch_add(&program->refs, 1);
  return program;
}

static void free_logs(fcl_program *p) {
  for (cl_uint i = 0; p->logs && i < p->context->num_devices; ++i) {
    free(p->logs[i]);
    p->logs[i] = NULL;
  }
}

void fcl_program_release(fcl_program **program) {
  if (!program || !*program) return;
  fcl_program *p = *program;
  *program = NULL;
  if (atomic_fetch_sub(&p->refs, 1) != 1) return;
  if (p->cl) clReleaseProgram(p->cl);
  free_logs(p);
  for (cl_uint i = 0; p->binaries && i < p->context->num_devices; ++i) free(p->binaries[i]);
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

/* options + FLOWCL_BUILD_OPTIONS + the argument-info option, malloc'd. */
static char *full_options(const char *options) {
  const char *env = getenv("FLOWCL_BUILD_OPTIONS");
  size_t n = (options ? strlen(options) : 0) + (env ? strlen(env) : 0) + sizeof ARG_INFO_OPTION + 3;
  char *s = malloc(n);
  if (s)
    snprintf(s, n, "%s%s%s%s%s", options ? options : "", options && *options ? " " : "",
             env ? env : "", env && *env ? " " : "", ARG_INFO_OPTION);
  return s;
}

static bool blank(const char *s) {
  for (; s && *s; ++s)
    if (*s != ' ' && *s != '\n' && *s != '\r' && *s != '\t') return false;
  return true;
}

/* Read each device's build log into the program. */
static void collect_logs(fcl_program *p) {
  free_logs(p);
  for (cl_uint i = 0; i < p->context->num_devices; ++i) {
    size_t n = 0;
    if (clGetProgramBuildInfo(p->cl, fcl__context_cl_devices(p->context)[i], CL_PROGRAM_BUILD_LOG,
                              0, NULL, &n) != CL_SUCCESS)
      continue;
    p->logs[i] = calloc(n + 1, 1);
    if (p->logs[i])
      clGetProgramBuildInfo(p->cl, fcl__context_cl_devices(p->context)[i], CL_PROGRAM_BUILD_LOG, n,
                            p->logs[i], NULL);
  }
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

static void show_warnings(const fcl_program *p, const char *when) {
  for (cl_uint i = 0; i < p->context->num_devices; ++i) {
    if (blank(p->logs[i])) continue;
    char name[256] = "";
    clGetDeviceInfo(fcl__context_cl_devices(p->context)[i], CL_DEVICE_NAME, sizeof name, name,
                    NULL);
    fcl_log(only_benign(p->logs[i]) ? FCL_LOG_DEBUG : FCL_LOG_WARNING,
            "build messages for %s on '%s'%s:\n%s", p->origin, name, when, p->logs[i]);
  }
}

/* FCL_ERR_BUILD_FAILED with the logs, the options and the source origin. */
static fcl_status build_failure(fcl_program *p, cl_int err, const char *what, const char *options) {
  collect_logs(p);
  char logs[12000] = "";
  size_t used = 0;
  for (cl_uint i = 0; i < p->context->num_devices && used < sizeof logs; ++i) {
    if (blank(p->logs[i])) continue;
    char name[256] = "";
    clGetDeviceInfo(fcl__context_cl_devices(p->context)[i], CL_DEVICE_NAME, sizeof name, name,
                    NULL);
    int w = snprintf(logs + used, sizeof logs - used, "\n--- build log on '%s' ---\n%s", name,
                     p->logs[i]);
    if (w > 0) used += (size_t)w;
  }
  return fcl__error_set(FCL_ERR_BUILD_FAILED, err, __func__, __FILE__, __LINE__,
                        "%s of %s failed: %s (%d); options: \"%s\"%s", what, p->origin,
                        fcl_cl_error_name(err), err, options, used ? logs : " (empty build log)");
}

static void drop_binaries(fcl_program *p) {
  for (cl_uint i = 0; i < p->context->num_devices; ++i) {
    free(p->binaries[i]);
    p->binaries[i] = NULL;
    p->binary_sizes[i] = 0;
  }
}

/* Try to build from cached binaries for every device; false on any miss or driver refusal. */
static bool build_from_cache(fcl_program *p, const char *options, char (*keys)[65]) {
  cl_uint n = p->context->num_devices;
  fcl__cache_entry *entries = calloc(n, sizeof *entries);
  if (!entries) return false;
  bool all = true;
  for (cl_uint i = 0; i < n && all; ++i) all = fcl__cache_load(keys[i], &entries[i]);
  cl_program cl = NULL;
  if (all) {
    size_t *sizes = malloc(n * sizeof *sizes);
    const unsigned char **bins = malloc(n * sizeof *bins);
    cl_int err = CL_OUT_OF_HOST_MEMORY;
    if (sizes && bins) {
      for (cl_uint i = 0; i < n; ++i) {
        sizes[i] = entries[i].binary_size;
        bins[i] = entries[i].binary;
      }
      cl = clCreateProgramWithBinary(fcl__context_cl(p->context), n,
                                     fcl__context_cl_devices(p->context), sizes, bins, NULL, &err);
      if (err == CL_SUCCESS)
        err = clBuildProgram(cl, n, fcl__context_cl_devices(p->context), options, NULL, NULL);
    }
    free(sizes);
    free(bins);
    if (err != CL_SUCCESS) {
      fcl_log(FCL_LOG_WARNING, "driver refused the cached binary of %s (%s): building from source",
              p->origin, fcl_cl_error_name(err));
      if (cl) clReleaseProgram(cl);
      cl = NULL;
      all = false;
    }
  }
  if (all) {
    clReleaseProgram(p->cl);
    p->cl = cl;
    free_logs(p);
    for (cl_uint i = 0; i < n; ++i) {
      p->logs[i] = entries[i].log;
      entries[i].log = NULL;
    }
    all = fcl__program_load_meta(p, entries[0].meta) == FCL_OK;
  }
  for (cl_uint i = 0; i < n; ++i) fcl__cache_entry_free(&entries[i]);
  free(entries);
  return all;
}

static void store_in_cache(fcl_program *p, char (*keys)[65]) {
  char *meta = fcl__program_meta_serialize(p);
  if (!meta) return;
  for (cl_uint i = 0; i < p->context->num_devices; ++i) {
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
  char *opts = full_options(options);
  if (!opts) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "build options");
  free(p->options);
  p->options = opts;
  p->from_cache = false;
  drop_binaries(p);
  fcl__program_meta_free(p);
  cl_uint n = p->context->num_devices;
  char(*keys)[65] = NULL;
  bool cache = p->source && fcl__cache_enabled();
  int lock = -1;
  if (cache) {
    keys = malloc(n * sizeof *keys);
    if (!keys) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "cache keys");
    for (cl_uint i = 0; i < n; ++i)
      fcl__cache_key(p->source, opts, p->context->devices[i], keys[i]);
    lock = fcl__cache_lock(keys[0]); /* until stored: see program_cache.c */
    if (build_from_cache(p, opts, keys)) {
      fcl__cache_unlock(lock);
      p->from_cache = true;
      free(keys);
      show_warnings(p, " (from the program cache)");
      fcl__count_program_built();
      return FCL_OK;
    }
  }
  cl_int err = clBuildProgram(p->cl, n, fcl__context_cl_devices(p->context), opts, NULL, NULL);
  if (err != CL_SUCCESS) {
    fcl__cache_unlock(lock);
    free(keys);
    return build_failure(p, err, "build", opts);
  }
  collect_logs(p);
  show_warnings(p, "");
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

fcl_status fcl_program_compile(fcl_program *program, const char *options, cl_uint num_headers,
                               fcl_program *const *headers, const char *const *header_names) {
  FCL_CHECK_NULL(program, 1);
  FCL_CHECK_ARG(num_headers == 0 || (headers && header_names), 4, "headers",
                "headers and header_names must not be NULL when num_headers > 0");
  fcl_program *p = program;
  char *opts = full_options(options);
  cl_program *hs = num_headers ? malloc(num_headers * sizeof *hs) : NULL;
  if (!opts || (num_headers && !hs)) {
    free(opts);
    free(hs);
    return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "compile options");
  }
  for (cl_uint i = 0; i < num_headers; ++i) hs[i] = headers[i]->cl;
  free(p->options);
  p->options = opts;
  cl_int err = clCompileProgram(p->cl, p->context->num_devices, fcl__context_cl_devices(p->context),
                                opts, num_headers, hs, (const char **)header_names, NULL, NULL);
  free(hs);
  if (err != CL_SUCCESS) return build_failure(p, err, "compilation", opts);
  collect_logs(p);
  show_warnings(p, " (compile)");
  return FCL_OK;
}

fcl_status fcl_program_link(fcl_context *context, cl_uint num_programs,
                            fcl_program *const *programs, const char *options, fcl_program **out) {
  FCL_CHECK_NULL(context, 1);
  FCL_CHECK_ARG(num_programs > 0, 2, "num_programs", "must be > 0");
  FCL_CHECK_NULL(programs, 3);
  FCL_CHECK_NULL(out, 5);
  *out = NULL;
  cl_program *ps = malloc(num_programs * sizeof *ps);
  if (!ps) return FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "program list");
  char origin[1024] = "link of";
  for (cl_uint i = 0; i < num_programs; ++i) {
    ps[i] = programs[i]->cl;
    size_t used = strlen(origin);
    snprintf(origin + used, sizeof origin - used, " %s", programs[i]->origin);
  }
  fcl_program *p;
  fcl_status st = fcl__program_new(context, NULL, origin, &p);
  if (st != FCL_OK) {
    free(ps);
    return st;
  }
  free(p->options);
  p->options = strdup(options ? options : "");
  cl_int err;
  p->cl = clLinkProgram(fcl__context_cl(context), context->num_devices,
                        fcl__context_cl_devices(context), p->options, num_programs, ps, NULL, NULL,
                        &err);
  free(ps);
  if (err != CL_SUCCESS) {
    if (p->cl)
      st = build_failure(p, err, "link", p->options);
    else
      st = FCL_CL_ERROR(err, "clLinkProgram(%s)", origin);
    fcl_program_release(&p);
    return st;
  }
  collect_logs(p);
  st = fcl__program_load_meta(p, NULL);
  if (st != FCL_OK) {
    fcl_program_release(&p);
    return st;
  }
  *out = p;
  return FCL_OK;
}

cl_program fcl_program_cl(const fcl_program *program) { return program ? program->cl : NULL; }
fcl_context *fcl_program_context(const fcl_program *program) {
  return program ? program->context : NULL;
}
const char *fcl_program_source(const fcl_program *program) {
  return program && program->source ? program->source + strlen(fcl__prelude_opencl) : "";
}
const char *fcl_program_origin(const fcl_program *program) {
  return program ? program->origin : "";
}
const char *fcl_program_options(const fcl_program *program) {
  return program ? program->options : "";
}
bool fcl_program_from_cache(const fcl_program *program) { return program && program->from_cache; }

_Static_assert(CL_BUILD_SUCCESS == FCL_BUILD_SUCCESS && CL_BUILD_NONE == FCL_BUILD_NONE &&
                   CL_BUILD_ERROR == FCL_BUILD_ERROR &&
                   CL_BUILD_IN_PROGRESS == FCL_BUILD_IN_PROGRESS,
               "OpenCL's build states are flowcl's");

fcl_status fcl_program_build_status(const fcl_program *program, const fcl_device *device,
                                    fcl_build_status *status) {
  FCL_CHECK_NULL(program, 1);
  FCL_CHECK_NULL(device, 2);
  FCL_CHECK_NULL(status, 3);
  cl_build_status native = CL_BUILD_NONE;
  FCL_CL_TRY(clGetProgramBuildInfo(program->cl, fcl__device_cl(device), CL_PROGRAM_BUILD_STATUS,
                                   sizeof native, &native, NULL),
             "clGetProgramBuildInfo(CL_PROGRAM_BUILD_STATUS)");
  *status = (fcl_build_status)native; /* the same values */
  return FCL_OK;
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
    cl_uint n = p->context->num_devices;
    size_t *sizes = calloc(n, sizeof *sizes);
    unsigned char **bins = calloc(n, sizeof *bins);
    cl_int err = (sizes && bins) ? clGetProgramInfo(p->cl, CL_PROGRAM_BINARY_SIZES,
                                                    n * sizeof *sizes, sizes, NULL)
                                 : CL_OUT_OF_HOST_MEMORY;
    for (cl_uint i = 0; err == CL_SUCCESS && i < n; ++i)
      if (sizes[i] && !(bins[i] = malloc(sizes[i]))) err = CL_OUT_OF_HOST_MEMORY;
    if (err == CL_SUCCESS)
      err = clGetProgramInfo(p->cl, CL_PROGRAM_BINARIES, n * sizeof *bins, bins, NULL);
    if (err == CL_SUCCESS) {
      for (cl_uint i = 0; i < n; ++i) {
        free(p->binaries[i]);
        p->binaries[i] = bins[i];
        p->binary_sizes[i] = sizes[i];
      }
    } else {
      for (cl_uint i = 0; bins && i < n; ++i) free(bins[i]);
      st = FCL_CL_ERROR(err, "clGetProgramInfo(CL_PROGRAM_BINARIES) of %s", p->origin);
    }
    free(sizes);
    free(bins);
  }
  *binary = p->binaries[idx];
  *size = p->binary_sizes[idx];
  pthread_mutex_unlock(&p->lock);
  return st;
}
