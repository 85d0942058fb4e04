"""opendml's three operators as PyTorch custom operators (torch.library).

Each operator has a fake implementation whose output shapes follow from the input shapes alone:
NONZERO_COORDINATES writes DirectML's worst case, one coordinate row per element, and leaves the
number of valid rows on the device. So torch.compile traces a function that uses them into one
graph (torch.nonzero's data-dependent shape breaks it), and on CUDA they run on torch's current
stream without waiting for the host (the array layer sees to both), which lets torch.cuda.graph
capture and replay them.
docs/python.md describes this layer.

    coords, count = opendml.torch.nonzero(mask)      # coords [mask.numel(), mask.dim()] int64
    y = opendml.torch.join([a, b], axis=0)           # torch.cat
    parts = opendml.torch.split(y, [2, 3], axis=0)   # torch.split, the parts are copies
"""

import functools
import numbers
import operator
from collections.abc import Sequence
from typing import List, Optional

import opendml
import torch

from ._frameworks import framework_of
from ._shapes import equal_parts, join_shape, normalize_axis, split_shapes

__all__ = ["nonzero", "join", "split"]

# The operators are defined and implemented through torch.library.Library, the dispatcher's own
# registration: a call goes from torch.ops straight to the kernel below, without the Python layers
# that torch.library.custom_op adds to every call (docs/python.md). The fake implementations and
# the autograd formulas are registered as custom_op would.
_lib = torch.library.Library("opendml", "DEF")
_lib.define("nonzero_coordinates(Tensor x, SymInt? columns=None, int[]? offsets=None, int? fill=None) -> (Tensor, Tensor)")
_lib.define("join(Tensor[] inputs, SymInt axis) -> Tensor")
_lib.define("split(Tensor x, SymInt[] sizes, SymInt axis) -> Tensor[]")


def _impl(name):
    """Registers the kernel for every backend, below autograd (as custom_op does)."""

    def register(kernel):
        _lib.impl(name, kernel, "CompositeExplicitAutograd")
        return kernel

    return register


# The public functions below call their kernel directly where the dispatcher would do nothing but
# hand it the same arguments: in eager mode, with plain tensors that need no gradient. Through the
# dispatcher, a Python kernel costs two calls into Python and back (the autograd kernel, then this
# one), several times the work on the host (docs/python.md). Everything that traces, transforms or
# records a call, and every tensor that the dispatcher would treat specially, takes torch.ops.
_Tensor = torch.Tensor
_is_compiling = torch.compiler.is_compiling  # first: torch.compile traces it as True, and no further
_tracing_state = torch._C._get_tracing_state
_function_mode = torch._C._is_torch_function_mode_enabled
_dispatch_modes = torch._C._len_torch_dispatch_stack
_transform = torch._C._functorch.peek_interpreter_stack
_profiling = torch._C._autograd._profiler_enabled
_grad_enabled = torch.is_grad_enabled
# forward_ad's level (-1 outside dual_level()) and a tensor's tangent, as the array layer reads them.
_torch_adapter = framework_of(torch.Tensor)
_forward_level = (functools.partial(getattr, _torch_adapter.forward_ad, "_current_level")
                  if _torch_adapter.forward_ad is not None else lambda: -1)
_tangent_of = _torch_adapter.tangent_of
_JVP = torch._C._functorch.TransformType.Jvp


def _eager(tensors) -> bool:
    """Whether calling a kernel directly on these tensors does what torch.ops would: nothing traces
    or transforms the call (torch.compile, torch.jit.trace, a torch function or dispatch mode, a
    functorch transform, the profiler), and every tensor is a torch.Tensor itself on the CPU or
    CUDA, with no gradient to record and no lazy negation or conjugation to resolve first."""
    if (_is_compiling() or _tracing_state() is not None or _function_mode() or _dispatch_modes()
            or _transform() is not None or _profiling() or _forward_level() >= 0):
        return False
    grad = _grad_enabled()
    for t in tensors:
        if (type(t) is not _Tensor or (grad and t.requires_grad) or t.is_neg() or t.is_conj()
                or not (t.is_cuda or t.is_cpu)):
            return False
    return True


