/* Error model: status table, OpenCL error names, thread-local last error, log handler/level. */
#include <pthread.h>
#include <string.h>

#include "fcl_test.h"
#include "flowcl/opencl.h"

static int records;
static char last_message[512];
static void capture(fcl_log_level level, const char *message, void *user) {
  (void)level;
  ++*(int *)user;
  snprintf(last_message, sizeof last_message, "%s", message);
}

static void *other_thread(void *arg) {
  (void)arg;
  /* A failure on this thread must not show on the main thread. */
  fcl_platform *p;
  fcl_platform_get(1000000, &p);
  return (void *)(fcl_last_status() == FCL_ERR_NOT_FOUND ? (void *)1 : NULL);
}

int main(void) {
  CHECK(strcmp(fcl_status_name(FCL_OK), "FCL_OK") == 0);
  CHECK(strcmp(fcl_status_name(FCL_ERR_BUILD_FAILED), "FCL_ERR_BUILD_FAILED") == 0);
  CHECK(strcmp(fcl_status_name((fcl_status)-999), "FCL_UNKNOWN_STATUS") == 0);
  CHECK(strcmp(fcl_status_string(FCL_ERR_NOT_FOUND), "not found") == 0);
  /* Codes and names as the OpenCL headers define them. */
  CHECK(strcmp(fcl_cl_error_name(CL_INVALID_WORK_GROUP_SIZE), "CL_INVALID_WORK_GROUP_SIZE") == 0);
  CHECK(strcmp(fcl_cl_error_name(CL_BUILD_PROGRAM_FAILURE), "CL_BUILD_PROGRAM_FAILURE") == 0);
  CHECK(strcmp(fcl_cl_error_name(CL_MAX_SIZE_RESTRICTION_EXCEEDED),
               "CL_MAX_SIZE_RESTRICTION_EXCEEDED") == 0);
  CHECK(strcmp(fcl_cl_error_name(12345), "CL_UNKNOWN_ERROR") == 0);

  /* Argument validation names the position and the argument. */
  fcl_clear_error();
  CHECK(fcl_last_status() == FCL_OK && fcl_last_error()[0] == '\0');
  CHECK_STATUS(fcl_platform_get(0, NULL), FCL_ERR_INVALID_ARGUMENT, "argument 2 (platform)");
  CHECK(fcl_test_contains(fcl_last_error(), "fcl_platform_get ("));
  CHECK(fcl_test_contains(fcl_last_error(), "src/runtime/device_info.c:"));

  /* Thread-local: the other thread's failure leaves this thread's record alone. */
  fcl_clear_error();
  pthread_t t;
  void *result = NULL;
  CHECK(pthread_create(&t, NULL, other_thread, NULL) == 0);
  pthread_join(t, &result);
  CHECK(result == (void *)1);
  CHECK(fcl_last_status() == FCL_OK);

  /* Log handler and level. */
  int count = 0;
  fcl_log_set_handler(capture, &count);
  fcl_log_set_level(FCL_LOG_WARNING);
  fcl_log(FCL_LOG_INFO, "hidden %d", 1);
  fcl_log(FCL_LOG_WARNING, "shown %d", 2);
  CHECK(count == 1 && strcmp(last_message, "shown 2") == 0);
  fcl_log_set_level(FCL_LOG_NONE);
  fcl_log(FCL_LOG_ERROR, "silenced");
  CHECK(count == 1);
  fcl_log_set_level(FCL_LOG_DEBUG);
  CHECK(fcl_log_get_level() == FCL_LOG_DEBUG);
  fcl_log(FCL_LOG_DEBUG, "debug");
  CHECK(count == 2);
  fcl_log_set_handler(NULL, NULL);
  (void)records;
  return fcl_test_exit_code();
}
