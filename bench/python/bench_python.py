"""The Python package beside PyTorch, in one run on one GPU.

For each case it measures, per call:
  host    the time the Python call takes to return (enqueue only where nothing waits; torch.nonzero
          waits for its count, so its host time is its whole time);
  device  the time between CUDA events around a run of back-to-back calls on the stream, divided by
          the number of calls (for torch.nonzero, which waits for the host each call, this is the
          end-to-end time per call).
Methods: opendml's array layer (opendml.nonzero / concat), its descriptor layer (a compiled
operator's execute, the C++ execute under a thin binding), PyTorch's custom operators
(opendml.torch, where the checkout has them), and torch.nonzero, torch.nonzero_static and
torch.cat on the same tensors. Creation and compilation stay out of the timed loops.

  python bench/python/bench_python.py                 # the GPU, sizes 2^10 .. 2^26, a table
  python bench/python/bench_python.py --json out.json # also every row as JSON
  python bench/python/bench_python.py --device cpu --max-log2 16   # a quick run without a GPU
"""

import argparse
import json
import math
import sys
import time

import torch

import opendml
import opendml.torch

try:  # PyTorch's custom operators (opendml.torch), where this checkout has them
    import opendml.torch as opendml_torch
except ImportError:
    opendml_torch = None


def parse():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--min-log2", type=int, default=10)
    p.add_argument("--max-log2", type=int, default=26)
    p.add_argument("--step", type=int, default=2, help="log2 step between sizes")
    p.add_argument("--density", type=float, default=0.5, help="fraction of non-zeros for nonzero")
    p.add_argument("--budget", type=float, default=0.25, help="seconds of timed calls per measurement")
    p.add_argument("--json", metavar="PATH", help="write every row as JSON")
    return p.parse_args()


class Timer:
    def __init__(self, device, budget):
        self.cuda = device == "cuda"
        self.budget = budget

    def sync(self):
        if self.cuda:
            torch.cuda.synchronize()

    def iterations(self, fn):
        fn()
        self.sync()
        t0 = time.perf_counter()
        fn()
        self.sync()
        once = max(time.perf_counter() - t0, 1e-6)
        return max(5, min(2000, int(self.budget / once)))

    def measure(self, fn):
        """(host seconds per call, device seconds per call)"""
        n = self.iterations(fn)
        self.sync()
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        host = (time.perf_counter() - t0) / n
        self.sync()
        if not self.cuda:
            return host, host
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(n):
            fn()
        end.record()
        end.synchronize()
        return host, start.elapsed_time(end) / 1e3 / n


def descriptor_nonzero(x, device):
    u32 = opendml.DataType.UINT32
    desc = opendml.NonzeroCoordinatesDesc(opendml.TensorDesc(opendml.DataType.FLOAT32, [x.numel()]),
                                          opendml.TensorDesc(u32, [1]), opendml.TensorDesc(u32, [x.numel(), 1]))
    op = opendml.Operator(device, desc).compile()
    op.initialize()
    count = torch.empty(1, dtype=torch.uint32, device=x.device)
    coords = torch.empty(x.numel(), 1, dtype=torch.uint32, device=x.device)
    stream = torch.cuda.current_stream() if x.is_cuda else None
    return lambda: op.execute([x], [count, coords], stream=stream)


def descriptor_join(parts, device):
    f32 = opendml.DataType.FLOAT32
    desc = opendml.JoinDesc([opendml.TensorDesc(f32, list(p.shape)) for p in parts],
                            opendml.TensorDesc(f32, [sum(p.shape[0] for p in parts)]), 0)
    op = opendml.Operator(device, desc).compile()
    op.initialize()
    out = torch.empty(sum(p.numel() for p in parts), device=parts[0].device)
    stream = torch.cuda.current_stream() if out.is_cuda else None
    parts = list(parts)
    return lambda: op.execute(parts, [out], stream=stream)


def cases(args):
    dev = torch.device(args.device)
    odml_device = opendml.Device("cuda" if args.device == "cuda" else "cpu")
    g = torch.Generator().manual_seed(20261122)
    for log2 in range(args.min_log2, args.max_log2 + 1, args.step):
        n = 1 << log2
        x = (torch.rand(n, generator=g) < args.density).float().to(dev)
        k = int(torch.count_nonzero(x))
        methods = {
            "opendml.nonzero": lambda x=x: opendml.nonzero(x),
            # The PyTorch custom operator: int64 coordinates, as torch.nonzero gives them.
            "opendml.torch.nonzero": lambda x=x: opendml.torch.nonzero(x),
            "descriptor execute": descriptor_nonzero(x, odml_device),
            "torch.nonzero": lambda x=x: torch.nonzero(x),
            "torch.nonzero_static": lambda x=x, k=k: torch.nonzero_static(x, size=k),
        }
        if opendml_torch:
            methods["opendml.torch.nonzero"] = lambda x=x: opendml_torch.nonzero(x)
        yield "nonzero", n, methods
        a, b = torch.rand(n // 2, generator=g).to(dev), torch.rand(n // 2, generator=g).to(dev)
        methods = {
            "opendml.concat": lambda a=a, b=b: opendml.concat([a, b]),
            "opendml.torch.join": lambda a=a, b=b: opendml.torch.join([a, b]),
            "descriptor execute": descriptor_join([a, b], odml_device),
            "torch.cat": lambda a=a, b=b: torch.cat([a, b]),
        }
        if opendml_torch:
            methods["opendml.torch.join"] = lambda a=a, b=b: opendml_torch.join([a, b])
        yield "concat 2", n, methods
    for per in (1 << 10, 1 << 14):
        many = [torch.rand(per, generator=g).to(dev) for _ in range(1000)]
        yield "concat 1000", 1000 * per, {
            "opendml.concat": lambda many=many: opendml.concat(many),
            "descriptor execute": descriptor_join(many, odml_device),
            "torch.cat": lambda many=many: torch.cat(many),
        }


def main():
    args = parse()
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("bench_python: no CUDA GPU for PyTorch; use --device cpu for a quick run")
    timer = Timer(args.device, args.budget)
    rows = []
    header = f"{'case':<12} {'elements':>10} {'method':<22} {'host us':>10} {'device us':>10} {'vs torch':>9}"
    print(f"opendml {opendml.__version__} on {opendml.Device('cuda' if args.device == 'cuda' else 'cpu').name}; "
          f"torch {torch.__version__}")
    print(header)
    print("-" * len(header))
    for case, n, methods in cases(args):
        measured = {name: timer.measure(fn) for name, fn in methods.items()}
        reference = measured.get("torch.nonzero", measured.get("torch.cat"))
        for name, (host, device) in measured.items():
            ratio = reference[1] / device if device > 0 else math.nan
            rows.append({"case": case, "elements": n, "method": name, "host_us": host * 1e6,
                         "device_us": device * 1e6, "torch_device_over_this": ratio})
            print(f"{case:<12} {n:>10} {name:<22} {host * 1e6:>10.2f} {device * 1e6:>10.2f} {ratio:>8.2f}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": args.device, "torch": torch.__version__, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
