#!/bin/sh
# The device boundary (docs/design.md): no file outside the runtime's OpenCL backend
# (src/runtime/opencl/) calls OpenCL, names an OpenCL type or includes an OpenCL header: not the
# runtime's own files, not the layers above it, the apps or the examples, and no public header
# but the interop ones (include/flowcl/opencl.h and the image.h it includes); any fails at once.
# One place keeps OpenCL under a ceiling until it moves: the glue to VkFFT (src/fft/fft_vkfft*,
# whose OpenCL build takes OpenCL's handles until its plans move behind the backend table).
# Comments and string literals are not code: they are skipped. Tests and benchmarks may keep raw
# OpenCL baselines. The ceilings were counted at the step that set them (--counts lists each
# file's calls and types). Usage: device_boundary_check.sh SOURCE_DIR [--counts]
src=${1:?usage: device_boundary_check.sh SOURCE_DIR [--counts]}
# raw OpenCL calls (clName(...)) and uses of cl_ types
max_calls_vkfft=1
max_types_vkfft=12
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
calls_vkfft=0 types_vkfft=0
for f in $files; do
  code=$(perl -e "$strip" "$f")
  c=$(printf '%s\n' "$code" | grep -oE '\bcl[A-Z][A-Za-z0-9]*[[:space:]]*\(' | wc -l)
  t=$(printf '%s\n' "$code" | grep -oE '\bcl_[a-z][a-z0-9_]*\b' | wc -l)
  h=$(printf '%s\n' "$code" | grep -cE '#[[:space:]]*include[[:space:]]*<CL/')
  [ "$2" = "--counts" ] && [ $((c + t)) -gt 0 ] && echo "$c $t $f"
  case $f in
    src/fft/fft_vkfft*)
      calls_vkfft=$((calls_vkfft + c)) types_vkfft=$((types_vkfft + t))
      continue
      ;;
  esac
  if [ $((c + t + h)) -gt 0 ]; then
    echo "device boundary: $f calls or names OpenCL ($c calls, $t cl_ types, $h <CL/...>" \
      "includes): use flowcl's handles and the runtime's functions (OpenCL interop:" \
      "flowcl/opencl.h, in tests and the OpenCL backend only)"
    bad=1
  fi
done
echo "device boundary: no OpenCL outside src/runtime/opencl/ but the glue to VkFFT:" \
  "$calls_vkfft raw OpenCL calls (ceiling $max_calls_vkfft), $types_vkfft cl_ types" \
  "(ceiling $max_types_vkfft)"
if [ "$calls_vkfft" -gt "$max_calls_vkfft" ] || [ "$types_vkfft" -gt "$max_types_vkfft" ]; then
  echo "device boundary: over the ceiling: use the runtime's functions and flowcl's handles"
  bad=1
fi
exit $bad
