"""ONNX's own node test cases for NonZero, Concat and Split, as the onnx package generates them
(onnx.backend.test.case.node; its wheel ships the generators, not the data files), run against
opendml.onnx and compared bit for bit, the empty outputs of the zero-size splits included."""

import warnings

import numpy as np
import pytest

import opendml.onnx as backend

OPS = {"NonZero", "Concat", "Split"}


def _cases():
    from onnx.backend.test.case.node import collect_testcases

    # collect_testcases imports every generator module once per process, so its op filter can
    # only ever name one operator: collect them all and keep the graphs made of these three.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # some other operators' generators warn on purpose
        cases = collect_testcases()
    return [c for c in cases if {n.op_type for n in c.model.graph.node} <= OPS]


CASES = _cases()


def test_every_operator_has_cases():
    ops = {n.op_type for c in CASES for n in c.model.graph.node}
    names = {c.name for c in CASES}
    assert ops == OPS
    assert {"test_split_zero_size_splits_opset13", "test_split_zero_size_splits_opset18", "test_nonzero_example"} <= names
    assert len(CASES) >= 29


def assert_bit_equal(got, expected):
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert isinstance(g, np.ndarray)
        assert (g.dtype, g.shape) == (e.dtype, e.shape)
        assert g.tobytes() == e.tobytes()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_node_case_run_model(case):
    assert backend.supports_device("CPU")
    rep = backend.prepare(case.model, "CPU")
    for inputs, outputs in case.data_sets:
        assert_bit_equal(rep.run(inputs), outputs)
        assert_bit_equal(backend.run_model(case.model, inputs), outputs)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_node_case_run_node(case):
    (node,) = case.model.graph.node
    opset = next(o.version for o in case.model.opset_import if o.domain in ("", "ai.onnx"))
    for inputs, outputs in case.data_sets:
        assert_bit_equal(backend.run_node(node, inputs, "CPU", opset_version=opset), outputs)


def test_zero_size_split_outputs_are_empty_float_arrays():
    case = next(c for c in CASES if c.name == "test_split_zero_size_splits_opset18")
    (inputs, _), = case.data_sets
    outs = backend.run_model(case.model, inputs)
    assert [o.shape for o in outs] == [(0,), (0,), (0,)]
    assert all(o.dtype == np.float32 for o in outs)


def test_outputs_keep_their_names():
    case = next(c for c in CASES if c.name == "test_split_equal_parts_2d")
    (inputs, outputs), = case.data_sets
    got = backend.run_model(case.model, inputs)
    for out, expected in zip(case.model.graph.output, outputs):
        assert np.array_equal(got[out.name], expected)
