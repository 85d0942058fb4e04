"""ONNX's NonZero, Concat and Split on NumPy arrays, each one call of opendml's array layer (NonZero of a
large input one a block).

The mapping follows ONNX Runtime's DirectML provider: NonZero is NONZERO_COORDINATES in the
transposed ([rank, M]) layout with the host reading the count to cut the output to [rank, count]
(a large input in blocks, as M is the worst case: every element nonzero);
Concat is JOIN and Split is SPLIT (the array layer leaves empty pieces out, as DirectML has no
empty tensors).
docs/python.md describes the layer and the element types it cannot take.
"""

import math

import numpy as np
import opendml
from onnx import TensorProto, helper

from .._shapes import join_shape, normalize_axis, split_shapes

# ONNX element types NonZero cannot take, with the reason (docs/python.md lists the same).
_NO_ZERO_TEST_REASON_FLOAT = "DirectML has no float type of this width, and -0.0 has a bit set, so an integer test would count it"
NONZERO_UNSUPPORTED = {
    "STRING": "strings are not fixed-width values; DirectML has no string type",
    "DOUBLE": "NONZERO_COORDINATES takes no 64-bit input, and -0.0 has a bit set, so no integer test stands in",
    "INT64": "NONZERO_COORDINATES takes no 64-bit input",
    "UINT64": "NONZERO_COORDINATES takes no 64-bit input",
    "COMPLEX64": "DirectML has no complex type; an element is zero only when both halves are",
    "COMPLEX128": "DirectML has no complex type; an element is zero only when both halves are",
    "FLOAT8E4M3FN": _NO_ZERO_TEST_REASON_FLOAT,
    "FLOAT8E5M2": _NO_ZERO_TEST_REASON_FLOAT,
    "FLOAT4E2M1": _NO_ZERO_TEST_REASON_FLOAT,
    "FLOAT6E2M3": _NO_ZERO_TEST_REASON_FLOAT,
    "FLOAT6E3M2": _NO_ZERO_TEST_REASON_FLOAT,
    "FLOAT8E8M0": "it has no zero at all, while every DirectML type counts the bits 0x00 as zero",
}
# Concat and Split move bits, so any fixed-width type moves as an unsigned integer of its width.
MOVE_UNSUPPORTED = {"STRING": NONZERO_UNSUPPORTED["STRING"]}

# NumPy cannot hand these ml_dtypes types over through DLPack; NONZERO_COORDINATES tests them through
# the bits of a DirectML type whose zero test gives the same answer (docs/python.md, "Element types").
ZERO_TEST_AS = {
    # Zero exactly when every bit but the sign bit is clear, as in float16.
    "bfloat16": np.float16,
    # Their only zero is 0x00 (0x80 is their NaN).
    "float8_e4m3fnuz": np.uint8,
    "float8_e5m2fnuz": np.uint8,
    # One element a byte, the value in the low bits; zero is 0x00.
    "int4": np.uint8,
    "uint4": np.uint8,
    "int2": np.uint8,
    "uint2": np.uint8,
}

# DirectML's operators take at most 8 dimensions. Concat and Split fold the dimensions on either side
# of the axis, each side into as few as 32-bit sizes allow (one, below 2^32 elements; at most three
# for any array that fits in memory).
_MAX_RANK = 8
_MAX_SIZE = 2**32 - 1

# NONZERO_COORDINATES writes into its worst case, a coordinate row per element, before the count is
# known: 8 * rank bytes of int64 per input element (a 1 GiB bool input of rank 3 asked for 24 GiB).
# A larger input runs in row-major blocks of at most this many coordinates each (docs/python.md).
_NONZERO_BLOCK = 2**26


