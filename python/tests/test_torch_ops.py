"""opendml.torch on the CPU: the custom operators against torch.nonzero, torch.cat and torch.split
bit for bit, torch.library.opcheck on each, gradients, and the error paths."""

import numpy as np
import opendml
import pytest
import torch

import opendml.torch as odt

NONZERO_DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.float16, torch.float32, torch.bfloat16]
MOVE_DTYPES = NONZERO_DTYPES + [torch.float64, torch.int64, torch.complex64, torch.float8_e4m3fn, torch.float8_e5m2]


def sample(shape, dtype, generator):
    """Values with about half zeros; floats include -0.0 and NaN."""
    values = torch.tensor([0.0, -0.0, 0.0, 1.0, -2.5, float("nan")])
    picked = values[torch.randint(0, len(values), shape, generator=generator)]
    if not (dtype.is_floating_point or dtype.is_complex):
        picked = torch.nan_to_num(picked).abs().ceil()
    return picked.to(dtype)


def same_bits(a, b):
    bits = lambda t: t.contiguous().view(torch.uint8)  # noqa: E731
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(bits(a), bits(b))


@pytest.mark.parametrize("dtype", NONZERO_DTYPES)
@pytest.mark.parametrize("shape", [(17,), (5, 7), (2, 3, 4), (1, 1, 3, 1, 5)])
def test_nonzero_matches_torch_nonzero(shape, dtype):
    x = sample(shape, dtype, torch.Generator().manual_seed(len(shape)))
    coords, count = odt.nonzero(x)
    expected = torch.nonzero(x)
    assert coords.dtype == count.dtype == torch.int64
    assert coords.shape == (x.numel(), x.dim()) and count.shape == (1,)
    assert int(count) == len(expected)
    assert torch.equal(coords[:count], expected)
    # The coordinates index x as torch.nonzero's do.
    assert same_bits(x[tuple(coords[:count].T)], x[torch.nonzero(x, as_tuple=True)])


def test_nonzero_of_views_and_options():
    g = torch.Generator().manual_seed(7)
    base = sample((6, 8, 4), torch.float32, g)
    for x in (base.transpose(0, 2), base[:, ::3], base[1:4, :, 2]):
        coords, count = odt.nonzero(x)
        assert torch.equal(coords[:count], torch.nonzero(x))
    x = sample((1, 1, 5, 6), torch.int32, g)
    coords, count = odt.nonzero(x, columns=2)  # the trailing two dimensions
    assert torch.equal(coords[:count], torch.nonzero(x)[:, 2:])
    coords, count = odt.nonzero(x, fill_value=-1)
    assert torch.equal(coords[:count], torch.nonzero(x))
    assert bool((coords[count:] == -1).all()) and len(coords[count:]) == x.numel() - int(count)


def test_nonzero_of_a_tensor_that_requires_grad():
    x = torch.tensor([[0.0, 1.5], [2.0, 0.0]], requires_grad=True)
    coords, count = odt.nonzero(x)
    assert torch.equal(coords[:count], torch.nonzero(x)) and not coords.requires_grad


def test_nonzero_of_scalars_and_empty_tensors():
    for value in (0.0, 3.0):
        coords, count = odt.nonzero(torch.tensor(value))
        assert coords.shape == (1, 0) and int(count) == len(torch.nonzero(torch.tensor(value)))
    coords, count = odt.nonzero(torch.ones(3, 0, 2))
    assert coords.shape == (0, 3) and int(count) == 0
    # A scalar has no coordinates to report: columns past 0 are an error (they came back as
    # uninitialised memory), in eager calls and in the fake implementation alike.
    for x in (torch.tensor(0.0), torch.tensor(3.0)):
        with pytest.raises(opendml.Error, match="a 0-d x has no coordinates"):
            odt.nonzero(x, columns=2, fill_value=-1)
        with pytest.raises(opendml.Error, match="a 0-d x has no coordinates"):
            torch.ops.opendml.nonzero_coordinates(x.to("meta"), 1)
    assert odt.nonzero(torch.tensor(3.0), columns=0)[0].shape == (1, 0)


