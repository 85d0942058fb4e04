#!/usr/bin/env bash
# Builds the fuzz preset and runs every fuzzer for a bounded time (fuzz/README.md).
#
#   scripts/fuzz.sh [seconds-per-fuzzer]      (default 60)
#
# A fuzzer added with MAX_SECONDS (fuzz/CMakeLists.txt) runs for at most that long.
# Each fuzzer starts from fuzz/regressions/<name>/ and fuzz/corpus/<name>/, which it only reads;
# the inputs it finds new go to build/fuzz/new-corpus/<name>/. It prints each fuzzer's executions
# and exit status, and exits non-zero when any fuzzer found a failing input, which libFuzzer saves
# as build/fuzz/artifacts/<name>-crash-* (keep it in fuzz/regressions/<name>/ with the fix).
# FUZZ_FLAGS adds libFuzzer flags (e.g. FUZZ_FLAGS=-jobs=2).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
build=build/fuzz
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz

status=0
while IFS='=' read -r name binary max; do
  [ -n "$name" ] || continue
  budget=$seconds
  if [ -n "$max" ] && [ "$max" -lt "$budget" ]; then budget=$max; fi
  mkdir -p "$build/new-corpus/$name" "$build/artifacts" fuzz/corpus/"$name" fuzz/regressions/"$name"
  log="$build/artifacts/$name.log"
  set +e
  # shellcheck disable=SC2086
  "$binary" -max_total_time="$budget" -timeout=60 -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="$build/artifacts/$name-" ${FUZZ_FLAGS:-} \
    "$build/new-corpus/$name" fuzz/regressions/"$name" fuzz/corpus/"$name" >"$log" 2>&1
  rc=$?
  set -e
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  echo "fuzz: $name: ${runs:-?} executions in ${budget}s, exit status $rc"
  if [ $rc -ne 0 ]; then
    status=1
    grep -v '^#[0-9]' "$log" | tail -n 40
  fi
done <"$build/fuzzers.txt"
exit $status
