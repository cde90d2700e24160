/* Program binary cache: miss then hit, build warnings shown again on a hit, corrupted and
 * truncated entries detected (logged, rebuilt, never used), header edits change the key,
 * FLOWCL_NO_CACHE, no temporary files left behind. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "fcl_test.h"
#include "runtime_impl.h" /* fcl__cache_store: to plant an entry the driver cannot load */

#include <sys/stat.h>
#include <unistd.h>
#include "flowcl/opencl.h"

static char log_text[65536];

static int truncate_file(const char *path, long size) { return truncate(path, size); }
static int mkdir_p(const char *path) { return mkdir(path, 0755); }
static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  CHECKF(f != NULL, "cannot write %s", path);
  if (f) {
    fputs(text, f);
    fclose(f);
  }
}
static void capture_log(fcl_log_level level, const char *message, void *user) {
  (void)level;
  (void)user;
  size_t used = strlen(log_text);
  snprintf(log_text + used, sizeof log_text - used, "%s\n", message);
}

/* Build src, run kernel k(out) with one work-item, return out[0] (-1 on failure). */
static int build_and_run(fcl_context *ctx, const char *src, const char *options, bool *from_cache) {
  fcl_program *p = NULL;
  fcl_kernel *k = NULL;
  fcl_queue *q = NULL;
  int value = -1;
  fcl_mem *out = NULL;
  CHECK_OK(fcl_mem_create(ctx, FCL_MEM_DEVICE, sizeof(int), NULL, &out));
  CHECK_OK(fcl_program_create_source(ctx, src, "cache test", &p));
  CHECK_OK(fcl_program_build(p, options));
  *from_cache = fcl_program_from_cache(p);
  CHECK_OK(fcl_kernel_create(p, "k", &k));
  CHECK_OK(fcl_queue_create(ctx, NULL, 0, &q));
  if (k && q) {
    fcl_kernel_arg_info info;
    CHECK_OK(fcl_kernel_get_arg_info(k, 0, &info)); /* metadata survives the cache */
    CHECK(info.kind == FCL_ARG_GLOBAL && strcmp(info.name, "out") == 0);
    CHECK_OK(fcl_kernel_set_arg_buffer(k, 0, out));
    CHECK_OK(fcl_kernel_enqueue_task(k, q, 0, NULL, NULL));
    CHECK_OK(fcl_mem_read(q, out, 0, sizeof value, &value, FCL_BLOCKING, 0, NULL, NULL));
  }
  fcl_queue_release(&q);
  fcl_mem_release(&out);
  fcl_kernel_destroy(&k);
  fcl_program_release(&p);
  return value;
}

static void corrupt(const char *path, bool truncate) {
  FILE *f = fopen(path, "r+b");
  CHECKF(f != NULL, "cannot open %s", path);
  if (!f) return;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  if (truncate) {
    fclose(f);
    CHECK(truncate_file(path, n / 2) == 0);
    return;
  }
  fseek(f, n - 3, SEEK_SET); /* inside the payload */
  int c = fgetc(f);
  fseek(f, n - 3, SEEK_SET);
  fputc(c ^ 0x5a, f);
  fclose(f);
}

