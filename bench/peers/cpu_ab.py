"""Builds of libopendml.so side by side on the CPU cases, their calls interleaved round by round.

cpu_peers.py's JOIN/SPLIT cases (NONZERO too with --nonzero): one call of each build in turn, round
after round, with np.copyto (the roofline) in the same rounds. On a machine shared with other work,
load then hits every build alike, where timing one build's runs after another's would not.

    python3 bench/peers/cpu_ab.py --lib before=build/base/src/libopendml.so \\
        --lib after=build/release/src/libopendml.so --filter "256 MiB" [--more] [--json out.json]

--lib LABEL=PATH[,VAR=VALUE...]: VARs are set in the environment while that build compiles its
operators (the same library may come twice with different settings). Every result is checked
against NumPy before timing. Printed per case: copy time / build time, as the median and as the
minimum over the rounds (the minimum is the figure least disturbed by other processes).
"""

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import cpu_peers  # noqa: E402
import opendml  # noqa: E402

MIB = 1 << 20


def more_cases():
    """Narrow slices beyond cpu_peers.py's: 3 pieces, 4- and 8-byte slices, at 16 and 256 MiB."""
    shapes = ((2, 16), (2, 256), (3, 16), (2, 4), (4, 8))
    return [common.concat_case(op, "slices", "float32", total, pieces, slice_bytes)
            for op in ("join", "split") for total in (16 * MIB, 256 * MIB) for pieces, slice_bytes in shapes]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lib", action="append", required=True, help="LABEL=PATH[,VAR=VALUE...]")
    parser.add_argument("--filter", default="", help="only cases whose name contains this")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--budget-s", type=float, default=20, help="per case; at least 5 rounds")
    parser.add_argument("--more", action="store_true", help="add more_cases()")
    parser.add_argument("--nonzero", action="store_true", help="the NONZERO_COORDINATES cases too")
    parser.add_argument("--json", help="write the times here")
    args = parser.parse_args()

    builds, devices, variables = [], {}, set()
    for spec in args.lib:
        label, rest = spec.split("=", 1)
        path, *settings = rest.split(",")
        if path not in devices:
            devices[path] = opendml.Device(opendml.load(path), "cpu")
        env = dict(s.split("=", 1) for s in settings)
        variables |= env.keys()
        builds.append((label, devices[path], env))

    print(f"load average {os.getloadavg()[0]:.2f}", flush=True)
    cases = cpu_peers.cases(False) + (more_cases() if args.more else [])
    records = []
    for seed, case in enumerate(cases):
        if args.filter not in case.name or (case.op == "nonzero" and not args.nonzero):
            continue
        if case.op == "nonzero":
            inputs = [common.aligned_empty(case.shapes[0], case.dtype)]
            inputs[0][...] = common.nonzero_data(case, seed + 1)
            nbytes = common.nonzero_bytes(case, common.count_nonzero(inputs[0], case.dtype))
        else:
            pool = common.random_bytes(case.total_bytes, seed + 1)
            inputs = []
            for x in common.concat_data(case, pool):
                inputs.append(common.aligned_empty(x.shape, case.dtype))
                inputs[-1][...] = x
            nbytes = common.concat_bytes(case)
        expected = common.reference(case, inputs)
        half = nbytes // 2
        source, target = common.random_bytes(half, 0), np.empty(half, np.uint8)
        calls = {"copy": lambda: np.copyto(target, source)}
        for label, device, env in builds:
            for name in variables:
                os.environ.pop(name, None)
            os.environ.update(env)
            call, outputs, _ = cpu_peers.opendml_peer(device)(case, inputs)
            mismatch = common.compare(expected, outputs(call()), coordinates=case.op == "nonzero")
            if mismatch:
                sys.exit(f"{label} differs from NumPy on {case.name}: {mismatch}")
            calls[label] = call
        times = {label: [] for label in calls}
        deadline = time.perf_counter() + args.budget_s
        for r in range(args.rounds):
            for label, call in calls.items():
                start = time.perf_counter()
                call()
                times[label].append((time.perf_counter() - start) * 1e6)
            if r >= 4 and time.perf_counter() > deadline:
                break
        median = {label: float(np.median(t)) for label, t in times.items()}
        least = {label: float(np.min(t)) for label, t in times.items()}
        cells = "  ".join(f"{label} {median['copy'] / median[label]:.2f}/{least['copy'] / least[label]:.2f}"
                          for label in calls if label != "copy")
        print(f"{case.name:58s} copy {median['copy']:9.0f} us  {cells}  ({len(times['copy'])} rounds)", flush=True)
        records.append({"case": case.name, "median_us": median, "min_us": least, "rounds": len(times["copy"])})
    print(f"load average {os.getloadavg()[0]:.2f}; figures: copy time / build time, median/min")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"builds": args.lib, "cases": records}, f, indent=1)


if __name__ == "__main__":
    main()
