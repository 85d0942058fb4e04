"""opendml.onnx beyond ONNX's own cases: every ONNX element type (supported ones bit for bit
against NumPy, the others a clean NotImplementedError named in docs/python.md), graphs of several
nodes, non-contiguous inputs, high ranks and every error path."""

import pathlib
import warnings

import ml_dtypes
import numpy as np
import opendml
import pytest
from onnx import TensorProto, helper, numpy_helper

import opendml.onnx as backend
from opendml.onnx import ops

DOCS = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "python.md").read_text()
TYPES = [name for name in TensorProto.DataType.keys() if name != "UNDEFINED"]


def sample(type_name: str, shape, rng) -> np.ndarray:
    """Values of an ONNX type with many zeros (and -0.0, NaN, infinities, tiny values for floats)."""
    if type_name == "STRING":
        return rng.choice(np.array(["", "a", "bc"], dtype=object), size=shape)
    dtype = helper.tensor_dtype_to_np_dtype(getattr(TensorProto, type_name))
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(bool)
    try:
        ml_dtypes.finfo(dtype)
        pool = np.array([0.0, -0.0, 1.0, -2.5, np.nan, np.inf, -np.inf, 1e-30, 0.0], np.float32)
    except ValueError:  # an integer type
        pool = np.array([0, 0, 1, 2, 3], np.int64)
    if np.issubdtype(dtype, np.complexfloating):
        z = np.empty(shape, dtype)
        z.real, z.imag = rng.choice(pool, size=shape), rng.choice(pool, size=shape)
        return z
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # inf and NaN into types that have neither
        return rng.choice(pool, size=shape).astype(dtype)


def node(op, inputs, outputs, **attrs):
    return helper.make_node(op, inputs, outputs, **attrs)


def same_bits(a, b):
    """The same type, shape and bytes: NaNs and -0.0 included, which array_equal lets pass."""
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("type_name", TYPES)
def test_concat_and_split_move_every_fixed_width_type(type_name):
    rng = np.random.default_rng(1)
    a, b = sample(type_name, (2, 3, 4), rng), sample(type_name, (2, 5, 4), rng)
    concat = node("Concat", ["a", "b"], ["y"], axis=-2)
    split = node("Split", ["x", "s"], ["p", "q", "r"], axis=1)
    sizes = np.array([1, 0, 7], np.int64)
    if type_name in ops.MOVE_UNSUPPORTED:
        with pytest.raises(NotImplementedError, match=type_name):
            backend.run_node(concat, [a, b])
        with pytest.raises(NotImplementedError, match=type_name):
            backend.run_node(split, [np.concatenate([a, b], 1), sizes])
        return
    (y,) = backend.run_node(concat, [a, b])
    expected = np.concatenate([a, b], axis=1)
    assert same_bits(y, expected) and y.dtype == a.dtype
    parts = backend.run_node(split, [expected, sizes], opset_version=13)
    for part, want in zip(parts, np.split(expected, [1, 1], axis=1), strict=True):
        assert same_bits(part, want) and part.dtype == a.dtype


@pytest.mark.parametrize("type_name", TYPES)
def test_nonzero_of_every_type(type_name):
    x = sample(type_name, (3, 4, 5), np.random.default_rng(2))
    n = node("NonZero", ["x"], ["y"])
    if type_name in ops.NONZERO_UNSUPPORTED:
        with pytest.raises(NotImplementedError, match=type_name):
            backend.run_node(n, [x])
        return
    (y,) = backend.run_node(n, [x])
    expected = np.argwhere(x != 0).T.astype(np.int64)
    assert 0 < expected.shape[1] < x.size  # the sample has zeros and non-zeros
    assert y.dtype == np.int64 and y.shape == expected.shape and np.array_equal(y, expected)


def test_negative_zero_is_zero_in_the_reinterpreted_types():
    x = np.array([-0.0, 0.0, 1.0, -0.0, np.nan], np.float32)
    for dtype in (ml_dtypes.bfloat16, np.float16):
        (y,) = backend.run_node(node("NonZero", ["x"], ["y"]), [x.astype(dtype)])
        assert y.tolist() == [[2, 4]]