def _no_forward_mode(op: str, tensors) -> None:
    """NotImplementedError where forward-mode AD would carry a tangent through join or split
    (torch.func.jvp, jacfwd, torch.autograd.forward_ad): torch drops the tangents of an operator whose
    gradient comes from register_autograd, so they came out as zeros, silently (docs/python.md)."""
    if _is_compiling():
        return
    # Anywhere in functorch's stack: jvp(functionalize(f)) has jvp below the top.
    if (_transform() is not None and any(i.key() == _JVP for i in torch._C._functorch.get_interpreter_stack())) or (
            _forward_level() >= 0
            and any(_tangent_of(t) is not None for t in tensors if isinstance(t, _Tensor))):
        raise NotImplementedError(f"{op}: forward-mode AD (torch.func.jvp, jacfwd, torch.autograd.forward_ad) "
                                  "would drop the tangents; use reverse mode (backward, torch.autograd.grad)")


# JOIN and SPLIT move bits (docs/decisions.md). The array layer takes the types below as they are;
# every other type goes through the unsigned integer of its width: one path for float8 and
# complex64 as for the types DirectML names.
_DIRECT = {torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16,
           torch.bfloat16, torch.float32, torch.float64}
_UNSIGNED = {1: torch.uint8, 2: torch.uint16, 4: torch.uint32, 8: torch.uint64}


def _not_quantized(x: torch.Tensor) -> None:
    if x.is_quantized:  # its bits mean nothing without the quantizer, which a new tensor would not carry
        raise opendml.UnsupportedError(f"opendml.torch: {x.dtype} is a quantized type; dequantize() it first")


def _strided(op: str, name: str, tensors) -> None:
    """opendml.UnsupportedError for a sparse, nested or other non-strided tensor among `tensors`, named
    `name`: the array layer reads tensors through DLPack, whose export refused them in torch's words
    (an opendml.Error, or torch's RuntimeError where a nested tensor's shape was read first). Called
    where a call has failed, so that the calls that work pay nothing for it."""
    for t in tensors:
        if isinstance(t, torch.Tensor) and (t.is_nested or t.layout != torch.strided):
            kind = "nested" if t.is_nested else str(t.layout)
            raise opendml.UnsupportedError(f"{op}: {name} is a {kind} tensor; opendml takes strided ones")


def _bits(x: torch.Tensor) -> torch.Tensor:
    if x.dtype in _DIRECT:
        return x
    _not_quantized(x)
    if x.element_size() not in _UNSIGNED:
        raise opendml.UnsupportedError(f"opendml.torch: {x.dtype} elements are {x.element_size()} bytes; JOIN and SPLIT move elements of 1, 2, 4 or 8 bytes")
    return x.view(_UNSIGNED[x.element_size()])


# ---- nonzero coordinates -------------------------------------------------------------------------


def _coordinates_shape(x: torch.Tensor, columns: Optional[int], offsets: Optional[List[int]]) -> tuple:
    """The coordinates' shape, with the array layer's rules for columns and offsets checked here too:
    the fake implementation has no array layer, and a 0-d x never reaches it."""
    op = "opendml.torch.nonzero"
    n = x.dim() if columns is None else columns
    if x.dim() == 0:
        if n:
            raise opendml.Error(f"{op}: columns is {columns} but a 0-d x has no coordinates")
        if offsets:
            raise opendml.Error(f"{op}: a 0-d x has no coordinate columns to offset")
    elif not 1 <= n <= x.dim():
        raise opendml.Error(f"{op}: columns is {n}; coordinates have 1 to x.dim() ({x.dim()}) columns")
    if offsets is not None and x.dim() and len(offsets) != n:
        raise opendml.Error(f"{op}: offsets has {len(offsets)} values; it needs one a column ({n})")
    return (x.numel(), n)


