#!/bin/sh
# The device boundary (docs/design.md): no code above the runtime (the other layers, apps and
# examples) calls OpenCL or names an OpenCL type, and no public header but the interop ones
# (include/flowcl/opencl.h and the image.h it includes) does; either fails at once. Two places
# still hold OpenCL outside the runtime's OpenCL backend (src/runtime/opencl/), each under a
# ceiling that every step of the move lowers until it is 0: the glue to VkFFT (src/fft/fft_vkfft*,
# whose OpenCL build takes OpenCL's handles until its plans move behind the backend table) and
# the runtime's own files outside the backend (its public header runtime.h counted with them).
# Comments and string literals are not code: they are skipped. Tests and benchmarks may keep raw
# OpenCL baselines. The ceilings were counted at the step that set them (--counts lists each
# file's calls and types). Usage: device_boundary_check.sh SOURCE_DIR [--counts]
src=${1:?usage: device_boundary_check.sh SOURCE_DIR [--counts]}
# raw OpenCL calls (clName(...)) and uses of cl_ types
max_calls_vkfft=1
max_types_vkfft=12
max_calls_runtime=26
max_types_runtime=79
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
calls_vkfft=0 types_vkfft=0 calls_runtime=0 types_runtime=0
for f in $files; do
  code=$(perl -e "$strip" "$f")
  c=$(printf '%s\n' "$code" | grep -oE '\bcl[A-Z][A-Za-z0-9]*[[:space:]]*\(' | wc -l)
  t=$(printf '%s\n' "$code" | grep -oE '\bcl_[a-z][a-z0-9_]*\b' | wc -l)
  h=$(printf '%s\n' "$code" | grep -cE '#[[:space:]]*include[[:space:]]*<CL/')
  [ "$2" = "--counts" ] && [ $((c + t)) -gt 0 ] && echo "$c $t $f"
  case $f in
    src/runtime/* | include/flowcl/runtime.h) where=runtime ;;
    src/fft/fft_vkfft*) where=vkfft ;;
    *)
      if [ $((c + t + h)) -gt 0 ]; then
        echo "device boundary: $f calls or names OpenCL ($c calls, $t cl_ types, $h <CL/...>" \
          "includes): use flowcl's handles and the runtime's functions (OpenCL interop:" \
          "flowcl/opencl.h, in tests and the OpenCL backend only)"
        bad=1
      fi
      continue
      ;;
  esac
  eval "calls_$where=\$((calls_$where + c)) types_$where=\$((types_$where + t))"
done
for where in vkfft runtime; do
  eval "c=\$calls_$where t=\$types_$where mc=\$max_calls_$where mt=\$max_types_$where"
  label="the glue to VkFFT"
  [ $where = runtime ] && label="runtime outside src/runtime/opencl/"
  echo "device boundary, $label: $c raw OpenCL calls (ceiling $mc), $t cl_ types" \
    "(ceiling $mt)"
  if [ "$c" -gt "$mc" ] || [ "$t" -gt "$mt" ]; then
    echo "device boundary: over the ceiling: use the runtime's functions and flowcl's handles"
    bad=1
  fi
done
exit $bad
