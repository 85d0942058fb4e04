"""NONZERO_COORDINATES, JOIN and SPLIT over tensors sharded across processes, on top of
opendml.torch's operators and torch.distributed (NCCL on GPUs, gloo on the CPU).

A sharded argument is a DTensor on a 1-D device mesh (placement Shard(d) or Replicate()), or a
plain tensor holding this rank's shard together with `dim=` (the sharded dimension) and `group=`
(default: the world group). docs/distributed.md describes the layer.

    import opendml.distributed as odd
    r = odd.nonzero(x)                         # ShardedNonzero: global coordinates of this rank's rows
    coords, total = odd.nonzero(x, gather=True)   # every non-zero, ascending global element order
    y = odd.join([a, b], axis=0)               # sharded along 0: an all-to-all moves what must move
    p, q = odd.split(y, [3, 5], axis=0)

Nothing here waits for the host except the optional check of the arguments (validate=True, the
default), which exchanges a small description of every rank's arguments so that a mismatch
between ranks raises the same error on every rank instead of hanging a collective.
"""

import functools
import math
import numbers
from types import SimpleNamespace
from typing import NamedTuple, Optional

import torch
import torch.distributed as dist

import opendml
import opendml.torch as odt

from ._shapes import chunk_sizes, equal_parts, join_shape, normalize_axis, split_shapes
from .torch import _bits, _not_quantized, _strided

try:  # DTensor is public from torch 2.4
    from torch.distributed.tensor import DTensor, Replicate, Shard
except ImportError:  # pragma: no cover
    DTensor = None

__all__ = ["ShardedNonzero", "nonzero", "join", "split", "chunk_sizes"]


# ---- arguments -----------------------------------------------------------------------------------


class _Args(NamedTuple):
    locals: list  # this rank's piece of every input
    dim: Optional[int]  # the sharded dimension; None when the inputs are replicated
    group: object
    mesh: object  # the inputs' device mesh when they are DTensors, else None
    rank: int
    world: int
    sizes: list  # per input, every rank's size along dim (None when replicated)
    shapes: list  # per input, the global shape
    args: tuple  # the operation's arguments as this rank read them (_arguments' `args`, the name first)


def _parse(op, x, dim, group):
    """(local tensor, sharded dim or None, group, mesh) of one argument."""
    local, d, group, mesh = _parse_layout(op, x, dim, group)
    _strided(op, "the piece", [local])  # before anything reads its shape (a nested one has none)
    # A lazily negated or conjugated view (z.conj(), its .imag) as the values it stands for: the
    # pieces go to the array layer and the collectives as their bits. Free where neither flag is set.
    return local.resolve_conj().resolve_neg(), d, group, mesh


def _parse_layout(op, x, dim, group):
    if DTensor is not None and isinstance(x, DTensor):
        mesh = x.device_mesh
        if mesh.ndim != 1:
            raise opendml.UnsupportedError(f"{op}: the DTensor is on a {mesh.ndim}-D device mesh; opendml.distributed takes 1-D meshes")
        if dim is not None or group is not None:
            raise opendml.Error(f"{op}: a DTensor brings its own sharded dimension and group; leave dim and group out")
        (placement,) = x.placements
        if isinstance(placement, Replicate):
            return x.to_local(), None, _mesh_group(mesh), mesh
        if type(placement) is Shard:  # not a subclass such as _StridedShard
            return x.to_local(), placement.dim % x.dim(), _mesh_group(mesh), mesh
        raise opendml.UnsupportedError(f"{op}: placement {placement}; opendml.distributed takes Shard(d) and Replicate()")
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{op}: expected a torch.Tensor or DTensor, got {type(x).__name__}")
    if dim is not None:
        _integer(op, "dim", dim)
    d = None if dim is None else normalize_axis(op, dim, x.dim())
    return x, d, group if group is not None else dist.group.WORLD, None