static void check_device(const fcl_device_entry *e, void *user) {
  (void)user;
  char *dir = fcl_test_temp_dir("cache");
  CHECK(dir != NULL);
  if (!dir) return;
  setenv("FLOWCL_CACHE_DIR", dir, 1);
  char where[4096];
  CHECK_OK(fcl_program_cache_dir(where, sizeof where));
  CHECK(strcmp(where, dir) == 0);
  fcl_context *ctx = NULL;
  CHECK_OK(fcl_context_create(1, &e->device, &ctx));
  bool hit = true;

  /* The compiler's warning must be shown on the fresh build and again on the cache hit. */
  const char *src = "#warning flowcl_cached_warning\n"
                    "FCL_KERNEL void k(FCL_GLOBAL int *out) { out[0] = 1234; }\n";
  log_text[0] = '\0';
  fcl_log_set_handler(capture_log, NULL);
  CHECK(build_and_run(ctx, src, NULL, &hit) == 1234);
  CHECK(!hit);
  bool warned_fresh = fcl_test_contains(log_text, "flowcl_cached_warning");
  CHECK(fcl_test_count_files(dir, ".clbin") == 1);
  log_text[0] = '\0';
  fcl_clear_error();
  CHECK(build_and_run(ctx, src, NULL, &hit) == 1234);
  CHECK(hit);
  /* error.h: the last error is a failing call's; a hit fails nothing */
  CHECKF(fcl_last_error()[0] == '\0', "a build from the cache left an error: %s", fcl_last_error());
  CHECKF(!warned_fresh || fcl_test_contains(log_text, "flowcl_cached_warning"),
         "warning not shown on the cache hit: %s", log_text);
  CHECK(fcl_test_contains(log_text, "from the program cache") || !warned_fresh);

  /* Different options: a different entry. */
  CHECK(build_and_run(ctx, src, "-DUNUSED=1", &hit) == 1234);
  CHECK(!hit);
  CHECK(fcl_test_count_files(dir, ".clbin") == 2);

  /* Corrupted payload: logged, removed, rebuilt from source, and the entry rewritten. */
  const char *src2 = "FCL_KERNEL void k(FCL_GLOBAL int *out) { out[0] = 77; }\n";
  char sub[4200];
  snprintf(sub, sizeof sub, "%s/corrupt", dir);
  setenv("FLOWCL_CACHE_DIR", sub, 1);
  CHECK(build_and_run(ctx, src2, NULL, &hit) == 77 && !hit);
  char entry[4400]; /* dir (< 4096) + name */
  fcl_test_find_file(sub, ".clbin", entry, sizeof entry);
  CHECK(entry[0] != '\0');
  for (int truncate = 0; truncate <= 1; ++truncate) {
    corrupt(entry, truncate);
    log_text[0] = '\0';
    CHECK(build_and_run(ctx, src2, NULL, &hit) == 77);
    CHECK(!hit);
    CHECKF(fcl_test_contains(log_text, "corrupted"), "no corruption warning: %s", log_text);
    CHECK(fcl_test_contains(log_text, truncate ? "truncated" : "checksum"));
    CHECK(build_and_run(ctx, src2, NULL, &hit) == 77 && hit); /* rewritten and valid */
  }
  /* An entry with a valid checksum whose binary the driver refuses: logged, built from source. */
  fcl_test_find_file(sub, ".clbin", entry, sizeof entry);
  char key[65] = "";
  const char *base = strrchr(entry, '/');
  if (base && strlen(base + 1) > 64) memcpy(key, base + 1, 64);
  unsigned char junk[64];
  memset(junk, 0xab, sizeof junk);
  fcl__cache_entry planted = {junk, sizeof junk, "", "K k 1\nA 2 0 out int*\n"};
  fcl__cache_store(key, &planted);
  log_text[0] = '\0';
  CHECK(build_and_run(ctx, src2, NULL, &hit) == 77);
  CHECK(!hit);
  CHECKF(fcl_test_contains(log_text, "refused the cached binary"), "no fallback warning: %s",
         log_text);
  CHECK(build_and_run(ctx, src2, NULL, &hit) == 77 && hit); /* replaced by a good entry */
  fcl_log_set_handler(NULL, NULL);

  /* A valid entry filed under another key (here: another program's) is never executed. */
  char keyed[4200], entry_a[4400], entry_b[4400];
  snprintf(keyed, sizeof keyed, "%s/keyed", dir);
  setenv("FLOWCL_CACHE_DIR", keyed, 1);
  const char *src_a = "FCL_KERNEL void k(FCL_GLOBAL int *out) { out[0] = 5; }\n";
  const char *src_b = "FCL_KERNEL void k(FCL_GLOBAL int *out) { out[0] = 6; }\n";
  CHECK(build_and_run(ctx, src_a, NULL, &hit) == 5 && !hit);
  fcl_test_find_file(keyed, ".clbin", entry_a, sizeof entry_a);
  char moved[4500];
  snprintf(moved, sizeof moved, "%s/entry-a", dir);
  CHECK(rename(entry_a, moved) == 0);
  CHECK(build_and_run(ctx, src_b, NULL, &hit) == 6 && !hit);
  fcl_test_find_file(keyed, ".clbin", entry_b, sizeof entry_b);
  CHECK(rename(moved, entry_b) == 0); /* program a's entry under program b's name */
  log_text[0] = '\0';
  fcl_log_set_handler(capture_log, NULL);
  CHECKF(build_and_run(ctx, src_b, NULL, &hit) == 6 && !hit, "ran another program's binary");
  CHECKF(fcl_test_contains(log_text, "another key"), "no warning: %s", log_text);
  CHECK(build_and_run(ctx, src_b, NULL, &hit) == 6 && hit); /* rewritten */

  /* A directory others may write to is not used, with one warning. */
  char open_dir[4200];
  snprintf(open_dir, sizeof open_dir, "%s/open", dir);
  CHECK(mkdir_p(open_dir) == 0 && chmod(open_dir, 0777) == 0);
  setenv("FLOWCL_CACHE_DIR", open_dir, 1);
  log_text[0] = '\0';
  CHECK_OK(fcl_program_cache_dir(where, sizeof where));
  CHECK(where[0] == '\0');
  CHECK(build_and_run(ctx, src_b, NULL, &hit) == 6 && !hit);
  CHECK(build_and_run(ctx, src_b, NULL, &hit) == 6 && !hit);
  CHECK(fcl_test_count_files(open_dir, ".clbin") == 0);
  CHECKF(fcl_test_contains(log_text, "writable by other users"), "no warning: %s", log_text);
  const char *second = strstr(log_text, "writable by other users");
  CHECKF(second && !strstr(second + 1, "writable by other users"), "warned twice: %s", log_text);
  fcl_log_set_handler(NULL, NULL);
  setenv("FLOWCL_CACHE_DIR", dir, 1);

  /* Editing an included header changes the key. */
  char incdir[4200], header[4300], options[4300];
  snprintf(incdir, sizeof incdir, "%s/include", dir);
  snprintf(header, sizeof header, "%s/value.h", incdir);
  snprintf(options, sizeof options, "-I %s", incdir);
  CHECK(mkdir_p(incdir) == 0);
  const char *src3 =
      "#include \"value.h\"\nFCL_KERNEL void k(FCL_GLOBAL int *out) { out[0] = VALUE; }\n";
  write_text(header, "#define VALUE 5\n");
  CHECK(build_and_run(ctx, src3, options, &hit) == 5 && !hit);
  CHECK(build_and_run(ctx, src3, options, &hit) == 5 && hit);
  write_text(header, "#define VALUE 6\n");
  CHECK(build_and_run(ctx, src3, options, &hit) == 6 && !hit);

  /* FLOWCL_NO_CACHE: nothing read, nothing written. */
  char off[4200];
  snprintf(off, sizeof off, "%s/off", dir);
  setenv("FLOWCL_CACHE_DIR", off, 1);
  setenv("FLOWCL_NO_CACHE", "1", 1);
  CHECK_OK(fcl_program_cache_dir(where, sizeof where));
  CHECK(where[0] == '\0');
  CHECK(build_and_run(ctx, src2, NULL, &hit) == 77 && !hit);
  CHECK(build_and_run(ctx, src2, NULL, &hit) == 77 && !hit);
  CHECK(fcl_test_count_files(off, ".clbin") == 0);
  unsetenv("FLOWCL_NO_CACHE");

  CHECK(fcl_test_count_files(dir, ".tmp") == 0 && fcl_test_count_files(sub, ".tmp") == 0);
  fcl_context_release(&ctx);
  fcl_test_remove_dir(dir);
  free(dir);
}

int main(void) { return fcl_test_run_on_devices(check_device, NULL); }
