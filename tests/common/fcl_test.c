#include "fcl_test.h"

#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int fcl_test_failures;

void fcl_test_fail(const char *file, int line, const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  fprintf(stderr, "%s:%d: FAIL: ", file, line);
  vfprintf(stderr, format, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  ++fcl_test_failures;
}

bool fcl_test_contains(const char *haystack, const char *needle) {
  return haystack && needle && strstr(haystack, needle) != NULL;
}

void fcl_test_check_status(const char *file, int line, const char *call, fcl_status got,
                           fcl_status expected, const char *text) {
  if (got != expected) {
    fcl_test_fail(file, line, "%s returned %s, expected %s (message: %s)", call,
                  fcl_status_name(got), fcl_status_name(expected), fcl_last_error());
    return;
  }
  if (text && !fcl_test_contains(fcl_last_error(), text))
    fcl_test_fail(file, line, "%s: message lacks \"%s\": %s", call, text, fcl_last_error());
}

bool fcl_test_close(double got, double expected, double rtol_eps, double atol,
                    bool single_precision) {
  if (isnan(got) || isnan(expected)) return false;
  double eps = single_precision ? FLT_EPSILON : DBL_EPSILON;
  double tol = fmax(rtol_eps * eps * fabs(expected), atol);
  return fabs(got - expected) <= tol;
}

const char *fcl_test_device_name(fcl_device *device) {
  static _Thread_local char name[256];
  fcl_device_info info;
  name[0] = '\0';
  if (fcl_device_get_info(device, &info) == FCL_OK) snprintf(name, sizeof name, "%s", info.name);
  fcl_clear_error();
  return name;
}

int fcl_test_run_on_devices(fcl_test_device_fn fn, void *user) {
  const char *specs = getenv("FLOWCL_TEST_DEVICES");
  fcl_device_entry *list = NULL;
  size_t n = 0;
  if (specs && *specs) {
    if (fcl_device_select_list(specs, &list, &n) != FCL_OK) {
      fprintf(stderr, "FLOWCL_TEST_DEVICES: %s\n", fcl_last_error());
      return 1;
    }
  } else {
    fcl_device_entry e;
    if (fcl_device_select("pocl:cpu", &e) != FCL_OK && fcl_device_select(NULL, &e) != FCL_OK) {
      fprintf(stderr, "no OpenCL device: %s\n", fcl_last_error());
      return FCL_TEST_SKIP;
    }
    list = malloc(sizeof *list);
    if (!list) return 1;
    list[0] = e;
    n = 1;
  }
  for (size_t i = 0; i < n; ++i) {
    int before = fcl_test_failures;
    fcl_clear_error();
    fn(&list[i], user);
    printf("[%u:%u] %s: %s\n", list[i].platform_index, list[i].device_index,
           fcl_test_device_name(list[i].device), fcl_test_failures == before ? "passed" : "FAILED");
  }
  free(list);
  return fcl_test_exit_code();
}

char *fcl_test_temp_dir(const char *tag) {
  const char *tmp = getenv("TMPDIR");
  char *path = malloc(4096);
  if (!path) return NULL;
  snprintf(path, 4096, "%s/flowcl-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", tag);
  if (!mkdtemp(path)) {
    free(path);
    return NULL;
  }
  return path;
}

void fcl_test_remove_dir(const char *path) {
  if (!path) return;
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", path);
}

int fcl_test_skipped_parts;

void fcl_test_skip_part(const char *device, const char *what) {
  ++fcl_test_skipped_parts;
  printf("  SKIPPED on %s: %s\n", device ? device : "this device", what);
}

int fcl_test_exit_code(void) {
  return fcl_test_failures ? 1 : fcl_test_skipped_parts ? FCL_TEST_SKIP : 0;
}

void fcl_test_find_file(const char *dir, const char *text, char *path, size_t size) {
  DIR *d = opendir(dir);
  path[0] = '\0';
  if (!d) return;
  for (struct dirent *e; (e = readdir(d)) != NULL;)
    if (strstr(e->d_name, text) && !strstr(e->d_name, ".tmp"))
      snprintf(path, size, "%s/%s", dir, e->d_name);
  closedir(d);
}

int fcl_test_count_files(const char *dir, const char *text) {
  DIR *d = opendir(dir);
  int n = 0;
  if (!d) return 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) n += strstr(e->d_name, text) != NULL;
  closedir(d);
  return n;
}
