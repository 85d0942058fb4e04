"""Random NonZero, Concat and Split models run by opendml.onnx and by ONNX Runtime's CPU provider,
a second oracle beside ONNX's own cases: results equal bit for bit (dtype, shape and bytes)."""

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper

import opendml.onnx as backend
from test_onnx_backend import sample

# The element types ONNX Runtime's CPU provider runs for each operator and takes from NumPy (it has
# no NonZero for the other types opendml takes, and its Python binding no bfloat16).
MOVE_TYPES = ["FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64", "BOOL", "FLOAT16", "DOUBLE", "UINT32", "UINT64"]
NONZERO_TYPES = ["FLOAT", "FLOAT16", "INT32", "UINT8", "BOOL"]


def run_both(nodes, inputs: dict, outputs: list, opset: int, initializers=(), output_type=None):
    """The graph's outputs from opendml.onnx and from ONNX Runtime (outputs of the first input's
    element type unless output_type says otherwise)."""
    first = next(iter(inputs.values()))
    rank = 2 if output_type == TensorProto.INT64 else first.ndim  # NonZero gives [rank, count]
    graph = helper.make_graph(
        nodes,
        "random",
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(x.dtype), x.shape) for n, x in inputs.items()],
        [helper.make_tensor_value_info(n, output_type or helper.np_dtype_to_tensor_dtype(first.dtype), [None] * rank) for n in outputs],
        list(initializers),
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    ours = backend.prepare(model).run(list(inputs.values()))
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return list(ours), session.run(outputs, inputs)


def assert_bit_equal(ours, theirs):
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert (a.dtype, a.shape) == (b.dtype, b.shape)
        assert a.tobytes() == b.tobytes()


def random_case(seed, types, min_rank=1):
    """A random generator, element type, rank, axis and shape (sizes 1 to 4) for one case."""
    rng = np.random.default_rng(seed)
    rank = int(rng.integers(min_rank, 6))
    axis = int(rng.integers(-rank, rank)) if rank else 0
    return rng, types[seed % len(types)], rank, axis, [int(s) for s in rng.integers(1, 5, size=rank)]


@pytest.mark.parametrize("seed", range(60))
def test_random_concat(seed):
    rng, type_name, rank, axis, base = random_case(seed, MOVE_TYPES)
    inputs = {}
    for i in range(int(rng.integers(1, 6))):
        shape = list(base)
        shape[axis] = int(rng.integers(0, 4))  # some inputs are empty along the axis
        inputs[f"x{i}"] = sample(type_name, shape, rng)
    ours, theirs = run_both([helper.make_node("Concat", list(inputs), ["y"], axis=axis)], inputs, ["y"], 13)
    assert_bit_equal(ours, theirs)


@pytest.mark.parametrize("seed", range(60))
def test_random_split(seed):
    rng, type_name, rank, axis, shape = random_case(1000 + seed, MOVE_TYPES)
    shape[axis] = int(rng.integers(0, 9))
    x = sample(type_name, shape, rng)
    count = int(rng.integers(1, 5))
    opset = (13, 18)[seed % 2]
    if seed % 3 == 0 and opset == 18:  # num_outputs, the last part smaller
        count = max(1, min(count, shape[axis]))
        node = helper.make_node("Split", ["x"], [f"y{i}" for i in range(count)], axis=axis, num_outputs=count)
        initializers = []
    else:  # the split input, zero-size parts included
        cuts = np.sort(rng.integers(0, shape[axis] + 1, size=count - 1))
        sizes = np.diff(np.concatenate([[0], cuts, [shape[axis]]])).astype(np.int64)
        node = helper.make_node("Split", ["x", "sizes"], [f"y{i}" for i in range(count)], axis=axis)
        initializers = [helper.make_tensor("sizes", TensorProto.INT64, [count], sizes.tolist())]
    ours, theirs = run_both([node], {"x": x}, list(node.output), opset, initializers)
    assert_bit_equal(ours, theirs)


@pytest.mark.parametrize("seed", range(60))
def test_random_nonzero(seed):
    rng, type_name, rank, axis, shape = random_case(2000 + seed, NONZERO_TYPES, min_rank=0)
    if seed % 7 == 0 and rank:
        shape[axis] = 0  # an empty input
    x = sample(type_name, shape, rng)
    ours, theirs = run_both([helper.make_node("NonZero", ["x"], ["y"])], {"x": x}, ["y"], 13, output_type=TensorProto.INT64)
    assert_bit_equal(ours, theirs)
