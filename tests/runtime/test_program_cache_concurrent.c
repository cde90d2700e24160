/* Two processes fill one program cache at once (as MPI ranks do): both succeed, each program is
 * compiled once between them (the second waits on the key's lock and loads the first's entry),
 * and afterwards every entry is valid (served from the cache with correct results) and no
 * temporary file is left. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fcl_test.h"
#include "flowcl/opencl.h"

enum { PROGRAMS = 8, ROUNDS = 3 };

/* Builds the PROGRAMS sources; checks results; counts cache hits into *(int *)user. */
static void build_all(const fcl_device_entry *e, void *user) {
  fcl_context *ctx = NULL;
  CHECK_OK(fcl_context_create(1, &e->device, &ctx));
  fcl_queue *q = NULL;
  CHECK_OK(fcl_queue_create(ctx, NULL, 0, &q));
  fcl_mem *out = NULL;
  CHECK_OK(fcl_mem_create(ctx, FCL_MEM_DEVICE, sizeof(int), NULL, &out));
  for (int i = 0; i < PROGRAMS && ctx && q; ++i) {
    char src[256];
    snprintf(src, sizeof src, "FCL_KERNEL void k(FCL_GLOBAL int *out) { out[0] = %d; }\n",
             1000 + i);
    fcl_program *p = NULL;
    fcl_kernel *k = NULL;
    int value = -1;
    CHECK_OK(fcl_program_create_source(ctx, src, "concurrent cache test", &p));
    CHECK_OK(fcl_program_build(p, NULL));
    *(int *)user += fcl_program_from_cache(p);
    CHECK_OK(fcl_kernel_create(p, "k", &k));
    if (k) {
      CHECK_OK(fcl_kernel_set_arg_buffer(k, 0, out));
      CHECK_OK(fcl_kernel_enqueue_task(k, q, 0, NULL, NULL));
      CHECK_OK(fcl_mem_read(q, out, 0, sizeof value, &value, FCL_BLOCKING, 0, NULL, NULL));
    }
    CHECKF(value == 1000 + i, "program %d gave %d", i, value);
    fcl_kernel_destroy(&k);
    fcl_program_release(&p);
  }
  fcl_mem_release(&out);
  fcl_queue_release(&q);
  fcl_context_release(&ctx);
}

int main(void) {
  /* No OpenCL call before fork: each process initialises its own driver state. */
  char *dir = fcl_test_temp_dir("cache-concurrent");
  if (!dir) return 1;
  setenv("FLOWCL_CACHE_DIR", dir, 1);
  int devices = 1;
  const char *list = getenv("FLOWCL_TEST_DEVICES");
  for (const char *s = list; s && *s; ++s) devices += *s == ';';
  int pipes[2][2];
  pid_t children[2];
  for (int c = 0; c < 2; ++c) {
    CHECK(pipe(pipes[c]) == 0);
    children[c] = fork();
    if (children[c] == 0) { /* the first round's cache hits go to the parent */
      int hits = 0, first = 0;
      int code = 0;
      for (int r = 0; r < ROUNDS && code == 0; ++r) {
        code = fcl_test_run_on_devices(build_all, &hits);
        if (r == 0) first = hits;
      }
      if (write(pipes[c][1], &first, sizeof first) != (ssize_t)sizeof first) code = 1;
      _exit(code);
    }
    CHECK(children[c] > 0);
    close(pipes[c][1]);
  }
  int first_hits = 0, skipped = 0;
  for (int c = 0; c < 2; ++c) {
    int status = 0, hits = 0;
    if (read(pipes[c][0], &hits, sizeof hits) == (ssize_t)sizeof hits) first_hits += hits;
    close(pipes[c][0]);
    if (children[c] > 0) waitpid(children[c], &status, 0);
    CHECKF(WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == FCL_TEST_SKIP),
           "child %d failed (status 0x%x)", c, status);
    skipped += WIFEXITED(status) && WEXITSTATUS(status) == FCL_TEST_SKIP;
  }
  CHECKF(skipped || first_hits == PROGRAMS * devices,
         "the two processes compiled %d programs between them, expected each of the %d once",
         2 * PROGRAMS * devices - first_hits, PROGRAMS * devices);
  int hits = 0;
  int code = fcl_test_run_on_devices(build_all, &hits);
  CHECKF(code == FCL_TEST_SKIP || hits == PROGRAMS * devices,
         "%d of %d programs served from the cache after the concurrent fill", hits,
         PROGRAMS * devices);
  CHECK(fcl_test_count_files(dir, ".tmp") == 0);
  CHECK(code == FCL_TEST_SKIP || fcl_test_count_files(dir, ".clbin") >= PROGRAMS);
  fcl_test_remove_dir(dir);
  free(dir);
  return code == FCL_TEST_SKIP ? code : fcl_test_exit_code();
}
