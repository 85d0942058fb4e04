"""Is the peer benchmark's copy slower for some byte counts, or inside some cases?

In every full run on either GPU, the copy that the NONZERO cases are divided by (a torch copy_ of
half the case's bytes) took 2-4 us longer, from 4 MiB to 256 MiB, than the copy of the same
byte count (give or take 4 KiB) in the JOIN and SPLIT cases (bench/NOTES.md, "The copy the NONZERO
cases are divided by"). Their byte counts differ from round numbers by a few bytes to a few KiB,
and they run after a NONZERO case's set-up. This times the copy peer, as gpu_peers.py times it:

1. alone, at round sizes and at sizes a few bytes or KiB either side of them;
2. inside the run_case of a NONZERO case and of the JOIN case of the same bytes, the other peers
   left out.

On an H100 (2026-12-07) the byte count decided it: from 4 MiB, any count off whole 4 KiB pages took
2.3-3.0 us longer, alone as in its case, so gpu_peers.copy_size now copies whole pages from 1 MiB
and the cases' copies here are of whole pages too. Up to 64 MiB whole pages were as fast as round
sizes; in the next full run 256 MiB + 4 KiB was still 3 us slower than 256 MiB, so the probe now
tries 256 MiB as well.

   python3 bench/peers/copy_sizes.py [--lib build/peers/opendml/src/libopendml.so] [--rounds 2] [--simulate]

With --on-file, on any machine: the comparison that raised the question, from full runs' results
(float32 NONZERO at rank 2, density 0.5, beside the outer-axis JOIN and SPLIT of the same bytes).

   python3 bench/peers/copy_sizes.py --on-file bench/results/gpu_peers_*.json
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import gpu_peers  # noqa: E402

MIB, PAGE = gpu_peers.MIB, gpu_peers.PAGE


def on_file(paths):
    """For each results file: each NONZERO case's copy beside the JOIN and SPLIT cases' copy of the
    same byte count give or take 4 KiB, and NONZERO's "of copy" with either."""
    for path in paths:
        with open(path) as f:
            results = json.load(f)
        rows = {r["name"]: r for r in results["cases"]}
        copy = {r["name"]: r["peers"].get("copy", {}).get("time_us") for r in results["cases"]}
        print(f"{os.path.basename(path)} ({results.get('device', '?')})")
        for k in (20, 22, 24, 26, 28):
            nonzero = rows.get(common.nonzero_case("size", "float32", 1 << k, 2, 0.5).name)
            same = [common.concat_case(op, "size", "float32", 4 << k, 2).name for op in ("join", "split")]
            if nonzero is None or copy.get(nonzero["name"]) is None or any(copy.get(n) is None for n in same):
                continue
            mine, theirs = nonzero["peers"].get("opendml", {}).get("time_us"), min(copy[n] for n in same)
            size, round_size = gpu_peers.copied_bytes(nonzero), gpu_peers.copied_bytes(rows[same[0]])
            line = (f"  2^{k}: copy of {size} B {copy[nonzero['name']]:8.2f} us; of {round_size} B in the JOIN and "
                    f"SPLIT cases {copy[same[0]]:8.2f} / {copy[same[1]]:8.2f} us; difference "
                    f"{copy[nonzero['name']] - theirs:+6.2f} us")
            if mine:
                line += f"; of copy {copy[nonzero['name']] / mine:.3f} -> {theirs * size / round_size / mine:.3f}"
            print(line)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lib", default=os.path.join(gpu_peers.BUILD, "opendml", "src", "libopendml.so"))
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--simulate", action="store_true", help="on the CPU, to check the script")
    parser.add_argument("--on-file", nargs="+", metavar="RESULTS", help="compare full runs' results; no GPU")
    args = parser.parse_args()
    if args.on_file:
        return on_file(args.on_file)
    args.cub, args.budget_per_peer_s = "/nonexistent", 0.05
    modules, missing = gpu_peers.import_frameworks({"jax": "not needed", "cupy": "not needed"})
    env = gpu_peers.make_env(args, modules, missing)
    print("the CPU (--simulate)" if args.simulate else modules["torch"].cuda.get_device_name(0), flush=True)
    sizes = [base + d for base in (4 * MIB, 16 * MIB, 32 * MIB, 64 * MIB, 256 * MIB)
             for d in (0, 16, 48, 128, 512, PAGE, 16 * PAGE, 512 * PAGE, -2912)]
    f32 = "float32"
    cases = [common.nonzero_case("size", f32, 1 << 20, 2, 0.5), common.concat_case("join", "size", f32, 4 * MIB, 2),
             common.nonzero_case("size", f32, 1 << 24, 2, 0.5), common.concat_case("join", "size", f32, 64 * MIB, 2),
             common.nonzero_case("density", f32, 1 << 24, 2, 0.0), common.nonzero_case("size", f32, 1 << 26, 2, 0.5),
             common.concat_case("join", "size", f32, 256 * MIB, 2)]
    seeds = {c.name: gpu_peers.data_seed(place) for place, c in enumerate(gpu_peers.cases(False))}
    for r in range(1, args.rounds + 1):
        for n in sizes:
            peer = gpu_peers.copy_peer(env, n)
            m = gpu_peers.measure(env, peer, peer.touch)
            print(f"round {r} alone: copy_ of {n:>10d} bytes (n % {PAGE} = {n % PAGE:>4d}): {m['time_us']:8.2f} us",
                  flush=True)
            del peer
            gpu_peers.release(env)
        for case in cases:  # with the data of a full run (data_seed), the copy alone
            record = gpu_peers.run_case(env, case, seeds[case.name], 256 * MIB, peers={})
            half = gpu_peers.copy_size(record["bytes"])
            print(f"round {r} in its case: copy_ of {half:>10d} bytes in {case.name}: "
                  f"{record['peers']['copy'].get('time_us', float('nan')):8.2f} us", flush=True)


if __name__ == "__main__":
    sys.exit(main())