@_impl("nonzero_coordinates")
def _nonzero_coordinates(x: torch.Tensor, columns: Optional[int] = None, offsets: Optional[List[int]] = None,
                         fill: Optional[int] = None):
    """DML_OPERATOR_NONZERO_COORDINATES: int64 coordinates [x.numel(), columns] (default x.dim())
    of the non-zero elements in row-major order, and their count, int64 [1], on x's device. Rows
    at or past the count are unspecified, or hold fill in every column (opendml's fill rows
    extension). offsets: added to each column's coordinates (opendml's coordinate offsets
    extension)."""
    _not_quantized(x)  # as join and split refuse it (the array layer's DLPack export raised a ValueError)
    try:
        shape = _coordinates_shape(x, columns, offsets)
        if x.dim() == 0:
            # DirectML tensors have a dimension; a scalar has only a count (and torch.nonzero gives
            # [count, 0] coordinates too), which the kernel counts as one element, checking its type
            # and fill as for any other x.
            _, count = opendml.nonzero(x.reshape(1), index_dtype="int64", fill=fill)
            return x.new_empty(shape, dtype=torch.int64), count
        # int64, as torch indexes, through opendml's 64-bit indices extension; the array layer
        # allocates both outputs on x's device.
        return opendml.nonzero(x, columns=columns, index_dtype="int64", offsets=offsets, fill=fill)
    except Exception:
        _strided("opendml.torch.nonzero", "x", [x])
        raise


try:  # the modes that torch.compile, opcheck and FakeTensorMode trace under, set aside
    from torch.utils._python_dispatch import _disable_current_modes as _no_dispatch_modes
except ImportError:  # pragma: no cover
    _no_dispatch_modes = None


def _as_kernels_would(kind: str, dtype, shapes, *args) -> None:
    """The kernel itself, on the CPU, on stand-ins of these shapes cut to 2 elements a dimension, so
    that a fake implementation refuses what the kernel would (element types, DirectML's ranks,
    NONZERO's columns, offsets and fill) with its messages, without rules of its own. Shapes of
    SymInts (torch.compile(dynamic=True)) are left to the kernel when it runs: cutting them would
    make them concrete."""
    concrete = all(type(a) in (int, tuple, type(None)) for a in args)  # not SymInts either
    if concrete and all(isinstance(n, int) for shape in shapes for n in shape):
        _kernel_on_stand_ins(kind, dtype, tuple(tuple(min(n, 2) for n in shape) for shape in shapes), args)


@functools.lru_cache(maxsize=256)
def _kernel_on_stand_ins(kind: str, dtype, shapes, args) -> None:
    if _no_dispatch_modes is None:  # a torch without it: the kernel checks when it runs
        return
    with _no_dispatch_modes():  # real tensors, not the fake (or functional) ones of the tracing modes
        try:
            xs = [torch.zeros(shape, dtype=dtype) for shape in shapes]
        except RuntimeError:  # a type torch makes no zeros of (quantized): the kernel refuses it when it runs
            return
        _stand_ins_through(kind, xs, args)


def _stand_ins_through(kind: str, xs, args) -> None:
    if kind == "nonzero":
        columns, offsets, fill = args
        _nonzero_coordinates(xs[0], columns, None if offsets is None else list(offsets), fill)
    elif kind == "join":
        _join(xs, *args)
    else:  # split: parts of 0 or 1 along an axis of as many
        sizes, axis = args
        (x,) = xs
        d = normalize_axis("opendml.torch.split", axis, x.dim())
        parts = [min(n, 1) for n in sizes]
        _split(torch.zeros(x.shape[:d] + (sum(parts),) + x.shape[d + 1:], dtype=x.dtype), parts, axis)


@torch.library.register_fake("opendml::nonzero_coordinates")
def _(x, columns=None, offsets=None, fill=None):
    shape = _coordinates_shape(x, columns, offsets)
    _as_kernels_would("nonzero", x.dtype, [x.shape], columns, None if offsets is None else tuple(offsets), fill)
    return x.new_empty(shape, dtype=torch.int64), x.new_empty(1, dtype=torch.int64)


