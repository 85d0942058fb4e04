#!/usr/bin/env python3
"""Mixture-of-experts token routing with opendml, without a host wait.

A router picks each token's top-k experts; every expert then takes the tokens routed to it (at most
`capacity` of them, the first ones in token order, as GShard and Switch drop the rest), runs its
weights over them and adds the result, scaled by the router's gate, to those tokens' outputs.

The per-expert token lists are where torch code usually waits for the host: `torch.nonzero` must
read how many tokens an expert got before it can size its result, once per expert per forward pass
(`moe_torch`, the reference every other version is checked against). `dispatch` instead lists every
expert's tokens with one nonzero over the [experts, tokens] routing mask, at DirectML's worst case (a row
per expert and token) with the count left on the device, and runs all experts in one batched matrix
multiply: static shapes and a fixed number of operations, so `torch.compile(fullgraph=True)` traces
it into one graph, `torch.cuda.graph` captures it, and eager mode launches the same few kernels for
8 experts or 64. `moe_opendml` takes that nonzero from `opendml.torch.nonzero`; `moe_torch_static`
from `torch.nonzero_static`, PyTorch's own way without a host wait, for comparison.

Every version takes the router's choice (gates and experts) as an input, so that all of them see the
same one; `layer` puts the router in front of a version. The check gives them small-integer tokens
and weights and gates rounded to multiples of 2^-12, so that every product and sum is exact whatever
order a matrix multiply or the combine's index_add_ (atomic adds on a GPU) takes: every version must
then give the reference's output bit for bit.

    python3 examples/moe_routing.py                 # compare every version with moe_torch
    python3 examples/moe_routing.py --bench         # on a GPU: time them (CUDA events)
"""

import functools
import math
import sys

import torch

import opendml.torch as odt

import moe_layer  # examples/moe_layer.py: the command line both MoE examples share


def route(x, router, top_k):
    """Each token's top_k experts [tokens, top_k] and their gates (softmax weights)."""
    gates, experts = torch.topk(torch.softmax(x @ router, dim=-1), top_k, dim=-1)
    return gates, experts


def moe_torch(x, gates, chosen, weights, capacity: int):
    """The layer as it is often written: an expert at a time, each taking its tokens from
    torch.nonzero, which waits for the host once per expert to size its result."""
    tokens, hidden = x.shape
    out = x.new_zeros(tokens, hidden)
    for e in range(weights.shape[0]):
        picked = chosen == e  # [tokens, top_k]; top-k experts are distinct, so one per row at most
        rows = torch.nonzero(picked.any(dim=-1))[:capacity, 0]
        gate = (gates * picked).sum(dim=-1)
        out.index_add_(0, rows, (x[rows] @ weights[e]) * gate[rows, None])
    return out


