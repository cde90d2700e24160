#!/bin/sh
# The C sources are formatted as .clang-format says: clang-format 14 (Debian 12's; other
# versions format differently) on every tracked .c and .h but the generated remesh formulas.
# Usage: format_check.sh SOURCE_DIR [CLANG_FORMAT]. Exit 77 (skipped): no clang-format 14, or
# not a git checkout (a source tarball: the file list comes from git).
src=${1:?usage: format_check.sh SOURCE_DIR [CLANG_FORMAT]}
cf=${2:-clang-format}
if ! "$cf" --version 2>/dev/null | grep -q "version 14\."; then
  echo "format: $cf is not clang-format 14 (Debian 12: apt install clang-format): skipped"
  exit 77
fi
files=$(git -C "$src" ls-files '*.c' '*.h' 2>/dev/null | grep -v '^operators/advection/remesh_formulas.h$')
if [ -z "$files" ]; then
  echo "format: $src is not a git checkout: skipped"
  exit 77
fi
cd "$src" || exit 1
bad=0
for f in $files; do
  if ! "$cf" --dry-run --Werror "$f" > /dev/null 2>&1; then
    echo "format: $f differs from .clang-format (fix: clang-format -i $f)"
    bad=1
  fi
done
[ $bad -eq 0 ] && echo "format: $(echo "$files" | wc -l) files as .clang-format says"
exit $bad
