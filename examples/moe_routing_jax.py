#!/usr/bin/env python3
"""Mixture-of-experts token routing in JAX with opendml, under jax.jit.

The layer of examples/moe_routing.py, for JAX: a router picks each token's top-k experts; every
expert takes the tokens routed to it (at most `capacity` of them, the first ones in token order, as
GShard and Switch drop the rest), runs its weights over them and adds the result, scaled by the
router's gate, to those tokens' outputs. Under jax.jit every shape must be known while tracing, so
the per-expert token lists, whose lengths depend on the data, are where JAX code pays:

- `moe_host`, the reference every other version is checked against: an expert at a time, each
  taking its tokens from NumPy's nonzero, a wait for the device per expert. It cannot be jitted.
- `moe_opendml`: `dispatch` with `opendml.jax.nonzero`. One call over the [experts, tokens] routing
  mask lists every expert's tokens, expert by expert and in token order within each, at DirectML's
  worst case (a row per expert and token) with the count on the device; every (expert, token) pair
  within the capacity gets a slot in an [experts, capacity] table (unused slots point at a padding
  row of zeros), and one batched matrix multiply runs every expert over its slots.
- `moe_argwhere`: the same `dispatch` with `jnp.argwhere(size=experts * tokens)`, JAX's own nonzero
  with a static size, and the count from a separate sum.
- `moe_one_hot`: GShard's dispatch as JAX layers often write it, with no nonzero at all: each
  token's place in its expert's list from a cumulative sum of one-hot assignments, and a
  [tokens, experts, capacity] dispatch tensor contracted with einsum, so that its memory and work
  grow with tokens x experts x capacity.

Every version takes the router's choice (gates and experts) as an input, so that all of them see the
same one, and every product runs at full float32 precision (`PRECISION`). The check gives them
small-integer tokens and weights and gates rounded to multiples of 2^-12, so that every product and
sum is exact whatever order (or fused multiply-add) a matrix multiply takes: every version must then
give the reference's output bit for bit.

    python3 examples/moe_routing_jax.py             # compare every version with moe_host
    python3 examples/moe_routing_jax.py --bench     # time them under jax.jit on JAX's default device
"""

import functools
import math
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

import opendml.jax as oj

import moe_layer  # examples/moe_layer.py: the command line both MoE examples share

PRECISION = jax.lax.Precision.HIGHEST  # float32 products as float32 (no TF32 or bfloat16 passes)


def route(x, router, top_k: int):
    """Each token's top_k experts [tokens, top_k] and their gates (softmax weights)."""
    logits = jnp.matmul(x, router, precision=PRECISION)
    gates, experts = jax.lax.top_k(jax.nn.softmax(logits, axis=-1), top_k)
    return gates, experts


def moe_host(x, gates, chosen, weights, capacity: int):
    """The layer expert by expert, each taking its tokens from NumPy's nonzero on the host."""
    tokens, hidden = x.shape
    out = jnp.zeros((tokens, hidden), x.dtype)
    for e in range(weights.shape[0]):
        picked = chosen == e  # [tokens, top_k]; top-k experts are distinct, so one per row at most
        rows = np.nonzero(np.asarray(picked.any(axis=-1)))[0][:capacity]  # waits for the device
        gate = (gates * picked).sum(axis=-1)
        y = jnp.matmul(x[rows], weights[e], precision=PRECISION)
        out = out.at[rows].add(y * gate[rows, None])
    return out


