"""opendml's three operators inside JAX, through XLA's foreign function interface.

    coords, count = opendml.jax.nonzero(mask)        # coords (mask.size, mask.ndim), count (1,)
    rows = opendml.jax.argwhere(mask, size=n)         # jnp.argwhere(mask, size=n)
    y = opendml.jax.concat([a, b], axis=-1)           # jnp.concatenate
    p, q = opendml.jax.split(y, [3], axis=-1)         # jnp.split

Each function binds a JAX primitive whose lowering is an FFI call of a handler in the extension
(python/src/jax_ffi.cpp), registered for the CPU and CUDA platforms when this module is imported.
Output shapes follow from input shapes alone, so the functions work under jax.jit as in eager mode;
jax.vmap has batching rules that make one larger call, concat and split are linear (JVP and
transpose rules, so jax.jvp and jax.grad work), and nonzero's integer outputs have zero tangents.
docs/python.md describes this module.
"""

import functools
import math
import operator
from collections.abc import Sequence

import jax
import jax.numpy as jnp
import jaxlib
import numpy as np
from jax.extend.core import Primitive
from jax.interpreters import ad, batching, mlir

import opendml
from opendml import _opendml

from ._shapes import equal_parts, join_shape, normalize_axis

if not hasattr(_opendml, "_jax_targets"):
    raise ImportError(
        "opendml.jax: this build of opendml has no XLA FFI handlers, because JAX was not importable "
        "by the Python that built it; install jax, then reinstall opendml")

__all__ = ["nonzero", "argwhere", "concat", "split"]

_TARGETS = _opendml._jax_targets()  # {platform: {target: {stage: capsule}}}
# The handlers' State type must be known to a platform before handlers that use it, but a platform
# that starts after a registration takes the pending handlers before the pending types. So the
# platforms are started first, and both register at once; starting them leaves the caller's current
# CUDA device where it was (XLA would leave its last GPU current).
_opendml._jax_start_platforms(jax.devices)


def _register():
    for platform, handlers in _TARGETS.items():
        if hasattr(jax.ffi, "register_ffi_type"):
            jax.ffi.register_ffi_type("opendml_jax_state", _opendml._jax_state_type(platform), platform=platform)
        else:  # JAX before register_ffi_type took the type id alone
            jax.ffi.register_ffi_type_id("opendml_jax_state", _opendml._jax_state_type(platform)["type_id"], platform=platform)
        for name, stages in handlers.items():
            jax.ffi.register_ffi_target(name, stages, platform=platform)


try:
    _register()
except Exception as error:
    # A jaxlib older than the one whose headers the handlers were compiled against refuses them
    # (their FFI API version is newer than its own): the remedy is a rebuild, which JAX cannot say.
    _built, _major, _minor = _opendml._jax_built_with
    if _built == jaxlib.__version__:
        raise
    raise ImportError(
        f"opendml.jax: this build's FFI handlers were compiled against jaxlib {_built} (XLA FFI API "
        f"{_major}.{_minor}) and jaxlib {jaxlib.__version__} refused them: {error}. Reinstall opendml "
        "with this jax installed, so that its handlers are built against it") from error

_T = opendml.DataType

# JOIN and SPLIT move bits (docs/decisions.md): every element type goes as the unsigned integer of
# its width.
_BITS = {1: _T.UINT8, 2: _T.UINT16, 4: _T.UINT32, 8: _T.UINT64}

# NONZERO_COORDINATES tests DirectML's eight input types as they are, and bool and bfloat16 through a
# type whose zero test gives the same answer on the same bits (docs/python.md, "Element types").
_NONZERO = {
    np.dtype(np.float32): _T.FLOAT32, np.dtype(np.float16): _T.FLOAT16, np.dtype(jnp.bfloat16): _T.FLOAT16,
    np.dtype(np.int32): _T.INT32, np.dtype(np.int16): _T.INT16, np.dtype(np.int8): _T.INT8,
    np.dtype(np.uint32): _T.UINT32, np.dtype(np.uint16): _T.UINT16, np.dtype(np.uint8): _T.UINT8,
    np.dtype(np.bool_): _T.UINT8,
}