@pytest.mark.parametrize("columns", [-1, 0, 3])
def test_nonzero_rejects_column_counts_directml_does(columns):
    with pytest.raises(opendml.Error, match="columns|N"):
        odt.nonzero(torch.ones(2, 3), columns=columns)
    # The fake implementation too, so that torch.compile fails while tracing, not when the graph runs.
    with pytest.raises(opendml.Error, match="columns is"):
        torch.ops.opendml.nonzero_coordinates(torch.ones(2, 3, device="meta"), columns)


def test_nonzero_rejects_offsets_the_kernel_does_in_the_fake_implementation_too():
    for x in (torch.ones(2, 3), torch.ones(2, 3, device="meta")):
        with pytest.raises(opendml.Error, match="offsets has 1 values; it needs one a column"):
            torch.ops.opendml.nonzero_coordinates(x, None, [1])
    for x in (torch.tensor(1.0), torch.tensor(1.0, device="meta")):
        with pytest.raises(opendml.Error, match="a 0-d x has no coordinate columns to offset"):
            torch.ops.opendml.nonzero_coordinates(x, None, [1])


def test_fake_implementations_refuse_what_the_kernels_do():
    """By the kernels' own rules (on stand-ins of the shapes), so that torch.compile fails while
    tracing: columns under the effective rank, negative offsets and ranks past DirectML's 8 once
    passed the fake implementations and failed only when the graph ran."""
    meta = {"device": "meta"}
    with pytest.raises(opendml.Error, match=r"Sizes\[1\] \(N\) is 1; it must be from 2"):
        torch.ops.opendml.nonzero_coordinates(torch.ones(2, 3, **meta), 1)
    with pytest.raises(opendml.Error, match="offsets holds -1"):
        torch.ops.opendml.nonzero_coordinates(torch.ones(2, 3, **meta), None, [-1, 0])
    nine = torch.ones((2,) + (1,) * 8, **meta)
    with pytest.raises(opendml.Error, match="DimensionCount is 9"):
        torch.ops.opendml.nonzero_coordinates(nine)
    with pytest.raises(opendml.Error, match="JOIN: OutputTensor.DimensionCount is 9"):
        torch.ops.opendml.join([nine, nine], 0)
    with pytest.raises(opendml.Error, match="SPLIT: InputTensor.DimensionCount is 9"):
        torch.ops.opendml.split(nine, [1, 1], 0)
    # What the kernels take passes, empty parts and large sizes included.
    assert [p.shape for p in torch.ops.opendml.split(torch.ones(5, 3, **meta), [0, 5, 0], 0)] == [(0, 3), (5, 3), (0, 3)]
    assert torch.ops.opendml.join([torch.ones(2**20, 3, **meta)] * 2, 1).shape == (2**20, 6)
    assert torch.ops.opendml.nonzero_coordinates(torch.ones(1, 2**20, 3, **meta), 2)[0].shape == (3 * 2**20, 2)


def test_quantized_tensors_are_refused():
    # Their bits mean nothing without the quantizer, which a new tensor does not carry: a join once
    # returned a quantized tensor that torch could not read.
    q = torch.quantize_per_tensor(torch.ones(2, 3), 0.5, 0, torch.quint8)
    # nonzero too: it raised the array layer's ValueError from the tensor's DLPack export.
    for call in (lambda: odt.join([q, q]), lambda: odt.split(q, [1, 1]), lambda: odt.nonzero(q),
                 lambda: torch.ops.opendml.nonzero_coordinates(q)):
        with pytest.raises(opendml.UnsupportedError, match="quantized"):
            call()