def dispatch(x, gates, chosen, weights, capacity: int, nonzero):
    """The same layer in a fixed number of operations whatever the number of experts, with static
    shapes. `nonzero(mask)` returns (coordinates [mask.size, mask.ndim], count), the coordinates of
    the mask's set elements in row-major order in the first `count` rows."""
    tokens, hidden = x.shape
    experts = weights.shape[0]
    capacity = min(capacity, tokens)
    slots = experts * capacity
    token_ids = jnp.arange(tokens)
    routed = jnp.zeros((experts, tokens), bool).at[chosen.T, token_ids[None, :]].set(True)
    gate = jnp.zeros((tokens + 1, experts), x.dtype).at[token_ids[:, None], chosen].set(gates)  # row `tokens`: padding
    pairs, count = nonzero(routed)  # (expert, token) pairs, expert by expert
    expert, token = pairs[:, 0].astype(jnp.int32), pairs[:, 1].astype(jnp.int32)
    row = jnp.arange(experts * tokens)
    per_expert = routed.sum(axis=1)
    rank = row - (jnp.cumsum(per_expert) - per_expert)[expert]  # the token's place in its expert's list
    used = (row < count.astype(jnp.int32)[0]) & (rank < capacity)
    slot = jnp.where(used, expert * capacity + rank, slots)  # past the capacity or the count: a spare slot
    table = jnp.full((slots + 1,), tokens, jnp.int32).at[slot].set(token)[:slots]
    x_padded = jnp.concatenate([x, jnp.zeros((1, hidden), x.dtype)])
    y = jnp.matmul(x_padded[table].reshape(experts, capacity, hidden), weights, precision=PRECISION)
    scale = gate[table, jnp.arange(slots) // capacity]
    out = jnp.zeros((tokens + 1, hidden), x.dtype).at[table].add(y.reshape(slots, hidden) * scale[:, None])
    return out[:tokens]


def moe_opendml(x, gates, chosen, weights, capacity: int):
    """dispatch with opendml.jax.nonzero: the count comes from the same kernel, on the device."""
    return dispatch(x, gates, chosen, weights, capacity, oj.nonzero)


def moe_argwhere(x, gates, chosen, weights, capacity: int):
    """dispatch with jnp.argwhere(size=mask.size), JAX's own nonzero with a static size, and the
    count from a separate sum."""
    return dispatch(x, gates, chosen, weights, capacity,
                    lambda mask: (jnp.argwhere(mask, size=mask.size, fill_value=0), mask.sum().reshape(1)))


def moe_one_hot(x, gates, chosen, weights, capacity: int):
    """GShard's dispatch and combine tensors, [tokens, experts, capacity], contracted with einsum."""
    tokens, _ = x.shape
    experts = weights.shape[0]
    capacity = min(capacity, tokens)
    mask = jax.nn.one_hot(chosen, experts, dtype=jnp.int32).sum(axis=1)  # [tokens, experts], 0 or 1
    place = jnp.cumsum(mask, axis=0) - 1  # the token's place in its expert's list
    kept = (mask == 1) & (place < capacity)
    dispatched = (kept[:, :, None] & (place[:, :, None] == jnp.arange(capacity))).astype(x.dtype)
    gate = jnp.zeros((tokens, experts), x.dtype).at[jnp.arange(tokens)[:, None], chosen].set(gates)
    expert_in = jnp.einsum("tec,th->ech", dispatched, x, precision=PRECISION)
    expert_out = jnp.matmul(expert_in, weights, precision=PRECISION)
    return jnp.einsum("tec,eck->tk", dispatched * gate[:, :, None], expert_out, precision=PRECISION)


MATCH = "equal to the host version"
VERSIONS = {"opendml.jax.nonzero": moe_opendml, "jnp.argwhere(size=n)": moe_argwhere, "one-hot einsum (GShard)": moe_one_hot}


def make_layer(tokens, hidden, experts, seed, exact=False):
    """Inputs, router and expert weights, as NumPy arrays; with exact, the tokens and weights are
    small integers (see exact_gates)."""
    rng = np.random.default_rng(seed)
    if exact:
        x = rng.integers(-3, 4, (tokens, hidden)).astype(np.float32)
        weights = rng.integers(-3, 4, (experts, hidden, hidden)).astype(np.float32)
    else:
        x = rng.standard_normal((tokens, hidden), np.float32)
        weights = rng.standard_normal((experts, hidden, hidden), np.float32) / np.float32(math.sqrt(hidden))
    router = rng.standard_normal((hidden, experts), np.float32)
    return x, router, weights


def exact_gates(gates, chosen):
    """The router's choice with its gates rounded to multiples of 2^-12: times small integers, they
    make products and sums that float32 holds exactly."""
    return jnp.round(gates * 4096) / 4096, chosen


def layer(version, top_k: int, capacity: int):
    """The whole layer, router included, jitted: x, router, weights -> output."""
    def run(x, router, weights):
        gates, chosen = route(x, router, top_k)
        return version(x, gates, chosen, weights, capacity)
    return jax.jit(run)


def check(args, device):
    """Every version, eager and jitted (and jitted under jax.vmap over a batch of layers), against
    moe_host, bit for bit."""
    top_k, capacity = args.top_k, moe_layer.capacity_for(args.tokens, args.experts, args.top_k, args.capacity_factor)
    x, router, weights = (jax.device_put(a, device)
                          for a in make_layer(args.tokens, args.hidden, args.experts, args.seed, exact=True))
    exact_route = jax.jit(lambda x: exact_gates(*route(x, router, top_k)))
    gates, chosen = exact_route(x)
    want = np.asarray(moe_host(x, gates, chosen, weights, capacity))
    # A batch of two layers' inputs: the first as above, the second new tokens through the same router.
    x2 = jax.device_put(make_layer(args.tokens, args.hidden, args.experts, args.seed + 1, exact=True)[0], device)
    gates2, chosen2 = exact_route(x2)
    want2 = np.asarray(moe_host(x2, gates2, chosen2, weights, capacity))
    if not np.abs(want).sum() > 0:
        print("the reference output is all zeros, which would check nothing: pick other sizes or --seed")
        return False

    def report(label, same):
        print(f"{label:48s} {MATCH if same else 'DIFFERS from the host version'}")
        return same

    ok = True
    for name, version in VERSIONS.items():
        jitted = jax.jit(version, static_argnums=4)
        batched = jax.jit(jax.vmap(version, in_axes=(0, 0, 0, None, None)), static_argnums=4)
        results = {
            "eager": version(x, gates, chosen, weights, capacity),
            "jax.jit": jitted(x, gates, chosen, weights, capacity),
        }
        both = batched(jnp.stack([x, x2]), jnp.stack([gates, gates2]), jnp.stack([chosen, chosen2]), weights, capacity)
        for how, got in results.items():
            ok &= report(f"{name}, {how}", np.array_equal(np.asarray(got), want))
        ok &= report(f"{name}, jax.vmap of two layers",
                     np.array_equal(np.asarray(both[0]), want) and np.array_equal(np.asarray(both[1]), want2))
    return ok


def bench(args, device):
    """Each version's whole layer under jax.jit, timed from the host over `repeats` calls (JAX
    dispatches them without waiting), beside moe_host; speed-ups are against the case's first row."""
    cases = [(1024, 512, 8), (16384, 1024, 32)]
    if device.platform == "cpu":  # the larger case's one-hot tensors alone take 2.7 GB and 0.7 TFLOP
        cases = cases[:1]
    print(f"JAX {jax.__version__} on {device.device_kind} ({device.platform})")
    print(f"{'tokens':>7} {'hidden':>6} {'experts':>7} {'top_k':>5} {'capacity':>8}  {'version':34s} {'ms/forward':>10} {'speed-up':>8}")
    for tokens, hidden, experts in cases:
        x, router, weights = (jax.device_put(a, device) for a in make_layer(tokens, hidden, experts, args.seed))
        top_k, capacity = args.top_k, moe_layer.capacity_for(tokens, experts, args.top_k, args.capacity_factor)
        case = f"{tokens:7d} {hidden:6d} {experts:7d} {top_k:5d} {capacity:8d}  "

        def host(x=x, router=router, weights=weights, top_k=top_k, capacity=capacity):
            gates, chosen = route(x, router, top_k)
            return moe_host(x, gates, chosen, weights, capacity)

        # Eager JAX compiles the host version's gathers, products and scatters for each new token count,
        # which at 32 experts of 16384 tokens took minutes: it is timed on the first case only.
        versions = {"host nonzero, a wait per expert": host} if tokens <= 1024 else {}
        for name, version in VERSIONS.items():
            versions[f"{name}, jax.jit"] = functools.partial(layer(version, top_k, capacity), x, router, weights)
        baseline = None
        for name, fn in versions.items():
            row = f"{case}{name:34s}"
            try:  # the host version waits for the device once an expert: fewer calls of it
                ms = time_ms(fn, args.repeats if fn is not host else max(3, args.repeats // 20))
            except Exception as error:  # report it in the table and go on with the others
                print(f"{row} failed: {type(error).__name__}: {error}")
                continue
            baseline = baseline or ms
            print(f"{row} {ms:10.3f} {baseline / ms:7.2f}x", flush=True)


def time_ms(fn, repeats):
    for _ in range(3):  # compiles, then warms
        jax.block_until_ready(fn())
    start = time.perf_counter()
    for _ in range(repeats):
        out = fn()
    jax.block_until_ready(out)
    return (time.perf_counter() - start) * 1e3 / repeats


def main(argv=None):
    parser = moe_layer.arguments(__doc__.split("\n\n")[0], tokens=96, experts=6)
    parser.add_argument("--bench", action="store_true", help="time the versions under jax.jit")
    parser.add_argument("--device", choices=["cpu", "gpu"], help="JAX's platform (default: JAX's default device)")
    args = moe_layer.parse(parser, argv)
    device = jax.devices(args.device)[0] if args.device else jax.devices()[0]
    if args.bench:
        bench(args, device)
        return 0
    return 0 if check(args, device) else 1


if __name__ == "__main__":
    sys.exit(main())
