"""What the two mixture-of-experts routing examples share, whatever the framework: the layer's
command line (its sizes, checked before anything runs) and the capacity of an expert.
examples/moe_routing.py (PyTorch) and examples/moe_routing_jax.py (JAX) import it from beside them."""

import argparse
import math


def arguments(description: str, tokens: int, experts: int) -> argparse.ArgumentParser:
    """A parser of the layer's options; each script adds its own --bench and --device."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--tokens", type=int, default=tokens)
    parser.add_argument("--hidden", type=int, default=16)
    parser.add_argument("--experts", type=int, default=experts)
    parser.add_argument("--top-k", type=int, default=2)
    parser.add_argument("--capacity-factor", type=float, default=1.25, help="capacity = tokens * top_k / experts * this")
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    return parser


def parse(parser: argparse.ArgumentParser, argv=None) -> argparse.Namespace:
    """The arguments, or the parser's error (exit status 2) for sizes that make no layer: an empty
    one would check nothing, and a top-k past the experts or a capacity of none has no meaning."""
    args = parser.parse_args(argv)
    for name in ("tokens", "hidden", "experts", "repeats"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    if not 1 <= args.top_k <= args.experts:
        parser.error(f"--top-k must be 1 to --experts ({args.experts})")
    if not args.capacity_factor > 0:
        parser.error("--capacity-factor must be above 0")
    return args


def capacity_for(tokens: int, experts: int, top_k: int, factor: float) -> int:
    """The tokens an expert takes at most: its even share of the tokens' top-k choices, times factor."""
    return min(tokens, math.ceil(tokens * top_k / experts * factor))