def nonzero(
    x: torch.Tensor,
    *,
    columns: Optional[int] = None,
    fill_value: Optional[int] = None,
    offsets: Optional[Sequence[int]] = None,
):
    """(coords, count) of opendml::nonzero_coordinates: int64 coordinates [x.numel(), columns]
    (default x.dim()) of the non-zero elements in row-major order, and their count, int64 [1], on
    x's device. With fill_value, the rows past the count hold fill_value (as torch.nonzero_static
    pads), written by the kernel in the same pass as the others (opendml's fill rows extension);
    without it they are unspecified. offsets:
    an integer per column added to every coordinate as it is written (the coordinates of a shard in
    the whole tensor; opendml's coordinate offsets extension)."""
    op = "opendml.torch.nonzero"
    # Both paths take what the operator's schema takes: integers, and one for every column's fill.
    offsets = None if offsets is None else _listed(op, "offsets", offsets, "a sequence of integers")
    if offsets:
        _integers(op, offsets=offsets)
    if (columns is None or type(columns) is int) and (fill_value is None or type(fill_value) is int) and _eager((x,)):
        return _nonzero_coordinates(x, columns, offsets, fill_value)
    _tensors(op, "x", [x])
    _integers(op, optional=True, columns=columns, fill_value=fill_value)
    return torch.ops.opendml.nonzero_coordinates(x, columns, offsets, fill_value)


# ---- join and split ------------------------------------------------------------------------------


@_impl("join")
def _join(inputs, axis):
    """DML_OPERATOR_JOIN: the inputs concatenated along axis (negative counts from the end)."""
    if inputs and inputs[0].dtype in _DIRECT and all(t.dtype == inputs[0].dtype for t in inputs):
        try:
            return opendml.concat(inputs, axis)  # allocates the result like inputs[0]
        except opendml.Error:
            _strided("opendml.torch.join", "an input", inputs)
            join_shape("opendml.torch.join", inputs, axis)  # the message in torch's terms, where it has one
            raise
    _strided("opendml.torch.join", "an input", inputs)  # before their shapes are read
    # Types of one width look alike as bits (and to the array layer), so join_shape compares them.
    shape = join_shape("opendml.torch.join", inputs, axis)  # raises first for no inputs
    out = inputs[0].new_empty(shape)
    opendml.concat([_bits(t) for t in inputs], axis, out=_bits(out))
    return out


@torch.library.register_fake("opendml::join")
def _(inputs, axis):
    shape = join_shape("opendml.torch.join", inputs, axis)
    _as_kernels_would("join", inputs[0].dtype, [t.shape for t in inputs], axis)
    return inputs[0].new_empty(shape)


@_impl("split")
def _split(x, sizes, axis):
    """DML_OPERATOR_SPLIT: x cut along axis into new tensors of the given sizes."""
    if not sizes:  # no parts of an axis of size 0, as torch.split gives them (the array layer wants one)
        split_shapes("opendml.torch.split", x.shape, sizes, axis)
        return []
    if x.dtype in _DIRECT:
        try:
            return opendml.split(x, list(sizes), axis)  # allocates the parts like x
        except opendml.Error:
            _strided("opendml.torch.split", "x", [x])
            split_shapes("opendml.torch.split", x.shape, sizes, axis)  # the message in torch's terms, where it has one
            raise
    _strided("opendml.torch.split", "x", [x])  # before its shape is read
    outs = [x.new_empty(shape) for shape in split_shapes("opendml.torch.split", x.shape, sizes, axis)]
    opendml.split(_bits(x), list(sizes), axis, out=[_bits(o) for o in outs])
    return outs


@torch.library.register_fake("opendml::split")
def _(x, sizes, axis):
    shapes = split_shapes("opendml.torch.split", x.shape, sizes, axis)
    if all(isinstance(n, int) for n in sizes):
        _as_kernels_would("split", x.dtype, [x.shape], tuple(sizes), axis)
    return [x.new_empty(shape) for shape in shapes]


