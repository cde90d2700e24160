#!/bin/sh
# Run the mpi label N times as a fresh machine would: no test cache, an empty PoCL kernel cache
# and an empty flowcl cache each time (warm caches hide failures of programs built by several
# ranks at once). Run from the source tree after `cmake --build --preset dev`:
#   tools/cold-cache-runs.sh N [LOG_DIR]
# One line per run goes to LOG_DIR/summary.log (default cold-cache-logs), with its full log
# beside it; the exit status is the number of failed runs (0: every run green).
set -u
n=${1:-}
case $n in '' | *[!0-9]* | 0) echo "usage: $0 N [LOG_DIR] (N >= 1 runs)" >&2; exit 2 ;; esac
logs=${2:-cold-cache-logs}
mkdir -p "$logs" || exit 2
[ -d build/dev ] || { echo "$0: no build/dev here: build the dev preset first" >&2; exit 2; }
failed=0
i=1
while [ "$i" -le "$n" ]; do
  rm -rf build/dev/test-cache
  POCL_CACHE_DIR=$(mktemp -d) XDG_CACHE_HOME=$(mktemp -d)
  export POCL_CACHE_DIR XDG_CACHE_HOME
  log=$logs/cold_$(date +%Y%m%d_%H%M%S).log
  start=$(date +%s)
  ctest --preset dev -L mpi > "$log" 2>&1
  rc=$?
  [ $rc = 0 ] || failed=$((failed + 1))
  echo "run $i of $n at $(git rev-parse --short HEAD 2>/dev/null || echo '?'): rc $rc," \
    "$(grep 'tests passed' "$log"), $(($(date +%s) - start)) s, $log" >> "$logs/summary.log"
  rm -rf "$POCL_CACHE_DIR" "$XDG_CACHE_HOME"
  i=$((i + 1))
done
tail -n "$n" "$logs/summary.log"
exit $failed