def _mesh_group(mesh):
    """A 1-D mesh's process group; for a process outside the mesh, which torch gives no group of it
    (get_group raises an IndexError there), the one that new_group gives such a process, which the
    check of the group's membership refuses."""
    return mesh.get_group() if mesh.get_coordinate() is not None else dist.GroupMember.NON_GROUP_MEMBER


@functools.lru_cache(maxsize=64)
def _check_kernel(kind: str, dtype: torch.dtype, ndim: int) -> None:
    """The operation once on a tiny CPU tensor of this element type and rank: what the kernels take
    (element types, DirectML's ranks), by the library's own rules, checked on every rank before any
    collective. A rank whose piece is empty runs no kernel, so it would not raise where the others do
    and would wait in the collective they never reach."""
    if kind == "nonzero":
        odt.nonzero(torch.zeros((1,) * ndim, dtype=dtype))
    elif ndim:  # a 0-d input to join or split is the shape rules' to refuse, on every rank alike
        t = torch.zeros((2,) + (1,) * (ndim - 1), dtype=dtype)
        odt.join([t, t], 0) if kind == "join" else odt.split(t, [1, 1], 0)


def _check_piece(kind: str, t: torch.Tensor) -> None:
    """What the kernels take of this rank's piece: its element type and rank (_check_kernel), and,
    where it has elements, its memory as the array layer reads it (an address that its element
    size divides, strides within 32 bits), through the operation on a view of its first two
    elements along every dimension (the strides of dimensions of size 1 are not read), as data,
    before any collective: a piece refused after the exchange would leave the other ranks waiting in
    it."""
    _not_quantized(t)  # before _check_kernel: torch makes no zeros of a quantized type (NotImplementedError)
    _check_kernel(kind, t.dtype, t.dim())
    if t.dim() == 0 or t.numel() == 0:  # 0-d: the shape rules' to refuse; empty: no kernel reads it
        return
    first = t[(slice(0, 2),) * t.dim()]  # as data: every public function runs under no_grad
    if kind == "nonzero":
        odt.nonzero(first)
    else:  # join and split move the pieces' bits (_join_into)
        opendml.concat([_bits(first)], 0)


# Exceptions of one rank's arguments, raised on every rank after the exchange.
_ERRORS = {"Error": opendml.Error, "UnsupportedError": opendml.UnsupportedError, "TypeError": TypeError}


def _problem(e: Exception) -> tuple:
    """One rank's exception as every rank raises it (a key of _ERRORS, the message): the package's
    and TypeError as they are, torch's own NotImplementedError (an operator it lacks for a type) as
    an UnsupportedError, and anything else (torch's RuntimeError, say) as an opendml.Error naming it."""
    if isinstance(e, TypeError):
        return "TypeError", str(e)
    if isinstance(e, NotImplementedError):
        return "UnsupportedError", str(e)
    return "Error", str(e) if isinstance(e, ValueError) else f"{type(e).__name__}: {e}"


