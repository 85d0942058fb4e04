"""The array and descriptor layers on CUDA: PyTorch, CuPy and JAX interplay, zero copy, streams,
CUDA graphs. Every test carries the `cuda` marker: skipped, with the reason, without a GPU."""

import subprocess
import sys

import pytest
import torch

import opendml

pytestmark = pytest.mark.cuda
SEED = 20261122
COPY_TYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int8, torch.int16, torch.int32,
              torch.int64, torch.uint8, torch.bool]
NONZERO_TYPES = [torch.float16, torch.bfloat16, torch.float32, torch.int8, torch.int16, torch.int32, torch.uint8,
                 torch.bool]


def sample(shape, dtype, generator):
    values = (torch.randn(shape, generator=generator) * 2).round()  # about a third zeros
    values[values == 0] = -0.0
    return values.to(dtype).cuda()


def bindings():
    return opendml._opendml._last_bindings()


@pytest.mark.parametrize("dtype", COPY_TYPES, ids=str)
def test_torch_concat_split_bit_exact_zero_copy(dtype):
    g = torch.Generator().manual_seed(SEED)
    x = sample((37, 53), dtype, g)
    view = x.T[1:]  # non-contiguous, offset by one element
    r = opendml.concat([x, x[:5]], axis=0)
    assert r.device == x.device and torch.equal(r, torch.cat([x, x[:5]]))
    r = opendml.concat([view, view], axis=-1)
    assert torch.equal(r, torch.cat([view, view], -1))
    assert bindings() == ([view.data_ptr()] * 2, [r.data_ptr()])
    parts = opendml.split(view, [10, 0, 42], axis=-2)
    assert [p.shape[0] for p in parts] == [10, 0, 42]
    for got, want in zip(parts, torch.split(view, [10, 0, 42], dim=-2)):
        assert torch.equal(got, want)
    out = torch.empty(104, 37, dtype=dtype, device="cuda")
    assert opendml.concat([view, view], out=out) is out and torch.equal(out, torch.cat([view, view]))


@pytest.mark.parametrize("dtype", NONZERO_TYPES, ids=str)
def test_torch_nonzero_bit_exact(dtype):
    g = torch.Generator().manual_seed(SEED)
    x = sample((3, 41, 29), dtype, g)
    for v in (x, x.transpose(0, 2), x[:, 1::3]):
        coords, count = opendml.nonzero(v)
        assert coords.device == v.device and count.device == v.device
        assert coords.shape == (v.numel(), v.dim()) and count.shape == (1,)
        want = torch.nonzero(v)
        n = int(count.item())
        assert n == len(want) and torch.equal(coords[:n].long(), want)
        assert bindings()[0] == [v.data_ptr()]
        coords, count = opendml.nonzero(v, transposed=True)
        assert coords.shape == (v.dim(), v.numel()) and torch.equal(coords[:, :n].long(), want.T)


def test_nonzero_large():
    g = torch.Generator().manual_seed(SEED)
    x = (torch.rand(1 << 24, generator=g) < 0.3).cuda().view(1 << 12, 1 << 12)
    coords, count = opendml.nonzero(x)
    want = torch.nonzero(x)
    n = int(count.item())
    assert n == len(want) and torch.equal(coords[:n].long(), want)


def test_runs_on_the_current_stream_without_waiting():
    x = (torch.rand(1 << 20, device="cuda") > 0.5).float()
    opendml.nonzero(x)  # compiled and cached: a first call may wait once for initialization
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        torch.cuda._sleep(200_000_000)  # keeps s busy for a while
        coords, count = opendml.nonzero(x)
        still_busy = not s.query()  # the call returned before s finished: no host wait
    assert still_busy
    s.synchronize()
    n = int(count.item())
    assert torch.equal(coords[:n].long(), torch.nonzero(x))


