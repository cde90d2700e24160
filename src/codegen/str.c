/* The text builder (str.h): appends grow the buffer by doubling. */
#include "str.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void fcl__str_printf(fcl__str *b, const char *format, ...) {
  if (b->failed) return;
  for (;;) {
    va_list ap;
    va_start(ap, format);
    size_t room = b->cap - b->len;
    int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? room : 0, format, ap);
    va_end(ap);
    if (n < 0) {
      b->failed = true;
      return;
    }
    if (b->s && (size_t)n < room) {
      b->len += (size_t)n;
      return;
    }
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + (size_t)n + 1) cap *= 2;
    char *grown = realloc(b->s, cap);
    if (!grown) {
      b->failed = true;
      return;
    }
    b->s = grown;
    b->cap = cap;
  }
}

void fcl__str_indent(fcl__str *b, int depth) {
  for (int i = 0; i < depth; ++i) fcl__str_printf(b, "  ");
}

void fcl__str_clear(fcl__str *b) {
  b->len = 0;
  if (b->s) b->s[0] = '\0';
}