def test_sparse_and_nested_tensors_are_refused():
    # Their elements are no strided block: the array layer's DLPack export raised an opendml.Error in
    # torch's words ("Cannot access data pointer"), and a nested tensor's shape torch's RuntimeError.
    import warnings

    x = torch.arange(6.0).reshape(2, 3)
    with warnings.catch_warnings():  # torch's: the strided layout of nested tensors is a prototype
        warnings.simplefilter("ignore", UserWarning)
        nested = torch.nested.nested_tensor([torch.ones(2), torch.ones(3)])
    odd_ones = [(x.to_sparse(), "torch.sparse_coo"), (x.to_sparse_csr(), "torch.sparse_csr"), (nested, "nested")]
    for t, kind in odd_ones:
        calls = [lambda: odt.nonzero(t), lambda: odt.nonzero(t, fill_value=0), lambda: odt.join([x, t]),
                 lambda: odt.join([t, t], 1), lambda: odt.split(t, 2), lambda: odt.split(t, [1, 1])]
        if not t.is_nested:  # the dispatcher has no kernel of opendml's for nested tensors (torch's error)
            calls += [lambda: torch.ops.opendml.nonzero_coordinates(t), lambda: torch.ops.opendml.join([t, t], 0),
                      lambda: torch.ops.opendml.split(t, [1, 1], 0)]
        for call in calls:
            with pytest.raises(opendml.UnsupportedError, match=r"is a %s tensor; opendml takes strided ones" % kind):
                call()
    # Types the array layer takes only as bits go the same way.
    for call in (lambda: odt.join([x.to(torch.complex64).to_sparse()] * 2), lambda: odt.split(x.to(torch.complex64).to_sparse(), 1)):
        with pytest.raises(opendml.UnsupportedError, match="sparse_coo tensor"):
            call()


def test_nonzero_rejects_types_directml_lacks():
    # A 0-d x too, which the array layer never saw (its count was x != 0).
    for x in (torch.ones(4, dtype=torch.float64), torch.tensor(1.0, dtype=torch.float64)):
        with pytest.raises(opendml.UnsupportedError, match="FLOAT64"):
            odt.nonzero(x)


@pytest.mark.parametrize("dtype", MOVE_DTYPES)
def test_join_and_split_match_cat_and_split(dtype):
    g = torch.Generator().manual_seed(3)
    a, b, c = (sample((3, n, 4), torch.float32, g).to(dtype) for n in (2, 5, 1))
    for axis in (1, -2):
        joined = odt.join([a, b, c], axis)
        assert same_bits(joined, torch.cat([a, b, c], axis))
        parts = odt.split(joined, [2, 0, 5, 1], axis)
        for got, want in zip(parts, torch.split(joined, [2, 0, 5, 1], axis), strict=True):
            assert same_bits(got, want)
    # The lowest axis, -rank, is axis 0.
    assert same_bits(odt.join([a, a], -3), torch.cat([a, a], 0))
    for got, want in zip(odt.split(a, [1, 2], -3), torch.split(a, [1, 2], 0), strict=True):
        assert same_bits(got, want)


def test_join_and_split_of_views_empty_parts_and_equal_parts():
    g = torch.Generator().manual_seed(4)
    x = sample((4, 6, 5), torch.float32, g).permute(2, 0, 1)  # a non-contiguous view
    empty = torch.empty(5, 0, 6)
    assert same_bits(odt.join([empty, x, empty, x[:, 1:3]], 1), torch.cat([x, x[:, 1:3]], 1))
    assert odt.join([empty, empty], 1).shape == (5, 0, 6)
    parts = odt.split(x, 3, axis=-1)
    assert all(same_bits(p, q) for p, q in zip(parts, torch.split(x, 2, -1), strict=True))
    assert all(p.is_contiguous() and p.data_ptr() != x.data_ptr() for p in parts)  # new tensors
    # No sizes for an axis of size 0: no parts, as torch.split gives (the kernel raised, the fake did not).
    for x in (torch.empty(0, 2), torch.empty(0, 2, device="meta")):
        assert odt.split(x, [], 0) == [] and torch.split(x, [], 0) == ()
    # No sizes for an axis that is not empty: an error, as in torch.split.
    with pytest.raises(opendml.Error, match="add up to 3"):
        odt.split(torch.ones(3, 2), [], 0)


