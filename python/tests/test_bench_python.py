"""bench/python's benchmarks on the CPU at tiny sizes: what each case measures, the command line
each honours and the arguments each refuses (the figures themselves come from a GPU)."""

import json
import pathlib
import sys

import pytest
import torch

BENCH = pathlib.Path(__file__).resolve().parents[2] / "bench" / "python"
sys.path.insert(0, str(BENCH))

import bench_python  # noqa: E402


def cases(argv):
    return list(bench_python.cases(bench_python.parse(["--device", "cpu", *argv])))


def test_nonzero_static_has_room_for_every_element():
    """torch.nonzero_static is given size=n, as a caller who cannot wait for the count must: an
    exact count would spare it the rows that opendml's coordinates have room for."""
    for case, n, methods, _ in cases(["--min-log2", "6", "--max-log2", "8"]):
        if case == "nonzero":
            fn, _ = methods["torch.nonzero_static"]
            assert fn().shape == (n, 1)
    host = {c: m for c, m, _ in bench_python.host_cases(bench_python.parse(["--device", "cpu"]))}
    assert host["nonzero 1024"]["torch.nonzero_static"]().shape == (1024, 1)


def test_max_log2_bounds_the_1000_tensor_concats():
    def many(argv):
        return [n for c, n, _, _ in cases(["--min-log2", "4", "--step", "100", "--max-log2", "4", *argv]) if c == "concat 1000"]

    assert many([]) == []  # a quick run allocates no 1000 x 2^14 elements
    assert many(["--max-log2", "20"]) == [1000 << 10]
    assert many(["--max-log2", "24"]) == [1000 << 10, 1000 << 14]


@pytest.mark.parametrize("script,argv,message", [
    ("bench_python", ["--min-log2", "0"], "--min-log2 must be at least 1 and at most --max-log2"),
    ("bench_python", ["--min-log2", "-3"], "--min-log2 must be at least 1 and at most --max-log2"),
    ("bench_python", ["--min-log2", "20", "--max-log2", "16"], "--min-log2 must be at least 1 and at most --max-log2"),
    ("bench_python", ["--step", "0"], "--step must be at least 1"),
    ("bench_python", ["--density", "1.5"], "--density must be 0 to 1"),
    ("bench_python", ["--density", "nan"], "--density must be 0 to 1"),
    ("bench_python", ["--budget", "0"], "--budget must be above 0"),
    ("bench_jax_host", ["--calls", "0"], "--calls must be at least 1"),
    ("bench_jax_host", ["--rounds", "0"], "--rounds must be at least 1"),
    ("bench_distributed", ["--repeat", "0"], "--repeat must be at least 1"),
    ("bench_distributed", ["--log2", "1"], "--log2 must be at least 2"),
    ("bench_distributed", ["--density", "-0.1"], "--density must be 0 to 1"),
])
def test_bad_arguments_are_refused(capsys, script, argv, message):
    """With the parser's error (exit status 2) before anything runs, not a traceback from inside:
    a step of 0 was range()'s ValueError, a negative size a negative shift, no rounds or repeats
    a median of nothing."""
    module = __import__(script)
    with pytest.raises(SystemExit) as exit:
        module.parse(argv)
    assert exit.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize("script", ["bench_python", "bench_jax_host", "bench_distributed"])
def test_the_defaults_are_accepted(script):
    __import__(script).parse([])


def test_every_result_is_checked_against_torchs_before_it_is_timed(tmp_path, capsys):
    path = tmp_path / "rows.json"
    argv = ["--device", "cpu", "--min-log2", "6", "--max-log2", "8", "--budget", "0.001", "--json", str(path)]
    assert bench_python.main(argv) == 0
    rows = json.loads(path.read_text())
    methods = {(r["case"], r["method"]) for r in rows["rows"]}
    assert ("nonzero", "descriptor execute") in methods and ("concat 2", "descriptor execute") in methods
    assert all(r["correct"] for r in rows["rows"] + rows["host_overhead"]), capsys.readouterr().out


def test_a_wrong_result_is_found():
    x = (torch.arange(12) % 3 == 0).float()
    want = torch.nonzero(x)
    coordinates = torch.zeros(12, 1, dtype=torch.uint32)
    coordinates[:4, 0] = torch.tensor([0, 3, 6, 9])
    count = torch.tensor([4], dtype=torch.uint32)
    assert bench_python.difference((coordinates, count), want, coordinates=True) is None
    assert bench_python.difference(torch.nonzero_static(x, size=12), want, coordinates=True) is None  # padded
    assert bench_python.difference((coordinates, torch.tensor([3])), want, coordinates=True) == "count 3, expected 4"
    coordinates[2, 0] = 7
    assert bench_python.difference((coordinates, count), want, coordinates=True) == "coordinates differ"
    assert "shape" in bench_python.difference(want[:3], want, coordinates=True)
    pieces = [torch.rand(3), torch.rand(5)]
    assert bench_python.difference([p.clone() for p in pieces], pieces, coordinates=False) is None
    bad = [p.clone() for p in pieces]
    bad[1][4] = -bad[1][4] if bad[1][4] != 0 else 1.0
    assert bench_python.difference(bad, pieces, coordinates=False) == "output 1: bytes differ"
    assert "expected torch.float32" in bench_python.difference(pieces[0].double(), pieces[0], coordinates=False)


def test_descriptor_layer_results_are_what_it_writes():
    """The descriptor layer's execute returns nothing: the check reads the outputs it writes."""
    x = (torch.arange(64) % 5 == 0).float()
    device = bench_python.opendml.Device("cpu")
    fn = bench_python.descriptor_nonzero(x, device)
    assert bench_python.difference(bench_python.result_of(fn), torch.nonzero(x), coordinates=True) is None
    parts = [torch.rand(8), torch.rand(24)]
    fn = bench_python.descriptor_join(parts, device)
    assert bench_python.difference(bench_python.result_of(fn), torch.cat(parts), coordinates=False) is None