def test_explicit_stream():
    a = torch.arange(1000, device="cuda", dtype=torch.float32)
    for stream in (torch.cuda.Stream(), torch.cuda.Stream().cuda_stream):
        out = torch.empty(2000, device="cuda")
        opendml.concat([a, a], out=out, stream=stream)  # the DLPack handshake orders stream after a
        torch.cuda.synchronize()
        assert torch.equal(out, torch.cat([a, a]))


def test_a_stream_other_than_the_current_one_orders_the_current_one_after_it():
    """The results and the temporary region come from the current stream's pool, which could hand
    their memory on while the work on stream= runs: the current stream waits for the work (an event,
    not the host). And a stream= that captures a graph must be the current one."""
    x = (torch.arange(1 << 16, device="cuda") % 3 == 0).float()
    opendml.nonzero(x)  # compiled and cached
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        torch.cuda._sleep(2_000_000_000)  # keeps s busy for about a second
    coords, count = opendml.nonzero(x, stream=s)  # nonzero's temporary region: freed at once
    current_busy = not torch.cuda.current_stream().query()  # holds a wait for s
    s_busy = not s.query()  # after: s was busy when the current stream was asked
    assert s_busy, "s finished before the check (and the host did not wait for it)"
    assert current_busy  # it waits for s
    scratch = torch.full((1 << 20,), 7.0, device="cuda")  # may reuse the temporary's memory: after s
    torch.cuda.synchronize()
    n = int(count.item())
    assert torch.equal(coords[:n].long(), torch.nonzero(x)) and bool((scratch == 7).all())
    graph, other = torch.cuda.CUDAGraph(), torch.cuda.Stream()
    capture = torch.cuda.Stream()
    with torch.cuda.graph(graph, stream=capture):
        with torch.cuda.stream(other), pytest.raises(opendml.UnsupportedError, match="stream= is capturing a CUDA graph"):
            opendml.nonzero(x, stream=capture)
    # In a capture: a stream= outside it is refused before any work (the wait would break the
    # capture), and one forked into it is joined back by the call, so that the graph holds the work.
    y, side, graph = torch.zeros_like(x), torch.cuda.Stream(), torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        with pytest.raises(opendml.UnsupportedError, match="stream= is not capturing a CUDA graph and the current"):
            opendml.nonzero(y, stream=side)
        side.wait_stream(torch.cuda.current_stream())  # side forks into the capture
        coords, count = opendml.nonzero(y, stream=side)
    y.copy_(x)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(coords[: int(count.item())].long(), torch.nonzero(x))