def _arguments(op: str, xs, dim, group, validate: bool, args) -> _Args:
    """Every input's local piece and the layout they share. With validate, every rank's description
    of its arguments (problems, `args`, element types, shapes, sharded dimension) is exchanged on
    the host, and any problem or disagreement raises the same error on every rank. `args` is a
    tuple (the operation's name first), or a function that reads the arguments into one, whose
    exception is this rank's problem like any other; the result's `args` is that tuple."""
    problem, parsed, described = None, [], None
    try:
        if callable(args):
            args = args()
        described = repr(args)  # the arguments go as their repr: whatever they are, it pickles, and equal values compare equal
        if not isinstance(xs, (list, tuple)):
            raise TypeError(f"{op}: expected a list of tensors, got {type(xs).__name__}")
        parsed = [_parse(op, x, dim, group) for x in xs]
        if not parsed:
            raise opendml.Error(f"{op}: needs at least one input")
        if any(p[1:] != parsed[0][1:] for p in parsed):
            raise opendml.Error(f"{op}: the inputs must share their group, mesh and sharded dimension (all sharded along one, or all replicated)")
        # Before the exchange, which compares the ranks' device types alone: an input on another
        # device of this rank (another GPU) would raise here alone, or an empty one pass unnoticed.
        for i, (t, *_) in enumerate(parsed):
            if t.device != parsed[0][0].device:
                raise opendml.Error(f"{op}: input {i} is on {t.device} but input 0 on {parsed[0][0].device}; a rank's inputs must be on one device")
        for t, *_ in parsed:
            _check_piece(args[0], t)
    except Exception as e:  # whatever it is: raised on this rank alone, it left the others waiting in the exchange
        if not validate:
            raise
        problem = _problem(e)
    if parsed and problem is None:
        d, g, mesh = parsed[0][1:]
    else:
        d, mesh = None, None
        xs = xs if isinstance(xs, (list, tuple)) else []
        g = next((_mesh_group(x.device_mesh) for x in xs
                  if DTensor is not None and isinstance(x, DTensor) and x.device_mesh.ndim == 1), group or dist.group.WORLD)
    rank, world = dist.get_rank(g), dist.get_world_size(g)
    if rank < 0:  # torch's collectives skip such a process (with a warning); nothing here would mean anything
        raise opendml.Error(f"{op}: this process (global rank {dist.get_rank()}) is not in the group (or the DTensor's device mesh)")
    locals_ = [p[0] for p in parsed]
    if not validate:
        if d is None:
            return _Args(locals_, None, g, mesh, rank, world, [None] * len(xs), [tuple(t.shape) for t in locals_], args)
        # A DTensor's shards follow torch.chunk; plain shards are taken as even.
        shapes = [tuple(x.shape) if mesh is not None else _with(t.shape, d, t.shape[d] * world) for x, t in zip(xs, locals_)]
        return _Args(locals_, d, g, mesh, rank, world, [chunk_sizes(s[d], world) for s in shapes], shapes, args)

    mine = (problem, described, d, [(str(t.dtype), t.device.type, tuple(t.shape)) for t in locals_], mesh is not None)
    every = [None] * world
    dist.all_gather_object(every, mine, group=g)
    for r, (p, *_) in enumerate(every):
        if p is not None:
            raise _ERRORS.get(p[0], opendml.Error)(f"{p[1]} (on rank {r})")
    first = every[0]
    for r, other in enumerate(every):
        if other[1] != first[1]:
            raise opendml.Error(f"{op}: the ranks disagree on the arguments: rank 0 has {first[1]}, rank {r} has {other[1]}")
        if other[4] != first[4]:
            kinds = {True: "DTensors", False: "plain tensors"}
            raise opendml.Error(f"{op}: rank {r} passes {kinds[other[4]]}, rank 0 {kinds[first[4]]}; the ranks must pass one kind")
        if other[2] != first[2] or len(other[3]) != len(first[3]):
            raise opendml.Error(f"{op}: rank {r} has {len(other[3])} inputs sharded along {other[2]}, rank 0 {len(first[3])} sharded along {first[2]}; "
                                f"the ranks must agree (None: replicated)")
        for i, (a, b) in enumerate(zip(first[3], other[3])):
            same = a[:2] == b[:2] and len(a[2]) == len(b[2]) and all(m == n for k, (m, n) in enumerate(zip(a[2], b[2])) if k != d)
            if not same:
                along = "" if d is None else f" except along the sharded dimension {d}"
                raise opendml.Error(f"{op}: input {i} is {b[0]} {list(b[2])} on {b[1]} on rank {r} but {a[0]} {list(a[2])} on {a[1]} on rank 0; "
                                    f"the ranks' pieces must agree in element type, device type and shape{along}")
    if d is None:
        return _Args(locals_, None, g, mesh, rank, world, [None] * len(xs), [tuple(t.shape) for t in locals_], args)
    sizes = [[e[3][i][2][d] for e in every] for i in range(len(xs))]
    shapes = [_with(t.shape, d, sum(s)) for t, s in zip(locals_, sizes)]
    if mesh is not None and any(s != chunk_sizes(sum(s), world) for s in sizes):  # DTensor keeps to it; checked all the same
        raise opendml.UnsupportedError(f"{op}: the DTensor's shards {sizes} do not follow torch.chunk's sizes")
    return _Args(locals_, d, g, mesh, rank, world, sizes, shapes, args)


