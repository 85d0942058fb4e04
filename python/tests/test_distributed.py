"""opendml.distributed with 2 and 4 processes: gloo on the CPU (what CI runs) and NCCL on GPUs
(marked cuda; a world of N processes needs N GPUs). Every case builds one global tensor from a
seed on every rank, shards it, runs the sharded operation and compares, bit for bit, with the same
operation on the shards gathered back into one tensor. Argument mismatches between ranks must raise
on every rank, and the world must still work afterwards (no collective left hanging).

A world's processes are started once per module and run the cases in turn: starting a process
that imports torch takes seconds here, a case a fraction of one."""

import json
import multiprocessing
import os
import queue
import re
import subprocess
import sys
import tempfile
import traceback
import warnings

import numpy as np
import pytest
import torch
import torch.distributed as dist

import opendml
import opendml.distributed as odd
import opendml.torch as odt

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Every process of a world is on this machine: gloo connects them over loopback rather than
# through whatever address the host name resolves to (processes started here inherit it).
os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
# ---- the worlds ----------------------------------------------------------------------------------


def _serve(rank, size, backend, init, tasks, results):
    if backend == "nccl":
        torch.cuda.set_device(rank)
    dist.init_process_group(backend, init_method=init, rank=rank, world_size=size)
    while (task := tasks.get()) is not None:
        case, args = task
        try:
            case(*args)
            results.put((rank, None))
        except BaseException:  # reported to the test, which fails with it
            results.put((rank, traceback.format_exc()))
    dist.destroy_process_group()


class World:
    def __init__(self, backend, size):
        ctx = multiprocessing.get_context("spawn")
        self.size = size
        self.dir = tempfile.TemporaryDirectory()
        init = f"file://{self.dir.name}/store"
        self.tasks = [ctx.Queue() for _ in range(size)]
        self.results = ctx.Queue()
        self.procs = [ctx.Process(target=_serve, args=(r, size, backend, init, self.tasks[r], self.results), daemon=True) for r in range(size)]
        for p in self.procs:
            p.start()
        self.broken = False

    def run(self, case, *args, timeout=120):
        """Runs case(*args) on every rank; fails with every rank's traceback."""
        assert not self.broken, "an earlier case left this world hanging"
        for q in self.tasks:
            q.put((case, args))
        failures = {}
        for _ in range(self.size):
            try:
                rank, error = self.results.get(timeout=timeout)
            except queue.Empty:
                self.broken = True
                pytest.fail(f"{case.__name__}: no answer from every rank in {timeout} s (a hang)")
            if error:
                failures[rank] = error
        assert not failures, "\n".join(f"rank {r}:\n{e}" for r, e in sorted(failures.items()))

    def close(self):
        for q in self.tasks:
            q.put(None)
        for p in self.procs:
            p.join(timeout=10)
            if p.is_alive():
                p.kill()
        self.dir.cleanup()


WORLDS = [
    pytest.param("gloo", 2, id="gloo-2"),
    pytest.param("gloo", 4, id="gloo-4"),
    pytest.param("nccl", 2, id="nccl-2", marks=pytest.mark.cuda),
    pytest.param("nccl", 4, id="nccl-4", marks=pytest.mark.cuda),
]
_worlds = {}


def _world(backend, size) -> World:
    """The module's world of `size` processes on `backend`, started at its first use."""
    if backend == "nccl" and torch.cuda.device_count() < size:
        pytest.skip(f"{size} processes with NCCL need {size} GPUs; this machine has {torch.cuda.device_count()}")
    if (backend, size) not in _worlds or _worlds[backend, size].broken:
        if (backend, size) in _worlds:
            _worlds[backend, size].close()
        _worlds[backend, size] = World(backend, size)
    return _worlds[backend, size]


@pytest.fixture(scope="module", autouse=True)
def _close_worlds():
    yield
    for w in _worlds.values():
        w.close()
    _worlds.clear()


# ---- helpers that run on every rank --------------------------------------------------------------


def _device():
    return torch.device("cuda", torch.cuda.current_device()) if dist.get_backend() == "nccl" else torch.device("cpu")


def _global(shape, dtype, density, seed):
    """The same tensor on every rank, made on the CPU from the seed."""
    g = torch.Generator().manual_seed(seed)
    keep = torch.rand(shape, generator=g) < density
    values = torch.randint(1, 100, shape, generator=g)
    return (keep * values).to(dtype)


def _shard(x, d, sizes=None):
    """This rank's piece along d, on the device: of sizes[rank] (default: torch.chunk's pieces)."""
    rank, world = dist.get_rank(), dist.get_world_size()
    sizes = sizes or odd.chunk_sizes(x.shape[d], world)
    return x.narrow(d, sum(sizes[:rank]), sizes[rank]).to(_device())


def _bits(t):
    """The elements as integers of their width: bit-for-bit comparisons of any type (signed ones,
    which every torch version compares and joins)."""
    return t.view({1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()])


def _gathered(local, d):
    """Every rank's piece, joined along d on the host: the tensor the shards make up."""
    local = local.cpu().contiguous()
    pieces = [None] * dist.get_world_size()
    dist.all_gather_object(pieces, (local.reshape(-1).view(torch.uint8).numpy().tobytes(), local.shape))
    raw = [torch.frombuffer(bytearray(b), dtype=torch.uint8) if b else torch.empty(0, dtype=torch.uint8) for b, _ in pieces]
    return torch.cat([_bits(r.view(local.dtype).reshape(shape)) for r, (_, shape) in zip(raw, pieces, strict=True)], d).view(local.dtype)