def test_cuda_graph_capture_and_replay():
    x = torch.zeros(64, 64, device="cuda")
    coords = torch.empty(64 * 64, 2, dtype=torch.uint32, device="cuda")
    count = torch.empty(1, dtype=torch.uint32, device="cuda")
    joined = torch.empty(128, 64, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm-up outside capture: compiles and caches
        opendml.nonzero(x, out=(coords, count))
        opendml.concat([x, x.T], out=joined)
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        opendml.nonzero(x, out=(coords, count))
        opendml.concat([x, x.T], out=joined)
    g = torch.Generator().manual_seed(SEED)
    for _ in range(3):
        x.copy_((torch.rand(64, 64, generator=g) < 0.2).float())
        graph.replay()
        torch.cuda.synchronize()
        want = torch.nonzero(x)
        assert int(count.item()) == len(want) and torch.equal(coords[: len(want)].long(), want)
        assert torch.equal(joined, torch.cat([x, x.T]))


def test_cuda_array_interface_without_dlpack():
    class Interface:  # what Numba's device arrays offer: no __dlpack__
        def __init__(self, t):
            self.t = t
            self.__cuda_array_interface__ = t.__cuda_array_interface__

    a = torch.arange(12, device="cuda", dtype=torch.int32).reshape(3, 4)
    out = torch.empty(3, 8, dtype=torch.int32, device="cuda")
    opendml.concat([Interface(a), Interface(a)], axis=1, out=out)
    torch.cuda.synchronize()
    assert torch.equal(out, torch.cat([a, a], 1))
    with pytest.raises(opendml.UnsupportedError, match="pass out="):
        opendml.concat([Interface(a)])


def test_cuda_array_interface_views_streams_empty_and_read_only():
    class Interface:  # a copy of torch's interface, edited as other producers write theirs
        def __init__(self, t, stream=None, read_only=False):
            cai = dict(t.__cuda_array_interface__)
            if stream is not None:
                cai.update(version=3, stream=stream)  # version 3: the producer's stream
            if read_only:
                cai["data"] = (cai["data"][0], True)
            self.__cuda_array_interface__ = cai

    a = torch.arange(24, device="cuda", dtype=torch.float32).reshape(4, 6)
    view = a.T[1:]  # strides in bytes, an offset of one element
    legacy = torch.cuda.current_stream().cuda_stream or 1  # 0 is not allowed in version 3; 1 is the legacy stream
    out = torch.empty(10, 4, device="cuda")
    opendml.concat([Interface(view), Interface(view, stream=legacy)], out=out)
    torch.cuda.synchronize()
    assert torch.equal(out, torch.cat([view, view]))
    # An empty array's pointer is 0: it is placed on the current device.
    out = torch.empty(5, 4, device="cuda")
    opendml.concat([Interface(torch.empty(0, 4, device="cuda")), Interface(view)], out=out)
    torch.cuda.synchronize()
    assert torch.equal(out, view)
    with pytest.raises(opendml.Error, match="read-only"):
        opendml.concat([view], out=Interface(torch.empty(5, 4, device="cuda"), read_only=True))


def test_errors_on_cuda():
    a = torch.zeros(4, device="cuda")
    with pytest.raises(opendml.Error, match="arrays\\[1\\] is on cpu but the work runs on cuda:0"):
        opendml.concat([a, torch.zeros(4)])
    with pytest.raises(opendml.UnsupportedError, match="cuda:99"):
        opendml.Device("cuda:99")
    with pytest.raises(opendml.Error, match="stream is a str"):
        opendml.concat([a], stream="fast")


def test_descriptor_layer_on_cuda():
    F32 = opendml.DataType.FLOAT32
    desc = opendml.JoinDesc([opendml.TensorDesc(F32, [1, 1, 2, 3]), opendml.TensorDesc(F32, [1, 1, 2, 4])],
                            opendml.TensorDesc(F32, [1, 1, 2, 7]), 3)
    op = opendml.Operator(opendml.Device("cuda"), desc).compile()
    op.initialize()
    a = torch.arange(1, 7, dtype=torch.float32, device="cuda")
    b = torch.arange(7, 15, dtype=torch.float32, device="cuda")
    out = torch.zeros(14, device="cuda")
    op.execute([a, b], [out], stream=torch.cuda.current_stream())
    torch.cuda.synchronize()
    assert out.tolist() == [1, 2, 3, 7, 8, 9, 10, 4, 5, 6, 11, 12, 13, 14]
    with pytest.raises(opendml.Error, match="inputs\\[0\\] is on cpu but the work runs on cuda:0"):
        op.execute([a.cpu(), b], [out])


def test_cupy():
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed (pip install cupy-cuda13x)")
    x = cupy.arange(24, dtype=cupy.float32).reshape(4, 6)
    r = opendml.concat([x, x.T[:4].T], axis=1)
    assert isinstance(r, cupy.ndarray) and bool((r == cupy.concatenate([x, x[:, :4]], axis=1)).all())
    assert bindings()[1] == [r.data.ptr]
    coords, count = opendml.nonzero(x)
    assert isinstance(coords, cupy.ndarray) and int(count[0]) == 23
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        parts = opendml.split(x, [1, 3])
    s.synchronize()
    assert bool((parts[1] == x[1:]).all())


def test_jax_on_gpu():
    jax = pytest.importorskip("jax")
    try:
        gpu = jax.devices("gpu")[0]
    except RuntimeError as e:
        pytest.skip(f"JAX has no GPU backend here (pip install 'jax[cuda13]'): {e}")
    import numpy as np

    x = jax.device_put(np.arange(12, dtype=np.float32).reshape(3, 4), gpu)
    r = opendml.concat([x, x], axis=1)
    assert isinstance(r, jax.Array) and r.devices() == {gpu}
    np.testing.assert_array_equal(np.asarray(r), np.concatenate([np.asarray(x)] * 2, axis=1))
    coords, count = opendml.nonzero(x)
    np.testing.assert_array_equal(np.asarray(coords)[: int(count[0])], np.argwhere(np.asarray(x)))


@pytest.mark.parametrize("chosen", [None, 0, "last"])
def test_importing_opendml_jax_keeps_the_current_device(chosen):
    """opendml.jax starts JAX's platforms at import, and XLA leaves the last GPU it sets up current:
    PyTorch's "cuda" followed it to cuda:1 on a machine of two. In a fresh process, because the
    import happens once; with the device chosen by torch.cuda.set_device first, or none (0)."""
    pytest.importorskip("jax")
    count = torch.cuda.device_count()
    if count < 2:
        pytest.skip(f"a moved device shows only on 2 GPUs or more; this machine has {count}")
    want = {None: 0, 0: 0, "last": count - 1}[chosen]
    choose = "" if chosen is None else f"torch.cuda.set_device({want}); "
    code = (f"import torch; {choose}import opendml.jax; "
            "print(torch.cuda.current_device(), torch.zeros(1, device='cuda').device.index)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == [str(want), str(want)]


def test_torch_and_cupy_share_a_stream():
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed (pip install cupy-cuda13x)")
    t = torch.arange(10, device="cuda", dtype=torch.float32)
    c = cupy.from_dlpack(t)  # the same memory
    r = opendml.concat([c, c])
    torch.cuda.synchronize()
    assert bool((r == cupy.concatenate([c, c])).all())
    assert bindings()[0] == [t.data_ptr(), t.data_ptr()]


def test_past_32_bits_on_the_gpu():
    """opendml's 64-bit indices extension, which the array layer asks for where arrays need it:
    inputs past 2^32 - 1 elements (4 GiB of uint8; the coordinates take 32 GiB)."""
    rows, cols = 2**16 + 1, 2**16
    x = torch.zeros(rows, cols, dtype=torch.uint8, device="cuda")
    hits = [(0, 5), (2**15, 7), (rows - 1, cols - 1)]  # the last lies past linear index 2^32
    for r, c in hits:
        x[r, c] = 1
    coords = torch.empty(rows * cols, 2, dtype=torch.uint32, device="cuda")
    count = torch.empty(1, dtype=torch.int64, device="cuda")
    opendml.nonzero(x, out=(coords, count))  # 32-bit coordinates, a 64-bit count
    assert count.item() == 3 and coords[:3].cpu().to(torch.int64).tolist() == [list(h) for h in hits]
    del coords
    halves = opendml.split(x, 2, axis=1)  # 2^31 + 2^15 elements each, from a 2^32 + 2^16 input
    assert all(torch.equal(h, w) for h, w in zip(halves, torch.split(x, cols // 2, dim=1)))
    joined = opendml.concat(halves, axis=1)
    assert torch.equal(joined, x)
    del x, halves, joined
    torch.cuda.empty_cache()


def test_empty_arrays_on_the_gpu():
    coords, count = opendml.nonzero(torch.zeros(0, 3, device="cuda"))
    assert coords.shape == (0, 2) and coords.is_cuda and count.is_cuda and count.tolist() == [0]
    parts = opendml.split(torch.arange(6, device="cuda").reshape(3, 2), [0, 3, 0])
    assert [p.shape[0] for p in parts] == [0, 3, 0] and all(p.is_cuda for p in parts)
    assert opendml.concat([torch.zeros(0, 2, dtype=parts[1].dtype, device="cuda"), parts[1]]).shape == (3, 2)