def _integer(op: str, name: str, value) -> None:
    """A TypeError for an axis or dimension that is no integer, as opendml.torch and torch.cat raise
    it (docs/distributed.md): a float (which the shape rules refused as an opendml.Error), a Python
    bool, or a 0-d bool tensor (whose __index__ made it axis 1; NumPy's bools refuse theirs).
    opendml.torch._integers refuses them all; only the bool tensor's message is worded here."""
    if isinstance(value, torch.Tensor) and value.dtype == torch.bool:
        raise TypeError(f"{op}: {name} must be an integer, not a bool tensor")
    odt._integers(op, **{name: value})


def _axis_key(axis, x):
    """An axis as the ranks compare it: one integer for -1 and ndim - 1, NumPy's or Python's, where x
    is a tensor with that axis; anything else as it is (the shape rules refuse it on every rank)."""
    ndim = getattr(x, "ndim", None)
    if isinstance(axis, numbers.Integral) and not isinstance(axis, bool) and isinstance(ndim, int) and -ndim <= axis < ndim:
        return int(axis) % ndim
    return axis


def _with(shape, d, n) -> tuple:
    shape = list(shape)
    shape[d] = n
    return tuple(shape)


def _result(a: _Args, local: torch.Tensor, dim: Optional[int], shape):
    """A result piece as the caller's kind of argument: a DTensor on the inputs' mesh, or the plain
    local tensor."""
    if a.mesh is None:
        return local
    placement = Replicate() if dim is None else Shard(dim)
    strides = tuple(math.prod(shape[k + 1 :]) for k in range(len(shape)))
    return DTensor.from_local(local, a.mesh, [placement], run_check=False, shape=torch.Size(shape), stride=strides)


# ---- nonzero -------------------------------------------------------------------------------------


class ShardedNonzero(NamedTuple):
    """The sharded result of a nonzero: this rank's rows with global coordinates, and where every
    rank's rows go in the global result. All tensors are int64 on the input's device."""

    coords: torch.Tensor  # [local numel, ndim]: global coordinates of this rank's non-zeros; rows past count unspecified
    count: torch.Tensor  # [1]: this rank's number of non-zeros
    counts: torch.Tensor  # [world]: every rank's count
    offsets: torch.Tensor  # [world]: counts' exclusive prefix sum (where each rank's rows start when sharded along 0)
    total: torch.Tensor  # [1]: the global number of non-zeros


@torch.no_grad()  # no autograd through this layer (docs/distributed.md), whichever path a call takes
def nonzero(x, *, dim: Optional[int] = None, group=None, gather: bool = False, validate: bool = True):
    """The non-zero elements of a sharded tensor, without a host wait.

    Returns a ShardedNonzero, or with gather=True (coords, total): the global coordinates of every
    non-zero [global numel, ndim] int64 in ascending global element order on every rank (rows past
    total unspecified), and their number [1]. A replicated input counts as sharded along 0 (each
    rank takes its torch.chunk piece), and with gather=True runs locally with no communication."""
    op = "opendml.distributed.nonzero"
    a = _arguments(op, [x], dim, group, validate, ("nonzero", gather))
    local, d, sizes, shape = a.locals[0], a.dim, a.sizes[0], a.shapes[0]
    if d is None:
        if gather:
            return odt.nonzero(local)
        if local.dim() == 0:
            raise opendml.UnsupportedError(f"{op}: a 0-d tensor cannot be sharded; use gather=True")
        d, sizes = 0, chunk_sizes(local.shape[0], a.world)
        local = local.narrow(0, sum(sizes[: a.rank]), sizes[a.rank])
    if gather:  # the compaction into global order is the nonzero of the whole tensor itself
        return odt.nonzero(_gather_whole(a, local, sizes, shape))
    # Global coordinates straight from the kernel: the shard's offset along d is added as each
    # coordinate is written (opendml's coordinate offsets extension), with no second pass.
    offsets = [0] * local.dim()
    offsets[d] = sum(sizes[: a.rank])
    coords, count = odt.nonzero(local, offsets=offsets)
    counts = count.new_empty(a.world)
    # The current stream waits for the counts (NCCL's stream); the host does not.
    dist.all_gather_into_tensor(counts, count, group=a.group)
    ends = counts.cumsum(0)
    return ShardedNonzero(coords, count, counts, ends - counts, ends[-1:])


