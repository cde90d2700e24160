/* Device enumeration as a flat list and selection by "platform:device" specification. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "check.h"
#include "runtime_impl.h"

fcl_status fcl_device_list(fcl_device_entry **entries, size_t *count) {
  FCL_CHECK_NULL(entries, 1);
  FCL_CHECK_NULL(count, 2);
  *entries = NULL;
  *count = 0;
  (void)
      fcl_log_get_level(); /* every program lists devices first: a bad FLOWCL_LOG_LEVEL shows now */
  unsigned np = 0;
  FCL_TRY(fcl_platform_count(&np));
  fcl_device_entry *list = NULL;
  size_t n = 0;
  fcl_status st = FCL_OK;
  for (unsigned p = 0; p < np && st == FCL_OK; ++p) {
    fcl_platform *platform = NULL;
    fcl_platform_info info;
    st = fcl_platform_get(p, &platform);
    if (st == FCL_OK) st = fcl_platform_get_info(platform, &info);
    if (st != FCL_OK || info.num_devices == 0) continue;
    fcl_device_entry *grown = realloc(list, (n + info.num_devices) * sizeof *list);
    if (!grown) {
      st = FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "device list");
      break;
    }
    list = grown;
    for (unsigned d = 0; d < info.num_devices && st == FCL_OK; ++d) {
      fcl_device *device = NULL;
      st = fcl_platform_get_device(platform, d, &device);
      if (st == FCL_OK) list[n++] = (fcl_device_entry){p, d, platform, device};
    }
  }
  if (st != FCL_OK) {
    free(list);
    return st;
  }
  *entries = list;
  *count = n;
  return FCL_OK;
}

static bool contains_nocase(const char *haystack, const char *needle) {
  size_t n = strlen(needle);
  for (; *haystack; ++haystack)
    if (strncasecmp(haystack, needle, n) == 0) return true;
  return n == 0;
}

static bool is_index(const char *s) {
  if (!*s) return false;
  for (; *s; ++s)
    if (!isdigit((unsigned char)*s)) return false;
  return true;
}

/* The backend a platform part names ("cuda", "opencl"), or NULL. */
static const fcl__backend *named_backend(const char *part) {
  for (size_t i = 0; i < fcl__num_backends; ++i)
    if (strcasecmp(part, fcl__backends[i]->name) == 0) return fcl__backends[i];
  return NULL;
}

/* An empty part matches everything; digits match the index; a backend's name its platforms;
 * otherwise a substring. Devices of a backend other than the first (OpenCL) are matched only by
 * an index or the backend's name: one GPU seen through two device APIs is not two devices. */
static bool platform_matches(const char *part, const fcl_device_entry *e) {
  if (is_index(part)) return strtoul(part, NULL, 10) == e->platform_index;
  const fcl__backend *named = named_backend(part);
  if (named) return e->device->backend == named;
  if (e->device->backend != fcl__backends[0]) return false;
  if (!*part) return true;
  fcl_platform_info pi;
  if (fcl_platform_get_info(e->platform, &pi) != FCL_OK) return false;
  return contains_nocase(pi.name, part) || contains_nocase(pi.vendor, part) ||
         contains_nocase(pi.version, part);
}

static bool device_matches(const char *part, const fcl_device_entry *e) {
  if (!*part) return true;
  if (is_index(part)) return strtoul(part, NULL, 10) == e->device_index;
  fcl_device_info di;
  if (fcl_device_get_info(e->device, &di) != FCL_OK) return false;
  return contains_nocase(di.name, part) || contains_nocase(di.vendor, part) ||
         strcasecmp(fcl_device_type_name(di.type), part) == 0;
}

/* "  0:0  Portable Computing Language / pthread-... (CPU)" lines, for error messages. */
static void describe_devices(const fcl_device_entry *list, size_t n, char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  if (n == 0)
    snprintf(buf, size,
             "  (none: no OpenCL platform or device was found; is an ICD "
             "such as pocl-opencl-icd installed?)");
  for (size_t i = 0; i < n && used < size; ++i) {
    fcl_platform_info pi;
    fcl_device_info di;
    if (fcl_platform_get_info(list[i].platform, &pi) != FCL_OK ||
        fcl_device_get_info(list[i].device, &di) != FCL_OK)
      continue;
    int w = snprintf(buf + used, size - used, "\n  %u:%u  %s / %s (%s)", list[i].platform_index,
                     list[i].device_index, pi.name, di.name, fcl_device_type_name(di.type));
    if (w < 0) break;
    used += (size_t)w;
  }
  fcl_clear_error(); /* the lookups above may not leave a stale error behind */
}

/* The device spec names; where it names several, match number nth modulo their count (nth < 0:
 * the first), so that the ranks of a node given one spec ("nvidia") spread over its GPUs. */
static fcl_status select_from(const fcl_device_entry *list, size_t n, const char *spec,
                              const char *source, int nth, fcl_device_entry *out) {
  char platform_part[256] = "", device_part[256] = "";
  const char *colon = strchr(spec, ':');
  if (colon) {
    snprintf(platform_part, sizeof platform_part, "%.*s", (int)(colon - spec), spec);
    snprintf(device_part, sizeof device_part, "%s", colon + 1);
  } else {
    snprintf(platform_part, sizeof platform_part, "%s", spec);
  }
  size_t matches = 0;
  for (size_t i = 0; i < n; ++i)
    matches += platform_matches(platform_part, &list[i]) && device_matches(device_part, &list[i]);
  const size_t want = nth < 0 || !matches ? 0 : (size_t)nth % matches;
  for (size_t i = 0, seen = 0; i < n; ++i) {
    if (platform_matches(platform_part, &list[i]) && device_matches(device_part, &list[i]) &&
        seen++ == want) {
      *out = list[i];
      fcl_clear_error();
      return FCL_OK;
    }
  }
  char available[4096];
  describe_devices(list, n, available, sizeof available);
  return FCL_ERROR(FCL_ERR_NOT_FOUND,
                   "no device matches %s '%s' (format platform:device, each an index or "
                   "a case-insensitive name substring); available devices:%s",
                   source, spec, available);
}