def _equal(got, want):
    got = got.cpu()
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    assert torch.equal(_bits(got), _bits(want)), (got, want)


def _by_rank(want, d, shape):
    """The rows of the global coordinates `want` that each rank's shard along d holds, rank by rank."""
    return _rows_in(want, d, odd.chunk_sizes(shape[d], dist.get_world_size()))


def _rows_in(want, d, sizes):
    """The rows of the global coordinates `want` in each of the shards along d of the given sizes."""
    ends = torch.tensor(sizes).cumsum(0).tolist()
    return [want[(want[:, d] >= end - n) & (want[:, d] < end)] for n, end in zip(sizes, ends, strict=True)]


def _mesh():
    from torch.distributed.device_mesh import init_device_mesh

    return init_device_mesh(_device().type, (dist.get_world_size(),))


# ---- nonzero -------------------------------------------------------------------------------------

NONZERO = [  # shape, sharded dim: uneven shards and empty ones included at 2 and 4 ranks
    ((37,), 0),
    ((8, 6), 0),
    ((6, 10), 1),
    ((3, 5, 7), 1),
    ((3, 4, 9), 2),
    ((5, 2, 3, 4), 2),
    ((2, 3), 0),
    ((1, 7, 3), 1),  # the shards along 1 lie end to end, as along 0
]


def check_nonzero(shape, d, dtype, density, seed):
    x = _global(shape, dtype, density, seed)
    local = _shard(x, d)
    whole = _gathered(local, d)
    _equal(whole, x)
    want = torch.nonzero(whole)
    r = odd.nonzero(local, dim=d)
    # This rank's rows: the global non-zeros whose coordinate along d falls in its shard, in order.
    per_rank = _by_rank(want, d, shape)
    mine = per_rank[dist.get_rank()]
    assert r.coords.shape == (local.numel(), len(shape)) and r.coords.dtype == torch.int64
    n = int(r.count)
    assert n == len(mine)
    _equal(r.coords[:n], mine)
    counts = torch.tensor([len(rows) for rows in per_rank])
    _equal(r.counts, counts)
    _equal(r.offsets, torch.cumsum(counts, 0) - counts)
    _equal(r.total, torch.tensor([len(want)]))
    coords, total = odd.nonzero(local, dim=d, gather=True)
    assert coords.shape == (x.numel(), len(shape))
    _equal(total, torch.tensor([len(want)]))
    _equal(coords[: len(want)], want)


def case_nonzero():
    for i, (shape, d) in enumerate(NONZERO):
        for density in (0.0, 0.3, 1.0):
            check_nonzero(shape, d, torch.float32, density, seed=i)
    for dtype in (torch.bool, torch.int8, torch.float16, torch.bfloat16, torch.uint8, torch.int32):
        check_nonzero((4, 9, 3), 1, dtype, 0.5, seed=7)


def case_nonzero_any_sizes():
    # Plain shards of any sizes (not torch.chunk's; an empty one at 4 ranks): the gathered shards
    # must be put in place, along 0 as along the other dimensions.
    sizes = [1, 3, 0, 2][: dist.get_world_size()]
    for i, (rest, d) in enumerate((((), 0), ((5,), 0), ((3,), 1), ((1,), 1), ((2, 4), 2), ((0,), 1), ((2, 0), 1))):
        shape = rest[:d] + (sum(sizes),) + rest[d:]
        x = _global(shape, torch.float32, 0.5, seed=30 + i)
        want = torch.nonzero(x)
        coords, total = odd.nonzero(_shard(x, d, sizes), dim=d, gather=True)
        _equal(total, torch.tensor([len(want)]))
        _equal(coords[: len(want)], want)
        r = odd.nonzero(_shard(x, d, sizes), dim=d)
        _equal(r.total, torch.tensor([len(want)]))
        _equal(r.coords[: int(r.count)], _rows_in(want, d, sizes)[dist.get_rank()])


def case_gathered_nonzero_reads_the_gathered_input():
    # Where the gathered shards lie end to end as in the whole tensor, the nonzero reads the
    # all-gather's buffer: no JOIN (any would fail here), where sharded along 1 one is needed.
    world = dist.get_world_size()
    join_into = odd._join_into

    def refused(*args, **kwargs):
        raise AssertionError("a JOIN where the gathered shards lie in place")

    odd._join_into = refused
    try:
        for shape, d in (((4 * world, 3), 0), ((3 * world - 1, 2), 0), ((1, 2 * world, 3), 1)):
            x = _global(shape, torch.float32, 0.5, seed=40)
            want = torch.nonzero(x)
            coords, total = odd.nonzero(_shard(x, d), dim=d, gather=True)  # validated: uneven shards too
            _equal(coords[: len(want)], want)
            _equal(total, torch.tensor([len(want)]))
        with pytest.raises(AssertionError, match="lie in place"):
            odd.nonzero(_shard(torch.ones(2, 2 * world), 1), dim=1, gather=True, validate=False)
    finally:
        odd._join_into = join_into