def _gather_whole(a: _Args, local: torch.Tensor, sizes, shape) -> torch.Tensor:
    """The global tensor, on every rank, from the shards along a.dim: one all-gather of the shards,
    then one JOIN along a.dim puts them in place. The JOIN is left out where the gathered shards
    already lie end to end as in the global tensor: nothing but dimensions of size 1 before a.dim,
    and every shard before the last non-empty one as large as the largest (even shards, and
    torch.chunk's sizes); the gathered buffer's beginning is then the result."""
    d = a.dim
    shapes = [_with(local.shape, d, n) for n in sizes]
    slot = max(math.prod(s) for s in shapes)
    if local.is_contiguous() and local.numel() == slot:
        send = local.reshape(-1)
    else:  # a strided or smaller shard: copied into a slot the size of the largest
        send = local.new_empty(slot)
        send[: local.numel()].view(local.shape).copy_(local)
    pieces, gathered = _all_gather_pieces(a, send, shapes)
    last = max((r for r, s in enumerate(shapes) if math.prod(s)), default=0)
    in_place = math.prod(shape[:d]) == 1 and all(math.prod(s) == slot for s in shapes[:last])
    if in_place or not math.prod(shape):  # an empty tensor has nothing to put in place
        return gathered[: math.prod(shape)].view(shape)
    whole = local.new_empty(shape)
    _join_into(pieces, d, whole)
    return whole


# ---- join and split ------------------------------------------------------------------------------


@torch.no_grad()  # no autograd through this layer (docs/distributed.md), whichever path a call takes
def join(inputs, axis: int = 0, *, dim: Optional[int] = None, group=None, replicated: bool = False, validate: bool = True):
    """torch.cat of sharded tensors (all sharded along one dimension, or all replicated).

    Along another axis than the sharded one, a local JOIN on every rank: the result is sharded like
    the inputs (whose pieces must then have the same size on each rank). Along the sharded axis,
    the result is sharded by torch.chunk's rule; only the rows that belong to another rank move
    (one all-to-all), and when none do nothing is sent. With replicated=True, every rank gets the
    whole result instead (one all-gather, then one JOIN)."""
    op = "opendml.distributed.join"
    first = inputs[0] if isinstance(inputs, (list, tuple)) and inputs else None
    a = _arguments(op, inputs, dim, group, validate, ("join", _axis_key(axis, first), replicated))
    _integer(op, "axis", axis)
    shape = join_shape(op, [SimpleNamespace(dtype=t.dtype, ndim=len(s), shape=s) for s, t in zip(a.shapes, a.locals)], axis)  # the global shapes
    axis = normalize_axis(op, axis, len(shape))
    if a.dim is None:
        return _result(a, odt.join(a.locals, axis), None, shape)
    d = a.dim
    if axis != d:
        if any(s != a.sizes[0] for s in a.sizes):
            raise opendml.Error(f"{op}: the inputs' shards along dimension {d} differ ({a.sizes}); a join along {axis} needs them alike")
        local = odt.join(a.locals, axis)
        if replicated:  # the joined shards, gathered into the whole
            return _result(a, _gather_whole(a, local, a.sizes[0], shape), None, shape)
        return _result(a, local, d, shape)
    if replicated:
        return _result(a, _gather_join(a), None, shape)
    (piece,) = _redistribute(a, a.sizes, [chunk_sizes(shape[d], a.world)])
    return _result(a, piece, d, shape)