def type_name(x: np.ndarray) -> str:
    """The ONNX element type name (TensorProto.DataType) of an array."""
    if x.dtype.kind in "SU":
        return "STRING"
    if x.dtype.kind == "O":  # ONNX's strings, or values of no ONNX type (None, Python ints)
        for v in x.flat:
            if not isinstance(v, (str, bytes)):
                raise opendml.UnsupportedError(f"opendml.onnx: NumPy's object array holding {type(v).__name__} is no ONNX element type")
        return "STRING"
    try:
        return TensorProto.DataType.Name(helper.np_dtype_to_tensor_dtype(x.dtype))
    except (KeyError, TypeError, ValueError):
        if x.dtype.byteorder == ">" and x.dtype.newbyteorder("<") != x.dtype:  # ONNX's tensors are little-endian
            raise opendml.UnsupportedError(f"opendml.onnx: NumPy's {x.dtype} is big-endian; ONNX tensors are "
                                           f"little-endian (pass x.astype('{x.dtype.newbyteorder('<').str}'))") from None
        raise opendml.UnsupportedError(f"opendml.onnx: NumPy's {x.dtype} is no ONNX element type") from None


def _check_type(op: str, x: np.ndarray, unsupported: dict) -> None:
    name = type_name(x)
    if name in unsupported:
        raise opendml.UnsupportedError(f"opendml.onnx: {op} of {name}: {unsupported[name]}")


def _fold(op: str, dims) -> list:
    """Adjacent dimensions merged while their product fits one of DirectML's 32-bit sizes: all of them
    into one below 2^32 elements, at most three for any array that fits in memory."""
    folded = []
    for d in dims:
        if folded and folded[-1] * d <= _MAX_SIZE:
            folded[-1] *= d
        else:
            folded.append(d)
    if any(d > _MAX_SIZE for d in folded):
        raise opendml.UnsupportedError(f"opendml.onnx: {op} of a dimension of {max(folded)} elements: DirectML's "
                                       "sizes are 32-bit (at most 2^32 - 1)")
    return folded


