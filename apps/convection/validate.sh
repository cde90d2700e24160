#!/bin/sh
# Linear onset of free-slip Rayleigh-Benard convection: growth rates of the kinetic energy
# against the dispersion relation (sigma + Pr K^2)(sigma + K^2) = Ra Pr k^2 / K^2, K^2 = k^2 +
# pi^2, at the critical wavenumber k = pi / sqrt(2) (the default aspect 2 sqrt(2)), for Ra = 1000,
# 2000, 5000 and Pr = 1, 7 (within 1 %), and a decay at Ra = 600 (sigma < 0, within 1 %).
# Usage: validate.sh [flowcl-convection options, e.g. --device cuda]; LAUNCH="mpirun -n 2"
# runs the cases on ranks; DT sets the step (default 2e-4). Writes validate-output/.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
exe=${CONVECTION_EXE:-}
for c in "$exe" "$here/../../build/release/apps/convection/flowcl-convection" \
         "$here/../../build/dev/apps/convection/flowcl-convection" "$(command -v flowcl-convection || true)"; do
  if [ -n "$c" ] && [ -x "$c" ]; then exe=$c; break; fi
done
[ -x "$exe" ] || { echo "validate.sh: flowcl-convection not found (set CONVECTION_EXE)" >&2; exit 2; }
dt=${DT:-2e-4}
out=validate-output
mkdir -p "$out"
fail=0
printf '%-6s %-4s %-6s %-12s %-12s %s\n' Ra Pr t_end measured theory error
for case in "600 1 1.0" "1000 1 0.5" "2000 1 0.3" "5000 1 0.15" "1000 7 0.5" "2000 7 0.3" "5000 7 0.15"; do
  ra=$(echo "$case" | cut -d' ' -f1) pr=$(echo "$case" | cut -d' ' -f2)
  tend=$(echo "$case" | cut -d' ' -f3)
  dir="$out/ra${ra}_pr${pr}"
  ${LAUNCH:-} "$exe" --rayleigh "$ra" --prandtl "$pr" --t-end "$tend" --dt "$dt" \
    --amplitude 1e-8 --output "$dir" --overwrite --no-plot --quiet "$@" > "$dir.log" 2>&1 || {
    echo "validate.sh: Ra = $ra, Pr = $pr failed (see $dir.log)" >&2; fail=1; continue; }
  line=$(python3 - "$dir/diagnostics.csv" "$ra" "$pr" <<'PY'
import csv, math, sys
rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#"))]
ra, pr = float(sys.argv[2]), float(sys.argv[3])
t = [float(r["t"]) for r in rows]
e = [float(r["energy"]) for r in rows]
# the energy grows (or decays) as exp(2 sigma t): a least-squares line through ln E over the
# last 40 % of the run, once the other eigenmode has died out
pts = [(a, math.log(b)) for a, b in zip(t, e) if a >= 0.6 * t[-1] and b > 0]
mx = sum(a for a, _ in pts) / len(pts)
my = sum(b for _, b in pts) / len(pts)
sigma = sum((a - mx) * (b - my) for a, b in pts) / sum((a - mx) ** 2 for a, _ in pts) / 2
k2 = math.pi ** 2 / 2
K2 = k2 + math.pi ** 2
b, c = (pr + 1) * K2, pr * K2 * K2 - ra * pr * k2 / K2
theory = (-b + math.sqrt(b * b - 4 * c)) / 2
err = abs(sigma - theory) / abs(theory)
print(f"{sigma:.6g} {theory:.6g} {err:.4f} {'ok' if err <= 0.01 else 'FAIL'}")
PY
)
  f() { echo "$line" | cut -d' ' -f"$1"; }
  printf '%-6s %-4s %-6s %-12s %-12s %.3f %% %s\n' "$ra" "$pr" "$tend" "$(f 1)" "$(f 2)" \
    "$(python3 -c "print($(f 3) * 100)")" "$(f 4)"
  [ "$(f 4)" = ok ] || fail=1
done
[ $fail = 0 ] && echo "validate.sh: every growth rate within 1 % of the dispersion relation" ||
  echo "validate.sh: FAILED" >&2
exit $fail