def test_join_and_split_errors():
    a = torch.zeros(2, 3)
    with pytest.raises(opendml.Error, match="only axis 1 may differ"):
        odt.join([a, torch.zeros(3, 3)], 1)
    with pytest.raises(opendml.Error, match="dtype, rank and device"):
        odt.join([a, torch.zeros(2, 3, dtype=torch.int32)], 0)
    with pytest.raises(opendml.Error, match="input 1 is torch.float32 \\[2, 3\\] on meta but input 0 is "
                       "torch.float32 \\[2, 3\\] on cpu; dtype, rank and device must match"):
        odt.join([a, a.to("meta")], 0)
    with pytest.raises(opendml.Error, match="axis 2 is outside"):
        odt.join([a], 2)
    for sizes, axis in ((3, 5), ([1, 1], -3)):  # a count or sizes along an axis a doesn't have
        with pytest.raises(opendml.Error, match=f"axis {axis} is outside"):
            odt.split(a, sizes, axis)
    with pytest.raises(opendml.Error, match="at least one input"):
        odt.join([], 0)
    with pytest.raises(opendml.Error, match="add up to 3"):
        odt.split(a, [1, 1], 1)
    with pytest.raises(opendml.Error, match="non-negative"):
        odt.split(a, [4, -1], 1)
    with pytest.raises(opendml.Error, match="equal parts"):
        odt.split(a, 2, 1)
    with pytest.raises(NotImplementedError, match="16 bytes"):
        odt.join([torch.zeros(2, dtype=torch.complex128)], 0)


def test_arguments_that_are_not_integers_are_type_errors():
    """As torch.cat's are; integers of other kinds (NumPy's) are taken."""
    a = torch.zeros(2, 3)
    with pytest.raises(TypeError):
        torch.cat([a, a], 1.0)
    with pytest.raises(TypeError, match="opendml.torch.join: axis must be an integer, not float"):
        odt.join([a, a], 1.0)
    with pytest.raises(TypeError, match="opendml.torch.split: sizes must be an integer, not float"):
        odt.split(a, [1, 2.0], 1)
    with pytest.raises(TypeError, match="opendml.torch.split: axis must be an integer, not str"):
        odt.split(a, [1, 2], "1")
    with pytest.raises(TypeError, match="opendml.torch.nonzero: columns must be an integer, not float"):
        odt.nonzero(a, columns=2.0)
    assert torch.equal(odt.join([a, a], np.int64(1)), torch.cat([a, a], 1))
    assert [p.shape for p in odt.split(a, [np.int64(1), 2], 1)] == [(2, 1), (2, 2)]
    assert [p.shape for p in odt.split(a, np.int64(3), 1)] == [(2, 1)] * 3  # a count of NumPy's
    # None is an integer nowhere but columns and fill_value; a bool is none, as for torch.cat.
    for call, name in ((lambda: odt.join([a, a], None), "axis"), (lambda: odt.join([a, a], True), "axis"),
                       (lambda: odt.split(a, [1, None], 1), "sizes"), (lambda: odt.split(a, 3, None), "axis"),
                       (lambda: odt.split(a, True, 1), "sizes"),  # was one part, as a count of 1
                       (lambda: odt.split(a, 3, 1.0), "axis"), (lambda: odt.nonzero(a, fill_value=[7, 8]), "fill_value"),
                       (lambda: odt.nonzero(a, fill_value=1.5), "fill_value"),
                       (lambda: odt.nonzero(a, offsets=[0, "1"]), "offsets")):
        with pytest.raises(TypeError, match=f"opendml.torch.(join|split|nonzero): {name} must be an integer"):
            call()
    # The same on the dispatcher's path (a tensor that requires grad), where the schema has one fill.
    with pytest.raises(TypeError, match="fill_value must be an integer, not list"):
        odt.nonzero(a.clone().requires_grad_(), fill_value=[7, 8])
    with pytest.raises(TypeError, match="inputs must be a sequence of tensors, not a Tensor"):
        odt.join(a, 0)  # its rows, joined: torch.cat refuses a tensor for its sequence too
    with pytest.raises(TypeError):
        torch.cat(a, 0)
    # A 0-d x's fill_value is checked as any other's.
    with pytest.raises(TypeError, match="fill_value must be an integer"):
        odt.nonzero(torch.tensor(1.0), fill_value="abc")
    # What is not a tensor is a TypeError too, as for torch.nonzero and torch.cat (None reached the
    # kernel as a tensor and raised an AttributeError; anything else, the dispatcher's RuntimeError).
    for bad in (None, [1.0, 0.0], np.ones(2, np.float32)):
        for call, name in ((lambda: odt.nonzero(bad), "x"), (lambda: odt.split(bad, [1, 1]), "x"),
                           (lambda: odt.split(bad, 2), "x"), (lambda: odt.join([a, bad]), "every input")):
            with pytest.raises(TypeError, match=f"opendml.torch.(join|split|nonzero): {name} must be a torch.Tensor, not "):
                call()