def case_one_element_shards_with_any_strides():
    # A one-element shard counts as contiguous whatever its strides (a step slice, x[::2] of two
    # elements), and the gathered nonzero sent it as it was: its flat view kept the step, which the
    # view as bytes for the all-gather refused, after the exchange, on its rank alone (the others
    # waited in the all-gather, or gloo aborted them).
    world, rank = dist.get_world_size(), dist.get_rank()
    for shape, d in (((world,), 0), ((1, world), 1)):
        x = _global(shape, torch.float32, 0.5, seed=50) + (torch.arange(world) % 2).float()  # some zeros, some not
        want = torch.nonzero(x)
        local = _shard(x, d)
        spaced = torch.zeros([2 * n for n in local.shape], device=local.device)
        spaced[(slice(None, None, 2),) * local.dim()] = local
        view = spaced[(slice(None, None, 2),) * local.dim()]
        assert view.numel() == local.numel() and view.is_contiguous() and view.stride()[-1] == 2
        for piece in (view, view if rank == world - 1 else local):  # on every rank, then on one
            coords, total = odd.nonzero(piece, dim=d, gather=True)
            _equal(total, torch.tensor([len(want)]))
            _equal(coords[: len(want)], want)


def case_nonzero_dtensor():
    from torch.distributed.tensor import Replicate, Shard, distribute_tensor

    mesh = _mesh()
    for shape, d in NONZERO[:5]:
        x = _global(shape, torch.float32, 0.4, seed=11)
        want = torch.nonzero(x)
        for placement in (Shard(d), Replicate()):
            xd = distribute_tensor(x.to(_device()), mesh, [placement])
            coords, total = odd.nonzero(xd, gather=True)
            _equal(total, torch.tensor([len(want)]))
            _equal(coords[: len(want)], want)
            r = odd.nonzero(xd)  # a replicated input counts as sharded along 0
            _equal(r.total, torch.tensor([len(want)]))
            # Gathered in rank order: each rank's rows of its shard (a replicated input counts as
            # sharded along 0).
            along = d if placement.is_shard() else 0
            _equal(_gathered(r.coords[: int(r.count)], 0), torch.cat(_by_rank(want, along, shape)))


def case_nonzero_validate_off():
    # Without the exchange, even plain shards and DTensors (uneven ones too: torch.chunk's sizes)
    # give the same results.
    from torch.distributed.tensor import Shard, distribute_tensor

    x = _global((8, 12), torch.float32, 0.5, seed=3)
    want = torch.nonzero(x)
    coords, total = odd.nonzero(_shard(x, 1), dim=1, gather=True, validate=False)
    _equal(total, torch.tensor([len(want)]))
    _equal(coords[: len(want)], want)
    x = _global((7, 5), torch.float32, 0.5, seed=4)
    want = torch.nonzero(x)
    coords, total = odd.nonzero(distribute_tensor(x.to(_device()), _mesh(), [Shard(0)]), gather=True, validate=False)
    _equal(total, torch.tensor([len(want)]))
    _equal(coords[: len(want)], want)
    parts = odd.split(distribute_tensor(x.to(_device()), _mesh(), [Shard(0)]), [2, 5], 0, validate=False)
    _equal(parts[1].full_tensor(), x[2:])


def case_subgroups():
    # Each half of the world runs its own sharded operations in its own group: ranks and sizes are
    # the group's, not the world's.
    world, rank = dist.get_world_size(), dist.get_rank()
    half = world // 2
    groups = [dist.new_group(list(range(half))), dist.new_group(list(range(half, world)))]
    group, me = groups[rank >= half], rank % half
    x = _global((6, 9), torch.float32, 0.5, seed=20 + (rank >= half))
    sizes = odd.chunk_sizes(9, half)
    local = x[:, sum(sizes[:me]) : sum(sizes[: me + 1])].to(_device())
    want = torch.nonzero(x)
    r = odd.nonzero(local, dim=1, group=group)
    assert r.counts.shape == (half,)
    _equal(r.total, torch.tensor([len(want)]))
    coords, total = odd.nonzero(local, dim=1, group=group, gather=True)
    _equal(coords[: len(want)], want)
    joined = odd.join([local, local], 1, dim=1, group=group, replicated=True)
    _equal(joined, torch.cat([x, x], 1))
    # A group this process is not in raises here alone (torch's collectives skip it, and the
    # exchange of the arguments left nothing to read: an IndexError), and no other rank waits for it.
    other = groups[rank < half]
    for validate in (True, False):
        for call in (lambda: odd.nonzero(local, dim=1, group=other, validate=validate),
                     lambda: odd.join([local], 0, dim=1, group=other, validate=validate),
                     lambda: odd.split(local, [6], 0, dim=1, group=other, validate=validate)):
            with pytest.raises(opendml.Error, match=r"global rank %d\) is not in the group" % rank):
                call()
    # A DTensor on a mesh of the other half: the same error (torch's mesh has no group for this
    # process, and asking it for one raised an IndexError).
    from torch.distributed.device_mesh import DeviceMesh
    from torch.distributed.tensor import Shard, distribute_tensor

    meshes = [DeviceMesh(_device().type, list(range(half))), DeviceMesh(_device().type, list(range(half, world)))]  # on every rank, in order
    outside = distribute_tensor(x.to(_device()), meshes[rank < half], [Shard(1)])
    for validate in (True, False):
        for call in (lambda: odd.nonzero(outside, validate=validate), lambda: odd.nonzero(outside, gather=True, validate=validate),
                     lambda: odd.join([outside, outside], 0, validate=validate), lambda: odd.split(outside, [6], 0, validate=validate)):
            with pytest.raises(opendml.Error, match=r"global rank %d\) is not in the group" % rank):
                call()
    for g in groups:
        dist.destroy_process_group(g)


