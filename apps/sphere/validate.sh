#!/bin/sh
# Validate flowcl-sphere against the literature, run on a GPU (two runs, one after the other):
#   apps/sphere/validate.sh [extra flowcl-sphere options...]
# Both in a 12 x 9 x 9 box with a sharp mask and CFL 0.25 (flowcl-sphere's defaults, written out).
# Re = 100 (steady wake): 32 points per diameter, to t = 20; mean drag coefficient over the
#   second half within 4 % of 1.09 (Fornberg 1988; Johnson and Patel 1999).
# Re = 300 (periodic shedding): 24 points per diameter, to t = 150; mean drag within 5 % of
#   0.656 and the Strouhal number of the lift within 5 % of 0.135 (Johnson and Patel 1999).
# The figures are computed here from each run's diagnostics.csv: the lift along its mean (the
# wake's plane of symmetry; where the mean is below the variation, along the direction it varies
# in most); its upward crossings of its mean over the second half give the period.
# RE100_N and RE300_N change the resolutions; CHECK_ONLY=DIR checks DIR/re100/diagnostics.csv and
# DIR/re300/diagnostics.csv of earlier runs instead. Exit status 0 when every goal is met.
set -eu
bin=${FLOWCL_SPHERE:-build/release/apps/sphere/flowcl-sphere}
dir=${CHECK_ONLY:-sphere-validate}
if [ -z "${CHECK_ONLY:-}" ]; then
  "$bin" --reynolds 100 --resolution "${RE100_N:-32}" --box 12,9,9 --smoothing 0 --cfl 0.25 \
    --t-end 20 \
    --output "$dir/re100" --overwrite --quiet --no-plot "$@"
  "$bin" --reynolds 300 --resolution "${RE300_N:-24}" --box 12,9,9 --smoothing 0 --cfl 0.25 \
    --t-end 150 \
    --output "$dir/re300" --overwrite --quiet --no-plot "$@"
fi
check() { # file re cd_ref cd_tol st_ref (0: steady) st_tol
  awk -F, -v re="$2" -v cdr="$3" -v cdt="$4" -v str="$5" -v stt="$6" '
    NR > 1 && NF == 6 { n++; t[n] = $2; cd[n] = $4; ly[n] = $5; lz[n] = $6 }
    END {
      if (n < 10) { printf "Re = %g: %d rows in %s\n", re, n, FILENAME; exit 1 }
      half = t[n] / 2
      for (i = 1; i <= n; i++) if (t[i] >= half) { m++; c += cd[i]; a += ly[i]; b += lz[i] }
      c /= m; a /= m; b /= m
      for (i = 1; i <= n; i++) if (t[i] >= half) { yy += (ly[i] - a)^2; zz += (lz[i] - b)^2; yz += (ly[i] - a) * (lz[i] - b) }
      th = 0.5 * atan2(2 * yz, yy - zz); cy = cos(th); cz = sin(th); mm = sqrt(a^2 + b^2)
      if (mm^2 > (yy + zz) / m) { cy = a / mm; cz = b / mm }
      for (i = 1; i <= n; i++) ly[i] = cy * (ly[i] - a) + cz * (lz[i] - b)
      a = 0; amp = sqrt(2 * (yy + zz) / m)
      e = (c - cdr) / cdr; if (e < 0) e = -e
      ok = e <= cdt
      printf "Re = %g: mean drag %.4f over t in [%.3g, %.3g] (published %g): %.1f %% off (goal %g %%)\n", re, c, half, t[n], cdr, 100 * e, 100 * cdt
      k = 0
      if (amp > 1e-3 * c)
        for (i = 2; i <= n; i++)
          if (t[i - 1] >= half && ly[i - 1] < a && ly[i] >= a)
            up[++k] = t[i - 1] + (t[i] - t[i - 1]) * (a - ly[i - 1]) / (ly[i] - ly[i - 1])
      if (str == 0) {
        printf "Re = %g: lift amplitude %.3g: %s (published: steady)\n", re, amp, amp <= 1e-3 * c ? "steady" : "NOT steady"
        ok = ok && amp <= 1e-3 * c
      } else if (k < 3) {
        printf "Re = %g: the lift did not shed (%d upward crossings, amplitude %.3g; published St %g)\n", re, k, amp, str
        ok = 0
      } else {
        st = (k - 1) / (up[k] - up[1]); e = (st - str) / str; if (e < 0) e = -e
        printf "Re = %g: Strouhal number %.4f over %d periods (published %g): %.1f %% off (goal %g %%)\n", re, st, k - 1, str, 100 * e, 100 * stt
        ok = ok && e <= stt
      }
      exit ok ? 0 : 1
    }' "$1"
}
status=0
check "$dir/re100/diagnostics.csv" 100 1.09 0.04 0 0 || status=1
check "$dir/re300/diagnostics.csv" 300 0.656 0.05 0.135 0.05 || status=1
[ $status = 0 ] && echo "validation: met" || echo "validation: NOT met"
exit $status