def test_integers_past_64_bits_are_errors_under_torch_compile():
    """And under torch.compile, where plain Python ints are checked as in eager mode."""
    a = torch.zeros(2, 3)
    big = 2**63
    for f in (lambda x: odt.join([x, x], big), lambda x: odt.split(x, [big, 2], 1),
              lambda x: odt.split(x, [1, 2], big), lambda x: odt.nonzero(x, fill_value=big),
              lambda x: odt.nonzero(x, offsets=[big, 0])):
        torch._dynamo.reset()
        with pytest.raises(opendml.Error, match=str(big)):  # the message names the integer
            torch.compile(f, backend="eager")(a)


def test_integers_past_64_bits_are_errors_on_both_paths():
    """An integer the schema's 64 bits cannot hold is an opendml.Error on the eager path (its rules)
    and was the dispatcher's RuntimeError on the other (a tensor that requires grad), and on both for
    a NumPy uint64 past 2^63 - 1: now an opendml.Error on both."""
    a = torch.zeros(2, 3)
    with torch.no_grad():
        b = a.clone().requires_grad_()  # the dispatcher's path
    for x in (a, b):
        for big in (2**63, -(2**63) - 1, np.uint64(2**63), np.uint64(2**64 - 1)):
            for call in (lambda: odt.nonzero(x, fill_value=big), lambda: odt.nonzero(x, columns=big),
                         lambda: odt.nonzero(x, offsets=[big, 0]), lambda: odt.join([x, x], big),
                         lambda: odt.split(x, [big, 2], 1), lambda: odt.split(x, [1, 2], big)):
                with pytest.raises(opendml.Error, match=str(int(big))):  # the message names the integer
                    call()
    # The ends of the range are integers the rules judge (a fill of -2^63 is a fill like any other).
    coords, count = odt.nonzero(b, fill_value=-(2**63))
    assert count.item() == 0 and bool((coords == -(2**63)).all())


def test_arrays_and_tensors_that_are_no_integer_are_type_errors():
    """A 0-d integer array or tensor is an integer; a bool or float one, or one with dimensions, is
    not, though each has __index__: they passed the check, and the dispatcher then took them (a
    fill_value of np.array(1.5) wrote 1, an axis of torch.tensor(1.0) or torch.tensor(True) joined
    along 1), or raised a RuntimeError (sizes of a 2-D array, an internal assert for bool sizes)."""
    a = torch.zeros(2, 3)
    with torch.no_grad():
        b = a.clone().requires_grad_()  # the dispatcher's path
    for x in (a, b):
        for call, name in ((lambda: odt.nonzero(x, fill_value=np.array(1.5)), "fill_value"),
                           (lambda: odt.nonzero(x, fill_value=np.array([1])), "fill_value"),
                           (lambda: odt.nonzero(x, columns=torch.tensor(True)), "columns"),
                           (lambda: odt.nonzero(x, offsets=[np.array(1.0), 0]), "offsets"),
                           (lambda: odt.join([x, x], torch.tensor(1.0)), "axis"),
                           (lambda: odt.join([x, x], torch.tensor(True)), "axis"),
                           (lambda: odt.join([x, x], np.array([1])), "axis"),
                           (lambda: odt.split(x, [1, 2], torch.tensor([1])), "axis"),
                           (lambda: odt.split(x, torch.tensor(True), 0), "sizes"),
                           (lambda: odt.split(x, torch.tensor(2.0), 0), "sizes"),
                           (lambda: odt.split(x, torch.tensor([True, True]), 0), "sizes"),
                           (lambda: odt.split(x, np.array([[1, 1]]), 0), "sizes"),
                           (lambda: odt.split(x, [torch.tensor(1.0), torch.tensor(1.0)], 0), "sizes"),
                           (lambda: odt.split(x, [np.array([1]), np.array([1])], 0), "sizes")):
            with pytest.raises(TypeError, match=f"opendml.torch.(join|split|nonzero): {name} must be an integer, not "):
                call()
        # 0-d integer ones are integers, on both paths.
        assert torch.equal(odt.join([x, x], np.array(1)), torch.cat([a, a], 1))
        assert [p.shape for p in odt.split(x, [torch.tensor(1), np.array(2)], 1)] == [(2, 1), (2, 2)]
        assert odt.nonzero(x + 1, fill_value=torch.tensor(-1), offsets=[np.array(1), 0])[0][0].tolist() == [1, 0]