@torch.no_grad()  # no autograd through this layer (docs/distributed.md), whichever path a call takes
def split(x, sizes, axis: int = 0, *, dim: Optional[int] = None, group=None, validate: bool = True) -> list:
    """torch.split of a sharded tensor into parts of the given sizes (or `sizes` equal parts).

    Along another axis than the sharded one, a local SPLIT on every rank (the parts are sharded like
    x). Along the sharded axis, every part is sharded by torch.chunk's rule, and the rows that
    belong to another rank move in one all-to-all."""
    op = "opendml.distributed.split"
    # The sizes as opendml.torch.split reads them (a count, or a list of ints from any sequence of
    # integers, a 1-D array or tensor too), whatever form each rank gave, so that the ranks compare
    # them alike; what it refuses is this rank's problem, which every rank raises.
    a = _arguments(op, [x], dim, group, validate, lambda: ("split", odt._split_sizes(op, sizes), _axis_key(axis, x)))
    shape = a.shapes[0]
    _integer(op, "axis", axis)
    axis = normalize_axis(op, axis, len(shape))
    sizes = a.args[1]
    if not isinstance(sizes, list):  # a count of equal parts
        sizes = equal_parts(op, shape[axis], sizes)
    parts = split_shapes(op, shape, sizes, axis)
    if a.dim is None or axis != a.dim:
        return [_result(a, p, a.dim, s) for p, s in zip(odt.split(a.locals[0], list(sizes), axis), parts)]
    pieces = _redistribute(a, a.sizes, [chunk_sizes(n, a.world) for n in sizes])
    return [_result(a, p, a.dim, s) for p, s in zip(pieces, parts)]


def _rows_major(like: torch.Tensor, d: int, rows: int) -> torch.Tensor:
    """A new tensor of `rows` rows along d laid out with d outermost (collectives cut dim 0), seen
    with d back in its place."""
    rest = list(like.shape[:d]) + list(like.shape[d + 1 :])
    return like.new_empty([rows] + rest).movedim(0, d)


def _join_into(pieces: list, d: int, out: torch.Tensor) -> None:
    """One JOIN of the pieces along d into out (a strided view), their bits as they are."""
    pieces = [p for p in pieces if p.shape[d]]
    if pieces:
        opendml.concat([_bits(p) for p in pieces], d, out=_bits(out))


def _bytes(t: torch.Tensor) -> torch.Tensor:
    """A contiguous buffer as bytes: the collectives move any element type. A tensor of one element
    counts as contiguous whatever its strides (torch ignores them), and its flat view keeps its
    stride, which a view as bytes refuses: it is seen with stride 1, the same element."""
    flat = t.reshape(-1)
    if flat.numel() == 1 and flat.stride(0) != 1:
        flat = flat.as_strided((1,), (1,))
    return flat.view(torch.uint8)


def _all_gather_pieces(a: _Args, send: torch.Tensor, shapes) -> tuple:
    """(every rank's piece, the gathered buffer) from one all_gather_into_tensor. `send` is this
    rank's slot: flat, contiguous, as many elements on every rank (the largest piece's), its piece
    at the start in row-major order; rank r's piece comes back the same way, shapes[r], at the start
    of the r-th slot of the buffer."""
    slot = send.numel()
    gathered = send.new_empty(a.world * slot)
    if slot:
        dist.all_gather_into_tensor(_bytes(gathered), _bytes(send), group=a.group)
    return [gathered[r * slot : r * slot + math.prod(s)].view(s) for r, s in enumerate(shapes)], gathered


def _gather_join(a: _Args) -> torch.Tensor:
    """The whole join along the sharded dimension on every rank: each rank's pieces joined into one
    buffer, all-gathered (padded to the largest), then one JOIN of every rank's pieces in order."""
    d, world, like = a.dim, a.world, a.locals[0]
    shapes = [_with(like.shape, d, sum(s[r] for s in a.sizes)) for r in range(world)]
    send = like.new_empty(max(math.prod(s) for s in shapes))
    _join_into(a.locals, d, send[: math.prod(shapes[a.rank])].view(shapes[a.rank]))
    per_rank, _ = _all_gather_pieces(a, send, shapes)
    pieces = []
    for i, s in enumerate(a.sizes):
        for r in range(world):
            pieces.append(per_rank[r].narrow(d, sum(t[r] for t in a.sizes[:i]), s[r]))
    out = like.new_empty(_with(like.shape, d, sum(s[d] for s in shapes)))
    _join_into(pieces, d, out)
    return out


