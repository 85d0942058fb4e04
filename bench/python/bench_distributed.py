"""Weak scaling of opendml.distributed: the same number of elements on every GPU, 1, 2 or 4 of them.

One command per GPU count; each prints a markdown table (rank 0) and writes it as JSON:

  torchrun --nproc-per-node=1 bench/python/bench_distributed.py --json dist-1.json
  torchrun --nproc-per-node=2 bench/python/bench_distributed.py --json dist-2.json
  torchrun --nproc-per-node=4 bench/python/bench_distributed.py --json dist-4.json
  torchrun --nproc-per-node=2 bench/python/bench_distributed.py --device cpu --log2 16   # gloo, quick

Per GPU: a float32 [2^(n/2), 2^(n - n/2)] tensor (n = --log2, default 28) of --density non-zeros,
sharded along dimension 0 of the global tensor (and, for the rows "along 1", along dimension 1).
Every time is the median over --repeat calls of the slowest rank, each call between a barrier and
a synchronize (CUDA events on the GPU, the wall clock on the CPU), so collectives and host waits
count. Columns:
  eff.      weak-scaling efficiency: the one-GPU operator on one GPU's share of the data (no
            communication), divided by this row's time. 1.0 is perfect scaling.
  vs gather gathering the whole tensor to one GPU and running torch's operator there
            (torch.nonzero, torch.cat), divided by this row's time: above 1 is ahead of it.
Rows:
  nonzero   one GPU              opendml.torch.nonzero on this GPU's piece (the baseline)
            sharded              opendml.distributed.nonzero: the sharded result (global
                                 coordinates, counts all-gathered); what the 0.9 target is about
            count all-gather     its all-gather of the counts
            gathered             every rank gets the global coordinates in global element order:
                                 the input all-gathered, then one opendml.torch.nonzero of the
                                 whole tensor on every rank (along 1, a JOIN puts the gathered
                                 shards in place between the two)
            gather + torch       dist.gather to rank 0, then torch.nonzero there
  join      one GPU              opendml.torch.join of this GPU's two pieces
            along 1 (local)      opendml.distributed.join of two tensors sharded along 0, along 1
            along 0 (sharded)    the same along 0, the result sharded by torch.chunk (all-to-all)
            along 0 (replicated) the whole result on every rank (all-gather, then one JOIN)
            gather + torch.cat   dist.gather of both to rank 0, then torch.cat there
"""

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time

import torch
import torch.distributed as dist

import opendml.distributed as odd
import opendml.torch as odt


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--log2", type=int, default=28, help="log2 of the elements per GPU (process)")
    p.add_argument("--density", type=float, default=0.5, help="fraction of non-zeros for nonzero")
    p.add_argument("--repeat", type=int, default=20, help="timed calls per row")
    p.add_argument("--skip-gathered", action="store_true", help="leave out the gathered rows, which hold the whole tensor and its coordinates on every GPU (over 20 GiB per GPU at 2^28 elements on 4 GPUs)")
    p.add_argument("--json", metavar="PATH", help="write the rows as JSON (rank 0)")
    args = p.parse_args(argv)
    if args.log2 < 2:
        p.error("--log2 must be at least 2 (the join's two inputs are halves of at least two rows)")
    if args.repeat < 1:
        p.error("--repeat must be at least 1")
    if not 0 <= args.density <= 1:
        p.error("--density must be 0 to 1")
    return args


def init(device):
    """The process group: torchrun's, or a world of one process without torchrun."""
    if dist.is_initialized():
        return
    backend = "nccl" if device == "cuda" else "gloo"
    if "RANK" in os.environ:
        if device == "cuda":
            torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)))
        dist.init_process_group(backend)
    else:
        if device == "cuda":
            torch.cuda.set_device(0)
        dist.init_process_group(backend, init_method=f"file://{tempfile.mkdtemp()}/store", rank=0, world_size=1)


class Timer:
    def __init__(self, device):
        self.cuda = device.type == "cuda"
        self.device = device

    def sync(self):
        """Every rank's queued work done, and every rank here."""
        if self.cuda:
            torch.cuda.synchronize()
        dist.barrier()
        if self.cuda:
            torch.cuda.synchronize()

    def seconds(self, fn, repeat):
        """The slowest rank's median seconds per call of fn."""
        fn()  # warm-up: compiles the DirectML operators, connects NCCL
        times = []
        for _ in range(repeat):
            self.sync()
            if self.cuda:
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                fn()
                end.record()
                end.synchronize()
                times.append(start.elapsed_time(end) / 1e3)
            else:
                t0 = time.perf_counter()
                fn()
                times.append(time.perf_counter() - t0)
        slowest = torch.tensor([statistics.median(times)], dtype=torch.float64, device=self.device)
        dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
        return float(slowest)


def graphed(fn):
    """fn captured in a CUDA graph after a warm-up; returns the graph's replay."""
    fn()  # compiles the operators, connects NCCL
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, capture_error_mode="thread_local"):  # NCCL's watchdog polls events meanwhile
        fn()
    return graph.replay


