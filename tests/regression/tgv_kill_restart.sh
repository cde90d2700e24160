#!/bin/bash
# Fault injection: flowcl-tgv (2 ranks) killed with SIGKILL at random steps, each time restarted
# with --restart latest, must end with the diagnostics of a straight run, row for row and
# digit for digit (checkpoints hold the whole state; the CSV is cut back to the checkpoint it
# resumes from). The kills land anywhere in a step, checkpoint writes included, so the restart
# also meets half-written files.
#
# usage: tgv_kill_restart.sh TGV MPIEXEC WORK_DIR [TRIALS] [SEED]
# (FLOWCL_MPIEXEC_OVERSUBSCRIBE: mpiexec's flag for more ranks than cores, as CMake found it)
set -u -m # -m: each background run is a process group of its own (mpiexec and its ranks)
tgv=$1 mpiexec=$2 work=$3 trials=${4:-4}
RANDOM=${5:-1}
steps=160 every=7
run=("$mpiexec" -n 2 ${FLOWCL_MPIEXEC_OVERSUBSCRIBE:-} "$tgv" --resolution 16 --max-steps $steps
     --checkpoint-every $every --no-plot --quiet)

fail() { echo "tgv_kill_restart: $*" >&2; exit 1; }
trap 'pkill -9 -f -- "--output $work/" 2> /dev/null' EXIT # a timeout kills this script
newest_checkpoint() { # the step of the newest checkpoint in $1, or 0
  local n
  n=$(ls "$1" 2> /dev/null | sed -n 's/^tgv_0*\([0-9][0-9]*\)\.chk\.h5$/\1/p' | sort -n | tail -1)
  echo "${n:-0}"
}

rm -rf "$work" && mkdir -p "$work" || fail "cannot make $work"
"${run[@]}" --output "$work/straight" > "$work/straight.log" 2>&1 ||
  fail "the straight run failed: $(cat "$work/straight.log")"

# Each trial waits for one to three more checkpoints (the CSV is flushed only with them), then
# kills the run 0 to 249 ms later: some steps on, inside a step or a checkpoint write.
dir=$work/killed
csv=$dir/diagnostics.csv
killed_at=()
for trial in $(seq "$trials"); do
  if ls "$dir"/tgv_*.chk.h5 > /dev/null 2>&1; then resume=(--restart latest); else resume=(--overwrite); fi
  target=$(( $(newest_checkpoint "$dir") + every * (1 + RANDOM % 3) ))
  delay=$(printf '0.%03d' $(( RANDOM % 250 )))
  "${run[@]}" --output "$dir" "${resume[@]}" > "$work/trial$trial.log" 2>&1 &
  pid=$!
  while kill -0 $pid 2> /dev/null && (( $(newest_checkpoint "$dir") < target )); do sleep 0.002; done
  sleep "$delay"
  if kill -9 -- -$pid 2> /dev/null; then
    killed_at+=("$target+${delay}s")
  else # it finished first (a fast device): a trial without a kill
    killed_at+=("none")
  fi
  wait $pid 2> /dev/null
  # no rank of the killed run may outlive it (they would write into the next trial's files)
  while pgrep -f -- "--output $dir" > /dev/null; do pkill -9 -f -- "--output $dir"; sleep 0.05; done
done
"${run[@]}" --output "$dir" --restart latest > "$work/final.log" 2>&1 ||
  fail "the restart after the last kill failed: $(cat "$work/final.log")"
cmp -s "$work/straight/diagnostics.csv" "$csv" ||
  fail "diagnostics differ from the straight run: $(diff "$work/straight/diagnostics.csv" "$csv" | head -20)"
leftovers=$(ls "$dir" | grep -c '\.tmp$')
(( leftovers == 0 )) || fail "temporary files left in $dir: $(ls "$dir" | grep '\.tmp$')"
fallbacks=$(cat "$work"/trial*.log "$work/final.log" | grep -c "restart: skipping")
echo "tgv_kill_restart: $trials kills (after checkpoint+delay ${killed_at[*]}; $steps steps), $fallbacks fallback(s) to an older checkpoint, diagnostics identical to the straight run ($(( steps + 1 )) rows)"