# JOIN and SPLIT are each other's gradient.
def _setup_join(ctx, inputs, output):
    tensors, ctx.axis = inputs
    ctx.sizes = [t.shape[normalize_axis("opendml.torch.join", ctx.axis, t.dim())] for t in tensors]


def _join_backward(ctx, grad):
    return torch.ops.opendml.split(grad, ctx.sizes, ctx.axis), None


def _setup_split(ctx, inputs, output):
    ctx.axis = inputs[2]


def _split_backward(ctx, grads):
    return torch.ops.opendml.join(list(grads), ctx.axis), None, None


torch.library.register_autograd("opendml::join", _join_backward, setup_context=_setup_join)
torch.library.register_autograd("opendml::split", _split_backward, setup_context=_setup_split)


def _is_integer(v) -> bool:
    """Whether v is one integer as the operators' schema takes it: Python's or NumPy's, a SymInt, or a
    0-d integer array or tensor. Not a bool, nor a 0-d bool or float array or tensor, nor an array
    with dimensions: those have __index__ too (the bool ones and one-element ones answer it), and
    the dispatcher took them, truncated a float (fill_value 1.5 as 1) or failed an internal assert."""
    if isinstance(v, bool):
        return False
    # First, and without reading an attribute: what torch.compile traces, where a SymInt is an int
    # and a NumPy integer an ndarray whose dtype it cannot read.
    if isinstance(v, (numbers.Integral, torch.SymInt)):
        return True
    if _is_compiling():  # NumPy's integers are traced as arrays, whose dtype and __index__ it cannot trace
        return hasattr(type(v), "__index__")
    if getattr(v, "ndim", 0) != 0 or (isinstance(v, torch.Tensor) and v.dtype == torch.bool):
        return False  # (NumPy's bool arrays and scalars refuse __index__ themselves)
    try:
        operator.index(v)
    except TypeError:
        return False
    return True


def _described(v) -> str:
    """A value's type for a message, with an array's or tensor's element type and shape."""
    dtype, shape = getattr(v, "dtype", None), getattr(v, "shape", None)
    if dtype is None or shape is None or not hasattr(type(v), "__len__"):  # a scalar (NumPy's too)
        return type(v).__name__
    return f"{type(v).__name__} of {dtype} and shape {list(shape)}"


def _in_int64(v) -> bool:
    """Whether an integer fits the schema's 64 bits. Not asked of a SymInt, nor of a NumPy integer
    under torch.compile, which traces it as an array: true for those."""
    if isinstance(v, torch.SymInt) or (type(v) is not int and _is_compiling()):
        return True
    return -(2**63) <= operator.index(v) < 2**63


def _integers(op: str, optional: bool = False, **values):
    """A TypeError, as torch.cat raises one, for an argument that is not an integer (the dispatcher
    would raise a RuntimeError, or take it): each value is an integer (_is_integer), or None where
    `optional`; sizes and offsets are lists of them. An integer past what the schema's 64 bits hold
    is an opendml.Error, as the eager path's rules raise one, not the dispatcher's RuntimeError."""
    for name, value in values.items():
        for v in value if name in ("sizes", "offsets") else [value]:
            if v is None and optional:
                continue
            if not _is_integer(v):
                raise TypeError(f"{op}: {name} must be an integer, not {_described(v)}")
            if not _in_int64(v):
                raise opendml.Error(f"{op}: {name} holds {operator.index(v)}, which a 64-bit integer cannot hold")


def _is_count(sizes) -> bool:
    """Whether split's `sizes` is a number of equal parts: an integer (Python's, NumPy's, a 0-d array
    or tensor), not a sequence. A 1-D NumPy array or tensor has __index__ too, which fails on use: an
    object with a length is a sequence of sizes, as the array layer takes it."""
    if isinstance(sizes, (list, tuple, torch.Size)) or not hasattr(type(sizes), "__index__"):
        return False
    try:
        len(sizes)
    except TypeError:  # no length: a 0-d array or tensor, or a scalar
        return True
    return False


