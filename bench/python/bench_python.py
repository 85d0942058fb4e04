"""The Python package beside PyTorch, in one run on one GPU.

For each case it measures, per call:
  host    wall-clock time per call in a tight loop of calls (enqueue only where nothing waits;
          torch.nonzero waits for its count, so its host time is its whole time);
  device  the GPU's own time per call: N calls captured in one CUDA graph, the graph replayed
          between CUDA events, divided by N, so that a host-bound call cannot show its host time
          as device time. torch.nonzero, which waits for the host and cannot be captured, is timed
          by events around single calls, each after a synchronize. "-" where neither works.
Then a host-overhead table: host microseconds per call on small tensors, where the work itself is
negligible, so that the figure is each layer's bookkeeping (the best of several loops, with the
garbage collector off): opendml.concat, opendml.torch.join and the descriptor layer's execute
beside torch.cat for 2 and for 1000 tensors, and nonzero and split beside torch's.
For n >= 2^24 it also prints the bytes each case must move at least (read once, written once: the
roofline's numerator) and the bandwidth that the device time implies, with the density used.
Methods: opendml's array layer (opendml.nonzero / concat), its descriptor layer (a compiled
operator's execute, the C++ execute under a thin binding), PyTorch's custom operators
(opendml.torch), and torch.nonzero, torch.nonzero_static (size=n: room for every element, as
opendml's coordinates have, since the count is not known without a host wait) and torch.cat on
the same tensors. Creation and compilation stay out of the timed loops.

  python bench/python/bench_python.py                 # the GPU, sizes 2^10 .. 2^26, a table
  python bench/python/bench_python.py --json out.json # also every row as JSON
  python bench/python/bench_python.py --device cpu --max-log2 16   # a quick run without a GPU
  python bench/python/bench_python.py --host-only     # the host-overhead table alone
"""

import argparse
import gc
import json
import math
import sys
import time

import torch

import opendml
import opendml.torch as opendml_torch


