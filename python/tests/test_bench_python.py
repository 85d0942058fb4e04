"""bench/python's benchmarks on the CPU at tiny sizes: what each case measures, the command line
each honours and the arguments each refuses (the figures themselves come from a GPU)."""

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
