/* The text builder of every generated source (not installed): the code generator's kernels and
 * the instruction text, domains and OpenCL sources that the layers above it write (FFT columns,
 * finite differences, advection). Layers below codegen do not generate sources.
 *
 * An append that cannot grow the text (out of memory, or an encoding error) marks it failed and
 * every later append is skipped, so a writer checks `failed` once, at the end, and reports an
 * error: a failed text is never used as a truncated source. */
#ifndef FLOWCL_SRC_CODEGEN_STR_H
#define FLOWCL_SRC_CODEGEN_STR_H

#include <stdbool.h>
#include <stddef.h>

/* Zero-initialised it is empty (s NULL until the first append); the writer frees s. */
typedef struct {
  char *s;
  size_t len, cap;
  bool failed;
} fcl__str;

void fcl__str_printf(fcl__str *b, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* depth levels of two spaces. */
void fcl__str_indent(fcl__str *b, int depth);
/* Empty again, keeping the memory (and a failure). */
void fcl__str_clear(fcl__str *b);

#endif