def gather_then(op, *locals_):
    """Every rank's pieces of each input gathered along 0 to rank 0, then op on the whole inputs
    there: what a user without a sharded operator does."""
    rank, world = dist.get_rank(), dist.get_world_size()
    wholes = []
    for local in locals_:
        pieces = [torch.empty_like(local) for _ in range(world)] if rank == 0 else None
        dist.gather(local, pieces, dst=0)
        wholes.append(torch.cat(pieces) if rank == 0 else None)
    return op(*wholes) if rank == 0 else None


def run(args):
    device = torch.device("cuda", torch.cuda.current_device()) if args.device == "cuda" else torch.device("cpu")
    rank, world = dist.get_rank(), dist.get_world_size()
    timer = Timer(device)
    rows_, cols = 1 << (args.log2 // 2), 1 << (args.log2 - args.log2 // 2)
    g = torch.Generator(device=device).manual_seed(rank)
    x = (torch.rand(rows_, cols, device=device, generator=g) < args.density).float()
    half = x[: rows_ // 2], x[rows_ // 2 :]  # the join's two inputs: each half of this rank's elements
    results = []

    def row(case, method, fn, baseline=None, gather=None):
        t = timer.seconds(fn, args.repeat)
        results.append({"case": case, "method": method, "gpus": world, "elements_per_gpu": x.numel(), "ms": t * 1e3,
                        "efficiency": baseline / t if baseline else None, "vs_gather": gather / t if gather else None})
        return t

    # nonzero
    count = odt.nonzero(x)[1]
    gather_nonzero = row("nonzero", "gather + torch.nonzero", lambda: gather_then(torch.nonzero, x))
    one = row("nonzero", "one GPU", lambda: odt.nonzero(x), gather=gather_nonzero)
    row("nonzero", "sharded along 0", lambda: odd.nonzero(x, dim=0, validate=False), one, gather_nonzero)
    row("nonzero", "sharded along 1", lambda: odd.nonzero(x, dim=1, validate=False), one, gather_nonzero)
    if timer.cuda:
        # The device work alone: the call captured in a CUDA graph and replayed, so that no host time
        # between its kernels (Python, the custom operator's dispatch, NCCL's launch) is counted, as
        # an application that captures its step sees it.
        one_graph = row("nonzero", "one GPU, CUDA graph", graphed(lambda: odt.nonzero(x)), gather=gather_nonzero)
        row("nonzero", "sharded along 0, CUDA graph", graphed(lambda: odd.nonzero(x, dim=0, validate=False)),
            one_graph, gather_nonzero)
    counts = count.new_empty(world)
    row("nonzero", "count all-gather", lambda: dist.all_gather_into_tensor(counts, count))
    if not args.skip_gathered:
        row("nonzero", "gathered along 0", lambda: odd.nonzero(x, dim=0, gather=True, validate=False), one, gather_nonzero)
        row("nonzero", "gathered along 1", lambda: odd.nonzero(x, dim=1, gather=True, validate=False), one, gather_nonzero)

    # join of two tensors sharded along 0
    gather_cat = row("join", "gather + torch.cat", lambda: gather_then(lambda a, b: torch.cat([a, b]), *half))
    one0 = row("join", "one GPU along 0", lambda: odt.join(half, 0), gather=gather_cat)
    one1 = row("join", "one GPU along 1", lambda: odt.join(half, 1))
    row("join", "along 1 (local)", lambda: odd.join(half, 1, dim=0, validate=False), one1)
    row("join", "along 0 (sharded)", lambda: odd.join(half, 0, dim=0, validate=False), one0, gather_cat)
    if not args.skip_gathered:
        row("join", "along 0 (replicated)", lambda: odd.join(half, 0, dim=0, replicated=True, validate=False), one0, gather_cat)
    return results


def versions(device):
    v = {"torch": torch.__version__, "python": platform.python_version(), "backend": dist.get_backend()}
    if device == "cuda":
        v["gpu"] = torch.cuda.get_device_name()
        v["nccl"] = ".".join(map(str, torch.cuda.nccl.version()))
    return v


def table(results) -> str:
    lines = ["| case | GPUs | elements / GPU | method | ms | eff. | vs gather |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in results:
        eff = f"{r['efficiency']:.2f}" if r["efficiency"] else "-"
        vs = f"{r['vs_gather']:.2f}x" if r["vs_gather"] else "-"
        lines.append(f"| {r['case']} | {r['gpus']} | 2^{r['elements_per_gpu'].bit_length() - 1} | {r['method']} | {r['ms']:.3f} | {eff} | {vs} |")
    return "\n".join(lines)


def main(argv=None):
    args = parse(argv)
    init(args.device)
    results = run(args)
    if dist.get_rank() == 0:
        print(f"density {args.density}, {args.repeat} calls per row, {versions(args.device)}")
        print(table(results))
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"args": vars(args), "versions": versions(args.device), "rows": results}, f, indent=1)
    return results


if __name__ == "__main__":
    main(sys.argv[1:])
    dist.destroy_process_group()