def dispatch(x, gates, chosen, weights, capacity: int, nonzero):
    """The same layer in a fixed number of operations whatever the number of experts, with static
    shapes. `nonzero(mask)` returns (coordinates [mask.numel(), mask.dim()], count) with rows from
    the count on holding zeros. One call over the [experts, tokens] routing mask lists every expert's
    tokens at once, expert by expert and in token order within each; every (expert, token) pair within the
    capacity gets a slot in an [experts, capacity] table (unused slots point at a padding row of
    zeros), and one batched matrix multiply runs every expert over its slots."""
    tokens, hidden = x.shape
    experts = weights.shape[0]
    capacity = min(capacity, tokens)
    slots = experts * capacity
    routed = torch.zeros(experts, tokens, dtype=torch.bool, device=x.device).scatter_(0, chosen.t(), True)
    gate = x.new_zeros(tokens + 1, experts).scatter_(1, chosen, gates)  # row `tokens`: the padding's
    pairs, count = nonzero(routed)  # (expert, token) pairs, expert by expert
    expert, token = pairs[:, 0], pairs[:, 1]
    row = torch.arange(experts * tokens, device=x.device)
    per_expert = routed.sum(dim=1)
    rank = row - (torch.cumsum(per_expert, 0) - per_expert)[expert]  # the token's place in its expert's list
    slot = torch.where((row < count) & (rank < capacity), expert * capacity + rank, slots)  # past: a spare slot
    table = torch.full((slots + 1,), tokens, device=x.device).scatter_(0, slot, token)[:slots]
    x_padded = torch.cat([x, x.new_zeros(1, hidden)])
    y = torch.bmm(x_padded[table].view(experts, capacity, hidden), weights).view(slots, hidden)
    scale = gate[table, torch.arange(slots, device=x.device) // capacity]
    return x.new_zeros(tokens + 1, hidden).index_add_(0, table, y * scale[:, None])[:tokens]


def moe_opendml(x, gates, chosen, weights, capacity: int):
    """dispatch with opendml.torch.nonzero: the count comes from the same kernel, on the device."""
    return dispatch(x, gates, chosen, weights, capacity, lambda mask: odt.nonzero(mask, fill_value=0))


def moe_torch_static(x, gates, chosen, weights, capacity: int):
    """dispatch with torch.nonzero_static, PyTorch's own nonzero without a host wait, and the count
    from a separate sum."""
    return dispatch(
        x, gates, chosen, weights, capacity,
        lambda mask: (torch.nonzero_static(mask, size=mask.numel(), fill_value=0), mask.sum()),
    )


def layer(version, top_k: int, capacity: int):
    """The whole layer, router included: x, router, weights -> output."""
    def run(x, router, weights):
        gates, chosen = route(x, router, top_k)
        return version(x, gates, chosen, weights, capacity)
    return run


def make_layer(tokens, hidden, experts, seed, device, exact=False):
    """Inputs, router and expert weights; with exact, the tokens and weights are small integers (see
    exact_gates)."""
    g = torch.Generator().manual_seed(seed)
    if exact:
        x = torch.randint(-3, 4, (tokens, hidden), generator=g).float()
        weights = torch.randint(-3, 4, (experts, hidden, hidden), generator=g).float()
    else:
        x = torch.randn(tokens, hidden, generator=g)
        weights = torch.randn(experts, hidden, hidden, generator=g) / math.sqrt(hidden)
    router = torch.randn(hidden, experts, generator=g)
    return x.to(device), router.to(device), weights.to(device)


def exact_gates(gates, chosen):
    """The router's choice with its gates rounded to multiples of 2^-12: times small integers, they
    make products and sums that float32 holds exactly, in any order."""
    return torch.round(gates * 4096) / 4096, chosen


def cuda_graph(fn, *static_inputs):
    """fn captured in a CUDA graph over static_inputs: returns (graph, static output)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm up: compiles opendml's operators outside the capture
        for _ in range(2):
            fn(*static_inputs)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = fn(*static_inputs)
    return graph, out


def check(args, device):
    """Every way of running the dispatch versions against moe_torch, bit for bit."""
    top_k, capacity = args.top_k, moe_layer.capacity_for(args.tokens, args.experts, args.top_k, args.capacity_factor)
    x, router, weights = make_layer(args.tokens, args.hidden, args.experts, args.seed, device, exact=True)
    gates, chosen = exact_gates(*route(x, router, top_k))
    want = moe_torch(x, gates, chosen, weights, capacity)
    if not want.abs().sum() > 0:
        print("the reference output is all zeros, which would check nothing: pick other sizes or --seed")
        return False
    results = {
        "opendml, eager": moe_opendml(x, gates, chosen, weights, capacity),
        "torch.nonzero_static, eager": moe_torch_static(x, gates, chosen, weights, capacity),
    }
    compiled = torch.compile(moe_opendml, fullgraph=True, backend="aot_eager")
    results["opendml, torch.compile(fullgraph=True)"] = compiled(x, gates, chosen, weights, capacity)
    if device.type == "cuda":
        static = [x.clone(), gates.clone(), chosen.clone()]
        graph, out = cuda_graph(lambda *routed: moe_opendml(*routed, weights, capacity), *static)
        # Replayed on new tokens and their routing: the graph holds no host-side count.
        x2, _, _ = make_layer(args.tokens, args.hidden, args.experts, args.seed + 1, device, exact=True)
        for held, new in zip(static, [x2, *exact_gates(*route(x2, router, top_k))]):
            held.copy_(new)
        graph.replay()
        results["opendml, CUDA graph replay (new tokens)"] = out.clone()
        want_graph = moe_torch(*static, weights, capacity)
    ok = True
    for name, got in results.items():
        expected = want_graph if "CUDA graph" in name else want
        same = torch.equal(got, expected)
        ok &= same
        print(f"{name:40s} {'equal to the torch.nonzero version' if same else 'DIFFERS from the torch.nonzero version'}")
    return ok


def time_ms(fn, repeats):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    start.record()
    for _ in range(repeats):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / repeats


def bench(args):
    device = torch.device("cuda")
    print(f"{'tokens':>7} {'hidden':>6} {'experts':>7} {'top_k':>5} {'capacity':>8}  {'version':52s} {'ms/forward':>10} {'speed-up':>8}")
    for tokens, hidden, experts in [(1024, 512, 8), (16384, 1024, 32)]:
        x, router, weights = make_layer(tokens, hidden, experts, args.seed, device)
        top_k, capacity = args.top_k, moe_layer.capacity_for(tokens, experts, args.top_k, args.capacity_factor)
        call = lambda fn: functools.partial(fn, x, router, weights)  # noqa: E731
        case = f"{tokens:7d} {hidden:6d} {experts:7d} {top_k:5d} {capacity:8d}  "
        versions = {"torch.nonzero, eager (a host wait per expert)": call(layer(moe_torch, top_k, capacity))}
        for name, version in [("torch.nonzero_static", moe_torch_static), ("opendml", moe_opendml)]:
            fn = layer(version, top_k, capacity)
            versions[f"{name}, eager"] = call(fn)
            try:
                versions[f"{name}, CUDA graph replay"] = cuda_graph(fn, x, router, weights)[0].replay
            except Exception as error:  # report it in the table and go on with the others
                print(f"{case}{name}, CUDA graph: capture failed: {type(error).__name__}: {error}")
            # Inductor with its own CUDA graphs; compiled once per size (dynamic=False), before the timing.
            versions[f"{name}, torch.compile(fullgraph, reduce-overhead)"] = call(
                torch.compile(fn, fullgraph=True, dynamic=False, mode="reduce-overhead"))
        baseline = None  # the torch.nonzero version's time
        for name, fn in versions.items():
            row = f"{case}{name:52s}"
            try:
                ms = time_ms(fn, args.repeats)
            except Exception as error:  # report it in the table and go on with the others
                print(f"{row} failed: {type(error).__name__}: {error}")
                continue
            baseline = baseline or ms
            print(f"{row} {ms:10.3f} {baseline / ms:7.2f}x")


def main(argv=None):
    parser = moe_layer.arguments(__doc__.split("\n\n")[0], tokens=64, experts=4)
    parser.add_argument("--bench", action="store_true", help="time the versions on the GPU")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = moe_layer.parse(parser, argv)
    if args.bench:
        if not torch.cuda.is_available():
            sys.exit("--bench needs a CUDA GPU")
        bench(args)
        return 0
    return 0 if check(args, torch.device(args.device)) else 1


if __name__ == "__main__":
    sys.exit(main())
