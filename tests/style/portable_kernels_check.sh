#!/bin/sh
# Kernels written once (issue 54): where kernel text needs a construct that only OpenCL reads,
# it names it in the vocabulary that kernels/prelude_opencl.h defines (docs/extending.md, "What a
# kernel may use"), which a prelude for another compiler can define too. CUDA C++ reads the OpenCL vector
# literal (float2)(x, 0) as a cast of a comma expression, silently wrong; it has no .sN lanes,
# no address-space qualifiers, no reqd_work_group_size and no barrier(). Refused outside the
# prelude:
#   - a vector literal or cast: (float2)(...), (T2)(...), (R2)(...), (float4)0, and in C format
#     strings (%s2)(...), (%s%d)(...);
#   - a lane or swizzle: .s0 to .sf (.s%c in a format), .lo, .hi, .even, .odd, .xy, .xyz ...;
#   - __kernel, __global, __local, __constant, __private (and kernel, global, local, constant
#     as qualifiers in kernel code), __attribute__, reqd_work_group_size;
#   - barrier(, mem_fence(, work_group_barrier(, CLK_ flags;
#   - (in the prelude) a variadic macro: OpenCL C before 2.0 has none;
#   - FCL_LOCAL declaring a pointer (a pointer into local memory is FCL_LOCAL_PTR: another
#     compiler may place FCL_LOCAL's variable itself in shared memory).
# Usage:
#   portable_kernels_check.sh SOURCE_DIR: the code of kernels/*.cl (the prelude aside) and the
#     string literals (adjacent ones joined) of the C sources of src/, operators/, apps/ and
#     examples/, but src/runtime/opencl: the OpenCL backend, whose texts are OpenCL's;
#   portable_kernels_check.sh --generated DUMP DIR: runs DUMP DIR (portable_kernels_dump, which
#     writes the generators' kernels there as .cl files) and reads the code of those files.
#     Text that the generators assemble from pieces ("(%s)(" is a vector literal only when %s
#     is a vector type) is checked there, as the compiler receives it.
# Prints file:line, what was found and the text; exit 1 if anything.
if [ "$1" = --generated ]; then
  dump=${2:?usage: portable_kernels_check.sh --generated DUMP DIR}
  dir=${3:?usage: portable_kernels_check.sh --generated DUMP DIR}
  rm -rf "$dir" && mkdir -p "$dir" || exit 1
  "$dump" "$dir" || { echo "portable_kernels: $dump failed"; exit 1; }
  code=$(find "$dir" -name '*.cl' | LC_ALL=C sort)
  [ -n "$code" ] || { echo "portable_kernels: $dump wrote no kernels into $dir"; exit 1; }
  strings=""
else
  src=${1:?usage: portable_kernels_check.sh SOURCE_DIR}
  cd "$src" || exit 1
  code=$(find kernels -name '*.cl' | LC_ALL=C sort)
  strings=$(find src operators apps examples -path src/runtime/opencl -prune -o \
    \( -name '*.c' -o -name '*.h' -o -name '*.inc' \) -print | LC_ALL=C sort)
  if [ -z "$code" ] || [ -z "$strings" ]; then
    echo "portable_kernels: no sources under $src"
    exit 1
  fi
  # the prelude reaches every program, built with any -cl-std: OpenCL C before 2.0 refuses a
  # variadic macro (NVIDIA with -cl-std=CL1.2), so none is defined
  if grep -n '__VA_ARGS__\|\.\.\.)' kernels/prelude_opencl.h; then
    echo "portable_kernels: kernels/prelude_opencl.h defines a variadic macro (none before OpenCL C 2.0)"
    exit 1
  fi