def parse(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--min-log2", type=int, default=10)
    p.add_argument("--max-log2", type=int, default=26,
                   help="largest size; also the bound of the concat of 1000 tensors of 2^10 and 2^14 elements")
    p.add_argument("--step", type=int, default=2, help="log2 step between sizes")
    p.add_argument("--density", type=float, default=0.5, help="fraction of non-zeros for nonzero")
    p.add_argument("--budget", type=float, default=0.25, help="seconds of timed calls per measurement")
    p.add_argument("--json", metavar="PATH", help="write every row as JSON")
    p.add_argument("--host-only", action="store_true", help="only the host-overhead table")
    args = p.parse_args(argv)
    if not 1 <= args.min_log2 <= args.max_log2:
        p.error("--min-log2 must be at least 1 and at most --max-log2")
    if args.step < 1:
        p.error("--step must be at least 1")
    if not 0 <= args.density <= 1:
        p.error("--density must be 0 to 1")
    if not args.budget > 0:
        p.error("--budget must be above 0")
    return args


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

    def host(self, fn):
        """Wall-clock seconds per call, calls back to back."""
        n = self.iterations(fn)
        self.sync()
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        host = (time.perf_counter() - t0) / n
        self.sync()
        return host

    def host_best(self, methods, rounds=15):
        """{name: wall-clock seconds per call}: for each method the best of `rounds` loops of calls
        back to back, the methods' loops taken in turn within each round (so that the machine's
        slower moments fall on all of them alike), with the garbage collector off: the host's own
        cost, as free as can be of other work on the machine."""
        n = {name: self.iterations(fn) for name, fn in methods.items()}
        best = dict.fromkeys(methods, math.inf)
        gc.disable()
        try:
            for _ in range(rounds):
                for name, fn in methods.items():
                    self.sync()
                    t0 = time.perf_counter()
                    for _ in range(n[name]):
                        fn()
                    best[name] = min(best[name], (time.perf_counter() - t0) / n[name])
        finally:
            gc.enable()
        self.sync()
        return best

    def graph_device(self, fn, calls=20, replays=10):
        """Device seconds per call from CUDA graph replays, or None where fn cannot be captured."""
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up outside capture: compiles, caches, allocates
            fn()
        torch.cuda.current_stream().wait_stream(side)
        self.sync()
        graph = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(graph):
                for _ in range(calls):
                    fn()
        except Exception:  # a call that waits for the host (torch.nonzero) cannot be captured
            torch.cuda.synchronize()
            return None
        graph.replay()  # the first replay uploads the graph
        self.sync()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(replays):
            graph.replay()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1e3 / (replays * calls)

    def event_device(self, fn, calls=20):
        """Device seconds per call from events around single calls, each after a synchronize: for
        calls that wait for the host themselves, where this is their end-to-end time on the stream."""
        total = 0.0
        for _ in range(calls):
            self.sync()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            total += start.elapsed_time(end) / 1e3
        return total / calls

    def measure(self, fn, capture=True):
        """(host seconds per call, device seconds per call or None; the device figure's method)"""
        host = self.host(fn)
        if not self.cuda:
            return host, None, "-"
        device = self.graph_device(fn) if capture else None
        if device is not None:
            return host, device, "graph"
        return host, self.event_device(fn), "events"


def current_stream(device):
    """The raw cudaStream_t that torch runs on now (a capture's stream inside torch.cuda.graph)."""
    if device.type != "cuda":
        return lambda: None
    index = device.index if device.index is not None else torch.cuda.current_device()
    return lambda: torch._C._cuda_getCurrentRawStream(index)


def descriptor_nonzero(x, device):
    u32 = opendml.DataType.UINT32
    desc = opendml.NonzeroCoordinatesDesc(opendml.TensorDesc(opendml.DataType.FLOAT32, [x.numel()]),
                                          opendml.TensorDesc(u32, [1]), opendml.TensorDesc(u32, [x.numel(), 1]))
    op = opendml.Operator(device, desc).compile()
    op.initialize()
    count = torch.empty(1, dtype=torch.uint32, device=x.device)
    coords = torch.empty(x.numel(), 1, dtype=torch.uint32, device=x.device)
    stream = current_stream(x.device)
    fn = lambda: op.execute([x], [count, coords], stream=stream())  # noqa: E731
    fn.outputs = (coords, count)  # what it writes, for the check (see result_of)
    return fn


def descriptor_join(parts, device):
    f32 = opendml.DataType.FLOAT32
    desc = opendml.JoinDesc([opendml.TensorDesc(f32, list(p.shape)) for p in parts],
                            opendml.TensorDesc(f32, [sum(p.shape[0] for p in parts)]), 0)
    op = opendml.Operator(device, desc).compile()
    op.initialize()
    out = torch.empty(sum(p.numel() for p in parts), device=parts[0].device)
    stream = current_stream(out.device)
    parts = list(parts)
    fn = lambda: op.execute(parts, [out], stream=stream())  # noqa: E731
    fn.outputs = out
    return fn


def result_of(fn):
    """What one call of fn gives: its result, or the outputs that a descriptor layer's execute
    (which returns nothing) writes."""
    result = fn()
    return fn.outputs if hasattr(fn, "outputs") else result


def difference(got, want, coordinates):
    """None when got equals want, torch's answer, bit for bit; else what differs. With
    coordinates: torch.nonzero's [k, N], nonzero_static's [n, N] (the rows past k its padding) or
    (coordinates, count), rows past the count unspecified, in any integer type. Else a tensor or
    a list of them (split)."""
    if coordinates:
        if isinstance(got, (tuple, list)):
            got, count = got
            count = int(count.reshape(-1)[0])
            if count != want.shape[0]:
                return f"count {count}, expected {want.shape[0]}"
        if got.dim() != 2 or got.shape[1] != want.shape[1] or got.shape[0] < want.shape[0]:
            return f"coordinates of shape {list(got.shape)}, expected {list(want.shape)}"
        got = got[:want.shape[0]].to(torch.int64)
        return None if torch.equal(got, want) else "coordinates differ"
    gots, wants = (list(got), want) if isinstance(want, list) else ([got], [want])
    if len(gots) != len(wants):
        return f"{len(gots)} outputs, expected {len(wants)}"
    for k, (g, w) in enumerate(zip(gots, wants)):
        if g.dtype != w.dtype or g.shape != w.shape:
            return f"output {k}: {g.dtype}{list(g.shape)}, expected {w.dtype}{list(w.shape)}"
        if not torch.equal(g.contiguous().view(torch.uint8), w.contiguous().view(torch.uint8)):
            return f"output {k}: bytes differ"
    return None


# Each case's reference, torch's own answer, that every method is checked against before it is timed.
REFERENCES = ("torch.nonzero", "torch.cat", "torch.split + clone")


def check(case, methods):
    """{method: None where its result equals torch's, else what differs}; methods: {name: fn}."""
    want = result_of(methods[next(r for r in REFERENCES if r in methods)])
    return {name: difference(result_of(fn), want, case.startswith("nonzero")) for name, fn in methods.items()}


def verdict(mismatch):
    """A row's fields and its printed suffix for what check found of one method (None: correct)."""
    fields = {"correct": mismatch is None, **({"mismatch": mismatch} if mismatch else {})}
    return fields, f"  WRONG: {mismatch}" if mismatch else ""


def cases(args):
    """(case, elements, {method: (fn, capturable)}, bytes that the case must move at least)"""
    dev = torch.device(args.device)
    odml_device = opendml.Device("cuda" if args.device == "cuda" else "cpu")
    g = torch.Generator().manual_seed(20261122)
    for log2 in range(args.min_log2, args.max_log2 + 1, args.step):
        n = 1 << log2
        x = (torch.rand(n, generator=g) < args.density).float().to(dev)
        k = int(torch.count_nonzero(x))
        methods = {
            "opendml.nonzero": (lambda x=x: opendml.nonzero(x), True),
            # The PyTorch custom operator: int64 coordinates, as torch.nonzero gives them.
            "opendml.torch.nonzero": (lambda x=x: opendml_torch.nonzero(x), True),
            "descriptor execute": (descriptor_nonzero(x, odml_device), True),
            "torch.nonzero": (lambda x=x: torch.nonzero(x), False),  # waits for its count
            # size=n, the worst case, as opendml's rows: the count is not known without a host wait.
            "torch.nonzero_static": (lambda x=x: torch.nonzero_static(x, size=x.numel()), True),
        }
        # Read every element once, write the count and one int64 coordinate per non-zero (1-D x).
        yield "nonzero", n, methods, n * x.element_size() + k * 8 + 8
        a, b = torch.rand(n // 2, generator=g).to(dev), torch.rand(n // 2, generator=g).to(dev)
        methods = {
            "opendml.concat": (lambda a=a, b=b: opendml.concat([a, b]), True),
            "opendml.torch.join": (lambda a=a, b=b: opendml_torch.join([a, b]), True),
            "descriptor execute": (descriptor_join([a, b], odml_device), True),
            "torch.cat": (lambda a=a, b=b: torch.cat([a, b]), True),
        }
        yield "concat 2", n, methods, 2 * n * a.element_size()  # read once, written once
    for per in (1 << 10, 1 << 14):
        if 1000 * per > 1 << args.max_log2:  # 1000 x 2^10 elements is under 2^20, 1000 x 2^14 under 2^24
            continue
        many = [torch.rand(per, generator=g).to(dev) for _ in range(1000)]
        yield "concat 1000", 1000 * per, {
            "opendml.concat": (lambda many=many: opendml.concat(many), True),
            "descriptor execute": (descriptor_join(many, odml_device), True),
            "torch.cat": (lambda many=many: torch.cat(many), True),
        }, 2 * 1000 * per * many[0].element_size()


def host_cases(args):
    """(case, {method: fn}, the torch method the others are compared with) on small tensors."""
    dev = torch.device(args.device)
    odml_device = opendml.Device("cuda" if args.device == "cuda" else "cpu")
    g = torch.Generator().manual_seed(20261122)
    a, b = torch.rand(512, generator=g).to(dev), torch.rand(512, generator=g).to(dev)
    out = torch.empty(1024, device=dev)
    yield "concat 2 x 512", {
        "torch.cat": lambda: torch.cat([a, b]),
        "opendml.concat": lambda: opendml.concat([a, b]),
        # Into an existing tensor: what allocating the result through PyTorch's Python API costs.
        "torch.cat out=": lambda: torch.cat([a, b], out=out),
        "opendml.concat out=": lambda: opendml.concat([a, b], out=out),
        "opendml.torch.join": lambda: opendml_torch.join([a, b]),
        "descriptor execute": descriptor_join([a, b], odml_device),
    }, "torch.cat"
    many = [torch.rand(1024, generator=g).to(dev) for _ in range(1000)]
    yield "concat 1000 x 1024", {
        "torch.cat": lambda: torch.cat(many),
        "opendml.concat": lambda: opendml.concat(many),
        "opendml.torch.join": lambda: opendml_torch.join(many),
        "descriptor execute": descriptor_join(many, odml_device),
    }, "torch.cat"
    x = (torch.rand(1024, generator=g) < args.density).float().to(dev)
    yield "nonzero 1024", {
        "torch.nonzero": lambda: torch.nonzero(x),  # waits for its count on CUDA
        "torch.nonzero_static": lambda: torch.nonzero_static(x, size=x.numel()),
        "opendml.nonzero": lambda: opendml.nonzero(x),
        "opendml.torch.nonzero": lambda: opendml_torch.nonzero(x),
        "descriptor execute": descriptor_nonzero(x, odml_device),
    }, "torch.nonzero_static"
    y = torch.cat([a, b])
    yield "split 1024 in 2", {
        # New tensors, as SPLIT writes: torch.split's views copied.
        "torch.split + clone": lambda: [p.clone() for p in torch.split(y, [300, 724])],
        "opendml.split": lambda: opendml.split(y, [300, 724]),
        "opendml.torch.split": lambda: opendml_torch.split(y, [300, 724]),
    }, "torch.split + clone"


def host_overhead(args, timer):
    """Prints, and returns as rows, host microseconds per call next to torch's on small tensors."""
    rows = []
    header = f"{'case':<20} {'method':<22} {'host us':>9} {'host/torch':>10}"
    print(f"\nhost overhead per call on small tensors (best of 15 rounds of loops, methods in turn, gc off; "
          f"host/torch: over the case's torch reference, marked *)")
    print(header)
    print("-" * len(header))
    for case, methods, reference in host_cases(args):
        wrong = check(case, methods)
        measured = timer.host_best(methods)
        for name, host in measured.items():
            ratio = host / measured[reference]
            fields, suffix = verdict(wrong[name])
            rows.append({"case": case, "method": name, "host_us": host * 1e6, "host_over_torch": ratio, **fields})
            mark = " *" if name == reference else ""
            print(f"{case:<20} {name + mark:<22} {host * 1e6:>9.2f} {ratio:>9.2f}x{suffix}")
    return rows


def main(argv=None):
    args = parse(argv)
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("bench_python: no CUDA GPU for PyTorch; use --device cpu for a quick run")
    timer = Timer(args.device, args.budget)
    rows = []
    if args.host_only:
        rows = host_overhead(args, timer)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"device": args.device, "torch": torch.__version__, "host_overhead": rows}, f, indent=1)
        return exit_status(rows)
    header = (f"{'case':<12} {'elements':>10} {'method':<22} {'host us':>9} {'host/torch':>10} "
              f"{'device us':>10} {'by':>6} {'torch/this':>10}")
    print(f"opendml {opendml.__version__} on {opendml.Device('cuda' if args.device == 'cuda' else 'cpu').name}; "
          f"torch {torch.__version__}; nonzero density {args.density}")
    print("host/torch: host time over torch's (torch.nonzero, or torch.cat); torch/this: torch's device "
          "time over this one's (higher is faster)")
    print(header)
    print("-" * len(header))
    for case, n, methods, min_bytes in cases(args):
        wrong = check(case, {name: fn for name, (fn, _) in methods.items()})
        measured = {name: timer.measure(fn, capture) for name, (fn, capture) in methods.items()}
        reference = measured.get("torch.nonzero", measured.get("torch.cat"))
        for name, (host, device, by) in measured.items():
            host_ratio = host / reference[0]
            ratio = reference[1] / device if device and reference[1] else math.nan
            fields, suffix = verdict(wrong[name])
            rows.append({"case": case, "elements": n, "method": name, "host_us": host * 1e6,
                         "host_over_torch": host_ratio, "device_us": device * 1e6 if device else None,
                         "device_by": by, "torch_device_over_this": ratio, "min_bytes": min_bytes, **fields})
            device_text = f"{device * 1e6:>10.2f}" if device else f"{'-':>10}"
            ratio_text = f"{ratio:>9.2f}x" if ratio == ratio else f"{'-':>10}"
            print(f"{case:<12} {n:>10} {name:<22} {host * 1e6:>9.2f} {host_ratio:>9.2f}x {device_text} {by:>6} "
                  f"{ratio_text}{suffix}")
        if n >= 1 << 24:
            line = f"{'':<12} {'':>10} roofline: at least {min_bytes / 1e6:.1f} MB moved"
            if case == "nonzero":
                line += f" (f32 read once, an int64 coordinate written per non-zero at density {args.density})"
            fastest = min((d for _, d, _ in measured.values() if d), default=None)
            if fastest:
                line += f"; {min_bytes / fastest / 1e9:.0f} GB/s at the fastest device time"
            print(line)
    host_rows = host_overhead(args, timer)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": args.device, "torch": torch.__version__, "density": args.density, "rows": rows,
                       "host_overhead": host_rows}, f, indent=1)
    return exit_status(rows + host_rows)


def exit_status(rows):
    """1, with the list, where a method's result differed from torch's (its figures stand beside a
    wrong answer), else 0."""
    wrong = [f"{r['case']}: {r['method']}" for r in rows if not r["correct"]]
    if wrong:
        print(f"\n{len(wrong)} results differ from torch's (WRONG above): {'; '.join(wrong)}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