def test_split_sizes_of_an_array_or_tensor():
    """A 1-D NumPy array or tensor of sizes is a sequence of sizes, as the array layer takes it (its
    __index__, which only a single element has, made it a count and raised NumPy's or torch's
    TypeError); a 0-d one is a count. What is neither a count nor iterable names the argument."""
    a = torch.arange(12.0).reshape(3, 4)
    for sizes in (np.array([1, 3]), torch.tensor([1, 3])):
        assert all(torch.equal(p, q) for p, q in zip(odt.split(a, sizes, 1), torch.split(a, [1, 3], 1), strict=True))
    with torch.no_grad():  # the dispatcher's path too
        b = a.clone().requires_grad_()
    assert [p.shape for p in odt.split(b, np.array([2, 1]), 0)] == [(2, 4), (1, 4)]
    for count in (np.array(2), torch.tensor(2)):
        assert [p.shape for p in odt.split(a, count, 1)] == [(3, 2), (3, 2)]
    for sizes in (None, 1.5):
        with pytest.raises(TypeError, match="opendml.torch.split: sizes must be an integer or a sequence of integers"):
            odt.split(a, sizes, 1)
    with pytest.raises(TypeError, match="opendml.torch.nonzero: offsets must be a sequence of integers, not int"):
        odt.nonzero(a, offsets=3)
    # Sizes and offsets come in order, as the array layer and torch.split take them: a set (split in
    # any order) or a dict (its keys were the sizes) is refused, and so is an iterator.
    for sizes in ({1, 3}, {1: "a", 3: "b"}, iter([1, 3]), (n for n in (1, 3))):
        with pytest.raises(TypeError, match="opendml.torch.split: sizes must be an integer or a sequence of integers, not "):
            odt.split(a, sizes, 1)
    with pytest.raises(TypeError, match="opendml.torch.nonzero: offsets must be a sequence of integers, not set"):
        odt.nonzero(a, offsets={0, 1})
    with pytest.raises(opendml.Error, match="sizes is a set; it must be a sequence"):  # the array layer's, on a tensor
        opendml.split(a, {1, 3}, 1)


def test_opcheck():
    g = torch.Generator().manual_seed(5)
    # Every element non-zero: rows past the count are unspecified, and opcheck compares all rows.
    dense = sample((3, 5), torch.float32, g).abs() + 1
    torch.library.opcheck(torch.ops.opendml.nonzero_coordinates.default, (dense,))
    torch.library.opcheck(torch.ops.opendml.nonzero_coordinates.default, (dense.unsqueeze(0), 2))
    a = torch.randn(2, 3, generator=g, requires_grad=True)
    b = torch.randn(2, 5, generator=g, requires_grad=True)
    torch.library.opcheck(torch.ops.opendml.join.default, ([a, b], -1))
    x = torch.randn(4, 6, generator=g, requires_grad=True)
    torch.library.opcheck(torch.ops.opendml.split.default, (x, [1, 0, 5], 1))