def test_every_unsupported_type_is_documented_with_its_reason():
    for name, reason in {**ops.NONZERO_UNSUPPORTED, **ops.MOVE_UNSUPPORTED}.items():
        assert f"`{name}`" in DOCS, name
    assert "NotImplementedError" in DOCS


def test_scalar_and_empty_nonzero():
    n = node("NonZero", ["x"], ["y"])
    # A scalar counts as one element at coordinate 0, as ONNX Runtime and NumPy's nonzero have it.
    assert backend.run_node(n, [np.array(5.0, np.float32)])[0].tolist() == [[0]]
    assert backend.run_node(n, [np.array(0.0, np.float32)])[0].shape == (1, 0)
    empty = backend.run_node(n, [np.zeros((3, 0, 2), np.float32)])[0]
    assert empty.shape == (3, 0) and empty.dtype == np.int64


def test_empty_concat_inputs_are_left_out():
    a, b = np.arange(6, dtype=np.int32).reshape(2, 3), np.zeros((2, 0), np.int32)
    (y,) = backend.run_node(node("Concat", ["a", "b", "c"], ["y"], axis=1), [b, a, b])
    assert np.array_equal(y, a)
    (y,) = backend.run_node(node("Concat", ["b", "c"], ["y"], axis=0), [b, b])
    assert y.shape == (4, 0)


def test_non_contiguous_inputs():
    x = np.arange(60, dtype=np.float32).reshape(3, 4, 5).transpose(2, 0, 1)[:, ::2]
    (y,) = backend.run_node(node("Concat", ["a", "b"], ["y"], axis=1), [x, x[:, :1]])
    assert np.array_equal(y, np.concatenate([x, x[:, :1]], 1))
    parts = backend.run_node(node("Split", ["x"], ["p", "q"], axis=0, num_outputs=2), [x])
    assert all(np.array_equal(p, w) for p, w in zip(parts, np.array_split(x, 2, 0), strict=True))
    mask = (np.arange(24).reshape(4, 6) % 3 == 0).T
    (nz,) = backend.run_node(node("NonZero", ["x"], ["y"]), [mask])
    assert np.array_equal(nz, np.argwhere(mask).T)


def test_ranks_past_eight():
    rng = np.random.default_rng(3)
    a, b = rng.random((2, 1, 2, 1, 2, 1, 2, 1, 3, 2)), rng.random((2, 1, 2, 1, 2, 1, 2, 1, 1, 2))
    (y,) = backend.run_node(node("Concat", ["a", "b"], ["y"], axis=8), [a, b])
    assert np.array_equal(y, np.concatenate([a, b], 8))
    parts = backend.run_node(node("Split", ["x", "s"], ["p", "q"], axis=-2), [y, np.array([1, 3])])
    assert np.array_equal(parts[0], y[..., :1, :]) and np.array_equal(parts[1], y[..., 1:, :])
    with pytest.raises(NotImplementedError, match=r"NonZero of shape \[2, 2, 2, 2, 2, 2, 2, 2, 2\]: .* at most 8 dimensions, "
                       "and 9 of these are past one"):
        backend.run_node(node("NonZero", ["x"], ["y"]), [np.ones((2,) * 9, np.float32)])


@pytest.mark.parametrize("shape", [(2, 1, 2, 1, 2, 1, 2, 1, 3, 2), (1,) * 12, (3,) + (1,) * 8, (2,) * 8 + (1,),
                                   (2,) * 9 + (0,), (1,) * 8 + (4, 0)])