def _pieces(sizes_list) -> list:
    """(segment, rank, global start, global end) of segments laid end to end, each cut by rank."""
    out, start = [], 0
    for i, sizes in enumerate(sizes_list):
        for r, n in enumerate(sizes):
            out.append((i, r, start, start + n))
            start += n
    return out


class _Move(NamedTuple):
    """Rows that one rank's piece of a source segment gives another's piece of a destination one."""

    src: int  # the source segment
    src_start: int  # where the rows start in the sender's piece of it
    dst: int  # the destination segment
    dst_start: int  # where they start in the receiver's piece of it
    rows: int


def _plan(src_sizes, dst_sizes, world) -> list:
    """moves[a][b]: the _Moves from rank a to rank b, in global order. Both layouts cover the same
    rows, so one sweep over both finds every overlap."""
    src, dst = _pieces(src_sizes), _pieces(dst_sizes)
    moves = [[[] for _ in range(world)] for _ in range(world)]
    i = k = 0
    while i < len(src) and k < len(dst):
        si, sr, s0, s1 = src[i]
        dj, dr, t0, t1 = dst[k]
        lo, hi = max(s0, t0), min(s1, t1)
        if hi > lo:
            moves[sr][dr].append(_Move(si, lo - s0, dj, lo - t0, hi - lo))
        if s1 <= t1:
            i += 1
        else:
            k += 1
    return moves


def _redistribute(a: _Args, src_sizes, dst_sizes) -> list:
    """This rank's piece of every destination segment, from every rank's pieces of the source
    segments (both along a.dim, laid end to end over the same rows). Rows that stay on their rank
    are read where they are; the others go through one all-to-all, which is left out when no row
    changes rank (a decision every rank makes alike from the sizes alone)."""
    d, me, world = a.dim, a.rank, a.world
    moves = _plan(src_sizes, dst_sizes, world)
    # Each destination piece's parts as (start in the piece, tensor along d).
    parts = [[] for _ in dst_sizes]
    for m in moves[me][me]:
        parts[m.dst].append((m.dst_start, a.locals[m.src].narrow(d, m.src_start, m.rows)))
    if any(moves[p][q] for p in range(world) for q in range(world) if p != q):
        sent = [sum(m.rows for m in moves[me][b]) if b != me else 0 for b in range(world)]
        got = [sum(m.rows for m in moves[b][me]) if b != me else 0 for b in range(world)]
        send = _rows_major(a.locals[0], d, sum(sent))
        _join_into([a.locals[m.src].narrow(d, m.src_start, m.rows) for b in range(world) if b != me for m in moves[me][b]], d, send)
        recv = _rows_major(a.locals[0], d, sum(got))
        row_bytes = a.locals[0].element_size() * math.prod(a.locals[0].shape[:d] + a.locals[0].shape[d + 1 :])
        dist.all_to_all_single(_bytes(recv.movedim(d, 0)), _bytes(send.movedim(d, 0)), [n * row_bytes for n in got], [n * row_bytes for n in sent], group=a.group)
        start = 0
        for b in range(world):
            if b == me:
                continue
            for m in moves[b][me]:
                parts[m.dst].append((m.dst_start, recv.narrow(d, start, m.rows)))
                start += m.rows
    out = []
    for j, sizes in enumerate(dst_sizes):
        piece = a.locals[0].new_empty(_with(a.locals[0].shape, d, sizes[me]))
        _join_into([p for _, p in sorted(parts[j], key=lambda e: e[0])], d, piece)
        out.append(piece)
    return out
