"""opendml.torch on a GPU: CUDA graph capture and replay on new values, the caller's current stream,
torch.compile with CUDA graphs, and torch.nonzero's capture failing where opendml's succeeds."""

import pytest
import torch
from torch._dynamo.utils import counters

import opendml.torch as odt

pytestmark = pytest.mark.cuda


def warm_then_capture(fn, **graph_options):
    """fn captured in a CUDA graph after a warm-up on a side stream (the first call compiles the
    DirectML operator, which a capture must not do). Returns (graph, fn's output). graph_options
    go to torch.cuda.graph.

    The capture is thread-local: opendml's calls, on this thread, are held to the capture's rules,
    but another library's thread in the same pytest process is not (after the JAX tests, XLA's
    threads may query events while a capture runs, which a global capture counts against it: one
    full `pytest -m cuda` run on an H100 had this module's first capture invalidated, where the
    module alone passed twice with the same build; bench/NOTES.md)."""
    graph_options.setdefault("capture_error_mode", "thread_local")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, **graph_options):
        out = fn()
    return graph, out


def test_nonzero_replays_on_new_values():
    x = torch.zeros(64, 33, device="cuda")
    graph, (coords, count) = warm_then_capture(lambda: odt.nonzero(x))
    g = torch.Generator(device="cuda").manual_seed(0)
    for density in (0.0, 0.01, 0.5, 1.0):
        x.copy_((torch.rand(x.shape, device="cuda", generator=g) < density) * torch.randn(x.shape, device="cuda", generator=g))
        graph.replay()
        want = torch.nonzero(x)
        assert int(count) == len(want) and torch.equal(coords[:count], want)


def test_join_and_split_replay_on_new_values():
    a, b = torch.zeros(8, 3, device="cuda"), torch.zeros(8, 5, dtype=torch.float32, device="cuda").t()
    graph, (joined, parts) = warm_then_capture(lambda: (odt.join([a, b.t()], 1), odt.split(b, [1, 0, 4], 0)))
    for seed in range(3):
        torch.manual_seed(seed)
        a.copy_(torch.randn_like(a))
        b.copy_(torch.randn_like(b))
        graph.replay()
        assert torch.equal(joined, torch.cat([a, b.t()], 1))
        assert all(torch.equal(p, q) for p, q in zip(parts, torch.split(b, [1, 0, 4], 0)))


def test_opcheck_on_the_gpu():
    dense = torch.rand(4, 6, device="cuda") + 1  # every row of the result specified
    torch.library.opcheck(torch.ops.opendml.nonzero_coordinates.default, (dense,))
    a = torch.randn(3, 2, device="cuda", requires_grad=True)
    b = torch.randn(3, 4, device="cuda", requires_grad=True)
    torch.library.opcheck(torch.ops.opendml.join.default, ([a, b], 1))
    torch.library.opcheck(torch.ops.opendml.split.default, (torch.randn(6, 3, device="cuda", requires_grad=True), [2, 0, 4], 0))


def test_runs_on_the_current_stream():
    # The side stream is held up before it writes x; an operator on any other stream would read
    # the old values.
    x = torch.zeros(1 << 20, device="cuda")
    odt.nonzero(x)  # compiled outside the timing
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(50_000_000)
        x[::3] = 1.0
        coords, count = odt.nonzero(x)
        joined = odt.join([x, x], 0)
    side.synchronize()
    assert int(count) == len(range(0, 1 << 20, 3))
    assert torch.equal(coords[:count, 0], torch.arange(0, 1 << 20, 3, device="cuda"))
    assert torch.equal(joined, torch.cat([x, x]))


@pytest.mark.parametrize("capture_device", [0, 1])
def test_capture_goes_where_torchs_own_operators_go(capture_device):
    """The work goes to the current stream of the tensors' device, as torch's own operators' does:
    captured where the capture stream is on that device, run at once (and not captured) where it
    is on another, with torch's "graph is empty" warning alone. On 2 GPUs, the tensors on cuda:1."""
    if torch.cuda.device_count() < 2:
        pytest.skip(f"two devices need 2 GPUs or more; this machine has {torch.cuda.device_count()}")
    x, a = torch.zeros(16, 8, device="cuda:1"), torch.zeros(8, 3, device="cuda:1")
    odt.nonzero(x), odt.join([a, a], 1)  # compiled before the capture
    torch.cuda.synchronize(1)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=torch.cuda.Stream(device=capture_device)):
        (coords, count), joined, sums = odt.nonzero(x), odt.join([a, a], 1), x.cumsum(0)
    x.copy_(torch.arange(x.numel(), device=x.device, dtype=x.dtype).reshape(x.shape) % 3)
    a.fill_(7)
    graph.replay()
    torch.cuda.synchronize(1)
    captured = capture_device == 1
    assert torch.equal(sums, x.cumsum(0)) == captured  # torch's own operator, in the same graph
    assert (int(count) == int(x.count_nonzero())) == captured
    assert torch.equal(coords[:count], torch.nonzero(x)) == captured
    assert bool((joined == 7).all()) == captured


def test_compile_reduce_overhead_uses_cuda_graphs():
    def f(x):
        coords, count = odt.nonzero(x > 0, fill_value=-1)
        first, second = odt.split(coords, [x.numel() // 2, x.numel() - x.numel() // 2], 0)
        return odt.join([second, first], 0), count

    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(f, fullgraph=True, mode="reduce-overhead")
    for seed in range(4):
        torch.manual_seed(seed)
        x = torch.randn(40, 7, device="cuda")
        got, count = compiled(x)
        want, want_count = f(x)
        assert torch.equal(count, want_count) and torch.equal(got, want)
        assert torch.equal(torch.cat([got[-(x.numel() // 2):], got[: -(x.numel() // 2)]])[:count], torch.nonzero(x > 0))
    # Inductor counts every graph it could not run as a CUDA graph (and logs why).
    assert counters["inductor"]["cudagraph_skips"] == 0, dict(counters["inductor"])


# Last in the file: a failed capture is the one thing here that could disturb the tests after it.
def test_torch_nonzero_cannot_be_captured():
    x = torch.ones(16, device="cuda")
    torch.nonzero(x)
    graph = torch.cuda.CUDAGraph()
    with pytest.raises(RuntimeError):
        with torch.cuda.graph(graph):
            torch.nonzero(x)
