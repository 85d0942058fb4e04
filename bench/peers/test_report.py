"""report.py on synthetic results with the schema the benchmarks write: every GPU case of
gpu_peers.py, times from a simple model, and the awkward entries a real run can hold (a failed peer,
a peer that disagrees with NumPy, views instead of copies, a failed case, skipped cases).

    python3 -m unittest bench/peers/test_report.py
    python3 bench/peers/test_report.py --write DIR    # also leaves the synthetic page in DIR
"""

import os
import re
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import gpu_peers  # noqa: E402
import report  # noqa: E402

COPY_GBPS = 3000.0
try:
    import matplotlib  # noqa: F401
    HAVE_MATPLOTLIB = True
except ImportError:
    HAVE_MATPLOTLIB = False


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

    def target(self, text):
        return next(t for t in report.TARGETS if t.text == text)

    def scope(self, text):
        return [r for r in self.results["cases"] if "error" not in r and self.target(text).select(r)]

    def test_targets_are_judged(self):
        verdicts = {t.text: report.judge(t, self.results if t.kind == "gpu" else None) for t in report.TARGETS}
        # The model makes opendml 3x faster than torch, 1.5x faster than the other peers, and 0.93 of
        # the copy at 256 MiB (its latency is 4 us against the copy's 2 us).
        self.assertEqual(verdicts["NONZERO at least 2.5x torch.nonzero from 2^24 elements up"][0], "met")
        self.assertEqual(verdicts["NONZERO at least 1.3x the CUB harness on every case"][0], "not measured")
        self.assertEqual(verdicts["CPU JOIN/SPLIT at least 0.85 of memcpy"][0], "not measured")
        self.assertEqual(verdicts["opendml.jax.nonzero within 10% of opendml's C++ time from 2^24 elements"][:2],
                         ("**missed**", "1.50x"))
        # opendml.jax.argwhere and jax.argwhere both take 1.5x opendml's time.
        self.assertEqual(verdicts["opendml.jax.argwhere at least 5x jnp.argwhere(size=n) from 2^20 elements"][:2],
                         ("**missed**", "1.00x"))
        text = "JOIN/SPLIT at least 0.95 of the copy, slices of 64 bytes and more"
        self.assertEqual(verdicts[text][0], "**missed**")
        self.assertEqual(verdicts[text][3], f"0 of {len(self.scope(text))}")
        self.assertTrue(all(r["params"]["total_bytes"] >= 256 << 20 and r["params"]["slice_bytes"] in (None, 64, 256)
                            for r in self.scope(text)))

    def test_scopes(self):
        """Each target of issue 11 is judged on the cases its row names, and no others."""
        small = self.scope("JOIN/SPLIT of small outer-axis joins at least 1.0x torch")
        self.assertEqual(sorted((r["op"], r["params"]["total_bytes"]) for r in small),
                         [(op, n) for op in ("join", "split") for n in (4 << 10, 64 << 10, 512 << 10)])
        four_byte = self.scope("SPLIT at least 0.80 of the copy, 4-byte slices")
        self.assertTrue(four_byte)
        self.assertTrue(all(r["op"] == "split" and r["params"]["slice_bytes"] == 4 for r in four_byte))
        self.assertEqual(len(four_byte), sum(r["op"] == "split" and r["params"].get("slice_bytes") == 4
                                             for r in self.results["cases"] if "error" not in r))
        many = self.scope("JOIN/SPLIT of 1000 inputs of 4 KiB at least 0.90 of the copy")
        self.assertEqual(sorted(r["op"] for r in many), ["join", "split"])
        for text, size in (("NONZERO at least 0.90 of the copy, 4-byte inputs", 4),
                           ("NONZERO at least 0.85 of the copy, 2-byte inputs", 2),
                           ("NONZERO at least 0.80 of the copy, 1-byte inputs", 1)):
            cases = self.scope(text)
            self.assertTrue(cases, text)
            self.assertTrue(all(r["params"]["n"] >= 1 << 24 and common.element_bytes(r["params"]["dtype"]) == size
                                for r in cases), text)

    def test_split_is_judged_against_torchs_copying_split(self):
        """torch.split+contiguous copies nothing on the outer axis: the small-join target's SPLIT
        rows are judged against torch.split_with_sizes_copy."""
        text = "JOIN/SPLIT of small outer-axis joins at least 1.0x torch"
        self.assertEqual(report.judge(self.target(text), self.results)[0], "met")
        case = next(r for r in self.scope(text) if r["op"] == "split")
        case["peers"]["torch.split_with_sizes_copy"]["time_us"] = case["peers"]["opendml"]["time_us"] / 2
        self.assertEqual(report.judge(self.target(text), self.results)[:3], ("**missed**", "0.50x", case["name"]))

    def test_a_wrong_result_misses_whatever_its_time(self):
        """opendml's result that differs from NumPy's fails its target even where it is fast enough."""
        text = "NONZERO at least 2.5x torch.nonzero from 2^24 elements up"
        self.assertEqual(report.judge(self.target(text), self.results)[0], "met")
        case = self.scope(text)[1]
        case["peers"]["opendml"].update(correct=False, mismatch="row 0 is [0, 1], expected [0, 0]")
        n = len(self.scope(text))
        self.assertEqual(report.judge(self.target(text), self.results),
                         ("**missed**", "-", f"opendml differs from NumPy: {case['name']}", f"{n - 1} of {n}"))

    def test_the_judged_package_failing_misses(self):
        """An opendml.jax target is about opendml.jax's rows: one that failed in a case misses; one
        that ran in no case (not installed) leaves the target unmeasured."""
        text = "opendml.jax.split within 10% of opendml's C++ time from 2^24 elements"
        for r in self.scope(text):  # within 10% everywhere, so that only the failure decides
            r["peers"]["opendml.jax.split"]["time_us"] = r["peers"]["opendml"]["time_us"]
        self.assertEqual(report.judge(self.target(text), self.results)[0], "met")
        case = self.scope(text)[0]
        case["peers"]["opendml.jax.split"] = {"error": "RuntimeError: out of memory"}
        n = len(self.scope(text))
        self.assertEqual(report.judge(self.target(text), self.results),
                         ("**missed**", "-", f"opendml.jax.split failed: {case['name']}", f"{n - 1} of {n}"))
        for r in self.scope(text):
            r["peers"]["opendml.jax.split"] = {"error": "RuntimeError: No module named 'opendml'"}
        self.assertEqual(report.judge(self.target(text), self.results)[:3],
                         ("not measured", "-", "the peer did not run"))

    def test_page_and_plots(self):
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "gpu_peers.json")
            common.save(self.results, path)
            sys.argv = ["report.py", "--gpu", path, "--out", folder]
            report.main()
            with open(os.path.join(folder, "performance.md")) as f:
                text = f.read()
            for name in report.PLOTS.values():
                if HAVE_MATPLOTLIB:
                    self.assertGreater(os.path.getsize(os.path.join(folder, name)), 10_000)
                else:  # report.py writes the page without its plots then
                    self.assertFalse(os.path.exists(os.path.join(folder, name)))
                    self.assertNotIn(f"]({name})", text)
        self.assertIn("PLACEHOLDER", text)
        self.assertIn("## Targets", text)
        self.assertIn("| NONZERO of 2^20 elements under 6 us |", text)
        self.assertIn("**wrong**", text)
        self.assertIn(" views", text)
        self.assertIn("not run (out of time)", text)
        self.assertIn("MemoryError: synthetic", text)
        self.assertIn("## How to reproduce", text)
        self.assertIn("bash bench/peers/run.sh", text)

    def test_the_page_says_whether_each_peer_started_from_the_same_l2_state(self):
        touched = "the copies those calls read are read once"
        older = "did not yet read them ahead"
        page = report.page(self.results, None, ["gpu.json"], {})
        self.assertNotIn(touched, page)
        self.assertIn(older, page)
        self.results["inputs_touched"] = True
        page = report.page(self.results, None, ["gpu.json"], {})
        self.assertIn(touched, page)
        self.assertNotIn(older, page)

    def test_docs_page_is_current(self):
        """docs/performance.md is what report.py makes of the results its first line names, with the
        hand-written pages (gaps.md, bench/python/results.md) as they are now: a change to either that
        was not carried to the page fails here."""
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
        with open(os.path.join(root, "docs", "performance.md")) as f:
            text = f.read()
        generated = re.compile(r"^Generated by `bench/peers/report.py` on \S+ from (.*)\.$", re.M)
        sources = re.findall(r"`([^`]+)`", generated.search(text).group(1))
        runs = {kind: next((report.load(os.path.join(root, "bench", "results", s)) for s in sources
                            if s.startswith(kind)), None) for kind in ("gpu", "cpu")}
        label = "GPU" if runs["gpu"] is not None else "CPU"
        plots = {(label, op): name for op, name in report.PLOTS.items() if f"]({name})" in text}
        expected = report.page(runs["gpu"], runs["cpu"], sources, plots)
        self.assertEqual(generated.sub("", expected), generated.sub("", text),
                         "docs/performance.md is stale: regenerate it with report.py (its 'How to reproduce')")

    def test_unreadable_results_are_refused_in_a_line(self):
        with tempfile.TemporaryDirectory() as folder:
            for name, content in (("missing.json", None), ("bad.json", "{not json"), ("list.json", "[]"),
                                  ("other.json", '{"schema": "other/1"}')):
                path = os.path.join(folder, name)
                if content is not None:
                    with open(path, "w") as f:
                        f.write(content)
                with self.assertRaises(SystemExit) as refused:
                    report.load(path)
                self.assertIsInstance(refused.exception.code, str)
                self.assertTrue(refused.exception.code.startswith(path + ": "), refused.exception.code)

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