def test_gradients():
    g = torch.Generator().manual_seed(6)
    a = torch.randn(2, 3, dtype=torch.float64, generator=g, requires_grad=True)
    b = torch.randn(2, 2, dtype=torch.float64, generator=g, requires_grad=True)
    assert torch.autograd.gradcheck(lambda p, q: odt.join([p, q], 1), (a, b))
    x = torch.randn(5, 3, dtype=torch.float64, generator=g, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: tuple(odt.split(t, [2, 3], 0)), (x,))
    # The same gradients exactly: join's are the output gradient's pieces, split's their join.
    out = torch.randn(2, 5, dtype=torch.float64, generator=g)
    for got, want in zip(torch.autograd.grad(odt.join([a, b], 1), (a, b), out), out.split([3, 2], 1), strict=True):
        assert same_bits(got, want)
    pieces = (torch.randn(2, 3, dtype=torch.float64, generator=g), torch.randn(3, 3, dtype=torch.float64, generator=g))
    (got,) = torch.autograd.grad(odt.split(x, [2, 3], 0), (x,), pieces)
    assert same_bits(got, torch.cat(pieces))
    # An unused part's gradient is zero.
    first, _ = odt.split(x, [2, 3], 0)
    first.sum().backward()
    assert torch.equal(x.grad, torch.cat([torch.ones(2, 3), torch.zeros(3, 3)]).double())
    # torch.autograd.functional, which docs/python.md names for what torch.func cannot do here.
    v = torch.randn(3, dtype=torch.float64, generator=g)
    assert torch.equal(torch.autograd.functional.jacobian(lambda p: odt.join([p, 2 * p], 0), v),
                       torch.cat([torch.eye(3), 2 * torch.eye(3)]).double())


def test_forward_mode_is_refused_rather_than_wrong():
    """torch drops the tangents of an operator whose gradient comes from register_autograd: jvp
    through join or split gave zero tangents, silently. Now it raises; nonzero, whose outputs are
    integers with no tangent, and tensors without one at a dual level work as before."""
    import torch.autograd.forward_ad as fwAD

    x, t = torch.arange(3.0), torch.ones(3)
    plain = (lambda p: torch.cat([p, p]), lambda p: torch.split(p, [1, 2])[1], lambda p: torch.split(p, 1)[0])
    ours = (lambda p: odt.join([p, p]), lambda p: odt.split(p, [1, 2])[1], lambda p: odt.split(p, 3)[0])
    for f, g in zip(ours, plain, strict=True):
        with pytest.raises(NotImplementedError, match="forward-mode AD"):
            torch.func.jvp(f, (x,), (t,))
        with pytest.raises(NotImplementedError, match="forward-mode AD"):
            torch.func.jacfwd(f)(x)
        with pytest.raises(NotImplementedError, match="forward-mode AD"):  # jvp below the top
            torch.func.jvp(torch.func.functionalize(f), (x,), (t,))
        with fwAD.dual_level():
            with pytest.raises(NotImplementedError, match="forward-mode AD"):
                f(fwAD.make_dual(x, t))
            assert torch.equal(f(x), g(x))  # no tangent: a plain call
    # A fake implementation's stand-in run inside a dual level, with no tangent anywhere, traces:
    # the array layer's tangent check asked below ADInplaceOrView, where torch asserted.
    from torch._subclasses.fake_tensor import FakeTensorMode

    with fwAD.dual_level(), FakeTensorMode():
        assert torch.ops.opendml.join([torch.empty(3), torch.empty(3)], 0).shape == (6,)
    (coords, count), _ = torch.func.jvp(lambda p: odt.nonzero(p), (x,), (t,))
    assert torch.equal(count, torch.tensor([2])) and torch.equal(coords[:2], torch.tensor([[1], [2]]))


def test_no_hidden_copies():
    # The array layer records the addresses it bound last: the views themselves, not copies.
    from opendml._opendml import _last_bindings

    x = torch.arange(24.0).reshape(4, 6).t()  # a transposed view
    y = torch.ones(6, 2)
    joined = odt.join([x, y], 1)
    assert _last_bindings() == ([x.data_ptr(), y.data_ptr()], [joined.data_ptr()])
    parts = odt.split(x[1:], [2, 3], 0)
    assert _last_bindings() == ([x[1:].data_ptr()], [p.data_ptr() for p in parts])
    coords, count = odt.nonzero(x[:, ::2])
    assert _last_bindings() == ([x.data_ptr()], [count.data_ptr(), coords.data_ptr()])