def test_nonzero_past_eight_dimensions_leaves_out_those_of_one(shape):
    """A dimension of one has coordinate 0 throughout, so a NonZero input of more than 8 dimensions
    with at most 8 past one runs (it was refused for its rank); an empty one needs no call at all.
    ONNX's reference bit for bit, a non-contiguous view's too."""
    from onnx.reference import ReferenceEvaluator

    model = helper.make_model(helper.make_graph([node("NonZero", ["x"], ["y"])], "g",
                                                [helper.make_tensor_value_info("x", TensorProto.INT8, None)],
                                                [helper.make_tensor_value_info("y", TensorProto.INT64, None)]))
    rng = np.random.default_rng(len(shape))
    for x in (sample("INT8", shape, rng), sample("INT8", shape[::-1], rng).T):
        (y,) = backend.run_node(node("NonZero", ["x"], ["y"]), [x])
        (want,) = ReferenceEvaluator(model).run(None, {"x": x})
        assert y.dtype == want.dtype == np.int64 and y.shape == want.shape and np.array_equal(y, want)


def test_split_rules_by_opset():
    x = np.arange(14, dtype=np.int16).reshape(2, 7)
    uneven = backend.run_node(node("Split", ["x"], ["a", "b", "c"], axis=1, num_outputs=3), [x], opset_version=18)
    assert [p.shape[1] for p in uneven] == [3, 3, 1]
    old = backend.run_node(node("Split", ["x"], ["a", "b"], axis=1, split=[5, 2]), [x], opset_version=11)
    assert np.array_equal(old[0], x[:, :5]) and np.array_equal(old[1], x[:, 5:])
    equal = backend.run_node(node("Split", ["x"], ["a", "b"], axis=0), [x], opset_version=13)
    assert np.array_equal(equal[1], x[1:])
    with pytest.raises(opendml.Error, match="equal parts"):
        backend.run_node(node("Split", ["x"], ["a", "b"], axis=1), [x], opset_version=13)
    with pytest.raises(opendml.Error, match="num_outputs"):
        backend.run_node(node("Split", ["x"], ["a", "b"], axis=1), [x], opset_version=18)
    more = node("Split", ["x"], ["a", "b", "c", "d"], axis=1, num_outputs=3)
    with pytest.raises(opendml.Error, match="num_outputs is 3"):
        backend.run_node(more, [x], opset_version=18)
    with pytest.raises(opendml.Error, match="'split' has 2 sizes but the node has 3 outputs"):
        backend.run_node(node("Split", ["x", "s"], ["a", "b", "c"], axis=1), [x, np.array([3, 4])], opset_version=13)
    with pytest.raises(opendml.Error, match="names 2 inputs but 1 were given"):
        backend.run_node(node("Split", ["x", "s"], ["a", "b"], axis=1), [x])


@pytest.mark.parametrize(
    "op,inputs,attrs,match",
    [
        ("Concat", [np.zeros((2, 2)), np.zeros((2, 2))], {"axis": 2}, "axis 2 is outside"),
        ("Concat", [np.zeros((2, 2)), np.zeros((2, 2))], {"axis": -3}, "axis -3 is outside"),
        ("Concat", [np.zeros((2, 2)), np.zeros((3, 2))], {"axis": 1}, "only axis 1 may differ"),
        ("Concat", [np.zeros((2, 2)), np.zeros((2, 2), np.float32)], {"axis": 0}, "dtype, rank and device"),
        ("Split", [np.zeros((2, 6)), np.array([2, 2])], {"axis": 1}, "add up to 6"),
        ("Split", [np.zeros((2, 6)), np.array([7, -1])], {"axis": 1}, "non-negative"),
        ("Split", [np.zeros((2, 6)), np.array([6])], {"axis": 2}, "axis 2 is outside"),
    ],
)
def test_invalid_nodes_raise_opendml_error(op, inputs, attrs, match):
    names = [f"i{k}" for k in range(len(inputs))]
    outputs = ["y"] if op == "Concat" else [f"o{k}" for k in range(len(inputs[1]))]
    with pytest.raises(opendml.Error, match=match):
        backend.run_node(node(op, names, outputs, **attrs), inputs)


