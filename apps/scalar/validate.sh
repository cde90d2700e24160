#!/bin/sh
# The multi-scale scalar in the ABC flow: for each Schmidt number (default 16 256 1024), the
# scalar on a 4x grid (velocity 64^3, scalar 256^3, 4 substeps) against everything at 256^3 to
# t = 10 turnover times: the variance within 1 % at every row, at <= 0.3 of the single-grid
# run's time-loop wall time (the median of REPEAT runs each, default 3); everything at 64^3 shown
# for scale (what the refined grid adds).
# Usage: validate.sh [flowcl-scalar options, e.g. --device cuda]; LAUNCH="mpirun -n 2" runs the
# cases on ranks; SCHMIDT="16 256" chooses the numbers, N the velocity's points (default 64).
# Writes validate-output/.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
exe=${SCALAR_EXE:-}
for c in "$exe" "$here/../../build/release/apps/scalar/flowcl-scalar" \
         "$here/../../build/dev/apps/scalar/flowcl-scalar" "$(command -v flowcl-scalar || true)"; do
  if [ -n "$c" ] && [ -x "$c" ]; then exe=$c; break; fi
done
[ -x "$exe" ] || { echo "validate.sh: flowcl-scalar not found (set SCALAR_EXE)" >&2; exit 2; }
out=validate-output
n=${N:-64}
mkdir -p "$out"
fail=0
# run TAG N R: the time loop's seconds (stdout)
run() {
  dir="$out/$1" n=$2 r=$3
  shift 3
  ${LAUNCH:-} "$exe" --resolution "$n" --refinement "$r" --schmidt "$sc" --t-end 10 \
    --diagnostics-every 20 --output "$dir" --overwrite --quiet "$@" > "$dir.log" 2>&1 || {
    echo "validate.sh: $1 failed (see $dir.log)" >&2; return 1; }
  sed -n 's/^time loop: \([0-9.]*\) s.*/\1/p' "$dir/report.txt"
}
median() { tr ' ' '\n' | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
# the worst relative difference of the variance of run $1 from run $2's, interpolated in time
worst() {
  awk -F, 'FNR == 1 { f++ } /^#/ || $1 == "step" { next }
    f == 1 { t[n] = $2; v[n++] = $5; next }
    { for (i = 1; i < n && t[i] < $2; ++i); if (i == n) next
      w = (t[i] - $2) / (t[i] - t[i - 1]); ref = v[i] * (1 - w) + v[i - 1] * w
      d = ($5 - ref) / ref; if (d < 0) d = -d; if (d > m) m = d }
    END { printf "%.2e", m }' "$out/$2/diagnostics.csv" "$out/$1/diagnostics.csv"
}
printf '%-6s %-14s %-14s %-10s %-10s %-10s %s\n' Sc multi-scale everything-N t_full t_multi ratio verdict
for sc in ${SCHMIDT:-16 256 1024}; do
  tf="" tm=""
  for i in $(seq "${REPEAT:-3}"); do
    tf="$tf $(run "full_$sc" $((4 * n)) 1 "$@")" || { fail=1; continue 2; }
    tm="$tm $(run "multi_$sc" "$n" 4 "$@")" || { fail=1; continue 2; }
  done
  run "coarse_$sc" "$n" 1 "$@" > /dev/null || { fail=1; continue; }
  f=$(echo $tf | median) m=$(echo $tm | median)
  em=$(worst "multi_$sc" "full_$sc") ec=$(worst "coarse_$sc" "full_$sc")
  verdict=$(awk -v e="$em" -v f="$f" -v m="$m" 'BEGIN { r = m / f; printf "%.3f %s", r, (e <= 0.01 && r <= 0.3) ? "ok" : "FAIL" }')
  printf '%-6s %-14s %-14s %-10s %-10s %s\n' "$sc" "$em" "$ec" "$f" "$m" "$verdict"
  case $verdict in *ok) ;; *) fail=1 ;; esac
done
[ $fail = 0 ] && echo "validate.sh: the multi-scale variance within 1 % at <= 0.3 of the cost" ||
  echo "validate.sh: FAILED" >&2
exit $fail