def _listed(op: str, name: str, values, expected: str) -> list:
    """A list of split's sizes or nonzero's offsets, from any iterable (a 1-D array or tensor too, read
    in one go), or a TypeError naming the argument and what it must be where it is not one."""
    ndim = getattr(values, "ndim", 0)
    if ndim == 1 and hasattr(values, "tolist"):
        return values.tolist()  # Python's numbers: one read of a tensor on the GPU, not one per element
    # In order, as the array layer takes them: not a set or a dict (whose keys were taken as sizes, a
    # set's in any order) nor an iterator; an array of more dimensions is its rows, each refused.
    if not (isinstance(values, Sequence) or (isinstance(ndim, int) and ndim > 1)):
        raise TypeError(f"{op}: {name} must be {expected}, not {type(values).__name__}")
    return list(values)


def _split_sizes(op: str, sizes):
    """split's `sizes` as opendml.torch.split and opendml.distributed.split both take them: an int,
    the number of equal parts (from an integer of Python's or NumPy's, or a 0-d integer array or
    tensor), or a list of sizes, each a Python int or a SymInt (from any sequence of integers, a 1-D
    array or tensor too). Anything else raises a TypeError naming `op`."""
    if _is_count(sizes):
        _integers(op, sizes=[sizes])  # not a bool, nor a 0-d float
        return operator.index(sizes)
    sizes = _listed(op, "sizes", sizes, "an integer or a sequence of integers")
    # The usual case, checked no further (min and max: a split of 1000 parts pays little for it).
    if all(type(s) is int for s in sizes) and (not sizes or (-(2**63) <= min(sizes) and max(sizes) < 2**63)):
        return sizes
    _integers(op, sizes=sizes)
    if _is_compiling():  # as they are: torch.compile traces NumPy's integers as arrays it cannot read
        return sizes
    return [s if isinstance(s, (int, torch.SymInt)) else operator.index(s) for s in sizes]


def _tensors(op: str, name: str, values) -> None:
    """A TypeError, as torch.nonzero and torch.cat raise one, for an argument that is not a tensor:
    the dispatcher took None for a tensor and the kernel raised an AttributeError on it, and raised
    a RuntimeError for anything else. Only off the eager path, which takes torch.Tensor alone."""
    for v in values:
        if not isinstance(v, torch.Tensor):
            raise TypeError(f"{op}: {name} must be a torch.Tensor, not {type(v).__name__}")


def join(inputs: Sequence[torch.Tensor], axis: int = 0) -> torch.Tensor:
    """opendml::join: torch.cat's result, in one JOIN."""
    if isinstance(inputs, torch.Tensor):  # torch.cat takes no tensor for its sequence of them either
        raise TypeError("opendml.torch.join: inputs must be a sequence of tensors, not a Tensor")
    inputs = list(inputs)
    if type(axis) is int and _eager(inputs):
        return _join(inputs, axis)
    _tensors("opendml.torch.join", "every input", inputs)
    _integers("opendml.torch.join", axis=axis)
    _no_forward_mode("opendml.torch.join", inputs)
    return torch.ops.opendml.join(inputs, axis)


def split(x: torch.Tensor, sizes, axis: int = 0) -> list:
    """opendml::split: parts of the given sizes along axis, or `sizes` equal parts when an int."""
    op = "opendml.torch.split"
    if type(x) is not _Tensor:  # before its shape is read for a count
        _tensors(op, "x", [x])
    if type(axis) is not int or not -(2**63) <= axis < 2**63:  # before the count's parts are worked out along it
        _integers(op, axis=axis)
    sizes = _split_sizes(op, sizes)
    if not isinstance(sizes, list):  # a count
        _strided(op, "x", [x])  # before its shape is read (torch raises a RuntimeError for a nested one)
        sizes = equal_parts(op, x.shape[normalize_axis(op, axis, x.dim())], sizes)
    if type(axis) is int and all(type(s) is int for s in sizes) and _eager((x,)):
        return _split(x, sizes, axis)
    _no_forward_mode(op, [x])
    return torch.ops.opendml.split(x, sizes, axis)  # the axis and sizes are checked above
