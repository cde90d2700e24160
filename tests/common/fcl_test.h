/* Test helpers shared by every flowcl test: checks that record failures and go on, the one
 * floating-point comparison helper, and the loop over FLOWCL_TEST_DEVICES. */
#ifndef FLOWCL_TEST_H
#define FLOWCL_TEST_H

#include <flowcl/flowcl.h>
#include <stdbool.h>
#include <stdio.h>

/* CTest's skip code (SKIP_RETURN_CODE): the test needs hardware that is absent. */
#define FCL_TEST_SKIP 77

extern int fcl_test_failures;
/* Parts of a test not run for want of a device capability (doubles without cl_khr_fp64): each
 * says so on stdout, and a test without failures then exits with FCL_TEST_SKIP, so that CTest
 * reports a skip rather than a pass that tested less. */
extern int fcl_test_skipped_parts;
void fcl_test_skip_part(const char *device, const char *what);

void fcl_test_fail(const char *file, int line, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#define CHECK(cond)                                                                                \
  do {                                                                                             \
    if (!(cond)) fcl_test_fail(__FILE__, __LINE__, "check failed: %s", #cond);                     \
  } while (0)
#define CHECKF(cond, ...)                                                                          \
  do {                                                                                             \
    if (!(cond)) fcl_test_fail(__FILE__, __LINE__, __VA_ARGS__);                                   \
  } while (0)
/* The call must return FCL_OK; otherwise print the recorded error. */
#define CHECK_OK(call)                                                                             \
  do {                                                                                             \
    fcl_status s_ = (call);                                                                        \
    if (s_ != FCL_OK)                                                                              \
      fcl_test_fail(__FILE__, __LINE__, "%s returned %s: %s", #call, fcl_status_name(s_),          \
                    fcl_last_error());                                                             \
  } while (0)
/* The call must fail with this status, and its message must contain text (NULL: any). */
#define CHECK_STATUS(call, expected, text)                                                         \
  do {                                                                                             \
    fcl_status s_ = (call);                                                                        \
    fcl_test_check_status(__FILE__, __LINE__, #call, s_, (expected), (text));                      \
  } while (0)
/* The call must fail with the status and its message must contain every one of the texts. */
void fcl_test_check_status(const char *file, int line, const char *call, fcl_status got,
                           fcl_status expected, const char *text);
bool fcl_test_contains(const char *haystack, const char *needle);

/* |got - expected| <= max(rtol_eps * eps * |expected|, atol), false for NaN; eps is the float
 * or double epsilon (single_precision). The project's only floating-point comparison. */
bool fcl_test_close(double got, double expected, double rtol_eps, double atol,
                    bool single_precision);

/* Run fn on every device of FLOWCL_TEST_DEVICES (';'-separated specifications; default: the
 * first PoCL CPU device, else the default device). Prints one line per device. Returns the
 * process exit code: 0 when every run passed, 1 otherwise, FCL_TEST_SKIP when no device. */
typedef void (*fcl_test_device_fn)(const fcl_device_entry *device, void *user);
int fcl_test_run_on_devices(fcl_test_device_fn fn, void *user);
/* Name of a device for messages. */
const char *fcl_test_device_name(fcl_device *device);
/* A fresh temporary directory (mkdtemp under TMPDIR), malloc'd path. */
char *fcl_test_temp_dir(const char *tag);
/* rm -r of a directory made by fcl_test_temp_dir. */
void fcl_test_remove_dir(const char *path);
/* Number of entries of directory dir whose name contains text (0 when dir is missing). */
int fcl_test_count_files(const char *dir, const char *text);
/* Path of an entry of dir whose name contains text and not ".tmp" (the last one read), or "". */
void fcl_test_find_file(const char *dir, const char *text, char *path, size_t size);
/* Exit code for main: 1 after a failure, else FCL_TEST_SKIP after a skipped part, else 0. */
int fcl_test_exit_code(void);

#endif
