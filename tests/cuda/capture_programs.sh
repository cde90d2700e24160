#!/bin/bash
# Writes the kernel programs that flowcl's apps build into OUT (FLOWCL_SAVE_PROGRAMS), over the
# paths that choose kernels: both precisions, the strided advection's walking and tiled kernels,
# the stretching's plane-tile and generated kernels, remeshing formulas, Runge-Kutta orders,
# differences or spectral diffusion, the sphere's penalization and curls; with the code
# generator's and the column FFT's kernels of portable_kernels_dump. For nvrtc_kernels.
# Usage: capture_programs.sh TGV SPHERE DUMP OUT
set -euo pipefail
tgv=$1 sphere=$2 dump=$3 out=$4
rm -rf "$out"
mkdir -p "$out/dump"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export FLOWCL_SAVE_PROGRAMS=$out/programs FLOWCL_TUNE=estimate
run() { # ENV... -- ARGS...
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  rm -rf "$work/run"
  if ! env "${envs[@]}" "$@" --output "$work/run" >"$work/log" 2>&1; then
    echo "capture_programs: failed: ${envs[*]} $*"; tail -20 "$work/log"; exit 1
  fi
}
walk=(FLOWCL_ADVECTION_STRIDED=walk FLOWCL_STRETCHING_KERNEL=planes)
tiles=(FLOWCL_ADVECTION_STRIDED=tiles FLOWCL_STRETCHING_KERNEL=generated)
small=(--resolution 16 --max-steps 2)
run "${walk[@]}" -- "$tgv" "${small[@]}"
run "${tiles[@]}" -- "$tgv" "${small[@]}" --precision double
run "${walk[@]}" -- "$tgv" "${small[@]}" --precision double --diffusion stretching --formula L8_4
run "${tiles[@]}" -- "$tgv" "${small[@]}" --diffusion fd --stretching gradient --formula L2_1
run "${walk[@]}" -- "$tgv" "${small[@]}" --spectral-pass separate --advection-rk 4 \
  --stretching-rk 3
sph=(--resolution 4 --box 6,4,4 --layer 1 --max-steps 2)
run -- "$sphere" "${sph[@]}"
run -- "$sphere" "${sph[@]}" --curl fd --precision double --smoothing 0.5
"$dump" "$out/dump" >/dev/null
echo "capture_programs: $(ls "$out/programs" | grep -c '\.cl$') programs of the apps, $(ls "$out/dump" | wc -l) of the generators"