# ---- join and split ------------------------------------------------------------------------------

JOIN = [  # global shapes, sharded dim, axis
    ([(5, 3), (7, 3)], 0, 0),
    ([(6, 2), (6, 3), (6, 1)], 0, 1),
    ([(2, 9, 2), (2, 3, 2)], 1, 1),
    ([(2, 4, 5), (2, 4, 5)], 2, 0),
    ([(1, 2), (3, 2), (8, 2)], 0, 0),
    ([(4,), (4,)], 0, 0),
]


def case_join():
    for i, (shapes, d, axis) in enumerate(JOIN):
        for dtype in (torch.float32, torch.bool, torch.float64, torch.complex64):
            xs = [_global(s, dtype, 0.7, seed=i * 10 + k) for k, s in enumerate(shapes)]
            want = torch.cat(xs, axis)
            got = odd.join([_shard(x, d) for x in xs], axis, dim=d)
            _equal(_gathered(got, d), want)
            _equal(got, _shard(want, d).cpu())  # sharded as torch.chunk cuts the result
            # The whole result on every rank, along the sharded axis or another (which returned
            # the local piece, replicated=True notwithstanding).
            _equal(odd.join([_shard(x, d) for x in xs], axis, dim=d, replicated=True), want)
    # Shards that require grad (parameters) move as data: the check of each rank's piece before the
    # exchange once refused them, as the array layer records no gradient.
    x = _global((4 * dist.get_world_size(), 3), torch.float32, 0.7, seed=5)
    p = _shard(x, 0).clone().requires_grad_()
    # No autograd through the layer, along the sharded axis or another (the local JOIN and SPLIT
    # recorded it once, and the others did not).
    for axis in (0, 1):
        joined = odd.join([p, p], axis, dim=0)
        assert not joined.requires_grad
        _equal(_gathered(joined, 0), torch.cat([x, x], axis))
    for axis, sizes in ((1, [1, 2]), (0, [1, 4 * dist.get_world_size() - 1])):
        parts = odd.split(p, sizes, axis, dim=0)
        assert not any(q.requires_grad for q in parts)
        _equal(_gathered(parts[1], 0), x.narrow(axis, 1, sizes[1]))


