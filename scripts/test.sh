#!/usr/bin/env bash
# Builds and runs every test; this is what CI runs (.ci/run). Each stage is a workflow preset
# (CMakePresets.json) on the CPU:
#   asan   the whole suite under AddressSanitizer and UndefinedBehaviorSanitizer
#   debug  the whole suite unoptimised (-O0), where some defects only show
#   tsan   the concurrency tests under ThreadSanitizer, OpenMP included (clang, Archer)
#   fuzz   every fuzzer once over its regressions and corpus, then each for FUZZ_SECONDS (default 60)
#   cuda   a release build with the CUDA backend for Hopper (sm_90) when nvcc is available; its GPU
#          tests report "skipped" on a machine without a GPU
#   python the Python package, built and tested in a virtual environment (scripts/test-python.sh);
#          its GPU tests report "skipped" on a machine without a GPU
# Every stage runs even when an earlier one failed; the summary gives each one's time and result,
# and the exit status is non-zero when any failed.
#
#   scripts/test.sh [stage...]      (default: all six, in this order)
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh || exit 1
export PATH="$PATH:/usr/local/cuda/bin"
stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(asan debug tsan fuzz cuda python)

run_stage() {
  case $1 in
    asan) cmake --workflow --preset test-asan ;;
    debug) cmake --workflow --preset test-debug ;;
    tsan) cmake --workflow --preset test-tsan ;;
    fuzz) cmake --workflow --preset test-fuzz && scripts/fuzz.sh "${FUZZ_SECONDS:-60}" ;;
    cuda)
      if command -v nvcc >/dev/null; then
        cmake --workflow --preset test-cuda
      else
        echo "test: no nvcc, so the CUDA backend was not built"
      fi
      ;;
    python) scripts/test-python.sh ;;
    *) echo "test: unknown stage $1" >&2; return 2 ;;
  esac
}

summary=()
failed=0
for stage in "${stages[@]}"; do
  echo "=== test: $stage"
  start=$SECONDS
  if run_stage "$stage"; then result=passed; else result=FAILED; failed=1; fi
  summary+=("$(printf '%-6s %-7s %5d s' "$stage" "$result" $((SECONDS - start)))")
done
echo "=== test: summary"
printf '%s\n' "${summary[@]}"
exit $failed
