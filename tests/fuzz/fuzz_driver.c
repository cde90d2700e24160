/* Stand-alone driver for the fuzz targets when they are not linked with libFuzzer (every preset
 * but `fuzz`): it runs each input of the corpus given, then -runs=N mutations of them drawn
 * from a fixed -seed=S, so a CTest smoke run is repeatable and takes seconds. The flags are
 * libFuzzer's spelling, so one command line serves both builds:
 *
 *   fuzz_target [-runs=N] [-seed=S] [-max_len=L] DIR_OR_FILE...
 *
 * A target defines LLVMFuzzerTestOneInput and may define LLVMFuzzerInitialize, as for
 * libFuzzer. A finding is a crash, a sanitizer report or an abort() in the target: the process
 * dies and the test fails. The mutations (bit flips, interesting bytes, deletions, insertions,
 * copies within the input, splices of two inputs) are a small subset of libFuzzer's. */
#include <dirent.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

typedef struct {
  uint8_t *data;
  size_t size;
} input;

typedef struct {
  input *items;
  size_t n, cap;
} corpus;

static uint64_t rng_state;

static uint64_t rng(void) { /* xorshift64* */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ull;
}

static size_t below(size_t n) { return n ? (size_t)(rng() % n) : 0; }

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) {
    fprintf(stderr, "fuzz driver: out of memory (%zu bytes)\n", n);
    exit(2);
  }
  return p;
}

static void corpus_add_file(corpus *c, const char *path, size_t max_len) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "fuzz driver: cannot open %s\n", path);
    exit(2);
  }
  uint8_t *buf = xmalloc(max_len);
  size_t n = fread(buf, 1, max_len, f);
  fclose(f);
  if (c->n == c->cap) {
    c->cap = c->cap ? 2 * c->cap : 16;
    c->items = realloc(c->items, c->cap * sizeof *c->items);
    if (!c->items) exit(2);
  }
  c->items[c->n++] = (input){buf, n};
}

static void corpus_add(corpus *c, const char *path, size_t max_len) {
  struct stat st;
  if (stat(path, &st) != 0) {
    fprintf(stderr, "fuzz driver: no such corpus file or directory: %s\n", path);
    exit(2);
  }
  if (!S_ISDIR(st.st_mode)) {
    corpus_add_file(c, path, max_len);
    return;
  }
  struct dirent **names = NULL;
  int n = scandir(path, &names, NULL, alphasort); /* sorted: the same order on every machine */
  for (int i = 0; i < n; ++i) {
    char full[4096];
    snprintf(full, sizeof full, "%s/%s", path, names[i]->d_name);
    if (names[i]->d_name[0] != '.' && stat(full, &st) == 0 && S_ISREG(st.st_mode))
      corpus_add_file(c, full, max_len);
    free(names[i]);
  }
  free(names);
}

/* One to four mutations of in (plus a splice partner) into out, at most max_len bytes. */
static size_t mutate(const input *in, const input *other, uint8_t *out, size_t max_len) {
  size_t n = in->size < max_len ? in->size : max_len;
  memcpy(out, in->data, n);
  static const uint8_t interesting[] = {0,   1,   0x7f, 0x80, 0xff, '0', '9',  '[', ']', '{',
                                        '}', ',', ':',  '=',  '-',  ' ', '\n', '%', '('};
  for (int m = 0, count = 1 + (int)below(4); m < count; ++m) {
    switch (below(6)) {
      case 0: /* flip a bit */
        if (n) out[below(n)] ^= (uint8_t)(1u << below(8));
        break;
      case 1: /* an interesting byte */
        if (n) out[below(n)] = interesting[below(sizeof interesting)];
        break;
      case 2: { /* delete a run */
        if (!n) break;
        size_t at = below(n), len = 1 + below(n - at < 16 ? n - at : 16);
        memmove(out + at, out + at + len, n - at - len);
        n -= len;
        break;
      }
      case 3: { /* insert a byte */
        if (n >= max_len) break;
        size_t at = below(n + 1);
        memmove(out + at + 1, out + at, n - at);
        out[at] = (uint8_t)rng();
        ++n;
        break;
      }
      case 4: { /* copy a run within the input */
        if (n < 2) break;
        size_t from = below(n), to = below(n), len = 1 + below(16);
        if (from + len > n) len = n - from;
        if (to + len > n) len = n - to;
        memmove(out + to, out + from, len);
        break;
      }
      default: { /* splice: keep a prefix, continue with the other input's tail */
        if (!other->size) break;
        size_t at = below(n + 1), from = below(other->size), len = other->size - from;
        if (at + len > max_len) len = max_len - at;
        memcpy(out + at, other->data + from, len);
        n = at + len;
        break;
      }
    }
  }
  return n;
}

int main(int argc, char **argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  uint64_t runs = 0, seed = 1;
  size_t max_len = 1 << 16;
  corpus c = {0};
  for (int i = 1; i < argc; ++i) {
    if (sscanf(argv[i], "-runs=%" SCNu64, &runs) == 1 ||
        sscanf(argv[i], "-seed=%" SCNu64, &seed) == 1 ||
        sscanf(argv[i], "-max_len=%zu", &max_len) == 1)
      continue;
    if (argv[i][0] == '-') {
      fprintf(stderr, "fuzz driver: unknown flag %s (known: -runs=N -seed=S -max_len=L)\n",
              argv[i]);
      return 2;
    }
    corpus_add(&c, argv[i], max_len);
  }
  if (!c.n) {
    fprintf(stderr, "usage: %s [-runs=N] [-seed=S] [-max_len=L] DIR_OR_FILE...\n", argv[0]);
    return 2;
  }
  rng_state = seed ? seed : 1;
  for (size_t i = 0; i < c.n; ++i) LLVMFuzzerTestOneInput(c.items[i].data, c.items[i].size);
  uint8_t *buf = xmalloc(max_len);
  for (uint64_t r = 0; r < runs; ++r) {
    const input *in = &c.items[below(c.n)], *other = &c.items[below(c.n)];
    size_t n = mutate(in, other, buf, max_len);
    /* an exact-size copy, so that ASan sees a read past the input's end */
    uint8_t *exact = xmalloc(n);
    memcpy(exact, buf, n);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
  }
  printf("fuzz driver: %zu corpus inputs and %" PRIu64 " mutations (seed %" PRIu64
         "), no finding\n",
         c.n, runs, seed);
  free(buf);
  for (size_t i = 0; i < c.n; ++i) free(c.items[i].data);
  free(c.items);
  return 0;
}