def test_arrays_of_no_onnx_type():
    for x in (np.zeros(3, "datetime64[s]"), np.zeros(3, [("a", np.int32)])):
        with pytest.raises(NotImplementedError, match="no ONNX element type"):
            backend.run_node(node("Concat", ["a"], ["y"], axis=0), [x])
    # Big-endian arrays are said to be so (ONNX Runtime reads their bytes unswapped).
    with pytest.raises(NotImplementedError, match=r">f4 is big-endian; .*astype\('<f4'\)"):
        backend.run_node(node("NonZero", ["a"], ["y"]), [np.array([0.0, 1.0], ">f4")])


def test_unsupported_operators_and_devices():
    relu = helper.make_graph(
        [node("Relu", ["x"], ["y"])], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])]
    )
    with pytest.raises(NotImplementedError, match="Relu"):
        backend.prepare(helper.make_model(relu))
    assert not backend.supports_device("CUDA")
    with pytest.raises(NotImplementedError, match="CUDA"):
        backend.run_node(node("NonZero", ["x"], ["y"]), [np.ones(2)], device="CUDA")
    # Names ONNX has no device for: not supported, as ONNX Runtime's backend says (an AttributeError
    # escaped from onnx's Device).
    for name in ("GPU", "cpu", "TPU", ""):
        assert not backend.supports_device(name)
        with pytest.raises(NotImplementedError, match="runs on the CPU device"):
            backend.run_node(node("NonZero", ["x"], ["y"]), [np.ones(2)], device=name)


def chained_model():
    """Split x into three parts along axis 1 (sizes from an initializer), join them back in reverse
    order along axis -1, and take NonZero of the result."""
    f = TensorProto.FLOAT
    graph = helper.make_graph(
        [
            node("Split", ["x", "sizes"], ["a", "b", "c"], axis=1),
            node("Concat", ["c", "b", "a"], ["joined"], axis=-1),
            node("NonZero", ["joined"], ["where"]),
        ],
        "chain",
        [helper.make_tensor_value_info("x", f, [2, 6])],
        [helper.make_tensor_value_info("joined", f, [2, 6]), helper.make_tensor_value_info("where", TensorProto.INT64, [2, None])],
        [numpy_helper.from_array(np.array([1, 2, 3], np.int64), "sizes")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_a_graph_of_several_nodes():
    x = np.array([[0, 1, 2, 0, 4, 5], [6, 0, 8, 9, 0, 0]], np.float32)
    rep = backend.prepare(chained_model())
    joined, where = rep.run([x])
    expected = np.concatenate([x[:, 3:], x[:, 1:3], x[:, :1]], axis=1)
    assert np.array_equal(joined, expected)
    assert np.array_equal(where, np.argwhere(expected).T)
    assert np.array_equal(rep.run({"x": x})["joined"], expected)
    with pytest.raises(opendml.Error, match="takes 1 inputs, not 2"):
        rep.run([x, x])
    with pytest.raises(opendml.Error, match="input 'x' is INT32 but the model declares FLOAT"):
        rep.run([x.astype(np.int32)])
    with pytest.raises(opendml.Error, match=r"no value for the model inputs \['x'\]"):
        rep.run({})
    # Only graph inputs are taken by name, as ONNX Runtime takes them: not a name the model lacks,
    # nor an initializer that is no graph input (a constant, which a dict replaced).
    for extra in ("y", "sizes"):
        with pytest.raises(opendml.Error, match=r"the model has no inputs named \['%s'\]" % extra):
            rep.run({"x": x, extra: np.array([2, 2, 2], np.int64)})
    # The declared shape, as ONNX Runtime checks it (this model declares [2, 6]).
    for bad in (x.reshape(12), x.reshape(3, 4)):
        with pytest.raises(opendml.Error, match=r"input 'x' has shape \[.*\] but the model declares \[2, 6\]"):
            rep.run([bad])


def test_initializers_that_are_inputs_and_sparse_initializers():
    """An initializer that is also a graph input may be given a value, checked against what the model
    declares; a sparse initializer is the dense array it stands for (it was read as missing: KeyError)."""
    f = TensorProto.FLOAT
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    c = numpy_helper.from_array(np.ones((2, 3), np.float32), "c")
    graph = helper.make_graph([node("Concat", ["x", "c"], ["y"], axis=0)], "g",
                              [helper.make_tensor_value_info(n, f, [2, 3]) for n in ("x", "c")],
                              [helper.make_tensor_value_info("y", f, [4, 3])], [c])
    rep = backend.prepare(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))
    assert np.array_equal(rep.run([x])[0], np.concatenate([x, np.ones((2, 3))]))
    assert np.array_equal(rep.run({"x": x, "c": 2 * x})[0], np.concatenate([x, 2 * x]))
    with pytest.raises(opendml.Error, match=r"input 'c' has shape \[5, 3\] but the model declares \[2, 3\]"):
        rep.run({"x": x, "c": np.ones((5, 3), np.float32)})
    # Indices flat, or as a row of coordinates each ([count, rank]): the two forms ONNX allows.
    for indices in (np.array([0, 4], np.int64), np.array([[0, 0], [1, 1]], np.int64)):
        sparse = helper.make_sparse_tensor(numpy_helper.from_array(np.array([7.0, 5.0], np.float32), "s"),
                                           numpy_helper.from_array(indices, "i"), [2, 3])
        graph = helper.make_graph([node("Concat", ["x", "s"], ["y"], axis=0)], "g", [helper.make_tensor_value_info("x", f, [2, 3])],
                                  [helper.make_tensor_value_info("y", f, [4, 3])], sparse_initializer=[sparse])
        (y,) = backend.prepare(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])).run([x])
        assert np.array_equal(y, np.concatenate([x, [[7, 0, 0], [0, 5, 0]]])), indices.shape


