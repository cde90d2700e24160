#!/bin/sh
# The device boundary (docs/design.md): above the runtime (the other layers, apps and examples)
# no code names an OpenCL queue, and the raw OpenCL calls and cl_ types that remain there and in
# the runtime's files outside its OpenCL backend (src/runtime/opencl/; include/flowcl/opencl.h
# and the image.h it includes) do not grow past the ceilings below, which each step of the move
# lowers until they are 0. The public headers but those two are free of OpenCL already: a cl_
# type, a raw call or an #include <CL/...> in one fails at once.
# Comments and string literals are not code: they are skipped. Tests and benchmarks may keep raw
# OpenCL baselines. The ceilings were counted at the step that set them (--counts lists each
# file's calls and types). Usage: device_boundary_check.sh SOURCE_DIR [--counts]
src=${1:?usage: device_boundary_check.sh SOURCE_DIR [--counts]}
# raw OpenCL calls (clName(...)) and uses of cl_ types, above the runtime and in it (its public
# header runtime.h counted with it)
max_calls_above=28
max_types_above=43
max_calls_runtime=71
max_types_runtime=208
cd "$src" || exit 1
files=$(git ls-files 'src/*' 'operators/*' 'apps/*' 'examples/*' 'include/*' 2>/dev/null |
  grep -E '\.(c|h|inc)$' | grep -vE '^src/runtime/opencl/|^include/flowcl/(opencl|image)\.h$')
if [ -z "$files" ]; then
  echo "device boundary: $src is not a git checkout: skipped"
  exit 77
fi
# code only: comments and string literals removed (a C-aware scan, enough for these sources)
strip='undef $/; $_ = <>; s{/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|'"'"'(?:\\.|[^'"'"'\\\n])*'"'"'}{ }gs; print'
bad=0
calls_above=0 types_above=0 calls_runtime=0 types_runtime=0
for f in $files; do
  code=$(perl -e "$strip" "$f")
  case $f in src/runtime/* | include/flowcl/runtime.h) where=runtime ;; *) where=above ;; esac
  q=$(printf '%s\n' "$code" | grep -cE '\bcl_command_queue\b')
  # VkFFT's OpenCL build takes OpenCL handles: the FFT layer's glue to it is OpenCL by nature
  # until VkFFT's plans move behind the backend table
  case $f in src/fft/fft_vkfft*) q=0 ;; esac
  if [ $where = above ] && [ "$q" -gt 0 ]; then
    echo "device boundary: $f names cl_command_queue (use fcl_queue; native: flowcl/opencl.h)"
    bad=1
  fi
  c=$(printf '%s\n' "$code" | grep -oE '\bcl[A-Z][A-Za-z0-9]*[[:space:]]*\(' | wc -l)
  t=$(printf '%s\n' "$code" | grep -oE '\bcl_[a-z][a-z0-9_]*\b' | wc -l)
  # the public headers (but the interop ones, left out above) name no OpenCL type or header
  case $f in include/*)
    if [ $((c + t)) -gt 0 ] || printf '%s\n' "$code" | grep -qE '#[[:space:]]*include[[:space:]]*<CL/'; then
      echo "device boundary: public header $f names OpenCL (its types and <CL/...> belong in" \
        "flowcl/opencl.h)"
      bad=1
    fi ;;
  esac
  [ "$2" = "--counts" ] && [ $((c + t)) -gt 0 ] && echo "$c $t $f"
  eval "calls_$where=\$((calls_$where + c)) types_$where=\$((types_$where + t))"
done
for where in above runtime; do
  eval "c=\$calls_$where t=\$types_$where mc=\$max_calls_$where mt=\$max_types_$where"
  label="above the runtime"
  [ $where = runtime ] && label="runtime outside src/runtime/opencl/"
  echo "device boundary, $label: $c raw OpenCL calls (ceiling $mc), $t cl_ types" \
    "(ceiling $mt)"
  if [ "$c" -gt "$mc" ] || [ "$t" -gt "$mt" ]; then
    echo "device boundary: over the ceiling: use the runtime's functions and flowcl's handles"
    bad=1
  fi
done
exit $bad