fi
# shellcheck disable=SC2086 # the file names have no spaces
awk -v strings_from="$(echo "$strings" | head -n 1)" '
# The rules, on one piece of kernel text (kind: "code" or "string"); prints each hit.
function check(text, where, kind,    vt, hit) {
  vt = "(u?char|u?short|u?int|u?long|half|float|double|bool)(2|3|4|8|16)"
  vt = "(" vt "|[A-Z][A-Z0-9_]*[0-9]|%s(2|3|4|8|16|%d|%lld|%zu|%u))"
  if (match(text, "\\((const[ \t]+)?" vt "\\)[ \t]*[(A-Za-z0-9_.%]"))
    hit = hit "vector literal or cast " substr(text, RSTART, RLENGTH) "; "
  if (match(text, "\\.(s[0-9a-fA-F]+|s%c|lo|hi|even|odd|[xyzw][xyzw]+)([^A-Za-z0-9_]|$)"))
    hit = hit "lane " substr(text, RSTART, RLENGTH) "; "
  if (match(text, "(^|[^A-Za-z0-9_])__(kernel|global|local|constant|private)([^A-Za-z0-9_]|$)"))
    hit = hit "qualifier " substr(text, RSTART, RLENGTH) "; "
  if (kind == "code" &&
      match(text, "(^|[^A-Za-z0-9_.])(kernel|global|local|constant)[ \t]+[A-Za-z_]"))
    hit = hit "qualifier " substr(text, RSTART, RLENGTH) "; "
  if (match(text, "__attribute__|reqd_work_group_size"))
    hit = hit "attribute " substr(text, RSTART, RLENGTH) "; "
  if (match(text, "(^|[^A-Za-z0-9_])(barrier|mem_fence|read_mem_fence|write_mem_fence|" \
                  "work_group_barrier)[ \t]*\\(|CLK_[A-Z_]+"))
    hit = hit "barrier " substr(text, RSTART, RLENGTH) "; "
  if (match(text, "FCL_LOCAL[ \t]+(const[ \t]+)?[A-Za-z_%][A-Za-z0-9_%]*[ \t]*\\*"))
    hit = hit "pointer declared FCL_LOCAL (FCL_LOCAL_PTR) " substr(text, RSTART, RLENGTH) "; "
  if (hit != "") {
    printf "%s: %s\n    %s\n", where, substr(hit, 1, length(hit) - 2), text
    bad++
  }
}
FNR == 1 {
  if (joined) check(lit, at, "string")
  incomment = 0; instring = 0; joined = 0
  if (FILENAME == strings_from) kind = "string"
}
# kernel code: each line without its comments
kind != "string" {
  line = $0; out = ""
  while (line != "") {
    if (incomment) {
      j = index(line, "*/")
      if (!j) { line = ""; break }
      line = substr(line, j + 2); incomment = 0; continue
    }
    b = index(line, "/*"); l = index(line, "//")
    if (l && (!b || l < b)) { out = out substr(line, 1, l - 1); line = ""; break }
    if (!b) { out = out line; break }
    out = out substr(line, 1, b - 1) " "; line = substr(line, b + 2); incomment = 1
  }
  check(out, FILENAME ":" FNR, "code")
  next
}
# C sources: the string literals, adjacent ones (across lines and comments) joined
{
  n = length($0)
  for (i = 1; i <= n; i++) {
    c = substr($0, i, 1)
    if (incomment) {
      if (substr($0, i, 2) == "*/") { incomment = 0; i++ }
      continue
    }
    if (instring) {
      if (c == "\\") { lit = lit substr($0, i, 2); i++; continue }
      if (c == "\"") { instring = 0; joined = 1; continue }
      lit = lit c; continue
    }
    if (substr($0, i, 2) == "/*") { incomment = 1; i++; continue }
    if (substr($0, i, 2) == "//") break
    if (c == " " || c == "\t") continue
    if (c == "\"") {
      if (!joined) { lit = ""; at = FILENAME ":" FNR }
      instring = 1; continue
    }
    if (joined) { check(lit, at, "string"); joined = 0 }
    if (c == "\047") { # a character literal
      for (i++; i <= n && substr($0, i, 1) != "\047"; i++)
        if (substr($0, i, 1) == "\\") i++
    }
  }
}
END {
  if (joined) check(lit, at, "string")
  exit bad ? 1 : 0
}
' $code $strings
