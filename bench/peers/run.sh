#!/usr/bin/env bash
# The peer benchmark on a GPU machine, in one command from anywhere in the repository:
#
#   bash bench/peers/run.sh
#
# 1. builds libopendml.so with the CUDA backend (Release, sm_90), the CUB harness and this checkout's
#    Python package (for the opendml.jax rows; pip, scikit-build-core and nanobind), side by side;
# 2. runs gpu_peers.py: opendml against torch, CuPy, JAX and CUB on one GPU (JSON + log);
# 3. runs report.py: performance.md and the three plots, from that JSON (and CPU_JSON if given).
#
# Everything lands in ${OUT:-build/peers}: gpu_peers.json, gpu_peers.log, build.log,
# performance.md, perf_nonzero.png, perf_join.png, perf_split.png. Builds go to build/peers.
# Environment: OUT, PYTHON (default python3), NVCC (default: nvcc on PATH, else
# /usr/local/cuda/bin/nvcc), BUDGET_S (seconds after which no new case starts, default 240),
# CPU_JSON (a cpu_peers.json to put on the page too), PEERS_ARGS (more gpu_peers.py options,
# e.g. "--quick"), OPENDML_COMMIT (the commit measured, recorded in gpu_peers.json; default this
# checkout's HEAD, with "+dirty" when git status lists changes; give it where the tree is a copy
# whose git history is not its own).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-build/peers}
build=build/peers
python=${PYTHON:-python3}
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
mkdir -p "$out" "$build"
log="$out/build.log"
start=$SECONDS

echo "== build ($nvcc, $(nproc) cores)"
"$nvcc" -O3 -arch=sm_90 -shared -Xcompiler -fPIC -o "$build/libcub_nonzero.so" bench/peers/cub_nonzero.cu \
  >"$build/cub.log" 2>&1 &
cub_pid=$!
# This checkout's Python package, for the opendml.jax rows: a package installed earlier may be of
# another commit (or missing, and then those rows are not measured at all).
"$python" -m pip install -q --no-build-isolation --no-deps --no-index --upgrade --target "$build/python" . \
  >"$build/python.log" 2>&1 &
python_pid=$!
cmake -S . -B "$build/opendml" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_COMPILER="$nvcc" \
  -DOPENDML_WITH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DOPENDML_BUILD_TESTS=OFF -DOPENDML_BUILD_TOOLS=OFF \
  -DOPENDML_BUILD_BENCHMARKS=OFF >"$log" 2>&1 || { tail -n 30 "$log"; exit 1; }
cmake --build "$build/opendml" --target opendml -j "$(nproc)" >>"$log" 2>&1 || { tail -n 30 "$log"; exit 1; }
if wait "$cub_pid"; then
  echo "CUB harness built"
else
  echo "the CUB harness did not build: the benchmark goes on without it (see $log)"
  rm -f "$build/libcub_nonzero.so"
fi
cat "$build/cub.log" >>"$log"
if wait "$python_pid"; then
  echo "Python package built"
  export PYTHONPATH="$PWD/$build/python${PYTHONPATH:+:$PYTHONPATH}"
else
  echo "the Python package did not build: the opendml.jax rows are not measured (see $log)"
fi
cat "$build/python.log" >>"$log"
echo "built in $((SECONDS - start)) s"

echo "== gpu_peers.py"
export PYTHONUNBUFFERED=1
if [ -z "${OPENDML_COMMIT:-}" ] && git rev-parse --git-dir >/dev/null 2>&1; then
  OPENDML_COMMIT=$(git rev-parse HEAD)
  [ -z "$(git status --porcelain)" ] || OPENDML_COMMIT+="+dirty"
  export OPENDML_COMMIT
fi
echo "opendml commit: ${OPENDML_COMMIT:-unknown (no git here, none given)}"
status=0
# shellcheck disable=SC2086  # PEERS_ARGS is a list of options
timeout 450 "$python" bench/peers/gpu_peers.py --lib "$build/opendml/src/libopendml.so" \
  --cub "$build/libcub_nonzero.so" --out "$out" --budget-s "${BUDGET_S:-240}" ${PEERS_ARGS:-} 2>&1 |
  tee "$out/gpu_peers.log" || status=$?
if [ "$status" = 124 ]; then  # not 124 for our caller: its own time limit reads the same
  echo "gpu_peers.py ran past 450 s and was stopped; the cases it finished are in $out/gpu_peers.json"
  status=3
fi

echo "== report.py"
if [ -f "$out/gpu_peers.json" ]; then
  cpu=()
  [ -n "${CPU_JSON:-}" ] && [ -f "$CPU_JSON" ] && cpu=(--cpu "$CPU_JSON")
  "$python" bench/peers/report.py --gpu "$out/gpu_peers.json" "${cpu[@]}" --out "$out" || status=$?
else
  echo "no $out/gpu_peers.json: nothing to report"
  status=1
fi
echo "done in $((SECONDS - start)) s; results in $out (exit status $status)"
exit "$status"