def test_unaligned_arrays_are_taken():
    """A C-contiguous array at an address that is no multiple of its element size, as ONNX Runtime
    takes it (the array layer refused it)."""
    u = np.ndarray((2, 6), np.float32, np.arange(49, dtype=np.uint8).data, 1)
    assert not u.flags.aligned and u.flags.c_contiguous
    (y,) = backend.run_node(node("Concat", ["a", "b"], ["y"], axis=1), [u, u])
    assert same_bits(y, np.concatenate([u, u], 1))
    parts = backend.run_node(node("Split", ["x"], ["p", "q"], axis=1, num_outputs=2), [u], opset_version=18)
    assert all(same_bits(p, w) for p, w in zip(parts, np.split(u, 2, 1), strict=True))
    (where,) = backend.run_node(node("NonZero", ["x"], ["y"]), [u])
    assert np.array_equal(where, np.argwhere(u).T)


def test_what_onnx_runtime_refuses_or_takes_at_the_edges():
    x = np.arange(10, dtype=np.float32).reshape(2, 5)
    # Opset 18's num_outputs gives parts of ceil(size / n) with only the last smaller: 5 in 4 parts
    # would be 2, 2, 1, 0 (ONNX Runtime: "negative final split"); 6 in 4 is 2, 2, 2, 0.
    with pytest.raises(opendml.Error, match="num_outputs 4 does not cut an axis of 5"):
        backend.run_node(node("Split", ["x"], list("abcd"), axis=1, num_outputs=4), [x], opset_version=18)
    parts = backend.run_node(node("Split", ["x"], list("abcd"), axis=1, num_outputs=4), [np.ones((2, 6))], opset_version=18)
    assert [p.shape[1] for p in parts] == [2, 2, 2, 0]
    # The 'split' input is a 1-D int64 tensor, as ONNX Runtime requires.
    for split in (np.array([2, 3], np.int32), np.array([[2, 3]]), np.array(5)):
        with pytest.raises(opendml.Error, match="ONNX takes a 1-D int64 tensor"):
            backend.run_node(node("Split", ["x", "s"], ["a", "b"], axis=1), [x, split], opset_version=13)
    with pytest.raises(opendml.Error, match="not both"):
        backend.run_node(node("Split", ["x", "s"], ["a", "b"], axis=1, num_outputs=2), [x, np.array([2, 3])], opset_version=18)
    # Concat's axis was optional before opset 4, with 1 as its default.
    (y,) = backend.run_node(node("Concat", ["a", "b"], ["y"]), [x, x], opset_version=1)
    assert np.array_equal(y, np.concatenate([x, x], 1))
    # A reversed view (negative strides) is taken as it is (a copy), as ONNX Runtime takes it.
    mask = np.eye(3, dtype=bool)[:, ::-1]
    (where,) = backend.run_node(node("NonZero", ["x"], ["y"]), [mask])
    assert np.array_equal(where, np.argwhere(mask).T)
    with pytest.raises(opendml.Error, match="inputs are missing values"):
        backend.run_node(node("NonZero", ["x"], ["y"]), [None])