def _layout(op: str, shape, axis: int, dtype: np.dtype) -> tuple:
    """The unsigned word type that moves dtype's elements, and the folded dimensions before and after
    axis of a non-empty array of this shape. JOIN and SPLIT move bits, so one path serves every type
    and rank (complex128 moves as pairs of 64-bit words, the last dimension after axis). The arrays of
    one call fold alike, as they differ only along axis."""
    width = math.gcd(dtype.itemsize, 8)
    _fold(op, [shape[axis]])
    return np.dtype(f"u{width}"), _fold(op, shape[:axis]), _fold(op, list(shape[axis + 1 :]) + [dtype.itemsize // width])


def _words(x: np.ndarray, axis: int, layout: tuple) -> np.ndarray:
    """x as _layout's words, [before..., x.shape[axis], after...]."""
    word, before, after = layout
    x = np.require(x, requirements=["C", "A"])  # an unaligned array too is copied (the array layer wants aligned ones)
    return x.reshape(x.shape + (1,)).view(word).reshape(before + [x.shape[axis]] + after)


def nonzero(x: np.ndarray) -> np.ndarray:
    """ONNX NonZero: int64 [rank, count], the coordinates of the non-zero elements in row-major order."""
    x = np.asarray(x)
    _check_type("NonZero", x, NONZERO_UNSUPPORTED)
    if x.ndim > _MAX_RANK:
        # A dimension of one has coordinate 0 throughout: left out of the call, its row is zeros (of
        # all ones, the last stays, so that what is left is no scalar).
        kept = [d for d, n in enumerate(x.shape) if n != 1] or [x.ndim - 1]
        if len(kept) > _MAX_RANK and x.size:
            raise opendml.UnsupportedError(f"opendml.onnx: NonZero of shape {list(x.shape)}: NONZERO_COORDINATES takes "
                                           f"at most 8 dimensions, and {len(kept)} of these are past one")
        found = nonzero(x.reshape([x.shape[d] for d in kept])) if x.size else np.empty((len(kept), 0), np.int64)
        coords = np.zeros((x.ndim, found.shape[1]), np.int64)
        coords[kept] = found
        return coords
    # DirectML's strides are unsigned and 32-bit (in elements): a reversed view, or one whose steps
    # reach past 2^32 - 1 elements, is copied, as an unaligned one is.
    if x.size and any(n > _MAX_SIZE for n in x.shape):
        raise opendml.UnsupportedError(f"opendml.onnx: NonZero of shape {list(x.shape)}: DirectML's sizes are 32-bit "
                                       "(at most 2^32 - 1)")
    if not x.flags.aligned or any(n > 1 and (s < 0 or s // x.itemsize > _MAX_SIZE) for n, s in zip(x.shape, x.strides)):
        x = np.require(x, requirements=["C", "A"])
    view = x.view(ZERO_TEST_AS.get(x.dtype.name, x.dtype)).reshape(x.shape or (1,))
    # A scalar is one element at coordinate 0 ([1, count]), as ONNX Runtime and NumPy have it.
    per_call = max(1, _NONZERO_BLOCK // view.ndim)
    if view.size <= per_call:
        return _found(view)
    # Blocks: spans of the first axis k whose trailing rows fit a call, at each index before it, in
    # row-major order; each block's coordinates are its own, so its place is added to them.
    k = next(k for k in range(view.ndim) if math.prod(view.shape[k + 1 :]) <= per_call)
    span = per_call // math.prod(view.shape[k + 1 :])
    parts = []
    for index in np.ndindex(*view.shape[:k]):
        for start in range(0, view.shape[k], span):
            part = _found(view[tuple(slice(i, i + 1) for i in index) + (slice(start, start + span),)])
            part[:k] += np.array(index, np.int64).reshape(k, 1)
            part[k] += start
            parts.append(part)
    return np.concatenate(parts, axis=1)


def _found(x: np.ndarray) -> np.ndarray:
    """NONZERO_COORDINATES of x: int64 [rank, count], copied out of the worst-case [rank, x.size] (a view
    would keep all of it alive)."""
    # int64, as ONNX asks, through opendml's 64-bit indices extension (which also takes inputs past
    # 2^32 - 1 elements).
    coords, count = opendml.nonzero(x, transposed=True, index_dtype="int64")
    return coords[:, : int(count[0])].copy()


def concat(inputs: list, axis: int) -> np.ndarray:
    """ONNX Concat: the inputs joined along axis (negative counts from the end)."""
    inputs = [np.asarray(x) for x in inputs]
    shape = join_shape("opendml.onnx: Concat", inputs, axis)
    _check_type("Concat", inputs[0], MOVE_UNSUPPORTED)
    axis = normalize_axis("Concat", axis, len(shape))
    if math.prod(shape) == 0:  # DirectML has no empty tensors
        return np.empty(shape, inputs[0].dtype)
    layout = _layout("Concat", shape, axis, inputs[0].dtype)  # before allocating: it refuses what DirectML cannot take
    out = np.empty(shape, inputs[0].dtype)
    opendml.concat([_words(x, axis, layout) for x in inputs if x.size], axis=len(layout[1]), out=_words(out, axis, layout))
    return out


def split(x: np.ndarray, sizes: list, axis: int) -> list:
    """ONNX Split: x cut along axis into parts of the given sizes (which may be 0)."""
    x = np.asarray(x)
    _check_type("Split", x, MOVE_UNSUPPORTED)
    shapes = split_shapes("opendml.onnx: Split", x.shape, sizes, axis)
    axis = normalize_axis("Split", axis, x.ndim)
    layout = _layout("Split", x.shape, axis, x.dtype) if x.size else None  # before allocating
    outs = [np.empty(shape, x.dtype) for shape in shapes]
    if x.size == 0:
        return outs
    parts = [o for o in outs if o.size]  # empty parts take no part: DirectML has no empty tensors
    opendml.split(_words(x, axis, layout), [o.shape[axis] for o in parts], axis=len(layout[1]),
                  out=[_words(o, axis, layout) for o in parts])
    return outs
