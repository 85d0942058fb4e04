"""Result shapes of concat and split for the ONNX and PyTorch layers, checked the way NumPy does
(negative axes count from the end; empty parts allowed). The layers need them before the array
layer runs: PyTorch's fake implementations have no array layer, and both layers hand the array
layer unsigned-integer views of their elements, in which two element types of one width look
alike, so the types are compared here. The array layer (python/src/arrays.cpp) checks the same rules
on the arrays it is handed; these stay in Python because under torch.compile(dynamic=True) the sizes
are SymInts, which a call into C++ would turn into fixed values (and a recompilation per shape)."""

import operator

import opendml


def normalize_axis(op: str, axis: int, rank: int) -> int:
    # An int, a NumPy integer or 0-d integer array, or torch's SymInt (not made concrete here).
    if type(axis).__name__ != "SymInt":
        try:
            axis = operator.index(axis)
        except TypeError:  # also arrays of more than one element, or of floats, which have __index__
            raise opendml.Error(f"{op}: axis is a {type(axis).__name__} ({axis!r}); it must be an integer") from None
    if not -rank <= axis < rank:
        raise opendml.Error(f"{op}: axis {axis} is outside [{-rank}, {rank - 1}] for rank {rank}")
    return axis % rank


def join_shape(op: str, inputs, axis: int) -> list:
    """The shape of the inputs (NumPy arrays or tensors) joined along axis."""
    if not inputs:
        raise opendml.Error(f"{op}: needs at least one input")
    first = inputs[0]
    axis = normalize_axis(op, axis, first.ndim)
    def described(x):  # torch tensors have a device; the stand-ins of opendml.jax and .distributed none
        device = getattr(x, "device", None)
        return f"{x.dtype} {list(x.shape)}" + ("" if device is None else f" on {device}")

    for i, x in enumerate(inputs):
        if x.dtype != first.dtype or x.ndim != first.ndim or getattr(x, "device", None) != getattr(first, "device", None):
            raise opendml.Error(f"{op}: input {i} is {described(x)} but input 0 is {described(first)}; dtype, rank and device must match")
        if any(a != b for d, (a, b) in enumerate(zip(x.shape, first.shape)) if d != axis):
            raise opendml.Error(f"{op}: input {i} has shape {list(x.shape)} but input 0 has {list(first.shape)}; only axis {axis} may differ")
    shape = list(first.shape)
    shape[axis] = sum(x.shape[axis] for x in inputs)
    return shape


def split_shapes(op: str, shape, sizes, axis: int) -> list:
    """The shapes of the parts of the given sizes along axis."""
    axis = normalize_axis(op, axis, len(shape))
    sizes = list(sizes)
    if any(s < 0 for s in sizes) or sum(sizes) != shape[axis]:
        raise opendml.Error(f"{op}: sizes {sizes} must be non-negative and add up to {shape[axis]}, the size of axis {axis}")
    return [tuple(shape[:axis]) + (s,) + tuple(shape[axis + 1 :]) for s in sizes]


def chunk_sizes(size: int, count: int) -> list:
    """A size cut into `count` parts the way torch.chunk, DTensor's Shard and ONNX's Split with
    num_outputs cut it: parts of ceil(size / count), the last ones smaller or empty."""
    if count < 1:
        raise opendml.Error(f"chunk_sizes: count is {count}; a size is cut into one part or more")
    chunk = -(-size // count)
    return [max(0, min(size, (r + 1) * chunk) - r * chunk) for r in range(count)]


def equal_parts(op: str, axis_size: int, count: int) -> list:
    if count <= 0 or axis_size % count:
        raise opendml.Error(f"{op}: axis size {axis_size} does not split into {count} equal parts")
    return [axis_size // count] * count