def _untouched(shape, dtype=np.uint8):
    """A C-contiguous array of this shape over one element's memory: what Concat and Split fold and
    check before reading, never read here."""
    strides = np.cumprod((1,) + tuple(shape[:0:-1]))[::-1] * np.dtype(dtype).itemsize
    return np.lib.stride_tricks.as_strided(np.zeros(1, dtype), shape=shape, strides=tuple(int(s) for s in strides))


def test_concat_and_split_fold_within_32_bit_sizes(monkeypatch):
    """The dimensions on either side of the axis fold into as few as DirectML's 32-bit sizes allow:
    65536 x 65537 elements on one side were one size past 2^32 - 1, which the array layer refused
    (opendml.Error) for a model ONNX Runtime runs. The arrays are never read: the array layer is
    stood in for."""
    calls = []
    monkeypatch.setattr(opendml, "concat", lambda arrays, axis, out: calls.append(([a.shape for a in arrays], axis, out.shape)))
    monkeypatch.setattr(opendml, "split", lambda x, sizes, axis, out: calls.append((x.shape, sizes, axis, [o.shape for o in out])))
    try:  # 2^32 + 65536 elements before the axis, then after it; one input or part empty (left out)
        backend.run_node(node("Concat", ["a", "b"], ["y"], axis=2), [_untouched((65536, 65537, 1)), np.zeros((65536, 65537, 0), np.uint8)])
        backend.run_node(node("Split", ["x", "s"], ["p", "q"], axis=0), [_untouched((1, 65536, 65537)), np.array([1, 0])])
    except MemoryError:  # the results, allocated and never written
        pytest.skip("no room for 4 GiB of untouched results")
    assert calls == [([(65536, 65537, 1, 1)], 2, (65536, 65537, 1, 1)),
                     ((1, 65536, 65537), [1], 0, [(1, 65536, 65537)])]
    # Below 2^32 elements each side is one size, as before.
    y = np.arange(2 * 3 * 4 * 5, dtype=np.complex128).reshape(2, 3, 4, 5)
    backend.run_node(node("Concat", ["a", "b"], ["y"], axis=1), [y, y])
    assert calls[-1] == ([(2, 3, 40)] * 2, 1, (2, 6, 40))
    # A dimension past 2^32 - 1 is refused before anything is allocated.
    with pytest.raises(NotImplementedError, match="dimension of 4294967297 elements: DirectML's sizes are 32-bit"):
        backend.run_node(node("Concat", ["a", "b"], ["y"], axis=1), [_untouched((2**32 + 1, 1))] * 2)


def test_nonzero_copies_views_whose_strides_pass_32_bits(tmp_path):
    """A view whose step is past 2^32 - 1 elements is copied, as reversed and unaligned ones are (the
    array layer refused it: opendml.Error). A sparse file holds the 4 GiB it spans."""
    path = tmp_path / "sparse"
    with open(path, "wb") as f:
        f.truncate(2**32 + 2)
    whole = np.memmap(path, np.uint8, "r+", shape=(2**32 + 2,))
    whole[2**32 + 1] = 7
    view = whole[:: 2**32 + 1]
    assert view.shape == (2,) and view.strides == (2**32 + 1,)
    (y,) = backend.run_node(node("NonZero", ["x"], ["y"]), [view])
    assert y.tolist() == [[1]]
    del view, whole


