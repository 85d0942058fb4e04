#!/usr/bin/env bash
# On a machine with two or more NVIDIA GPUs: install the Python package from this checkout (with
# its CUDA backend), run every Python GPU test: opendml.distributed's (NCCL worlds of 2 processes,
# and of 4 where there are 4 GPUs; CUDA graph capture included), and the one-process ones, which
# see every GPU here as they cannot on a machine of one (bench/NOTES.md, "The GPU checks of
# 4d0d80e"); then opendml.distributed's weak-scaling benchmark on 1, 2 and 4 GPUs
# (as many as there are). Logs and JSON go to $OUT when it is set (a folder of the caller's
# choosing), else to build/gpu-logs. Extra arguments go to the benchmark (--log2 24 for a quick run).
# docs/distributed.md describes the tests and the benchmark.
#
#   scripts/gpu-distributed.sh [benchmark arguments...]
#   PYTHON=... picks the interpreter (default python3)
set -euo pipefail
cd "$(dirname "$0")/.."
logs=${OUT:-build/gpu-logs}
mkdir -p "$logs"
py=${PYTHON:-python3}
"$py" -m pip install -q --no-build-isolation --no-deps --no-index .
gpus=$("$py" -c "import torch; print(torch.cuda.device_count())")
echo "gpu-distributed: $gpus GPUs"
status=0
"$py" -m pytest -q -rs -m cuda python/tests 2>&1 | tee "$logs/gpu-tests.log" || status=1
for n in 1 2 4; do
  [ "$n" -le "$gpus" ] || break
  "$py" -m torch.distributed.run --nproc-per-node="$n" bench/python/bench_distributed.py \
    --json "$logs/distributed-$n.json" "$@" 2>&1 | tee "$logs/distributed-$n.txt" || status=1
done
exit $status