static fcl_status select_default(const fcl_device_entry *list, size_t n, fcl_device_entry *out) {
  for (size_t i = 0; i < n; ++i) {
    fcl_device_info info;
    if (fcl_device_get_info(list[i].device, &info) == FCL_OK && (info.type & FCL_DEVICE_GPU)) {
      *out = list[i];
      return FCL_OK;
    }
  }
  if (n == 0) {
    char available[512];
    describe_devices(list, n, available, sizeof available);
    return FCL_ERROR(FCL_ERR_NOT_FOUND, "no OpenCL device found:%s", available);
  }
  *out = list[0];
  return FCL_OK;
}

static fcl_status select_nth_gpu(const fcl_device_entry *all, size_t n, int index,
                                 fcl_device_entry *out);

/* spec, else FLOWCL_DEVICE, else the default choice: GPU number index (nth), or the first GPU
 * or else the first device. */
static fcl_status select_spec_or(const char *spec, bool nth, int index, fcl_device_entry *out) {
  const char *source = "the specification";
  if (!spec || !*spec) {
    spec = getenv("FLOWCL_DEVICE");
    source = "FLOWCL_DEVICE";
  }
  fcl_device_entry *list = NULL;
  size_t n = 0;
  FCL_TRY(fcl_device_list(&list, &n));
  if (!spec || !*spec) { /* the default choices are the first backend's (see platform_matches) */
    size_t kept = 0;
    for (size_t i = 0; i < n; ++i)
      if (list[i].device->backend == fcl__backends[0]) list[kept++] = list[i];
    n = kept;
  }
  fcl_status st = (spec && *spec) ? select_from(list, n, spec, source, nth ? index : -1, out)
                  : nth           ? select_nth_gpu(list, n, index, out)
                                  : select_default(list, n, out);
  free(list);
  return st;
}

fcl_status fcl_device_select(const char *spec, fcl_device_entry *out) {
  FCL_CHECK_NULL(out, 2);
  return select_spec_or(spec, false, 0, out);
}

/* GPU number index modulo their count, else the first CPU device. */
static fcl_status select_nth_gpu(const fcl_device_entry *all, size_t n, int index,
                                 fcl_device_entry *out) {
  size_t gpus = 0, first_cpu = SIZE_MAX;
  for (size_t i = 0; i < n; ++i) {
    fcl_device_info info;
    if (fcl_device_get_info(all[i].device, &info) != FCL_OK) continue;
    if (info.type & FCL_DEVICE_GPU)
      gpus++;
    else if ((info.type & FCL_DEVICE_CPU) && first_cpu == SIZE_MAX)
      first_cpu = i;
  }
  if (gpus) {
    const size_t want = (size_t)index % gpus;
    size_t seen = 0;
    for (size_t i = 0; i < n; ++i) {
      fcl_device_info info;
      if (fcl_device_get_info(all[i].device, &info) != FCL_OK || !(info.type & FCL_DEVICE_GPU))
        continue;
      if (seen++ == want) {
        *out = all[i];
        return FCL_OK;
      }
    }
  }
  if (first_cpu != SIZE_MAX) {
    *out = all[first_cpu];
    return FCL_OK;
  }
  return FCL_ERROR(FCL_ERR_NOT_FOUND, "select device: neither a GPU nor a CPU OpenCL device");
}

fcl_status fcl_device_select_nth(const char *spec, int index, fcl_device_entry *out) {
  FCL_CHECK_NULL(out, 3);
  FCL_CHECK_ARG(index >= 0, 2, "index", "must be >= 0");
  return select_spec_or(spec, true, index, out);
}

fcl_status fcl_device_select_list(const char *specs, fcl_device_entry **entries, size_t *count) {
  FCL_CHECK_NULL(specs, 1);
  FCL_CHECK_NULL(entries, 2);
  FCL_CHECK_NULL(count, 3);
  *entries = NULL;
  *count = 0;
  fcl_device_entry *list = NULL;
  size_t n = 0;
  FCL_TRY(fcl_device_list(&list, &n));
  fcl_device_entry *chosen = NULL;
  size_t nchosen = 0;
  fcl_status st = FCL_OK;
  char *copy = strdup(specs);
  if (!copy) st = FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "device specification copy");
  char *save = NULL;
  for (char *tok = copy ? strtok_r(copy, ";", &save) : NULL; tok && st == FCL_OK;
       tok = strtok_r(NULL, ";", &save)) {
    while (isspace((unsigned char)*tok)) ++tok;
    if (!*tok) continue;
    fcl_device_entry e;
    st = select_from(list, n, tok, "the device list entry", -1, &e);
    if (st != FCL_OK) break;
    fcl_device_entry *grown = realloc(chosen, (nchosen + 1) * sizeof *chosen);
    if (!grown) {
      st = FCL_ERROR(FCL_ERR_OUT_OF_MEMORY, "device list");
      break;
    }
    chosen = grown;
    chosen[nchosen++] = e;
  }
  free(copy);
  free(list);
  if (st == FCL_OK && nchosen == 0)
    st = FCL_ERROR(FCL_ERR_INVALID_ARGUMENT, "argument 1 (specs): '%s' names no device", specs);
  if (st != FCL_OK) {
    free(chosen);
    return st;
  }
  *entries = chosen;
  *count = nchosen;
  return FCL_OK;
}
