#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: build with the CUDA backend, run the GPU tests, run them again
# under compute-sanitizer (memcheck, racecheck and synccheck), then the GPU benchmark. Logs go to $OUT when it
# is set (a folder of the caller's choosing), else to build/gpu-logs.
#
#   scripts/gpu-check.sh [build|test|sanitize|bench]...   (default: all four)
#   MEMCHECK_FILTER / RACECHECK_FILTER / SYNCCHECK_FILTER narrow the sanitized tests (default: Device*-*Huge*, and
#   *CannotExist* and *UnclearedError*, which provoke cudaMalloc's out-of-memory error on purpose and so
#   trip memcheck's API-error report; racecheck and synccheck also leave out *Concurrent*, which racecheck does not finish:
#   docs/decisions.md).
# GoogleTest and nlohmann-json sources may be supplied in .deps/ (googletest/, include/nlohmann/).
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/gpu
logs=${OUT:-build/gpu-logs}
mkdir -p "$logs"
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(build test sanitize bench)

extra=()
[ -d .deps/googletest ] && extra+=(-DOPENDML_GTEST_SOURCE_DIR="$PWD/.deps/googletest")
[ -d .deps/include ] && extra+=(-DCMAKE_INCLUDE_PATH="$PWD/.deps/include")

for step in "${steps[@]}"; do
  case $step in
    build)
      cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPENDML_WITH_CUDA=ON \
        -DCMAKE_CUDA_ARCHITECTURES=90 "${extra[@]}" >"$logs/configure.log"
      cmake --build $build -j "$(nproc)" 2>&1 | tail -n 3
      ;;
    test)
      ctest --test-dir $build -j 4 --output-on-failure 2>&1 | tee "$logs/ctest.log" | tail -n 15
      ;;
    sanitize)
      # The device suites under memcheck, racecheck and synccheck; the filters can be narrowed for a
      # quick run.
      tests=$build/tests/opendml_tests
      for tool in memcheck racecheck synccheck; do
        var=${tool^^}_FILTER
        default='Device*-*Huge*:*CannotExist*:*UnclearedError*'
        [ $tool != memcheck ] && default='Device*-*Huge*:*CannotExist*:*UnclearedError*:*Concurrent*'
        filter=${!var:-$default}
        compute-sanitizer --tool $tool --error-exitcode 1 --print-limit 20 \
          $tests --device=cuda --gtest_filter="$filter" >"$logs/sanitizer-$tool.log" 2>&1 &&
          echo "compute-sanitizer $tool: clean, $(grep -c '^\[       OK' "$logs/sanitizer-$tool.log") tests ($filter)" ||
          { echo "compute-sanitizer $tool: FAILED ($filter)"; tail -n 30 "$logs/sanitizer-$tool.log"; }
      done
      ;;
    bench)
      $build/bench/opendml_gpu_bench 2>&1 | tee "$logs/gpu-bench.txt"
      ;;
    *) echo "unknown step $step" >&2; exit 2 ;;
  esac
done
