/* Fuzz target for the kernel generator's text parsers: domains, instructions (with their
 * attributes and substitution rules), iname tags, assumptions, fixed parameters, loop
 * priorities, array shapes and a C block's lists. The input is up to eight sections separated by
 * lines "%%":
 *
 *   domains (one per line) %% instructions %% tags %% assumptions %% fixed parameters
 *   %% loop order %% shape of an extra array %% a C block: writes, reads, attributes (lines)
 *
 * over fixed declarations (parameters n, m; float arrays a, b of shape "n, m", double v and
 * complex z of "n"; a scalar s; a local temporary t of 16). Each piece goes to its public
 * entry point, then
 * the kernel is described and generated. Nothing runs on a device. A finding is a crash, a
 * sanitizer report, or an error without a message / a success without output (abort()). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flowcl/flowcl.h>

enum { NSECTIONS = 8 };

static void must(int cond, const char *what) {
  if (!cond) {
    fprintf(stderr, "fuzz_codegen_text: %s\n", what);
    abort();
  }
}

/* The status of a call that failed must come with a message. */
static fcl_status checked(fcl_status s) {
  if (s != FCL_OK) must(fcl_last_error() && fcl_last_error()[0], "an error without message");
  return s;
}

/* Split text (NUL-terminated, modified) at lines "%%" into at most NSECTIONS pieces. */
static int split_sections(char *text, char *sections[NSECTIONS]) {
  int n = 0;
  sections[n++] = text;
  for (char *p = text; n < NSECTIONS && (p = strstr(p, "%%")) != NULL;) {
    int line_start = p == text || p[-1] == '\n';
    int line_end = p[2] == '\n' || p[2] == '\0';
    if (!line_start || !line_end) {
      p += 2;
      continue;
    }
    *p = '\0';
    p += p[2] ? 3 : 2;
    sections[n++] = p;
  }
  return n;
}

static void add_domains(fcl_kbuilder *kb, char *text) {
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
    checked(fcl_kbuilder_add_domain(kb, line));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  must(text != NULL, "out of memory");
  memcpy(text, data, size);
  text[size] = '\0'; /* an embedded NUL ends the text, as it would for a C caller */
  char *s[NSECTIONS] = {0};
  int n = split_sections(text, s);

  fcl_kbuilder *kb = NULL;
  must(fcl_kbuilder_create("fuzzed", &kb) == FCL_OK, "create");
  must(fcl_kbuilder_add_param(kb, "n") == FCL_OK && fcl_kbuilder_add_param(kb, "m") == FCL_OK &&
           fcl_kbuilder_add_array(kb, "a", FCL_FLOAT32, "n, m") == FCL_OK &&
           fcl_kbuilder_add_array(kb, "b", FCL_FLOAT32, "n, m") == FCL_OK &&
           fcl_kbuilder_add_array(kb, "v", FCL_FLOAT64, "n") == FCL_OK &&
           fcl_kbuilder_add_array(kb, "z", FCL_COMPLEX64, "n") == FCL_OK &&
           fcl_kbuilder_add_scalar(kb, "s", FCL_FLOAT32) == FCL_OK &&
           fcl_kbuilder_add_temporary(kb, "t", FCL_FLOAT32, FCL_TEMP_LOCAL, "16") == FCL_OK,
       "fixed declarations");
  if (n > 6) checked(fcl_kbuilder_add_array(kb, "c", FCL_FLOAT32, s[6]));
  add_domains(kb, s[0]);
  if (n > 1) checked(fcl_kbuilder_add_instructions(kb, s[1]));
  if (n > 2) checked(fcl_kbuilder_tag_inames(kb, s[2]));
  if (n > 3) checked(fcl_kbuilder_assume(kb, s[3]));
  if (n > 4) checked(fcl_kbuilder_fix_parameters(kb, s[4]));
  if (n > 5) checked(fcl_kbuilder_prioritize_loops(kb, s[5]));
  if (n > 7) { /* writes, reads, attributes: one line each */
    char *lines[3] = {s[7], NULL, NULL};
    for (int k = 1; k < 3 && lines[k - 1]; ++k)
      if ((lines[k] = strchr(lines[k - 1], '\n'))) *lines[k]++ = '\0';
    checked(fcl_kbuilder_add_c_block(kb, "/* fuzzed */", lines[0], lines[1], lines[2]));
  }

  char *out = NULL;
  if (checked(fcl_kbuilder_describe(kb, &out)) == FCL_OK)
    must(out && out[0], "describe succeeded without text");
  free(out);
  out = NULL;
  if (checked(fcl_kbuilder_generate(kb, &out)) == FCL_OK)
    must(out && strstr(out, "FCL_KERNEL"), "generate succeeded without a kernel");
  else
    must(out == NULL, "generate failed but returned source");
  free(out);
  fcl_kbuilder_destroy(&kb);
  free(text);
  return 0;
}
