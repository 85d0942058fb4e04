"""torch.compile(fullgraph=True) over opendml.torch on the CPU: one graph, static shapes, no
recompilation for new values, results equal to eager and to torch's own operators bit for bit; the
same function with torch.nonzero breaks the graph or holds a data-dependent size."""

import torch
from torch._dynamo.testing import CompileCounterWithBackend

import opendml.torch as odt

ROWS, WIDTH = 24, 5


def pick_rows(x, scores):
    """The rows of x whose score is positive, moved to the front in order, the rest zero; the
    first half and the second half of the result swapped (split and join)."""
    coords, count = odt.nonzero(scores > 0, fill_value=0)
    valid = torch.arange(coords.shape[0]) < count
    picked = x[coords[:, 0]] * valid.unsqueeze(1)
    first, second = odt.split(picked, [ROWS // 2, ROWS - ROWS // 2], 0)
    return odt.join([second, first], 0), count


def pick_rows_with_torch_nonzero(x, scores):
    rows = torch.nonzero(scores > 0)[:, 0]
    picked = torch.cat([x[rows], x.new_zeros(ROWS - len(rows), WIDTH)])
    first, second = torch.split(picked, [ROWS // 2, ROWS - ROWS // 2], 0)
    return torch.cat([second, first], 0), torch.tensor([len(rows)])


def inputs(seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(ROWS, WIDTH, generator=g), torch.randn(ROWS, generator=g)


def has_data_dependent_shape(gm: torch.fx.GraphModule) -> bool:
    for node in gm.graph.nodes:
        value = node.meta.get("example_value")
        for v in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(v, torch.Tensor) and any(isinstance(s, torch.SymInt) for s in v.shape):
                return True
    return False


def test_fullgraph_one_graph_no_recompilation():
    torch._dynamo.reset()
    counter = CompileCounterWithBackend("aot_eager")
    compiled = torch.compile(pick_rows, fullgraph=True, backend=counter)
    for seed in range(4):
        x, scores = inputs(seed)
        got, count = compiled(x, scores)
        want, want_count = pick_rows_with_torch_nonzero(x, scores)
        assert torch.equal(count, want_count) and torch.equal(got, want)
        assert torch.equal(got, pick_rows(x, scores)[0])
    assert counter.frame_count == 1  # new values, same shapes: compiled once


def test_static_shapes_where_torch_nonzero_has_a_data_dependent_one():
    torch._dynamo.reset()
    graphs = []

    def record(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    x, scores = inputs(10)
    torch.compile(pick_rows, fullgraph=True, backend=record, dynamic=False)(x, scores)
    assert len(graphs) == 1 and not has_data_dependent_shape(graphs[0])
    assert torch._dynamo.explain(pick_rows)(x, scores).graph_break_count == 0

    torch._dynamo.reset()
    graphs.clear()
    assert torch._dynamo.explain(pick_rows_with_torch_nonzero)(x, scores).graph_break_count >= 1
    try:
        torch.compile(pick_rows_with_torch_nonzero, fullgraph=True, backend=record, dynamic=False)(x, scores)
    except torch._dynamo.exc.Unsupported:
        return  # the PyTorch releases that refuse data-dependent shapes under fullgraph
    # Later releases trace torch.nonzero with an unbacked, data-dependent size.
    assert any(has_data_dependent_shape(gm) for gm in graphs)


def test_inductor_fullgraph():
    torch._dynamo.reset()
    compiled = torch.compile(pick_rows, fullgraph=True, backend="inductor")
    for seed in (20, 21):
        x, scores = inputs(seed)
        got, count = compiled(x, scores)
        want, want_count = pick_rows_with_torch_nonzero(x, scores)
        assert torch.equal(count, want_count) and torch.equal(got, want)


def test_dynamic_shapes_compile_once():
    def f(x, y):
        coords, count = odt.nonzero(x > 0, fill_value=-1)
        joined = odt.join([x, y], 0)
        first, second = odt.split(joined, [x.shape[0], y.shape[0]], 0)
        return coords, count, joined, first, second

    torch._dynamo.reset()
    counter = CompileCounterWithBackend("aot_eager")
    compiled = torch.compile(f, fullgraph=True, dynamic=True, backend=counter)
    for n in (5, 9, 13):
        x, y = torch.randn(n, 3), torch.randn(n + 1, 3)
        got = compiled(x, y)
        assert all(torch.equal(a, b) for a, b in zip(got, f(x, y), strict=True))
        coords, count, joined, first, second = got  # and torch's own results
        assert torch.equal(coords[:count].long(), torch.nonzero(x > 0)) and bool((coords[count:] == -1).all())
        assert torch.equal(joined, torch.cat([x, y])) and torch.equal(first, x) and torch.equal(second, y)
    assert counter.frame_count == 1  # the fake implementations keep the sizes symbolic


def test_numpy_integers_as_arguments_compile():
    """NumPy's integers as an axis, sizes, columns and offsets compile into one graph, as in eager
    mode: torch.compile traces them as arrays whose dtype and __index__ it cannot trace, so the check
    that refuses a float or bool array must not read them there. (A NumPy count or fill_value does
    not compile: torch.compile makes it a tensor, which split's len() and the schema's int refuse.)"""
    import numpy as np

    def f(x):
        coords, count = odt.nonzero(x > 0, columns=np.int64(2), offsets=[np.int64(1), 0], fill_value=-1)
        joined = odt.join([x, x], np.int64(1))
        parts = odt.split(joined, [np.int64(2), 8], np.int64(-1))
        return coords, count, joined, *parts

    torch._dynamo.reset()
    x = torch.randn(4, 5)
    got = torch.compile(f, fullgraph=True, backend="aot_eager")(x)
    want = f(x)
    assert len(got) == len(want) and all(torch.equal(a, b) for a, b in zip(got, want, strict=True))
    coords, count, joined, first, second = got  # and torch's own results
    assert torch.equal(coords[:count].long() - torch.tensor([1, 0]), torch.nonzero(x > 0))  # offsets [1, 0]
    assert torch.equal(joined, torch.cat([x, x], 1))
    assert torch.equal(first, joined[:, :2]) and torch.equal(second, joined[:, 2:])
