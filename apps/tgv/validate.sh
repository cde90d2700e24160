#!/bin/sh
# Validate flowcl-tgv against the 512^3 DNS of Dairay et al. 2017 (Re = 1600), run on a GPU:
#   apps/tgv/validate.sh [N] [extra flowcl-tgv options...]     (default N = 256)
# runs N^3 to t = 20 (float, the defaults) into tgv-validate-N/, then checks:
#   peak -dE/dt within 3 % of 0.0128565 (1 % for N >= 512) and its time within 0.2 of 8.98
#   (the column dissipation_dEdt_pair: over two steps, a whole period of the splitting);
#   enstrophy within 5 % of the DNS for t <= 10.
# CHECK_ONLY=DIR checks the diagnostics.csv of an earlier run instead. Exit status 0 when met.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
n=${1:-256}
[ $# -gt 0 ] && shift
bin=${FLOWCL_TGV:-build/release/apps/tgv/flowcl-tgv}
dir=${CHECK_ONLY:-tgv-validate-$n}
if [ -z "${CHECK_ONLY:-}" ]; then
  "$bin" --resolution "$n" --t-end 20 --output "$dir" --overwrite --quiet "$@"
fi
tol=0.03
[ "$n" -ge 512 ] && tol=0.01
awk -F, -v tol="$tol" '
  FNR == 1 { file++ }
  file == 1 && !/^#/ && $1 != "t" { rt[nr] = $1; rz[nr] = $5; nr++ }
  file == 2 && FNR == 1 { for (i = 1; i <= NF; i++) col[$i] = i }
  file == 2 && FNR > 1 {
    eps = $col["dissipation_dEdt_pair"]
    if (eps != "nan" && eps + 0 > peak) { peak = eps + 0; tpeak = $col["t_mid"] + 0 }
    t = $col["t"] + 0
    if (t <= 10) {
      while (k + 1 < nr && rt[k + 1] + 0 < t) k++
      a = (t - rt[k]) / (rt[k + 1] - rt[k]); z = rz[k] * (1 - a) + rz[k + 1] * a
      e = ($col["enstrophy"] - z) / z; if (e < 0) e = -e
      if (e > worst) { worst = e; tworst = t }
    }
  }
  END {
    if (!col["dissipation_dEdt_pair"] || !col["t_mid"] || !col["t"] || !col["enstrophy"]) {
      print "validation: NOT met (diagnostics.csv lacks the columns t, enstrophy, t_mid or dissipation_dEdt_pair)"
      exit 1
    }
    dp = (peak - 0.0128565) / 0.0128565; if (dp < 0) dp = -dp
    dt = tpeak - 8.98; if (dt < 0) dt = -dt
    printf "peak -dE/dt %.7g at t = %.3f (DNS 0.0128565 at 8.98): %.2f %% off (goal %g %%), time %.3f off (goal 0.2)\n", peak, tpeak, 100 * dp, 100 * tol, dt
    printf "enstrophy for t <= 10: at most %.2f %% off, at t = %.2f (goal 5 %%)\n", 100 * worst, tworst
    ok = dp <= tol && dt <= 0.2 && worst <= 0.05
    print ok ? "validation: met" : "validation: NOT met"
    exit ok ? 0 : 1
  }' "$here/reference/tgv_re1600_dairay2017.csv" "$dir/diagnostics.csv"