def test_nonzero_coordinate_offsets_are_global_coordinates():
    # A shard's coordinates in the whole tensor, written by the kernel (opendml's coordinate offsets).
    whole = torch.rand(6, 5) > 0.5
    shard = whole[2:4]
    coords, count = odt.nonzero(shard, offsets=[2, 0])
    n = int(count)
    want = torch.nonzero(whole)
    want = want[(want[:, 0] >= 2) & (want[:, 0] < 4)]
    assert torch.equal(coords[:n], want)
    compiled = torch.compile(lambda s: odt.nonzero(s, offsets=[2, 0]), fullgraph=True)
    got, got_count = compiled(shard)
    assert torch.equal(got[: int(got_count)], want)


def test_eager_calls_go_to_the_kernel_only_where_the_dispatcher_has_nothing_to_do(monkeypatch):
    """odt.join, split and nonzero call their kernel directly in plain eager mode (docs/python.md);
    wherever the dispatcher has work to do (a gradient, a lazy negation, a fake or meta tensor, a
    mode, a transform, the profiler), the call goes through torch.ops."""
    from torch.utils._python_dispatch import TorchDispatchMode

    g = torch.Generator().manual_seed(9)
    a, b = torch.randn(2, 3, generator=g), torch.randn(2, 2, generator=g)
    through_ops = []
    real_join = torch.ops.opendml.join

    class RecordingJoin:  # torch.ops.opendml.join, counting the calls made through it
        def __call__(self, *args):
            through_ops.append(args)
            return real_join(*args)

        def __getattr__(self, name):
            return getattr(real_join, name)

    monkeypatch.setattr(torch.ops.opendml, "join", RecordingJoin())
    direct = odt.join([a, b], 1)
    assert through_ops == [] and same_bits(direct, real_join([a, b], 1)) and same_bits(direct, torch.cat([a, b], 1))

    class Recorder(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    seen = []
    with Recorder():
        recorded = odt.join([a, b], 1)
    assert seen == ["opendml.join.default"] and len(through_ops) == 1 and same_bits(recorded, direct)

    negated = torch._neg_view(a)  # the dispatcher resolves the negation before the kernel sees it
    assert negated.is_neg() and torch.equal(odt.join([negated, b], 1), torch.cat([-a, b], 1))
    meta = odt.join([a.to("meta"), b.to("meta")], 1)  # the fake implementation
    assert meta.device.type == "meta" and meta.shape == (2, 5)
    grad = odt.join([a.clone().requires_grad_(), b], 1)
    assert grad.requires_grad and same_bits(grad.detach(), direct)
    with torch.autograd.profiler.profile() as prof:
        odt.join([a, b], 1)
    assert any(e.name == "opendml::join" for e in prof.function_events)
    assert len(through_ops) == 5

    # Each case that the dispatcher must see is recognised.
    assert odt._eager([a, b])
    assert not odt._eager([a, b.clone().requires_grad_()])
    with torch.no_grad():
        assert odt._eager([a, b.clone().requires_grad_()])  # no gradient to record
    assert not odt._eager([a, torch._neg_view(b)])
    assert not odt._eager([torch.ones(2, dtype=torch.complex64).conj()])
    assert not odt._eager([a.to("meta")])
    assert not odt._eager([torch.nn.Parameter(a, requires_grad=False)])  # a subclass
    with Recorder():
        assert not odt._eager([a])
    with torch.overrides.TorchFunctionMode():
        assert not odt._eager([a])
    assert torch.func.vmap(lambda t: torch.tensor(odt._eager([t])))(a).tolist() == [False, False]
    assert odt._eager([a])

    # split and nonzero take the same route, with the same results as through torch.ops.
    x = torch.randn(5, 3, generator=g)
    parts = odt.split(x, [2, 3], 0)
    assert all(same_bits(p, q) for p, q in zip(parts, torch.ops.opendml.split(x, [2, 3], 0), strict=True))
    assert all(same_bits(p, q) for p, q in zip(parts, torch.split(x, [2, 3], 0), strict=True))
    mask = x > 0
    coords, count = odt.nonzero(mask)
    ops_coords, ops_count = torch.ops.opendml.nonzero_coordinates(mask)
    assert torch.equal(count, ops_count) and torch.equal(coords[:count], ops_coords[:ops_count])
    assert torch.equal(coords[:count].long(), torch.nonzero(mask))