def test_nonzero_of_a_dimension_past_32_bits_is_refused_before_allocating():
    # Its coordinates would be 32 GiB; the size is one DirectML cannot take (it raised MemoryError).
    x = np.lib.stride_tricks.as_strided(np.zeros(1, np.uint8), shape=(2**32 + 1,), strides=(0,))
    with pytest.raises(NotImplementedError, match=r"NonZero of shape \[4294967297\]: DirectML's sizes are 32-bit"):
        backend.run_node(node("NonZero", ["x"], ["y"]), [x])


@pytest.mark.parametrize("shape", [(40,), (5, 7), (3, 4, 5), (2, 3, 4), (2, 1, 3, 1, 2, 1, 2, 1), (4, 0, 3), ()])
def test_nonzero_of_a_large_input_runs_in_blocks(monkeypatch, shape):
    """No NONZERO_COORDINATES call writes more than _NONZERO_BLOCK coordinates: its output is the worst
    case, rank rows of one per element (a 1 GiB bool input of rank 3 asked for 24 GiB and raised
    MemoryError). A budget of 12 here stands for 2^26; the blocks' coordinates, put in their places,
    are ONNX's reference's bit for bit, a non-contiguous view's too."""
    from onnx.reference import ReferenceEvaluator

    monkeypatch.setattr(ops, "_NONZERO_BLOCK", 12, raising=False)
    calls, nonzero = [], opendml.nonzero

    def counted(x, **kwargs):
        calls.append(x.size * x.ndim)
        return nonzero(x, **kwargs)

    monkeypatch.setattr(opendml, "nonzero", counted)
    rng = np.random.default_rng(len(shape))
    for x in (sample("FLOAT", shape, rng), sample("BOOL", shape[::-1], rng).T):
        model = helper.make_model(helper.make_graph([node("NonZero", ["x"], ["y"])], "g",
                                                    [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
                                                    [helper.make_tensor_value_info("y", TensorProto.INT64, None)]))
        (y,) = backend.run_node(node("NonZero", ["x"], ["y"]), [x])
        (want,) = ReferenceEvaluator(model).run(None, {"x": x}) if x.ndim else (np.array(np.nonzero(x.reshape(1))),)
        assert y.dtype == want.dtype == np.int64 and y.shape == want.shape and np.array_equal(y, want)
    assert calls and max(calls) <= 12


def test_prepare_takes_a_serialized_model_or_a_path(tmp_path):
    """As onnx.checker and ONNX Runtime's backend take them (the checker passed them, then reading
    the graph raised AttributeError); anything else is a TypeError."""
    model = chained_model()
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    joined = np.concatenate([x[:, 3:], x[:, 1:3], x[:, :1]], axis=1)
    expected = [joined, np.argwhere(joined).T]
    path = tmp_path / "chain.onnx"
    path.write_bytes(model.SerializeToString())
    for given in (model.SerializeToString(), str(path), path):
        got = backend.prepare(given).run([x])
        assert len(got) == 2 and all(np.array_equal(a, b) for a, b in zip(got, expected, strict=True))
    assert np.array_equal(backend.run_model(model.SerializeToString(), [x])[0], expected[0])
    for bad in (None, 5, model.graph):
        with pytest.raises(TypeError, match="takes an onnx.ModelProto, its bytes or a path"):
            backend.prepare(bad)


def test_outputs_that_no_node_makes_are_copies():
    """A graph output that is a graph input or an initializer is returned as a copy, as ONNX Runtime
    returns it: the initializer's own array was returned, so writing to the output changed what every
    later run read, and an input came back as the caller's own array."""
    f = TensorProto.FLOAT
    c = helper.make_tensor("c", f, [2], [1.0, 2.0])  # in float_data: NumPy reads it into a writable array
    graph = helper.make_graph([node("NonZero", ["x"], ["y"])], "g", [helper.make_tensor_value_info("x", f, [2])],
                              [helper.make_tensor_value_info(n, t, s) for n, t, s in (("y", TensorProto.INT64, [1, None]), ("c", f, [2]), ("x", f, [2]))],
                              [c])
    rep = backend.prepare(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))
    x = np.array([0.0, 3.0], np.float32)
    _, c_out, x_out = rep.run([x])
    assert x_out is not x and np.array_equal(x_out, x)
    c_out[0] = 99.0
    x_out[0] = 99.0
    assert rep.run([x])[1].tolist() == [1.0, 2.0] and x.tolist() == [0.0, 3.0]