def case_split():
    cases = [((11, 3), 0, 0, [4, 0, 7]), ((11, 3), 0, 1, [1, 2]), ((3, 13), 1, 1, [6, 6, 1]), ((2, 8, 3), 1, 1, 4), ((9,), 0, 0, [9])]
    for i, (shape, d, axis, sizes) in enumerate(cases):
        for dtype in (torch.float32, torch.int16, torch.float8_e4m3fn):
            x = _global(shape, torch.float32, 0.7, seed=i).to(dtype)
            want = torch.split(x, shape[axis] // sizes if isinstance(sizes, int) else sizes, axis)
            parts = odd.split(_shard(x, d), sizes, axis, dim=d)
            assert len(parts) == len(want)
            for p, w in zip(parts, want, strict=True):
                _equal(_gathered(p, d), w)
                _equal(p, _shard(w, d).cpu())
    # sizes as opendml.torch.split takes them too: a 1-D NumPy array or tensor, a 0-d one for a count
    x = _global((12, 3), torch.float32, 0.7, seed=9)
    for sizes in (np.array([4, 0, 8]), torch.tensor([4, 0, 8]), np.int64(3), torch.tensor(3), np.array(3)):
        want = torch.split(x, 4 if np.ndim(sizes) == 0 else [4, 0, 8], 0)
        parts = odd.split(_shard(x, 0), sizes, 0, dim=0)
        assert len(parts) == len(want)
        for p, w in zip(parts, want, strict=True):
            _equal(_gathered(p, 0), w)


def case_split_sizes_read_as_opendml_torch_reads_them():
    """opendml.distributed.split reads its sizes with opendml.torch.split's code: a count or sizes in
    any form it takes are the same arguments on every rank, and what it refuses raises its TypeError
    on every rank. The layer's own reading took a 1-D float tensor's sizes for [4.0, 8.0] and refused
    them as an opendml.Error, and bools, 0-d bool or float tensors and 2-D arrays likewise, where
    opendml.torch.split raises a TypeError."""
    rank, last = dist.get_rank(), dist.get_world_size() - 1
    x = _global((12, 3), torch.float32, 0.7, seed=10)
    piece = _shard(x, 0)
    # One form on one rank, another on the others: the same sizes, which the ranks agree on.
    for mine, others in (((4, 8), np.array([4, 8])), (torch.tensor([4, 8]), [np.int64(4), 8]),
                         (torch.tensor(2), np.array(2)), (np.int64(2), 2)):
        parts = odd.split(piece, mine if rank == last else others, 0, dim=0)
        for p, w in zip(parts, torch.split(x, [4, 8] if np.ndim(mine) else 6, 0), strict=True):
            _equal(_gathered(p, 0), w)
    bad = (True, torch.tensor(True), torch.tensor(2.0), torch.tensor([4.0, 8.0]), np.array([[4, 8]]), [4, None],
           [4, 8.0], "48")
    for sizes in bad:
        try:
            odt.split(x, sizes, 0)
        except TypeError as e:
            want = str(e).replace("opendml.torch.split", "opendml.distributed.split")
        else:
            raise AssertionError(f"opendml.torch.split took {sizes!r}")
        for on_rank in (last, None):  # on one rank only, then on every rank
            with pytest.raises(TypeError, match=r"%s \(on rank %d\)" % (re.escape(want), 0 if on_rank is None else last)):
                odd.split(piece, sizes if on_rank in (None, rank) else [4, 8], 0, dim=0)
    _equal(_gathered(odd.split(piece, [4, 8], 0, dim=0)[1], 0), x[4:])  # the world still works
    # The sizes as read come back in the arguments' record, which split reads them from (it kept them
    # in a list that the reading function appended to), with validate on and off.
    for validate in (True, False):
        a = odd._arguments("op", [piece], 0, None, validate, lambda: ("split", odt._split_sizes("op", np.array([4, 8])), 0))
        assert a.args == ("split", [4, 8], 0) and type(a.args[1][0]) is int


def case_lazy_views():
    """Shards that are lazily conjugated or negated views (z.conj(), its .imag): the values they stand
    for, as torch's operators take them, on every path (the pieces went to the array layer and the
    collectives as their raw bits, and failed on some ranks while the others waited)."""
    z = torch.complex(_global((9, 4), torch.float32, 0.7, seed=41), _global((9, 4), torch.float32, 0.7, seed=42))
    sizes = [2] * (dist.get_world_size() - 1) + [9 - 2 * (dist.get_world_size() - 1)]  # uneven
    conj, imag = _shard(z, 0, sizes).conj(), _shard(z, 0, sizes).conj().imag
    assert conj.is_conj() and imag.is_neg()
    for part, whole in ((conj, z.conj().resolve_conj()), (imag, z.conj().imag.resolve_neg())):
        _equal(odd.join([part, part], 0, dim=0, replicated=True), torch.cat([whole, whole], 0))
        _equal(odd.join([part, part], 1, dim=0, replicated=True), torch.cat([whole, whole], 1))
        got = odd.split(part, [3, 6], 0, dim=0)
        for p, w in zip(got, torch.split(whole, [3, 6], 0), strict=True):
            _equal(_gathered(p, 0), w)
    coords, total = odd.nonzero(imag, dim=0, gather=True)
    want = torch.nonzero(z.conj().imag.resolve_neg())
    _equal(total, torch.tensor([len(want)]))
    _equal(coords[: len(want)], want)


def case_dtensor_join_split():
    from torch.distributed.tensor import Replicate, Shard, distribute_tensor

    mesh = _mesh()
    a, b = _global((6, 5), torch.float32, 0.5, 1), _global((3, 5), torch.float32, 0.5, 2)
    for placement in (Shard(0), Shard(1), Replicate()):
        ad, bd = (distribute_tensor(t.to(_device()), mesh, [placement]) for t in (a, b))
        y = odd.join([ad, bd], 0)
        assert y.placements == (placement,) and y.shape == (9, 5)
        _equal(y.full_tensor(), torch.cat([a, b]))
        p, q = odd.split(y, [2, 7], 0)
        assert p.placements == (placement,) and q.shape == (7, 5)
        _equal(p.full_tensor(), a[:2])
        _equal(q.full_tensor(), torch.cat([a[2:], b]))
    ad, bd = (distribute_tensor(t.to(_device()), mesh, [Shard(0)]) for t in (a, b))
    y = odd.join([ad, bd], 0, replicated=True)
    assert y.placements == (Replicate(),)
    _equal(y.to_local(), torch.cat([a, b]))


def case_no_movement_when_pieces_line_up():
    # Inputs whose rows all stay on the ranks that hold them: no collective at all (any would fail
    # here), where an uneven split of the same rows does move some.
    world = dist.get_world_size()
    a = _global((2 * world, 3), torch.float32, 1.0, seed=5)
    all_to_all = odd.dist.all_to_all_single

    def refused(*args, **kwargs):
        raise AssertionError("a collective where no row changes rank")

    odd.dist.all_to_all_single = refused
    try:
        got = odd.join([_shard(a, 0), _shard(a[:0], 0)], 0, dim=0, validate=False)
        _equal(got, _shard(a, 0).cpu())
        parts = odd.split(_shard(a, 0), [2 * world, 0], 0, dim=0, validate=False)
        _equal(parts[0], _shard(a, 0).cpu())
        assert parts[1].shape == (0, 3)
        with pytest.raises(AssertionError, match="no row changes rank"):
            odd.split(_shard(a, 0), [1, 2 * world - 1], 0, dim=0, validate=False)
    finally:
        odd.dist.all_to_all_single = all_to_all


def case_graph_capture():
    # Captured on each rank after a warm-up (which compiles the DirectML operator and checks the
    # arguments once: the check waits for the host, so the captured calls
    # leave it out), then replayed on new values. NCCL's watchdog thread polls events during the
    # capture, hence the thread-local capture mode.
    from test_torch_cuda import warm_then_capture  # here: importing it costs every process seconds

    # The gathered result along 1 joins the gathered shards; along 0 it reads them where they are.
    shape, d = (64, 96), 1
    local, down = _shard(torch.zeros(shape), d), _shard(torch.zeros(shape), 0)

    def run():
        return (odd.nonzero(local, dim=d, validate=False), odd.nonzero(local, dim=d, gather=True, validate=False),
                odd.nonzero(down, dim=0, gather=True, validate=False))

    odd.nonzero(local, dim=d)
    graph, (sharded, (coords, total), (coords0, total0)) = warm_then_capture(run, capture_error_mode="thread_local")
    for seed, density in enumerate((0.0, 0.05, 0.5, 1.0)):
        x = _global(shape, torch.float32, density, seed)
        local.copy_(_shard(x, d))
        down.copy_(_shard(x, 0))
        graph.replay()
        torch.cuda.synchronize()
        want = torch.nonzero(x)
        mine = _by_rank(want, d, shape)[dist.get_rank()]
        _equal(sharded.count, torch.tensor([len(mine)]))
        _equal(sharded.coords[: len(mine)], mine)
        _equal(total, torch.tensor([len(want)]))
        _equal(coords[: len(want)], want)
        _equal(total0, torch.tensor([len(want)]))
        _equal(coords0[: len(want)], want)


def case_no_host_wait():
    # With the argument check left out, nothing waits for the host: CUDA's sync debug mode turns
    # every synchronizing call torch makes into an error. (The graph capture proves it for nonzero
    # too; this covers the joins and splits as well, which move data through all-to-alls.)
    x = _global((16, 24), torch.float32, 0.5, seed=9)
    across, down = _shard(x, 1), _shard(x, 0)

    def run():
        return (odd.nonzero(across, dim=1, validate=False), odd.nonzero(across, dim=1, gather=True, validate=False),
                odd.join([down, down], 0, dim=0, validate=False), odd.join([down, down], 0, dim=0, replicated=True, validate=False),
                odd.split(down, [3, 13], 0, dim=0, validate=False))

    run()  # compiles the operators, connects NCCL
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        sharded, (coords, total), joined, whole, parts = run()
    finally:
        torch.cuda.set_sync_debug_mode("default")
    torch.cuda.synchronize()
    want = torch.nonzero(x)
    _equal(sharded.coords[: int(sharded.count)], _by_rank(want, 1, x.shape)[dist.get_rank()])
    _equal(coords[: len(want)], want)
    _equal(joined, _shard(torch.cat([x, x]), 0).cpu())
    _equal(whole, torch.cat([x, x]))
    _equal(parts[1], _shard(x[3:], 0).cpu())


# ---- mismatches between ranks --------------------------------------------------------------------


def case_mismatches_raise_on_every_rank():
    import numpy as np

    rank, dev = dist.get_rank(), _device()
    last = dist.get_world_size() - 1
    x = torch.ones(4, 3, device=dev)
    with pytest.raises(opendml.Error, match=r"input 0 is torch.float16 \[4, 3\] on \w+ on rank %d but torch.float32" % last):
        odd.nonzero(x.half() if rank == last else x, dim=0)
    with pytest.raises(opendml.Error, match="sharded along"):
        odd.nonzero(x, dim=1 if rank == last else 0)
    with pytest.raises(opendml.Error, match="except along the sharded dimension 0"):
        odd.nonzero(torch.ones(4, 2 if rank == last else 3, device=dev), dim=0)
    with pytest.raises(opendml.Error, match="disagree on the arguments"):
        odd.join([x, x], 1 if rank == last else 0, dim=0)
    with pytest.raises(opendml.Error, match=r"the ranks disagree on the arguments: rank 0 has \('split', \[1, 3\], 5\)"):
        odd.split(x, [1, 3], 5 if rank == 0 else 0, dim=0)
    with pytest.raises(opendml.Error, match=r"axis 2 is outside .*\(on rank 0\)"):
        odd.nonzero(x, dim=2 if rank == 0 else 0)  # a problem on one rank only
    with pytest.raises(TypeError, match=r"expected a torch.Tensor .*\(on rank %d\)" % last):
        odd.nonzero("x" if rank == last else x, dim=0)
    with pytest.raises(opendml.Error, match="add up to"):  # the same bad sizes everywhere
        odd.split(x, [1, 1], 0, dim=0)
    with pytest.raises(opendml.Error, match="shards along dimension 0 differ"):
        odd.join([torch.ones(4, 2, device=dev), torch.ones(4 + (rank == 0) - (rank == 1), 2, device=dev)], 1, dim=0)
    with pytest.raises(TypeError, match=r"expected a list of tensors, got Tensor \(on rank %d\)" % last):
        odd.join(x if rank == last else [x], 0, dim=0)
    # sizes are read by opendml.torch.split's own code, and what it refuses (a TypeError) is
    # refused on every rank, whether one rank gave it or all did.
    with pytest.raises(TypeError, match=r"opendml.distributed.split: sizes must be an integer, not str \(on rank 0\)"):
        odd.split(x, "ab", 0, dim=0)
    with pytest.raises(TypeError, match=r"sizes must be an integer or a sequence of integers, not object \(on rank %d\)" % last):
        odd.split(x, object() if rank == last else [4], 0, dim=0)
    # What the kernels do not take raises on every rank, also on ranks whose piece is empty and
    # run no kernel (which waited in the collective while the others raised).
    mine = 4 if rank == 0 else 0
    with pytest.raises(opendml.UnsupportedError, match="DataType is FLOAT64"):
        odd.nonzero(torch.ones(mine, 3, dtype=torch.float64, device=dev), dim=0)
    with pytest.raises(opendml.UnsupportedError, match="complex128"):
        odd.join([torch.ones(mine, 3, dtype=torch.complex128, device=dev)] * 2, 0, dim=0)
    with pytest.raises(opendml.UnsupportedError, match="complex128"):
        odd.split(torch.ones(mine, 3, dtype=torch.complex128, device=dev), [1, 2], 1, dim=0)
    with pytest.raises(opendml.Error, match="DimensionCount is 9"):
        odd.nonzero(torch.ones((mine,) + (1,) * 8, device=dev), dim=0)
    for validate in (True, False):
        with pytest.raises(opendml.UnsupportedError, match="DataType is FLOAT64"):
            odd.nonzero(torch.ones(mine, 3, dtype=torch.float64, device=dev), dim=0, validate=validate)
    # A float dimension or axis is no integer, as in opendml.torch: a TypeError (docs/distributed.md),
    # where the shape rules raised an opendml.Error; on every rank where one rank gave it.
    for call in (lambda: odd.nonzero(x, dim=1.0 if rank == last else 0), lambda: odd.join([x, x], 1.0, dim=0),
                 lambda: odd.split(x, 3, 1.0, dim=0), lambda: odd.split(x, 3, np.float64(1), dim=0),
                 lambda: odd.join([x, x], torch.tensor(1.0), dim=0)):
        with pytest.raises(TypeError, match=r"(dim|axis) must be an integer, not (float|float64|Tensor of torch.float32 and shape \[\])"):
            call()
    with pytest.raises(opendml.Error, match="count is 0"):
        odd.chunk_sizes(5, 0)
    # A DTensor on one rank and a plain tensor on another, and a sparse piece on one rank, raise on
    # every rank (the one rank raised after the exchange, and the others waited in a collective).
    from torch.distributed.tensor import Shard, distribute_tensor

    xd = distribute_tensor(torch.ones(4 * dist.get_world_size(), 3, device=dev), _mesh(), [Shard(0)])
    with pytest.raises(opendml.Error, match="rank %d passes plain tensors, rank 0 DTensors" % last):
        odd.nonzero(xd.to_local() if rank == last else xd, dim=0 if rank == last else None)
    with pytest.raises(opendml.UnsupportedError, match=r"torch.sparse_coo tensor; .* takes strided ones \(on rank %d\)" % last):
        odd.nonzero(x.to_sparse() if rank == last else x, dim=0)
    # A piece the array layer refuses for its memory (an address its element size does not divide,
    # which torch takes) raises on every rank too: it once raised on its rank alone, after the
    # exchange, and the others waited in the next collective.
    if dev.type == "cpu":  # torch.frombuffer makes CPU tensors
        raw = bytearray(4 * 13)
        skewed = torch.frombuffer(raw, dtype=torch.float32, count=12, offset=1).view(4, 3).fill_(1)
        mine_x = skewed if rank == last else x
        for call in (lambda: odd.nonzero(mine_x, dim=0),
                     lambda: odd.join([mine_x, x], 0, dim=0, replicated=True),
                     lambda: odd.split(mine_x, [1, 2], 1, dim=0)):
            with pytest.raises(opendml.UnsupportedError, match=r"not a multiple of its element size \(on rank %d\)" % last):
                call()
        # A quantized piece, on one rank or on every one, raises opendml.torch's UnsupportedError (a
        # NotImplementedError): the check of what the kernels take made zeros of its type, which
        # torch refused with a NotImplementedError that every rank raised as an opendml.Error.
        q = torch.quantize_per_tensor(torch.ones(4, 3), 0.5, 0, torch.quint8)
        for mine_q in (q if rank == last else x, q):
            for call in (lambda: odd.nonzero(mine_q, dim=0), lambda: odd.join([mine_q, mine_q], 0, dim=0),
                         lambda: odd.split(mine_q, [1, 2], 1, dim=0)):
                with pytest.raises(opendml.UnsupportedError, match=r"quantized type; dequantize\(\) it first \(on rank \d\)"):
                    call()
    # A rank's inputs on two devices are refused, as torch.cat refuses them, on every path: an empty
    # one (here on the meta device, as another GPU would be) was dropped along the sharded axis and
    # the join went ahead, and along another axis the local JOIN refused it on its rank alone.
    for axis, replicated in ((0, False), (0, True), (1, False)):
        other = torch.ones((0, 3) if axis == 0 else (4, 0), device="meta")
        with pytest.raises(opendml.Error, match=r"input 1 is on meta but input 0 on %s\S*; a rank's inputs must be on one device \(on rank 0\)" % dev.type):
            odd.join([x, other], axis, dim=0, replicated=replicated)
    # Bools are no integers here, as in opendml.torch and torch.cat; a count of NumPy's is one.
    for call in (lambda: odd.nonzero(x, dim=True), lambda: odd.join([x, x], True, dim=0),
                 lambda: odd.split(x, 3, True, dim=0)):
        with pytest.raises(TypeError, match="must be an integer, not bool"):
            call()
    # A bool tensor too (its __index__ made it dimension or axis 1), on every rank where one rank gave it.
    true = torch.tensor(True)
    for call in (lambda: odd.nonzero(x, dim=true if rank == last else 0), lambda: odd.join([x, x], true, dim=0),
                 lambda: odd.join([x, x], true, dim=0, replicated=True), lambda: odd.split(x, 3, true, dim=0)):
        with pytest.raises(TypeError, match="must be an integer, not a bool tensor"):
            call()
    with pytest.raises(TypeError, match=r"sizes must be an integer, not bool \(on rank 0\)"):
        odd.split(x, [True, 2], 1, dim=0)
    assert [q.shape for q in odd.split(x, np.int64(3), 1, dim=0)] == [(4, 1)] * 3
    # One axis written two ways is the same axis.
    assert odd.join([x, x], -1 if rank == last else np.int64(1), dim=0).shape == (4, 6)
    # Sizes that are the same numbers compare equal, as a tuple or a list, as ints or NumPy's.
    world = dist.get_world_size()
    sizes = (1, 4 * world - 1)
    parts = odd.split(x, sizes if rank == last else [np.int64(sizes[0]), sizes[1]], 0, dim=0)
    assert [p.shape[0] for p in parts] == [odd.chunk_sizes(n, world)[rank] for n in sizes]
    # The world still works: nothing was left hanging.
    coords, total = odd.nonzero(x, dim=0, gather=True)
    assert int(total) == x.numel() * dist.get_world_size()


def case_any_local_exception_raises_on_every_rank():
    # Whatever one rank's arguments raise while they are checked, before the exchange, every rank
    # raises: torch's RuntimeError too (a nested tensor's shape), which escaped the check on its
    # rank alone while the others waited in the exchange for it.
    rank, last, dev = dist.get_rank(), dist.get_world_size() - 1, _device()
    x = torch.ones(4, 3, device=dev)
    with warnings.catch_warnings():  # torch's: the strided layout of nested tensors is a prototype
        warnings.simplefilter("ignore", UserWarning)
        nested = torch.nested.nested_tensor([torch.ones(2), torch.ones(3)], device=dev)
    for mine, on in ((nested if rank == last else x, last), (nested, 0)):  # on one rank, on every one
        with pytest.raises(opendml.UnsupportedError, match=r"the piece is a nested tensor; .* takes strided ones \(on rank %d\)" % on):
            odd.nonzero(mine, dim=0)
        with pytest.raises(opendml.UnsupportedError, match="nested tensor"):
            odd.join([x, mine], 0, dim=0)
    check_piece = odd._check_piece

    # Anything else that one rank raises, as every rank raises it: torch's own NotImplementedError
    # (an operator it lacks for a type) as an UnsupportedError, a ValueError as an opendml.Error with
    # its message, and the rest (a RuntimeError of torch's, say) as an opendml.Error naming its type.
    raised = ((RuntimeError, opendml.Error, "RuntimeError: broken on this rank"),
              (NotImplementedError, opendml.UnsupportedError, "broken on this rank"),
              (ValueError, opendml.Error, "broken on this rank"),
              (TypeError, TypeError, "broken on this rank"))
    try:
        for error, expected, message in raised:
            def broken(kind, t, error=error):
                raise error("broken on this rank")

            odd._check_piece = broken if rank == last else check_piece
            for call in (lambda: odd.nonzero(x, dim=0, gather=True), lambda: odd.join([x, x], 1, dim=0),
                         lambda: odd.split(x, [1, 2], 1, dim=0)):
                with pytest.raises(expected, match=r"^%s \(on rank %d\)$" % (message, last)) as caught:
                    call()
                assert type(caught.value) is expected
    finally:
        odd._check_piece = check_piece
    # The world still works: nothing was left hanging.
    assert int(odd.nonzero(x, dim=0, gather=True)[1]) == x.numel() * dist.get_world_size()


def case_benchmark(path):
    # The benchmark's measuring code at a tiny size on this world (torchrun's part is
    # test_benchmark_command's).
    sys.path.insert(0, os.path.join(REPO, "bench", "python"))
    import bench_distributed

    rows = bench_distributed.main(["--device", _device().type, "--log2", "10", "--repeat", "2", "--json", path])
    if dist.get_rank() == 0:
        with open(path) as f:
            written = json.load(f)["rows"]
        assert written == rows
        methods = {(r["case"], r["method"]) for r in rows}
        assert ("nonzero", "sharded along 0") in methods and ("join", "along 0 (sharded)") in methods
        assert ("nonzero", "gathered along 0") in methods and ("nonzero", "gathered along 1") in methods
        assert all(r["gpus"] == dist.get_world_size() and r["ms"] > 0 for r in rows)
        assert all(r["efficiency"] > 0 for r in rows if r["method"].startswith(("sharded", "along")))


CASES = [case_nonzero, case_nonzero_any_sizes, case_gathered_nonzero_reads_the_gathered_input, case_one_element_shards_with_any_strides, case_nonzero_dtensor, case_nonzero_validate_off,
         case_subgroups, case_join, case_split, case_split_sizes_read_as_opendml_torch_reads_them, case_dtensor_join_split, case_lazy_views, case_no_movement_when_pieces_line_up,
         case_mismatches_raise_on_every_rank, case_any_local_exception_raises_on_every_rank]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__[5:])
@pytest.mark.parametrize("backend, size", WORLDS)
def test_distributed(backend, size, case):
    _world(backend, size).run(case)


@pytest.mark.parametrize("backend, size", WORLDS)
def test_benchmark_runs(backend, size, tmp_path):
    _world(backend, size).run(case_benchmark, str(tmp_path / "bench.json"))


def test_benchmark_command():
    # Without torchrun the benchmark is a world of one process: its command line, at a tiny size.
    done = subprocess.run([sys.executable, os.path.join(REPO, "bench", "python", "bench_distributed.py"), "--device", "cpu", "--log2", "8", "--repeat", "1"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "| nonzero | 1 | 2^8 | sharded along 0 |" in done.stdout, done.stdout


@pytest.mark.cuda
@pytest.mark.parametrize("size", [2, 4])
def test_graph_capture_of_the_sharded_nonzero(size):
    _world("nccl", size).run(case_graph_capture)


@pytest.mark.cuda
@pytest.mark.parametrize("size", [2, 4])
def test_no_host_wait_on_the_gpu(size):
    _world("nccl", size).run(case_no_host_wait)
