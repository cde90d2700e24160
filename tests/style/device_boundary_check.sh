#!/bin/sh
# The device boundary (docs/design.md): no file outside the runtime's OpenCL backend
# (src/runtime/opencl/) calls OpenCL, names an OpenCL type or includes an OpenCL header: not the
# runtime's own files, not the layers above it, the apps or the examples, and no public header
# but the interop ones (include/flowcl/opencl.h and the image.h it includes). Likewise no file
# outside the CUDA backend (src/runtime/cuda/) calls CUDA's driver API or NVRTC, names their
# types or includes their headers.
# Comments and string literals are not code: they are skipped. Tests and benchmarks may keep raw
# OpenCL baselines (a benchmark's behind REQUIRE_OPENCL, checked below). Usage: device_boundary_check.sh SOURCE_DIR [--counts] (--counts lists each
# file's calls and types, 0 0 ones aside).
src=${1:?usage: device_boundary_check.sh SOURCE_DIR [--counts]}
cd "$src" || exit 1
files=$(git ls-files 'src/*' 'operators/*' 'apps/*' 'examples/*' 'include/*' 2>/dev/null |
  grep -E '\.(c|h|inc)$' | grep -vE '^include/flowcl/(opencl|image)\.h$')
if [ -z "$files" ]; then
  echo "device boundary: $src is not a git checkout: skipped"
  exit 77
fi
# code only: comments and string literals removed (a C-aware scan, enough for these sources)
strip='undef $/; $_ = <>; s{/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|'"'"'(?:\\.|[^'"'"'\\\n])*'"'"'}{ }gs; print'
bad=0 n=0
for f in $files; do
  code=$(perl -e "$strip" "$f")
  # raw OpenCL calls (clName(...)), uses of cl_ types, #include <CL/...>
  c=0 t=0 h=0
  case $f in src/runtime/opencl/*) ;; *)
    c=$(printf '%s\n' "$code" | grep -oE '\bcl[A-Z][A-Za-z0-9]*[[:space:]]*\(' | wc -l)
    t=$(printf '%s\n' "$code" | grep -oE '\bcl_[a-z][a-z0-9_]*\b' | wc -l)
    h=$(printf '%s\n' "$code" | grep -cE '#[[:space:]]*include[[:space:]]*<CL/') ;;
  esac
  case $f in src/runtime/cuda/*) ;; *)
    # CUDA's driver API and NVRTC: cuName( / nvrtcName(, CU/nvrtc types, their headers
    c=$((c + $(printf '%s\n' "$code" | grep -oE '\b(cu|nvrtc)[A-Z][A-Za-z0-9]*[[:space:]]*\(' | wc -l)))
    t=$((t + $(printf '%s\n' "$code" | grep -oE '\b(CU[a-z][A-Za-z0-9_]*|nvrtc(Program|Result))\b' | wc -l)))
    h=$((h + $(printf '%s\n' "$code" | grep -cE '#[[:space:]]*include[[:space:]]*<(cuda|nvrtc|cuda_runtime)[a-z_]*\.h>'))) ;;
  esac
  [ "$2" = "--counts" ] && [ $((c + t + h)) -gt 0 ] && echo "$c $t $h $f"
  n=$((n + 1))
  if [ $((c + t + h)) -gt 0 ]; then
    echo "device boundary: $f calls or names a device API ($c calls, $t types, $h headers" \
      "of OpenCL, CUDA or NVRTC outside their backends): use flowcl's handles and the" \
      "runtime's functions (OpenCL interop: flowcl/opencl.h, in the OpenCL backend, its tests" \
      "and raw baselines only)"
    bad=1
  fi
done
# A benchmark may time flowcl against raw OpenCL calls, but those calls fail or do nothing on
# another backend's device (a CUDA queue has no OpenCL handle): one that makes them refuses such
# a device first (REQUIRE_OPENCL, benchmarks/bench_util.h).
for f in $(git ls-files 'benchmarks/*.c' 'benchmarks/*.h'); do
  code=$(perl -e "$strip" "$f")
  # raw calls, OpenCL types, and the interop handles (fcl_queue_cl(...), ...) they take
  calls=$(printf '%s\n' "$code" |
    grep -oE '\bcl[A-Z][A-Za-z0-9]*[[:space:]]*\(|\bcl_[a-z][a-z0-9_]*\b|\bfcl_[a-z]+_cl[[:space:]]*\(' |
    wc -l)
  if [ "$calls" -gt 0 ] && ! printf '%s\n' "$code" | grep -q 'REQUIRE_OPENCL('; then
    echo "device boundary: $f has $calls raw OpenCL calls or types without REQUIRE_OPENCL: on a CUDA" \
      "device they fail or do nothing (use the runtime's functions, or refuse other backends)"
    bad=1
  fi
  n=$((n + 1))
done
[ $bad = 0 ] && echo "device boundary: $n files, no OpenCL outside src/runtime/opencl/, no CUDA or NVRTC outside src/runtime/cuda/, raw OpenCL in benchmarks behind REQUIRE_OPENCL"
exit $bad