def test_graph_inputs_that_are_no_tensors_are_refused():
    """NonZero, Concat and Split take tensors: a sequence fed to Concat was stacked into one array by
    NumPy and joined ([2, 2, 5] for two [2, 5] tensors), a model ONNX Runtime refuses."""
    f = TensorProto.FLOAT
    inputs = [helper.make_tensor_sequence_value_info("x", f, [2, 5]), helper.make_sparse_tensor_value_info("x", f, [2, 5]),
              helper.make_value_info("x", helper.make_optional_type_proto(helper.make_tensor_type_proto(f, [2, 5])))]
    for given in inputs:
        graph = helper.make_graph([node("Concat", ["x", "x"], ["y"], axis=0)], "g", [given], [helper.make_tensor_value_info("y", f, [4, 5])])
        with pytest.raises(NotImplementedError, match=r"graph input 'x' is a (sequence|sparse_tensor|optional); opendml.onnx takes tensors"):
            backend.prepare(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))


def test_errors_in_a_model_name_the_node():
    """What a node of a model refuses names that node (its name, where it has one, and its outputs),
    as ONNX Runtime names the node it was running; the message named only the operator, which two
    nodes of a model can share."""
    f = TensorProto.FLOAT
    graph = helper.make_graph(
        [node("Split", ["x", "s"], ["a", "b"], axis=1, name="first"), node("Split", ["x", "t"], ["c", "d"], axis=0),
         node("NonZero", ["x"], ["y"], name="where")],
        "g", [helper.make_tensor_value_info(n, t, s) for n, t, s in (("x", f, [2, 6]), ("s", TensorProto.INT64, [2]), ("t", TensorProto.INT64, [2]))],
        [helper.make_tensor_value_info(n, f, [None, None]) for n in "abcd"] + [helper.make_tensor_value_info("y", TensorProto.INT64, [2, None])])
    rep = backend.prepare(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))
    x, good = np.ones((2, 6), np.float32), np.array([1, 1], np.int64)
    with pytest.raises(opendml.Error, match=r"add up to 6, .* \(in the Split node 'first' of outputs \['a', 'b'\]\)$"):
        rep.run([x, np.array([2, 2], np.int64), good])
    with pytest.raises(opendml.Error, match=r"add up to 2, .* \(in the Split node of outputs \['c', 'd'\]\)$"):
        rep.run([x, np.array([2, 4], np.int64), np.array([2, 2], np.int64)])
    # The class stays: a refused element type is still a NotImplementedError.
    graph.input[0].type.tensor_type.elem_type = TensorProto.DOUBLE
    for n in "abcd":
        graph.output["abcd".index(n)].type.tensor_type.elem_type = TensorProto.DOUBLE
    rep = backend.prepare(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))
    with pytest.raises(NotImplementedError, match=r"NonZero of DOUBLE: .* \(in the NonZero node 'where' of outputs \['y'\]\)$"):
        rep.run([x.astype(np.float64), np.array([2, 4], np.int64), good])


def test_object_arrays_of_no_strings_are_not_called_strings():
    """An object array is an ONNX STRING tensor only when it holds strings: None given for an input was
    said to be STRING where the model declares FLOAT, and Python ints in one were refused as strings."""
    rep = backend.prepare(chained_model())
    with pytest.raises(NotImplementedError, match=r"NumPy's object array holding NoneType is no ONNX element type"):
        rep.run({"x": None})
    with pytest.raises(NotImplementedError, match=r"NumPy's object array holding int is no ONNX element type"):
        backend.run_node(node("Concat", ["a"], ["y"], axis=0), [np.array([1, 2], object)])
    with pytest.raises(NotImplementedError, match="Concat of STRING"):
        backend.run_node(node("Concat", ["a"], ["y"], axis=0), [np.array(["a", b"b"], object)])