_INDEX = {"uint32": _T.UINT32, "int64": _T.INT64, "uint64": _T.UINT64}


def _bits_type(op: str, dtype) -> int:
    try:
        bits = jax.dtypes.itemsize_bits(dtype)
    except ValueError:  # extended types: PRNG keys (pass jax.random.key_data), float0
        raise opendml.UnsupportedError(f"{op}: {dtype} elements have no width in bytes; JOIN and SPLIT move elements of "
                                       "1, 2, 4 or 8 bytes (for PRNG keys, pass jax.random.key_data(keys))") from None
    if bits % 8 or bits // 8 not in _BITS:
        raise opendml.UnsupportedError(f"{op}: {np.dtype(dtype).name} elements are {bits} bits; JOIN and SPLIT move elements of 1, 2, 4 or 8 bytes")
    return int(_BITS[bits // 8])


# ---- Primitives ------------------------------------------------------------------------------------


def _lowering(target: str, platform: str):
    """The FFI call of `target`, with the handlers' four attributes (python/src/jax_ffi.cpp).
    nonzero's `fill`, one value a column (bits of the index type) or None, goes to the kernel, which
    writes the rows past the count in the same pass as the others (opendml's fill rows extension).
    On CUDA, an operator without a persistent region is called through the target's `_graph` twin,
    which XLA may record into its command buffers (CUDA graphs): its temporary region is the call's
    last result, a workspace sized here, when the call is traced."""
    rule = jax.ffi.ffi_lowering(target)
    graph_rule = jax.ffi.ffi_lowering(target + "_graph") if platform == "CUDA" else None

    def lower(ctx, *args, dml_type, axis=1, batched=False, fill=None, **_):
        if target not in _TARGETS.get(platform, {}):
            raise opendml.UnsupportedError(f"opendml.jax: this build of opendml has no {platform} backend")
        bits = np.array([v & (2**64 - 1) for v in fill or ()], dtype=np.uint64).view(np.int64)  # two's complement
        attrs = dict(dml_type=np.int64(dml_type), axis=np.int64(axis), batched=np.int64(batched), fill=bits)
        if graph_rule is not None and _graph_targets:
            buffers = tuple((tuple(a.shape), a.dtype.itemsize, a.dtype.name) for a in (*ctx.avals_in, *ctx.avals_out))
            regions = _regions(target, int(dml_type), int(axis), int(batched), tuple(bits.tolist()), buffers)
            if regions is not None and regions[1] == 0:  # known here, and no persistent region
                temporary = regions[0]
                workspace = jax.core.ShapedArray((temporary + 256 if temporary else 0,), np.uint8)  # 256: to align it
                return list(graph_rule(ctx.replace(avals_out=[*ctx.avals_out, workspace]), *args, **attrs))[:-1]
        return rule(ctx, *args, **attrs)

    return lower


# Whether CUDA calls go through the _graph targets where they can; the tests and benchmarks turn it off
# to compare (it is read when a call is traced).
_graph_targets = True


@functools.lru_cache(maxsize=4096)
def _regions(target, dml_type, axis, batched, fill, buffers):
    """(temporary, persistent) bytes of the operator of a CUDA call, the most over JAX's GPUs (each
    compiles it for its own number of SMs), or None where JAX has no GPU (a computation lowered for
    CUDA on another machine, with jax.export, say): its size is not known here."""
    try:
        ordinals = [d.local_hardware_id for d in jax.local_devices(backend="gpu")]
    except RuntimeError:
        return None
    return _opendml._jax_regions(target, dml_type, axis, batched, list(fill), [(list(s), w, n) for s, w, n in buffers],
                                 ordinals)


def _primitive(name: str, target: str, multiple_results: bool) -> Primitive:
    p = Primitive(name)
    p.multiple_results = multiple_results
    # Eager calls run the primitive as a one-operation computation, compiled once per shape.
    from jax._src import dispatch

    p.def_impl(functools.partial(dispatch.apply_primitive, p))
    mlir.register_lowering(p, _lowering(target, "cpu"), platform="cpu")
    mlir.register_lowering(p, _lowering(target, "CUDA"), platform="cuda")
    return p


_typeof = getattr(jax, "typeof", None) or jax.core.get_aval  # the latter before JAX 0.6


def _abstract(a):
    """a's abstract value (a is an array, a tracer or an abstract value)."""
    return a if isinstance(a, jax.core.AbstractValue) else _typeof(a)


def _varying(a) -> frozenset:
    """The shard_map mesh axes over which a (an array, a tracer or an abstract value) varies: its
    manual axis type's (JAX 0.10 and later), or its vma (JAX 0.6 to 0.9); none outside shard_map."""
    aval = _abstract(a)
    mat = getattr(aval, "manual_axis_type", None)
    return frozenset(mat.varying) if mat is not None else frozenset(getattr(aval, "vma", ()))


def _aval(shape, dtype, weak_type: bool, like):
    """A result's abstract value, varying over the shard_map axes that the operand `like` varies over
    (as JAX's own operations type theirs): without it, shard_map took a result computed per device for
    one the same on every device (an out_specs of P() returned device 0's result where jnp raises,
    and jax.grad inside shard_map failed on the cotangents' types)."""
    aval = _abstract(like)
    mat = getattr(aval, "manual_axis_type", None)
    if mat is not None and not mat.empty:  # JAX 0.10 and later: the manual axes come with the mesh
        spec = jax.sharding.PartitionSpec(*[None] * len(shape))
        sharding = jax.sharding.NamedSharding(aval.sharding.mesh, spec)
        return jax.core.ShapedArray(shape, dtype, weak_type, sharding=sharding, manual_axis_type=mat)
    if getattr(aval, "vma", None):  # JAX 0.6 to 0.9
        return jax.core.ShapedArray(shape, dtype, weak_type, vma=aval.vma)
    return jax.core.ShapedArray(shape, dtype, weak_type)


def _vary_alike(arrays: list) -> list:
    """The arrays, each made varying over every shard_map axis that any of them varies over, as jnp
    makes the operands of one operation (a JOIN's inputs and its result vary alike)."""
    axes = frozenset().union(*map(_varying, arrays)) if arrays else frozenset()
    if not axes:
        return arrays
    cast = getattr(jax.lax, "pcast", None)
    vary = (lambda a, names: cast(a, names, to="varying")) if cast else jax.lax.pvary
    return [vary(a, tuple(sorted(axes - _varying(a), key=str))) if axes - _varying(a) else a for a in arrays]


# nonzero_p(x, dml_type, batched, index, fill) -> (count, coords): the results in DirectML's order.
# Batched, the leading dimension of x and of both results is a batch of independent calls. fill: the
# value of each column in the rows past the count (bits of the index type), or None: unspecified.
nonzero_p = _primitive("opendml_nonzero", "opendml_nonzero", True)


@nonzero_p.def_abstract_eval
def _nonzero_abstract(x, *, dml_type, batched, index, fill=None):
    batch, item = (x.shape[:1], x.shape[1:]) if batched else ((), x.shape)
    dtype = np.dtype(index)
    return (_aval(batch + (1,), dtype, False, x), _aval(batch + (math.prod(item), len(item)), dtype, False, x))


def _nonzero_batch(args, dims, *, dml_type, batched, index, fill=None):
    (x,), (d,) = args, dims
    x = jnp.moveaxis(x, d, 0)
    lead = x.shape[:2] if batched else x.shape[:1]  # already a batch: the two become one
    item = x.shape[len(lead):]
    count_shape, coords_shape = lead + (1,), lead + (math.prod(item), len(item))
    if x.size == 0:
        return (jnp.zeros(count_shape, index), jnp.zeros(coords_shape, index)), (0, 0)  # no rows to fill
    count, coords = nonzero_p.bind(x.reshape((math.prod(lead),) + item), dml_type=dml_type, batched=True, index=index,
                                   fill=fill)
    return (count.reshape(count_shape), coords.reshape(coords_shape)), (0, 0)


def _weak(a) -> bool:
    """Whether a (an array, a tracer or an abstract value: each has weak_type) is weakly typed, of a
    Python scalar's type, which yields to other operands' types."""
    return bool(getattr(a, "weak_type", False))


def _zeros(shape, like, weak: bool):
    """Zeros of like's type, weakly typed where the result they stand for is, whatever like's own
    weak type: a weak type is its kind's default type, which a Python zero of that kind gives."""
    if weak:
        zero = {"f": 0.0, "c": 0j}.get(np.dtype(like.dtype).kind, 0)
        z = jax.lax.full(shape, zero)
        if z.dtype == like.dtype:
            return z
    return jnp.zeros(shape, like.dtype)


def _nonzero_jvp(primals, tangents, **params):
    outs = nonzero_p.bind(*primals, **params)
    return outs, [ad.Zero(_typeof(o).to_tangent_aval()) for o in outs]


batching.primitive_batchers[nonzero_p] = _nonzero_batch
ad.primitive_jvps[nonzero_p] = _nonzero_jvp

# concat_p(*xs, dml_type, weak_type) and split_p(x, sizes, dml_type) work on three dimensions, (before,
# axis, after): the functions below fold any rank into them, as a batch folds into the first. Their
# results are weakly typed as jnp.concatenate's and jnp.split's are: concat's where every input of
# the call was (before any promotion, hence the parameter), split's where x is.
concat_p = _primitive("opendml_concat", "opendml_join", False)
split_p = _primitive("opendml_split", "opendml_split", True)


@concat_p.def_abstract_eval
def _concat_abstract(*xs, dml_type, weak_type=False):
    p, _, q = xs[0].shape
    if len(set(map(_varying, xs))) > 1:
        raise opendml.Error(f"opendml.jax.concat: the inputs vary over different shard_map axes "
                            f"({[sorted(_varying(x), key=str) for x in xs]}); opendml.jax.concat makes them alike")
    return _aval((p, sum(x.shape[1] for x in xs), q), xs[0].dtype, weak_type, xs[0])


@split_p.def_abstract_eval
def _split_abstract(x, *, sizes, dml_type):
    p, _, q = x.shape
    return [_aval((p, s, q), x.dtype, x.weak_type, x) for s in sizes]


def _batch_in_front(args, dims):
    """The operands with the batch as their first dimension (broadcast where they have none)."""
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    return [jnp.broadcast_to(a, (size,) + a.shape) if d is None else jnp.moveaxis(a, d, 0)
            for a, d in zip(args, dims)]


def _unbatched(xs):
    return [jax.core.ShapedArray(a.shape[1:], a.dtype, weak_type=_weak(a)) for a in xs]


def _folded_shape(shape: tuple) -> tuple:  # the batch folded into the first of the three dimensions
    return (shape[0] * shape[1],) + tuple(shape[2:])


def _folded(a):
    return a.reshape(_folded_shape(a.shape))


def _concat_batch(args, dims, *, dml_type, weak_type=False):
    xs = _batch_in_front(args, dims)
    shape = xs[0].shape[:1] + _concat_abstract(*_unbatched(xs), dml_type=dml_type).shape
    if math.prod(shape) == 0:
        return _zeros(shape, xs[0], weak_type), 0
    _check_join_split("opendml.jax.concat under jax.vmap", False, _folded_shape(shape),
                      tuple(_folded_shape(x.shape) for x in xs), dml_type)
    return concat_p.bind(*map(_folded, xs), dml_type=dml_type, weak_type=weak_type).reshape(shape), 0


def _split_batch(args, dims, *, sizes, dml_type):
    (x,) = _batch_in_front(args, dims)
    shapes = [x.shape[:1] + a.shape for a in _split_abstract(*_unbatched([x]), sizes=sizes, dml_type=dml_type)]
    if x.size == 0:
        return [_zeros(s, x, _weak(x)) for s in shapes], [0] * len(shapes)
    _check_join_split("opendml.jax.split under jax.vmap", True, _folded_shape(x.shape),
                      tuple(_folded_shape(s) for s in shapes), dml_type)
    parts = split_p.bind(_folded(x), sizes=sizes, dml_type=dml_type)
    return [y.reshape(s) for y, s in zip(parts, shapes)], [0] * len(shapes)


def _concat_transpose(ct, *xs, dml_type, weak_type=False):
    parts = split_p.bind(ct, sizes=tuple(x.aval.shape[1] for x in xs), dml_type=dml_type)
    return [part if ad.is_undefined_primal(x) else None for part, x in zip(parts, xs)]


def _split_transpose(cts, x, *, sizes, dml_type):
    cts = [ad.instantiate_zeros(ct) for ct in cts]
    return [concat_p.bind(*cts, dml_type=dml_type, weak_type=all(map(_weak, cts)))]


batching.primitive_batchers[concat_p] = _concat_batch
batching.primitive_batchers[split_p] = _split_batch
ad.deflinear2(concat_p, _concat_transpose)
ad.deflinear2(split_p, _split_transpose)


# ---- The functions ---------------------------------------------------------------------------------


def _index_dtype(op: str, index_dtype) -> str:
    if index_dtype is None:
        return "int64" if jax.config.jax_enable_x64 else "uint32"
    try:
        name = np.dtype(index_dtype).name
    except TypeError:
        name = repr(index_dtype)
    if name not in _INDEX:
        raise opendml.Error(f"{op}: index_dtype is {name}; it must be uint32, or int64 or uint64 (opendml's 64-bit indices extension)")
    if name != "uint32" and not jax.config.jax_enable_x64:
        raise opendml.Error(f"{op}: index_dtype {name} needs JAX's 64-bit mode (jax.config.update('jax_enable_x64', True))")
    return name


@functools.lru_cache(maxsize=256)
def _check_nonzero(op: str, shape: tuple, dml_type: int, index: str) -> None:
    """The library's own validation of the operator the handler will compile (rank, sizes, types)."""
    m, idx = math.prod(shape), _INDEX.get(index, _T.UINT32)  # int32: argwhere's, uint32's bits
    try:
        desc = opendml.NonzeroCoordinatesDesc(opendml.TensorDesc(_T(dml_type), list(shape)),
                                              opendml.TensorDesc(idx, [1]), opendml.TensorDesc(idx, [m, len(shape)]))
        # The handler's choice (python/src/jax_ffi.cpp): 64-bit indices, or a buffer past 2^32 - 1
        # elements, the coordinates the largest; it writes int32 as uint32's bits.
        wide = index not in ("uint32", "int32") or m * max(len(shape), 1) > 0xFFFFFFFF
        opendml.Operator(opendml.Device("cpu"), desc, extensions=opendml.EXTENSION_64BIT_INDICES if wide else 0)
    except opendml.Error as e:
        raise type(e)(f"{op}: x of shape {shape} is past what one NONZERO_COORDINATES takes: {e}") from None


@functools.lru_cache(maxsize=256)
def _check_join_split(op: str, split: bool, whole: tuple, pieces: tuple, dml_type: int) -> None:
    """The library's own validation of the JOIN or SPLIT the handler will compile, on the folded
    (before, axis, after) shapes: each dimension within DirectML's 32 bits, so that a call too large
    fails while tracing rather than when it runs."""
    try:
        w = opendml.TensorDesc(_T(dml_type), list(whole))
        ps = [opendml.TensorDesc(_T(dml_type), list(p)) for p in pieces]
        desc = opendml.SplitDesc(w, ps, 1) if split else opendml.JoinDesc(ps, w, 1)
        wide = math.prod(whole) > 0xFFFFFFFF  # the handler's choice (python/src/jax_ffi.cpp)
        opendml.Operator(opendml.Device("cpu"), desc, extensions=opendml.EXTENSION_64BIT_INDICES if wide else 0)
    except opendml.Error as e:
        raise type(e)(f"{op}: the arrays, as (before axis, axis, after axis) = {whole}, are past what one "
                      f"{'SPLIT' if split else 'JOIN'} takes: {e}") from None


def nonzero(x, *, index_dtype=None, fill_value=None):
    """coords, count = nonzero(x): DirectML's NONZERO_COORDINATES. coords is (x.size, x.ndim), the
    coordinates of x's non-zero elements in row-major order in its first `count` rows; the rest are
    fill_value (a scalar or one value a column), or unspecified without it. count is (1,).
    index_dtype: uint32 (the default without JAX's 64-bit mode), or int64 / uint64 (opendml's 64-bit
    indices extension; int64 is the default in 64-bit mode)."""
    op = "opendml.jax.nonzero"
    x = jnp.asarray(x)
    index = _index_dtype(op, index_dtype)
    row = _traced_fill(op, fill_value, x.ndim, index)
    fill = _fill_values(op, fill_value, x.ndim, index) if fill_value is not None and row is None else None
    coords, count = _nonzero(op, x, index, fill)
    return (coords, count) if row is None else (_filled(coords, count, row), count)


def _traced_fill(op: str, fill_value, columns: int, index: str):
    """A fill_value that holds a tracer (a scalar, or a sequence of one a column, as jnp.argwhere
    takes them) as one row of `columns` values of `index`, or None where fill_value is concrete and
    goes to the kernel. A traced value cannot be compiled into the call: its rows are written by one
    more pass (_filled), and its values are cast to `index` unchecked, as jnp.where casts them."""
    items = fill_value if isinstance(fill_value, (list, tuple)) else (fill_value,)
    if not any(isinstance(v, jax.core.Tracer) for v in items):
        return None
    row = jnp.asarray(fill_value)
    if row.dtype.kind not in "iub" or row.ndim > 1 or row.size not in (1, columns):
        raise opendml.Error(f"{op}: fill_value is a traced {row.dtype} of shape {row.shape}; it must be an integer, "
                            f"or a sequence of {columns} integers (one a column)")
    return jnp.broadcast_to(row.astype(index), (columns,))


def _filled(coords, count, row):
    """coords with its rows past the count set to row."""
    live = jnp.arange(coords.shape[0], dtype=count.dtype)[:, None] < count
    return jnp.where(live, coords, row)


def _fill_values(op: str, fill_value, columns: int, index: str) -> list:
    """fill_value as one integer a column, each one the index type holds (an unsigned type also takes
    negative values down to its signed type's, as their bits: -1 is 0xFFFFFFFF in uint32). It is
    compiled into the call (a traced one is _traced_fill's)."""
    # A sequence's items as they are (NumPy would make [2**64 - 1, -1] floats); integers past 64 bits
    # also make an array of objects: still integers, which the range check names.
    row = np.asarray(fill_value, dtype=object if isinstance(fill_value, (list, tuple)) else None)
    integers = row.dtype.kind in "iub" or (row.dtype == object and all(isinstance(v, (int, np.integer)) for v in row.flat))
    if not integers or row.ndim > 1 or row.size not in (1, columns):
        raise opendml.Error(f"{op}: fill_value is {fill_value!r}; it must be an integer, or a sequence of "
                            f"{columns} integers (one a column)")
    lowest, highest = -(2 ** (8 * np.dtype(index).itemsize - 1)), np.iinfo(index).max
    given = [int(v) for v in row.flat]  # checked as given: a 0-d x has no columns to take them
    if any(not lowest <= v <= highest for v in given):
        raise opendml.Error(f"{op}: fill_value {given} does not fit in {index} coordinates ({lowest} to {highest})")
    return given * columns if row.size == 1 else given


def _nonzero(op, x, index: str, fill):
    """nonzero with results of type `index`: uint32, int64, uint64, or int32 (argwhere's without
    JAX's 64-bit mode, which the handler writes as uint32 bits, so x may have at most 2^31 - 1
    elements). fill: _fill_values' integers, one a column; None or empty for no fill rows."""
    bits = 2 ** (8 * np.dtype(index).itemsize) - 1
    fill = tuple(v & bits for v in fill) if fill else None  # as the index type's bits
    if index == "int32" and x.size > np.iinfo(np.int32).max:
        raise opendml.Error(f"{op}: x has {x.size} elements, past the int32 coordinates and count of JAX without "
                            "64-bit mode (jax.config.update('jax_enable_x64', True) gives int64 ones)")
    if x.dtype not in _NONZERO:
        raise opendml.UnsupportedError(f"{op}: x is {x.dtype}; NONZERO_COORDINATES tests {', '.join(sorted(str(d) for d in _NONZERO))}")
    if x.size == 0:
        return jnp.zeros((0, x.ndim), index), jnp.zeros((1,), index)
    dml_type = int(_NONZERO[x.dtype])
    if x.ndim == 0:
        # DirectML tensors have a dimension: one row of no coordinates, as NumPy's argwhere, and the
        # count of x as one element, by the kernel, which tests bits (XLA's x != 0 on the CPU
        # flushes subnormals to zero).
        _check_nonzero(op, (1,), dml_type, index)
        count, _ = nonzero_p.bind(x.reshape(1), dml_type=dml_type, batched=False, index=index, fill=None)
        return jnp.zeros((1, 0), index), count
    _check_nonzero(op, tuple(x.shape), dml_type, index)
    count, coords = nonzero_p.bind(x, dml_type=dml_type, batched=False, index=index, fill=fill)
    return coords, count


def argwhere(x, *, size=None, fill_value=None):
    """jnp.argwhere(x, size=size, fill_value=fill_value) through NONZERO_COORDINATES: the first `size`
    coordinate rows, those past the count set to fill_value (default 0; a scalar or one value a
    column). Under jax.jit, size is needed, as it is for jnp.argwhere."""
    op = "opendml.jax.argwhere"
    x = jnp.asarray(x)
    dtype = jax.dtypes.canonicalize_dtype(np.int64)  # jnp.argwhere's: int32 unless in 64-bit mode
    if size is not None:
        try:
            size = operator.index(size)
        except TypeError:
            raise opendml.Error(f"{op}: size is a {type(size).__name__}; it must be an integer") from None
        if size < 0:
            raise opendml.Error(f"{op}: size is {size}; it must not be negative")
        if size > np.iinfo(dtype).max:  # the row count of jnp.argwhere's index type
            raise opendml.Error(f"{op}: size is {size}; {np.dtype(dtype).name} coordinates count at most "
                                f"{np.iinfo(dtype).max} rows" + ("" if jax.config.jax_enable_x64 else
                                " (jax.config.update('jax_enable_x64', True) gives int64 ones)"))
    index = np.dtype(dtype).name
    row = _traced_fill(op, fill_value, x.ndim, index)
    fill = _fill_values(op, 0 if fill_value is None else fill_value, x.ndim, index) if row is None else None
    # The kernel writes the rows past the count, and the results are of argwhere's type already: no
    # other operation touches the coordinates (unless fill_value is traced).
    coords, count = _nonzero(op, x, index, fill)
    if row is not None:
        coords = _filled(coords, count, row)
    if size is None:
        if isinstance(count, jax.core.Tracer):
            raise opendml.Error(f"{op}: size is needed under jax.jit and jax.vmap (the count is not known when tracing)")
        size = int(count[0])
    rows = coords[:size]
    if size > rows.shape[0]:  # more rows than x has elements: the rest are fill
        row = jnp.asarray(fill, dtype) if row is None else row
        rows = jnp.concatenate([rows, jnp.broadcast_to(row, (size - rows.shape[0], x.ndim))])
    return rows


class _Shape:
    """What opendml._shapes reads of an array (a tracer has no device to compare)."""

    def __init__(self, a):
        self.shape, self.dtype, self.ndim = a.shape, a.dtype, a.ndim


def _fold(a, axis: int):
    return a.reshape((math.prod(a.shape[:axis]), a.shape[axis], math.prod(a.shape[axis + 1:])))


def _concrete_axis(op: str, axis):
    if isinstance(axis, jax.core.Tracer):
        raise opendml.Error(f"{op}: axis is traced; it must be a concrete integer")
    return axis


def concat(arrays, axis: int | None = 0):
    """jnp.concatenate(arrays, axis) through DirectML's JOIN: negative axes count from the end, None
    joins the arrays flattened, an array stands for the sequence of its rows, and arrays of different
    types are promoted to one as jnp.concatenate promotes them."""
    op = "opendml.jax.concat"
    if hasattr(arrays, "ndim") and hasattr(arrays, "shape"):  # a JAX or NumPy array: its rows
        if arrays.ndim == 0:
            raise opendml.Error(f"{op}: arrays is 0-d; zero-dimensional arrays cannot be concatenated")
        arrays = [arrays[i] for i in range(arrays.shape[0])]
    elif not isinstance(arrays, Sequence):
        raise opendml.Error(f"{op}: arrays is a {type(arrays).__name__}; it must be a sequence of arrays, or an array")
    arrays = [jnp.asarray(a) for a in arrays]
    if _concrete_axis(op, axis) is None:
        arrays, axis = [jnp.ravel(a) for a in arrays], 0
    if arrays and arrays[0].ndim == 0:
        raise opendml.Error(f"{op}: arrays[0] is 0-d; zero-dimensional arrays cannot be concatenated")
    # Promoted as jnp.concatenate promotes: every array to the result's type, weakly typed where
    # promotion says so, and a weak array to a strong one where the result is strongly typed (so that its
    # gradient comes back through the conversion, weakly typed, as jnp's does).
    dtype, weak = jax.dtypes.result_type(*arrays, return_weak_type_flag=True) if arrays else (None, False)
    arrays = _vary_alike([a if a.dtype == dtype and (weak or not _weak(a)) else jax.lax.convert_element_type(a, dtype)
                          for a in arrays])
    shape = join_shape(op, [_Shape(a) for a in arrays], axis)
    axis = normalize_axis(op, axis, len(shape))
    dml_type = _bits_type(op, arrays[0].dtype)
    pieces = [_fold(a, axis) for a in arrays if a.size]
    if not pieces or math.prod(shape) == 0:  # DirectML has no empty tensors
        return _zeros(shape, next((a for a in arrays if _weak(a) == weak), arrays[0]), weak)
    whole = _concat_abstract(*pieces, dml_type=dml_type).shape
    _check_join_split(op, False, whole, tuple(p.shape for p in pieces), dml_type)
    return concat_p.bind(*pieces, dml_type=dml_type, weak_type=weak).reshape(shape)


def split(x, indices_or_sections, axis: int = 0):
    """jnp.split(x, indices_or_sections, axis) through DirectML's SPLIT: a number of equal sections,
    or the indices where sections start (as jnp.split takes them: not decreasing, from 0 to the
    length of the axis)."""
    op = "opendml.jax.split"
    x = jnp.asarray(x)
    if x.ndim == 0:
        raise opendml.Error(f"{op}: x is 0-d; zero-dimensional arrays cannot be split")
    axis = normalize_axis(op, _concrete_axis(op, axis), x.ndim)
    length = x.shape[axis]
    if isinstance(indices_or_sections, (str, bytes)) or not isinstance(
            indices_or_sections, (int, np.integer, Sequence, np.ndarray, jax.Array)):
        raise opendml.Error(f"{op}: indices_or_sections is a {type(indices_or_sections).__name__}; it must be an integer "
                            "or a sequence of integers")
    if isinstance(indices_or_sections, (int, np.integer)) or getattr(indices_or_sections, "ndim", None) == 0:
        try:
            sections = operator.index(indices_or_sections)
        except TypeError:  # a traced count, or a 0-d array of floats
            raise opendml.Error(f"{op}: indices_or_sections is {indices_or_sections!r}; a number of sections must be a "
                                "concrete integer") from None
        sizes = equal_parts(op, length, sections)
    else:
        try:
            bounds = [0] + [operator.index(i) for i in indices_or_sections]  # taken as they are, as jnp.split does
        except TypeError:
            raise opendml.Error(f"{op}: indices {indices_or_sections!r} must be concrete integers") from None
        if any(b < a for a, b in zip(bounds, bounds[1:] + [length])):
            raise opendml.Error(f"{op}: indices {bounds[1:]} must not decrease, and lie in [0, {length}] (x.shape[{axis}])")
        sizes = [b - a for a, b in zip(bounds, bounds[1:] + [length])]
    dml_type = _bits_type(op, x.dtype)
    shapes = [x.shape[:axis] + (s,) + x.shape[axis + 1:] for s in sizes]
    if x.size == 0 or len([s for s in sizes if s]) == 0:
        return [_zeros(s, x, _weak(x)) for s in shapes]
    folded, kept = _fold(x, axis), tuple(s for s in sizes if s)
    pieces = tuple(a.shape for a in _split_abstract(folded, sizes=kept, dml_type=dml_type))
    _check_join_split(op, True, folded.shape, pieces, dml_type)
    parts = iter(split_p.bind(folded, sizes=kept, dml_type=dml_type))
    return [next(parts).reshape(s) if s[axis] else _zeros(s, x, _weak(x)) for s in shapes]
