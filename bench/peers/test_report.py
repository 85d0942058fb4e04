"""report.py on synthetic results with the schema the benchmarks write: every GPU case of
gpu_peers.py, times from a simple model, and the awkward entries a real run can hold (a failed peer,
a peer that disagrees with NumPy, views instead of copies, a failed case, skipped cases).

    python3 -m unittest bench/peers/test_report.py
    python3 bench/peers/test_report.py --write DIR    # also leaves the synthetic page in DIR
"""

import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import gpu_peers  # noqa: E402
import report  # noqa: E402

COPY_GBPS = 3000.0


def modelled(nbytes, fraction, latency_us):
    """Microseconds to move nbytes at `fraction` of the copy's bandwidth, after latency_us."""
    return latency_us + nbytes / (fraction * COPY_GBPS * 1e3)


def synthetic_gpu_results():
    results = common.new_results("gpu", "Synthetic GPU", {"torch": "0.0"}, notes=["synthetic"])
    results["placeholder"], results["copy_peak_gbps"] = True, COPY_GBPS
    for case in gpu_peers.cases(quick=False):
        if case.op == "nonzero":
            nonzeros = int(case.elements * (case.density if case.pattern == "random" else 0.5))
            nbytes = common.nonzero_bytes(case, nonzeros)
        else:
            nonzeros, nbytes = None, common.concat_bytes(case)
        record = common.case_record(case, nbytes, nonzeros)
        mine = modelled(nbytes, 0.95, 4.0)
        peers = {"copy": modelled(nbytes, 1.0, 2.0), "opendml": mine}
        for name in gpu_peers.PEERS[case.op]:
            if name != "opendml":
                peers[name] = mine * (3.0 if name.startswith("torch") else 1.5)
        for name, time_us in peers.items():
            record["peers"][name] = {"time_us": time_us, "call_us": time_us + 5, "host_us": 4.0, "runs": 30,
                                     "method": "events", "format": "synthetic", "checked": True, "correct": True}
        if case.op == "nonzero":
            record["peers"]["cub"] = {"error": "RuntimeError: the CUB harness was not built"}
            record["peers"]["jax.argwhere"].update(correct=False, mismatch="row 2 is [0, 3], expected [0, 2]")
        if case.op == "split":
            record["peers"]["torch.split+contiguous"]["no_copy"] = case.params["slice_bytes"] is None
        results["cases"].append(record)
    failed = common.case_record(gpu_peers.cases(quick=False)[0], 0)
    failed["error"] = "MemoryError: synthetic"
    results["cases"].append(failed)
    results["skipped"] = ["nonzero f32 n=2^30 (synthetic)"]
    return results


class ReportTest(unittest.TestCase):
    def setUp(self):
        self.results = synthetic_gpu_results()

    def test_targets_are_judged(self):
        verdicts = {t.text: report.judge(t, self.results) for t in report.TARGETS}
        # The model makes opendml 3x faster than torch, at 0.95 of the copy for large sizes.
        self.assertEqual(verdicts["NONZERO at least 2.5x torch.nonzero from 2^24 elements up"][0], "met")
        self.assertEqual(verdicts["JOIN at least 10x torch.cat with 1000 inputs"][0], "**missed**")
        self.assertEqual(verdicts["NONZERO at least 1.2x the CUB harness"][0], "not measured")
        self.assertEqual(verdicts["CPU NONZERO at least 1.5x NumPy argwhere on 2 cores"][0], "not measured")
        worst = verdicts["JOIN/SPLIT at least 0.93 of the copy, slices of 64 bytes and more"]
        self.assertEqual(worst[0], "met")
        self.assertTrue(worst[3].endswith(str(sum(report.concat_from(256 << 20, "large")(r)
                                                  for r in self.results["cases"] if "error" not in r))))

    def test_page_and_plots(self):
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "gpu_peers.json")
            common.save(self.results, path)
            sys.argv = ["report.py", "--gpu", path, "--out", folder]
            report.main()
            with open(os.path.join(folder, "performance.md")) as f:
                text = f.read()
            for name in report.PLOTS.values():
                self.assertGreater(os.path.getsize(os.path.join(folder, name)), 10_000)
        self.assertIn("PLACEHOLDER", text)
        self.assertIn("## Targets", text)
        self.assertIn("| NONZERO at least 4x torch.nonzero at 2^20 |", text)
        self.assertIn("**wrong**", text)
        self.assertIn(" views", text)
        self.assertIn("not run (out of time)", text)
        self.assertIn("MemoryError: synthetic", text)
        self.assertIn("## How to reproduce", text)
        self.assertIn("bash bench/peers/run.sh", text)

    def test_summary_prints(self):
        text = common.summary(self.results)
        self.assertIn("torch.cat us (x)", text)
        self.assertIn("ERR", text)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--write":
        os.makedirs(sys.argv[2], exist_ok=True)
        json_path = os.path.join(sys.argv[2], "gpu_peers.json")
        common.save(synthetic_gpu_results(), json_path)
        sys.argv = ["report.py", "--gpu", json_path, "--out", sys.argv[2]]
        report.main()
    else:
        unittest.main()
