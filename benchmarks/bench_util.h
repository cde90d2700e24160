/* Shared helpers of the benchmark executables: failure exit, a monotonic clock, medians,
 * option parsing. Define BENCH_NAME before including. */
#ifndef FLOWCL_BENCH_UTIL_H
#define FLOWCL_BENCH_UTIL_H

#include <flowcl/flowcl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Report a failure with flowcl's last error and leave main; BENCH_NAME names the benchmark. */
#define DIE(...)                                                                                   \
  do {                                                                                             \
    fprintf(stderr, BENCH_NAME ": " __VA_ARGS__);                                                  \
    fprintf(stderr, "\n%s\n", fcl_last_error());                                                   \
    return 1;                                                                                      \
  } while (0)

/* The benchmarks that time flowcl against raw OpenCL calls refuse a device of another backend
 * (those calls would fail or do nothing there). */
#define REQUIRE_OPENCL(device)                                                                     \
  do {                                                                                             \
    if (strcmp(fcl_device_backend(device), "opencl")) {                                            \
      fprintf(stderr,                                                                              \
              BENCH_NAME ": times flowcl against raw OpenCL calls: needs an OpenCL device, not "   \
                         "one of the %s backend\n",                                                \
              fcl_device_backend(device));                                                         \
      return 2;                                                                                    \
    }                                                                                              \
  } while (0)

static inline double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline int bench_compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median of v[n] (sorts v). */
static inline double bench_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, bench_compare);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Common options: --device SPEC --json FILE --repeats R; returns 0, or 2 on a bad option. */
typedef struct {
  const char *device, *json;
  int repeats;
  long count; /* --count N: operations per repeat (meaning per benchmark) */
} bench_options;

static inline int bench_parse(int argc, char **argv, bench_options *o, const char *usage) {
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--device") && i + 1 < argc)
      o->device = argv[++i];
    else if (!strcmp(argv[i], "--json") && i + 1 < argc)
      o->json = argv[++i];
    else if (!strcmp(argv[i], "--repeats") && i + 1 < argc)
      o->repeats = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--count") && i + 1 < argc)
      o->count = atol(argv[++i]);
    else {
      fprintf(stderr, "usage: %s %s\n", argv[0], usage);
      return 2;
    }
  }
  if (o->repeats < 1 || o->repeats > 1000 || o->count < 1) {
    fprintf(stderr, "%s: --repeats must be in 1..1000 and --count >= 1\n", argv[0]);
    return 2;
  }
  return 0;
}

#endif
