#!/bin/sh
# apps/sphere/validate.sh's checks (CHECK_ONLY) on synthetic diagnostics: a steady drag of 1.10
# at Re = 100 and, at Re = 300, a drag of 0.66 with a lift of Strouhal number 0.135 meet the
# goals, whether the lift oscillates about a mean lift at 30 degrees from y while the plane turns
# slowly (a drift across it larger than the oscillation: its period must not be taken for the
# shedding's) or about no mean along z; a drag 10 % high, a Strouhal number 10 % low, an unsteady
# Re = 100 wake (along y, or across a mean lift) and a Re = 300 lift that never sheds each fail
# them.
# sphere_validate_check.sh VALIDATE_SH WORK_DIR
set -u
script=$1 work=$2
rm -rf "$work"
make_case() { # dir cd100 lift100 cd300 st300 amp300 [mean300 drift300]
  mkdir -p "$1/re100" "$1/re300"
  awk -v cd="$2" -v lift="$3" 'BEGIN { print "step,t,dt,cd,cl_y,cl_z"
    for (i = 1; i <= 2000; i++) { t = i * 0.01; printf "%d,%g,0.01,%.9g,%.9g,0\n", i, t, cd, lift * sin(t) } }' > "$1/re100/diagnostics.csv"
  awk -v cd="$4" -v st="$5" -v amp="$6" -v mean="${7:-0.07}" -v drift="${8:-0.03}" 'BEGIN {
    print "step,t,dt,cd,cl_y,cl_z"; pi = 3.141592653589793
    c = mean ? cos(pi / 6) : 0; s = mean ? sin(pi / 6) : 1
    for (i = 1; i <= 15000; i++) {
      t = i * 0.01; l = mean + amp * sin(2 * pi * st * t + 0.3); d = drift * sin(2 * pi * t / 40)
      printf "%d,%g,0.01,%.9g,%.9g,%.9g\n", i, t, cd, c * l - s * d, s * l + c * d } }' > "$1/re300/diagnostics.csv"
}
expect() { # name status dir
  out=$(CHECK_ONLY="$3" sh "$script" 2>&1)
  rc=$?
  if [ "$rc" != "$2" ]; then
    echo "case '$1': validate.sh exited $rc, expected $2"; echo "$out"; exit 1
  fi
  echo "case '$1': exit $rc as expected"
}
make_case "$work/met" 1.10 0 0.66 0.135 0.02
expect "met, oblique lift" 0 "$work/met"
make_case "$work/met_z" 1.10 0 0.66 0.135 0.05 0 0
expect "met, lift along z about no mean" 0 "$work/met_z"
make_case "$work/drag" 1.20 0 0.66 0.135 0.02
expect "drag 10 % high" 1 "$work/drag"
make_case "$work/st" 1.10 0 0.66 0.1215 0.02
expect "Strouhal number 10 % low" 1 "$work/st"
make_case "$work/unsteady" 1.10 0.1 0.66 0.135 0.02
expect "unsteady Re = 100" 1 "$work/unsteady"
make_case "$work/across" 1.10 0 0.66 0.135 0.02 # then a Re = 100 lift varying across its mean
awk 'BEGIN { print "step,t,dt,cd,cl_y,cl_z"
  for (i = 1; i <= 2000; i++) { t = i * 0.01; printf "%d,%g,0.01,1.1,0.1,%.9g\n", i, t, 0.02 * sin(3.14159 * t) } }' > "$work/across/re100/diagnostics.csv"
expect "unsteady Re = 100 across its mean lift" 1 "$work/across"
make_case "$work/still" 1.10 0 0.66 0.135 0 0.07 0
expect "no shedding at Re = 300" 1 "$work/still"
exit 0
