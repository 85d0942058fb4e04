"""The array layer on the CPU: bit-exact against NumPy, zero copy with NumPy, PyTorch and JAX,
non-contiguous views, negative axes, the cache bound and every error path."""

import os
import re
import subprocess
import sys
import textwrap
import threading

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
import torch

import opendml

SEED = 20261122
# NumPy cannot export bfloat16 (ml_dtypes) through DLPack; PyTorch's bfloat16 is tested below.
COPY_TYPES = [np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
              np.uint32, np.uint64, np.bool_]
NONZERO_TYPES = [np.float16, np.float32, np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32, np.bool_]


def random_array(rng, shape, dtype):
    """Values with plenty of zeros (and -0.0, NaN for floats), never all zero."""
    bits = rng.integers(0, 256, size=int(np.prod(shape)) * np.dtype(dtype).itemsize, dtype=np.uint8)
    a = bits.view(dtype).reshape(shape) if np.dtype(dtype) != np.bool_ else (bits > 127).reshape(shape)
    a = a.copy()
    a[rng.random(shape) < 0.4] = 0
    if a.dtype.kind == "f" or a.dtype == ml_dtypes.bfloat16:
        flat = a.reshape(-1)
        flat[rng.random(flat.shape) < 0.1] = -0.0
    return a


def bits(a):
    """The array's bytes, so that comparisons are bit for bit (NaN, -0.0)."""
    a = np.ascontiguousarray(a)
    return a.view(np.uint8) if a.dtype != np.bool_ else a.view(np.uint8)


def pointer(a):
    if isinstance(a, np.ndarray):
        return a.ctypes.data
    if isinstance(a, torch.Tensor):
        return a.data_ptr()
    return a.unsafe_buffer_pointer()


def expected_nonzero(x, columns=None):
    coords = np.argwhere(x)
    return coords[:, coords.shape[1] - (columns or x.ndim):]


# ---- bit-exact against NumPy ---------------------------------------------------------------------


@pytest.mark.parametrize("dtype", COPY_TYPES, ids=lambda t: np.dtype(t).name)
def test_concat_and_split_bit_exact(dtype):
    rng = np.random.default_rng(SEED)
    for trial in range(6):
        ndim = int(rng.integers(1, 5))
        shape = [int(s) for s in rng.integers(1, 6, size=ndim)]
        axis = int(rng.integers(-ndim, ndim))
        parts = []
        for _ in range(int(rng.integers(1, 5))):
            s = list(shape)
            s[axis] = int(rng.integers(1, 5))
            parts.append(random_array(rng, s, dtype))
        joined = opendml.concat(parts, axis=axis)
        assert joined.dtype == parts[0].dtype
        np.testing.assert_array_equal(bits(joined), bits(np.concatenate(parts, axis=axis)), err_msg=f"seed {SEED} trial {trial}")
        sizes = [p.shape[axis] for p in parts]
        pieces = opendml.split(joined, sizes, axis=axis)
        assert len(pieces) == len(parts)
        for got, want in zip(pieces, parts, strict=True):
            np.testing.assert_array_equal(bits(got), bits(want))


@pytest.mark.parametrize("dtype", NONZERO_TYPES, ids=lambda t: np.dtype(t).name)
def test_nonzero_bit_exact(dtype):
    rng = np.random.default_rng(SEED)
    for trial in range(6):
        shape = [int(s) for s in rng.integers(1, 7, size=int(rng.integers(1, 5)))]
        x = random_array(rng, shape, dtype)
        coords, count = opendml.nonzero(x)
        want = expected_nonzero(x)
        assert coords.shape == (x.size, x.ndim) and coords.dtype == np.uint32
        assert count.shape == (1,) and count.dtype == np.uint32
        assert int(count[0]) == len(want), f"seed {SEED} trial {trial}"
        np.testing.assert_array_equal(coords[: len(want)], want)


def test_nonzero_zero_test_follows_directml():
    x = np.array([0.0, -0.0, np.nan, 1e-45, -np.inf, 2.0], np.float32)  # denormal and NaN are non-zero
    coords, count = opendml.nonzero(x)
    assert count[0] == 4 and coords[:4, 0].tolist() == [2, 3, 4, 5]


def test_nonzero_columns_and_transposed():
    x = np.zeros((1, 3, 4), np.int32)
    x[0, 1, 2] = x[0, 2, 0] = 7
    coords, count = opendml.nonzero(x, columns=2)
    assert coords.shape == (12, 2) and coords[: count[0]].tolist() == [[1, 2], [2, 0]]
    coords, count = opendml.nonzero(x, transposed=True)
    assert coords.shape == (3, 12)
    assert coords[:, : count[0]].tolist() == [[0, 0], [1, 2], [2, 0]]


def test_nonzero_coordinate_offsets():
    # opendml's coordinate offsets extension: each column's offset is added as coordinates are written.
    rng = np.random.default_rng(SEED)
    x = random_array(rng, [5, 3, 4], np.float32)
    want = expected_nonzero(x)
    for offsets, index_dtype in (([10, 0, 7], "uint32"), ([0, 2**40, 1], "int64")):
        coords, count = opendml.nonzero(x, offsets=offsets, index_dtype=index_dtype)
        assert int(count[0]) == len(want)
        np.testing.assert_array_equal(coords[: len(want)], want.astype(coords.dtype) + np.array(offsets, coords.dtype))
    y = random_array(rng, [1, 3, 4], np.float32)
    coords, count = opendml.nonzero(y, columns=2, offsets=(100, 200), transposed=True)
    np.testing.assert_array_equal(coords[:, : int(count[0])].T, expected_nonzero(y, 2) + [100, 200])
    # The same description with other offsets is another compiled operator, not the cached one.
    a, _ = opendml.nonzero(x, offsets=[1, 1, 1])
    b, _ = opendml.nonzero(x, offsets=[2, 2, 2])
    np.testing.assert_array_equal(b[: len(want)] - a[: len(want)], 1)


@pytest.mark.parametrize(
    "offsets, message",
    [([1, 2], "offsets has 2 values; it needs one per coordinate column (3)"),
     ([1, -1, 0], "offsets are not negative"),
     ([2**32, 0, 0], "coordinate offset 0 is 4294967296"),
     (5, "offsets"),
     ("xyz", "offsets is a str; it must be a sequence (a list or tuple)")],
)
def test_nonzero_bad_coordinate_offsets(offsets, message):
    with pytest.raises(opendml.Error, match=re.escape(message)):
        opendml.nonzero(np.ones((2, 3, 4), np.float32), offsets=offsets)


def test_nonzero_fill_rows():
    # opendml's fill rows extension: every row past the count holds the fill, written in the same pass.
    rng = np.random.default_rng(SEED)
    for shape, density in (([5, 3, 4], 0.5), ([300, 7], 0.01), ([64], 0.0), ([6, 6], 1.0)):
        x = np.where(rng.random(shape) < density, rng.random(shape) + 1, 0).astype(np.float32)
        want = expected_nonzero(x)
        for fill, index_dtype in ((7, "uint32"), (-1, "int64"), (2**64 - 1, "uint64"), ([3] * len(shape), "uint32")):
            coords, count = opendml.nonzero(x, fill=fill, index_dtype=index_dtype)
            assert int(count[0]) == len(want)
            np.testing.assert_array_equal(coords[: len(want)], want.astype(coords.dtype))
            bits = np.array(fill, np.uint64 if index_dtype == "uint64" else np.int64).astype(coords.dtype)
            rest = np.broadcast_to(bits, (x.size - len(want), len(shape)))
            np.testing.assert_array_equal(coords[len(want):], rest)
    # Transposed, with offsets beside the fill; another fill is another compiled operator.
    y = random_array(rng, [4, 5], np.float32)
    coords, count = opendml.nonzero(y, transposed=True, offsets=[10, 20], fill=[1, 2])
    n = int(count[0])
    np.testing.assert_array_equal(coords[:, :n].T, expected_nonzero(y) + [10, 20])
    assert (coords[0, n:] == 1).all() and (coords[1, n:] == 2).all()
    a, _ = opendml.nonzero(y, fill=5)
    assert (a[n:] == 5).all()
    # NumPy's integers are integers too (anything with __index__).
    b, _ = opendml.nonzero(y, offsets=np.array([10, 20]), fill=np.int64(7))
    np.testing.assert_array_equal(b[:n], expected_nonzero(y) + [10, 20])
    assert (b[n:] == 7).all()


@pytest.mark.parametrize(
    "fill, index_dtype, message",
    [(-1, "uint32", "fill holds -1, which a uint32 coordinate cannot hold"),
     (2**32, "uint32", "fill holds 4294967296"),
     (2**63, "int64", "fill holds 9223372036854775808"),
     (2**64, "uint64", "fill holds 18446744073709551616"),
     ([1, 2], "uint32", "fill has 2 values; it needs one per coordinate column (3)"),
     (1.5, "uint32", "fill is a float"),
     ("abc", "uint32", "fill is a str; it must be a sequence (a list or tuple) or an integer"),
     (b"\x01\x02\x03", "uint32", "fill is a bytes"),
     ([0, 1.5, 0], "uint32", "fill holds 1.5, not an integer")],
)
def test_nonzero_bad_fill(fill, index_dtype, message):
    with pytest.raises(opendml.Error, match=re.escape(message)):
        opendml.nonzero(np.ones((2, 3, 4), np.float32), fill=fill, index_dtype=index_dtype)


def test_nonzero_fill_takes_every_value_of_the_coordinates_type():
    # The largest of each index type is a fill, not refused as past it.
    y = np.array([[0, 5, 0], [6, 0, 7]], np.float32)
    for dtype, fill in (("uint32", 2**32 - 1), ("int64", 2**63 - 1), ("uint64", 2**64 - 1), ("int64", -(2**63))):
        coords, count = opendml.nonzero(y, fill=fill, index_dtype=dtype)
        n = int(count[0])
        assert coords.dtype == np.dtype(dtype) and n == 3
        np.testing.assert_array_equal(coords[:n], expected_nonzero(y))
        assert (coords[n:] == fill).all()


def test_nonzero_fill_is_judged_by_the_coordinates_written():
    # With out=, the coordinates' type is out='s: fill was checked against index_dtype (uint32).
    x = np.array([[0, 5], [6, 0]], np.uint8)
    for dtype, fill in ((np.int64, -1), (np.uint64, 2**40), (np.uint64, 2**64 - 1)):
        coords, count = np.zeros((4, 2), dtype), np.zeros(1, dtype)
        opendml.nonzero(x, fill=fill, out=(coords, count))
        assert coords.tolist() == [[0, 1], [1, 0], [fill, fill], [fill, fill]]
    with pytest.raises(opendml.Error, match="fill holds -1, which a uint64 coordinate cannot hold"):
        opendml.nonzero(x, fill=-1, out=(np.zeros((4, 2), np.uint64), np.zeros(1, np.uint64)))
    # int32 coordinates are the library's to refuse; the fill was said to be what int32 cannot hold.
    with pytest.raises(opendml.UnsupportedError, match="INT32"):
        opendml.nonzero(x, fill=-1, out=(np.zeros((4, 2), np.int32), np.zeros(1, np.uint32)))
    # Without out=, fill is read before the coordinates are allocated (here 8 TiB of them).
    huge = np.broadcast_to(np.ones(1, np.uint8), (2**40,))
    for fill in (2**70, "a", [1, 2]):
        with pytest.raises(opendml.Error, match="fill"):
            opendml.nonzero(huge, index_dtype="int64", fill=fill)


def test_nonzero_out_and_empty_input():
    x = np.array([[0, 5], [6, 0]], np.uint8)
    coords = np.full((4, 2), 9, np.uint32)
    count = np.full(1, 9, np.uint32)
    got = opendml.nonzero(x, out=(coords, count))
    assert got[0] is coords and got[1] is count
    assert count[0] == 2 and coords[:2].tolist() == [[0, 1], [1, 0]]
    coords, count = opendml.nonzero(np.zeros((0, 3), np.float32))
    assert coords.shape == (0, 2) and count.tolist() == [0]
    count = np.full(1, 9, np.uint32)
    opendml.nonzero(np.zeros((2, 0), np.float32), out=(np.zeros((0, 2), np.uint32), count))
    assert count.tolist() == [0]


# ---- views, axes, empty pieces ------------------------------------------------------------------


def test_non_contiguous_views_go_in_as_strides():
    base = np.arange(10 * 12, dtype=np.float32).reshape(10, 12)
    views = [base.T, base[::2, 1::3], base[1:, 3:], base[:, 5], np.broadcast_to(base[0], (4, 12))]
    for v in views:
        got = opendml.concat([v, v], axis=-1)
        np.testing.assert_array_equal(got, np.concatenate([v, v], axis=-1))
        inputs, _ = opendml._opendml._last_bindings()
        assert inputs == [v.ctypes.data, v.ctypes.data]  # the view itself, not a copy
        coords, count = opendml.nonzero(v)
        np.testing.assert_array_equal(coords[: count[0]], np.argwhere(v))
        parts = opendml.split(v, 2 if v.shape[0] % 2 == 0 else [1, v.shape[0] - 1], axis=0)
        wanted = np.split(v, 2 if v.shape[0] % 2 == 0 else [1], axis=0)
        for got, want in zip(parts, wanted, strict=True):
            np.testing.assert_array_equal(bits(got), bits(want))


def test_writes_through_strided_out():
    a, b = np.ones((3, 2), np.int16), np.full((3, 3), 2, np.int16)
    big = np.zeros((5, 8), np.int16)
    out = big[1:4, 2:7]  # rows 1..3, columns 2..6 of a larger array
    assert opendml.concat([a, b], axis=1, out=out) is out
    want = np.zeros((5, 8), np.int16)
    want[1:4, 2:7] = np.concatenate([a, b], axis=1)
    np.testing.assert_array_equal(big, want)  # nothing outside the view was touched
    src = np.arange(24, dtype=np.int16).reshape(6, 4)
    bases = [np.zeros((4, 2), np.int16), np.zeros((4, 4), np.int16)]
    opendml.split(src, [2, 4], axis=0, out=[b.T for b in bases])  # into transposed views
    np.testing.assert_array_equal(np.concatenate([b.T for b in bases]), src)
    # Views that interleave in one buffer span overlapping regions, which DirectML forbids for outputs.
    tall = np.zeros((4, 6), np.int16)
    with pytest.raises(opendml.Error, match="overlaps"):
        opendml.split(src, [2, 4], axis=0, out=[tall[:, :2].T, tall[:, 2:].T])


def test_negative_axes_match_numpy():
    x = np.arange(2 * 3 * 4, dtype=np.int32).reshape(2, 3, 4)
    for axis in range(-3, 3):
        np.testing.assert_array_equal(opendml.concat([x, x], axis=axis), np.concatenate([x, x], axis=axis))
        for got, want in zip(opendml.split(x, [1, x.shape[axis] - 1], axis=axis), np.split(x, [1], axis=axis), strict=True):
            np.testing.assert_array_equal(got, want)


def test_empty_pieces_take_no_part():
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    empty = np.zeros((0, 2), np.float32)
    np.testing.assert_array_equal(opendml.concat([empty, x, empty], axis=0), x)
    assert opendml.concat([empty, empty]).shape == (0, 2)
    parts = opendml.split(x, [0, 3, 0])
    assert [p.shape for p in parts] == [(0, 2), (3, 2), (0, 2)]
    np.testing.assert_array_equal(parts[1], x)
    assert [p.shape for p in opendml.split(np.zeros((0, 4)), 2, axis=1)] == [(0, 2), (0, 2)]


def test_split_into_equal_sections():
    x = np.arange(12, dtype=np.int64).reshape(2, 6)
    for sections in (3, np.int64(3)):
        for got, want in zip(opendml.split(x, sections, axis=-1), np.split(x, 3, axis=-1), strict=True):
            np.testing.assert_array_equal(got, want)
    for got, want in zip(opendml.split(x, (np.int32(1), 5), axis=1), np.split(x, [1], axis=1), strict=True):
        np.testing.assert_array_equal(got, want)


# ---- zero copy and the caller's own array type -----------------------------------------------------


def test_numpy_zero_copy():
    a, b = np.arange(4, dtype=np.float32), np.arange(5, dtype=np.float32)
    out = np.empty(9, np.float32)
    assert opendml.concat([a, b], out=out) is out
    inputs, outputs = opendml._opendml._last_bindings()
    assert inputs == [a.ctypes.data, b.ctypes.data] and outputs == [out.ctypes.data]
    r = opendml.concat([a, b])
    assert opendml._opendml._last_bindings()[1] == [r.ctypes.data]


def test_torch_cpu_zero_copy_and_type():
    t = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    view = t.T[1:]  # non-contiguous
    r = opendml.concat([view, view], axis=0)
    assert isinstance(r, torch.Tensor) and torch.equal(r, torch.cat([view, view]))
    inputs, outputs = opendml._opendml._last_bindings()
    assert inputs == [view.data_ptr(), view.data_ptr()] and outputs == [r.data_ptr()]
    parts = opendml.split(t, [1, 3], axis=-2)
    assert all(isinstance(p, torch.Tensor) for p in parts)
    assert [p.data_ptr() for p in parts] == opendml._opendml._last_bindings()[1]
    mask = t > 10
    coords, count = opendml.nonzero(mask)
    assert coords.dtype == torch.uint32 and count.dtype == torch.uint32
    n = int(count[0])
    assert torch.equal(coords[:n].to(torch.int64), torch.nonzero(mask))
    assert opendml._opendml._last_bindings()[0] == [mask.data_ptr()]


def test_torch_subclasses_take_to_dlpack_with_the_same_results():
    # torch.Tensor itself is borrowed through PyTorch's DLPack C exchange API where PyTorch has one,
    # a subclass through to_dlpack (its table may differ: python/src/frameworks.h); both see the
    # same memory, layout and type, whichever array comes first.
    t = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    view = t.T[1:]
    param = torch.nn.Parameter(view, requires_grad=False)
    published = any(hasattr(torch.Tensor, n) for n in ("__dlpack_c_exchange_api__", "__c_dlpack_exchange_api__"))
    assert opendml._opendml._borrows_through_exchange_api(view) == published
    assert not opendml._opendml._borrows_through_exchange_api(param)
    assert not opendml._opendml._borrows_through_exchange_api(np.zeros(1))
    for arrays in ([view, param], [param, view], [param, param]):
        r = opendml.concat(arrays, axis=1)
        assert torch.equal(r, torch.cat([view, view], 1))
        assert opendml._opendml._last_bindings() == ([view.data_ptr()] * 2, [r.data_ptr()])
    out = torch.nn.Parameter(torch.empty(5, 8), requires_grad=False)
    assert opendml.concat([view, view], axis=1, out=out) is out and torch.equal(out, torch.cat([view, view], 1))
    raises(opendml.Error, "out requires grad", opendml.concat, [view], out=torch.nn.Parameter(torch.empty(5, 4)))
    raises(opendml.Error, "out requires grad", opendml.concat, [view], out=torch.empty(5, 4, requires_grad=True))


def test_torch_results_through_torch_alloc():
    # Where the package was built with torch (the README's test command builds it so), results for
    # torch.Tensor arguments come from PyTorch's at::empty (python/src/torch_alloc.cpp); for a
    # subclass, or under another torch version, from new_empty. Either way they are PyTorch's own
    # tensors: resizable, no gradient, on the argument's device, of the asked dtype.
    import opendml._frameworks as frameworks

    try:
        from opendml import _torch_alloc
    except ImportError:
        # scripts/test-python.sh builds with torch and sets this: there, a missing module is a failure
        # (the configure step leaves it out with a warning where torch's headers do not compile).
        assert not os.environ.get("OPENDML_REQUIRE_TORCH_ALLOC"), "opendml._torch_alloc was not built"
        pytest.skip("the package was built without opendml._torch_alloc (no torch at build time, or OPENDML_TORCH_ALLOC=OFF)")
    assert _torch_alloc.torch_version == torch.__version__
    assert frameworks._torch_alloc(torch.__version__) is _torch_alloc.empty
    assert frameworks._torch_alloc(torch.__version__ + ".other") is None
    t = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    assert opendml._opendml._allocates_through_torch_alloc(t)
    assert not opendml._opendml._allocates_through_torch_alloc(torch.nn.Parameter(t, requires_grad=False))
    for x in (t, t.T, t[1:, ::2]):
        r = opendml.concat([x, x], axis=-1)
        assert type(r) is torch.Tensor and r.dtype == x.dtype and r.device == x.device and not r.requires_grad
        assert r.is_contiguous() and torch.equal(r, torch.cat([x, x], -1))
        r.resize_(r.numel() + 7)  # a tensor wrapping a DLPack capsule could not
    for index_dtype, dtype in (("uint32", torch.uint32), ("int64", torch.int64), ("uint64", torch.uint64)):
        coords, count = opendml.nonzero(t > 5, index_dtype=index_dtype)
        assert coords.dtype == dtype and count.dtype == dtype and coords.shape == (24, 2)
        assert torch.equal(coords[: int(count.item())].to(torch.int64), torch.nonzero(t > 5))
    parts = opendml.split(torch.arange(3, dtype=torch.int16), [1, 2])
    assert [p.tolist() for p in parts] == [[0], [1, 2]] and all(type(p) is torch.Tensor for p in parts)
    with torch.no_grad():  # with grad mode on, such an input is refused (test_inputs_that_require_grad_...)
        assert not opendml.concat([t.clone().requires_grad_(), t], axis=0).requires_grad


def test_torch_bfloat16():
    rng = np.random.default_rng(SEED)
    x = torch.from_numpy(random_array(rng, (7, 9), ml_dtypes.bfloat16).view(np.int16)).view(torch.bfloat16)
    x[0, :3] = torch.tensor([-0.0, float("nan"), 0.0])
    coords, count = opendml.nonzero(x)
    want = torch.nonzero(x)  # -0.0 is zero, NaN is not
    assert count.item() == len(want) and torch.equal(coords[: len(want)].to(torch.int64), want)
    joined = opendml.concat([x, x.T[:3].T], axis=1)
    assert torch.equal(joined.view(torch.int16), torch.cat([x, x[:, :3]], 1).view(torch.int16))


def test_jax_cpu_zero_copy_and_type():
    x = jnp.arange(12, dtype=jnp.float32).reshape(3, 4)
    r = opendml.concat([x, x], axis=1)
    assert isinstance(r, jax.Array)
    np.testing.assert_array_equal(np.asarray(r), np.concatenate([np.asarray(x)] * 2, axis=1))
    inputs, outputs = opendml._opendml._last_bindings()
    assert inputs == [x.unsafe_buffer_pointer()] * 2 and outputs == [r.unsafe_buffer_pointer()]
    coords, count = opendml.nonzero(x)
    assert isinstance(coords, jax.Array) and int(count[0]) == 11
    np.testing.assert_array_equal(np.asarray(coords)[:11], np.argwhere(np.asarray(x)))
    parts = opendml.split(x, [1, 2])
    assert all(isinstance(p, jax.Array) for p in parts)
    np.testing.assert_array_equal(np.asarray(parts[1]), np.asarray(x)[1:])


def test_read_only_inputs_are_fine():
    x = np.arange(4, dtype=np.int32)
    x.flags.writeable = False
    np.testing.assert_array_equal(opendml.concat([x, x]), np.concatenate([x, x]))


# ---- the cache -----------------------------------------------------------------------------------


def test_cache_hits_and_bound():
    opendml.clear_cache()
    x = np.arange(6, dtype=np.float32)
    opendml.concat([x, x])
    opendml.concat([x + 1, x])  # same description, other data
    info = opendml.cache_info()
    assert (info["size"], info["hits"], info["misses"]) == (1, 1, 1)
    try:
        opendml.set_cache_capacity(3)
        for n in range(1, 10):
            y = np.arange(n, dtype=np.float32)
            np.testing.assert_array_equal(opendml.concat([y, y]), np.concatenate([y, y]))
        assert opendml.cache_info()["size"] == 3
        opendml.set_cache_capacity(0)
        assert opendml.cache_info()["size"] == 0
        np.testing.assert_array_equal(opendml.concat([x, x]), np.concatenate([x, x]))  # still works uncached
        assert opendml.cache_info()["size"] == 0
    finally:
        opendml.set_cache_capacity(256)


def test_repeated_calls_hit_the_cache_with_every_array_kind():
    # The key is the description alone: whichever way an array was borrowed (torch's exchange API,
    # DLPack capsules), a repeated call compiles nothing (a miss while a CUDA graph captures fails).
    for make in (lambda n: np.ones(n, np.float32), lambda n: torch.ones(n), lambda n: jnp.ones(n)):
        opendml.clear_cache()
        for _ in range(3):
            opendml.concat([make(4), make(4)])
            opendml.nonzero(make(4))
        info = opendml.cache_info()
        assert (info["size"], info["misses"], info["hits"]) == (2, 2, 4), make


def test_the_cache_key_sees_every_change_of_layout_type_and_count():
    # The key is written in place per tensor (python/src/operators.h, Spec::write_key): calls of one
    # shape back to back that differ only in strides, type, alignment, the number of arrays (past
    # the four a call keeps in place) or which of them are empty must each miss, and compute their own.
    opendml.clear_cache()
    base = torch.arange(96, dtype=torch.float32).reshape(8, 12)
    cases = [
        [base[:, :4], base[:, 4:8]],  # strided views
        [base[:, :4].contiguous(), base[:, 4:8].contiguous()],  # the same shapes, packed
        [base[:, :4].to(torch.int32), base[:, 4:8].to(torch.int32)],  # another type
        [base.flatten()[1:33].reshape(8, 4), base[:, 4:8].contiguous()],  # 4-byte aligned start
        [base[:, i : i + 2] for i in range(0, 12, 2)],  # six arrays: past the in-place four
        [base[:, i : i + 2] for i in range(0, 12, 2)] + [base[:, :0]],  # the same operator: empties take no part
        [base[:, :0], base[:, :3], base[:, :0], base[:, 3:5], base[:, :0]],  # empty ones between
    ]
    for _ in range(2):
        for arrays in cases:
            r = opendml.concat(arrays, axis=1)
            assert torch.equal(r, torch.cat(arrays, 1)) and r.dtype == arrays[0].dtype and not r.requires_grad
    info = opendml.cache_info()
    assert (info["misses"], info["hits"]) == (len(cases) - 1, len(cases) + 1)
    x = base.T  # split into many sections (empty ones too), strided and packed
    for sizes in ([2, 0, 3, 1, 0, 4, 2], [12], [1] * 12):
        for y in (x, x.contiguous()):
            parts = opendml.split(y, sizes, axis=0)
            assert all(torch.equal(p, q) for p, q in zip(parts, torch.split(y, sizes, 0), strict=True))
    grad = torch.ones(3, 2, requires_grad=True)
    with torch.no_grad():  # with grad mode on, such an input is refused (test_inputs_that_require_grad_...)
        r = opendml.concat([grad, grad])  # a result the call allocates never requires grad
    assert torch.equal(r, torch.ones(6, 2)) and not r.requires_grad


def test_threads_share_the_cache():
    x = np.arange(1 << 16, dtype=np.float32)
    want = np.concatenate([x, x])
    errors = []

    def work():
        for _ in range(20):
            if not np.array_equal(opendml.concat([x, x]), want):
                errors.append("wrong result")

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


# ---- errors ------------------------------------------------------------------------------------


def raises(cls, match, fn, *args, **kwargs):
    with pytest.raises(cls, match=match) as e:
        fn(*args, **kwargs)
    return e.value


def test_one_failing_export_leaves_its_type_on_dlpack_1():
    # A TypeError from __dlpack__(max_version=...) is how a producer from before DLPack 1.0 says it
    # takes no max_version; one array's TypeError (a type it cannot export) marked its whole type so,
    # and its read-only arrays, which need DLPack 1.0's flag, were refused from then on.
    class Forwards:
        def __init__(self, array, fails=False):
            self.array, self.fails = array, fails

        def __dlpack_device__(self):
            return self.array.__dlpack_device__()

        def __dlpack__(self, **kwargs):
            if self.fails:
                raise TypeError("complex128 is not supported")
            return self.array.__dlpack__(**kwargs)

    frozen = np.ones(2, np.float32)
    frozen.flags.writeable = False
    # A producer from before DLPack 1.0 reports its own error, not the TypeError of max_version.
    class Old:
        def __dlpack_device__(self):
            return (1, 0)

        def __dlpack__(self, stream=None):
            raise BufferError("cannot export a read-only array")

    for _ in range(2):
        raises(opendml.Error, "Old.__dlpack__ failed: BufferError: cannot export a read-only array$", opendml.concat,
               [Old()])
    assert opendml.concat([Forwards(frozen)] * 2).tolist() == [1, 1, 1, 1]
    raises(opendml.Error, "Forwards.__dlpack__ failed: TypeError: complex128 is not supported$", opendml.concat,
           [Forwards(frozen, fails=True)])
    assert opendml.concat([Forwards(frozen)] * 2).tolist() == [1, 1, 1, 1]


def test_results_like_a_foreign_array_numpy_cannot_hold():
    # Results like another library's array are NumPy arrays of its type, which NumPy may not have
    # (bfloat16): its RuntimeError escaped.
    class Foreign:
        def __init__(self, tensor):
            self.tensor = tensor

        def __dlpack_device__(self):
            return self.tensor.__dlpack_device__()

        def __dlpack__(self, **kwargs):
            return self.tensor.__dlpack__(**kwargs)

    brain = Foreign(torch.arange(4, dtype=torch.bfloat16))
    raises(opendml.UnsupportedError, "cannot allocate results like this .* array as NumPy arrays .*; pass out=",
           opendml.concat, [brain])
    out = torch.zeros(4, dtype=torch.bfloat16)
    assert opendml.concat([brain], out=Foreign(out)) is not None and out.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert opendml.concat([Foreign(torch.arange(4.0))]).tolist() == [0.0, 1.0, 2.0, 3.0]


def test_foreign_protocols_half_spoken_are_errors():
    # A device but no memory, or a CUDA array interface missing what every version has, raised
    # AttributeError and KeyError; a failing __dlpack__ put its traceback in the message.
    class DeviceOnly:
        def __dlpack_device__(self):
            return (1, 0)

    class NoData:
        __cuda_array_interface__ = {"shape": (2,), "typestr": "<f4", "version": 3}

    class NotADict:
        __cuda_array_interface__ = [("data", (0, False))]

    class Fails:
        def __dlpack_device__(self):
            return (1, 0)

        def __dlpack__(self, **kwargs):
            raise ValueError("cannot export this")

    raises(opendml.Error, "neither __dlpack__ nor __cuda_array_interface__", opendml.split, DeviceOnly(), 1)
    raises(opendml.Error, "its __cuda_array_interface__ has no 'data'", opendml.split, NoData(), 1)
    raises(opendml.Error, "its __cuda_array_interface__ is a list, not a dict", opendml.split, NotADict(), 1)
    e = raises(opendml.Error, "Fails.__dlpack__ failed: ValueError: cannot export this$", opendml.split, Fails(), 1)
    assert "Traceback" not in str(e)


def test_a_cuda_array_interface_is_placed_by_its_pointer():
    # An object that offers only the CUDA array interface is CUDA memory, whatever its
    # __dlpack_device__ claims: taken at its word (the CPU), the CPU backend read the interface's
    # address and crashed. Without a CUDA backend it is unsupported; with one, address 4096 is no
    # device memory, and on a machine without a CUDA driver the pointer cannot be asked about.
    class ClaimsTheCpu:
        __cuda_array_interface__ = {"data": (4096, False), "shape": (4,), "typestr": "<f4", "version": 3}

        def __dlpack_device__(self):
            return (1, 0)

    where = "is CUDA memory|not on a CUDA device|cudaPointerGetAttributes"
    refused = (opendml.Error, opendml.UnsupportedError, opendml.DeviceError)
    raises(refused, where, opendml.concat, [np.zeros(4, np.float32), ClaimsTheCpu()])
    raises(refused, where, opendml.nonzero, ClaimsTheCpu(),
           out=(np.zeros((4, 1), np.uint32), np.zeros(1, np.uint32)))


def test_foreign_tuples_of_the_wrong_length_are_errors():
    # What another library hands over is checked before it is read: these once read past a tuple's end.
    class ShortDevice:
        def __dlpack_device__(self):
            return ()

        def __dlpack__(self, **kwargs):
            return 0

    class ShortInterface:
        __cuda_array_interface__ = {"data": (0,), "shape": (4,), "typestr": "<f4", "version": 3}

    class DeviceList(ShortDevice):
        def __dlpack_device__(self):
            return [1, 0]

    raises(opendml.Error, "ShortDevice.__dlpack_device__\\(\\) is \\(\\); it must be a tuple of 2", opendml.concat,
           [ShortDevice()])
    raises(opendml.Error, "it must be a tuple of 2", opendml.concat, [DeviceList()])
    raises(opendml.Error, "__cuda_array_interface__\\['data'\\] is \\(0,\\); it must be a tuple of 2", opendml.nonzero,
           ShortInterface())


def test_a_bad_stream_is_an_error_wherever_the_arrays_live():
    """A stream is checked on the CPU too (as the descriptor layer's execute does), before anything
    runs: what is not a cudaStream_t would reach the CUDA runtime as a handle on a GPU."""
    a = np.arange(6, dtype=np.float32)

    class Stream:
        def __init__(self, handle):
            self.cuda_stream = handle

    class Interface:
        def __cuda_stream__(self):
            return (0, -1)

    out = np.zeros(12, np.float32)
    for stream, message in [("fast", "stream is a str"), (1.5, "stream is a float"), (True, "stream is a bool"),
                            (-1, "stream is -1; a cudaStream_t is an address from 0 to 2\\^63 - 1"),
                            (2**64, "stream is 18446744073709551616; a cudaStream_t is an address"),
                            (Stream("7"), "stream.cuda_stream is a str; a cudaStream_t is an int"),
                            (Stream(-8), "stream.cuda_stream is -8"),
                            (Interface(), "stream.__cuda_stream__\\(\\)\\[1\\] is -1")]:
        raises(opendml.Error, message, opendml.concat, [a, a], out=out, stream=stream)
        raises(opendml.Error, message, opendml.nonzero, a, stream=stream)
        raises(opendml.Error, message, opendml.split, a, 2, stream=stream)
    assert not out.any()  # nothing written by a call that failed validation
    for stream in (0, 1, 2, 2**63 - 1, Stream(5)):  # a valid handle is not used on the CPU
        assert np.array_equal(opendml.concat([a, a], stream=stream), np.concatenate([a, a]))


def test_invalid_input_raises_error():
    a = np.zeros((2, 3), np.float32)
    e = raises(opendml.Error, "arrays is empty", opendml.concat, [])
    assert isinstance(e, ValueError) and e.status == "INVALID_ARGUMENT"
    raises(opendml.Error, "speaks neither DLPack", opendml.concat, [[1, 2], [3]])
    raises(opendml.Error, "speaks neither DLPack", opendml.nonzero, 3.0)
    raises(opendml.Error, "0-d", opendml.concat, [np.array(1, np.float32)])
    raises(opendml.Error, "0-d", opendml.nonzero, np.array(1.0, np.float32))
    raises(opendml.Error, "0-d", opendml.split, np.array(1.0, np.float32), 1)
    raises(opendml.Error, "axis 2 is out of bounds for arrays of dimension 2 \\(-2 to 1\\)", opendml.concat, [a], axis=2)
    raises(opendml.Error, "axis -3 is out of bounds", opendml.split, a, 1, axis=-3)
    raises(opendml.Error, "arrays\\[1\\] has shape \\(2, 4\\)", opendml.concat, [a, np.zeros((2, 4), np.float32)])
    raises(opendml.Error, "arrays\\[1\\] has shape \\(2, 3, 1\\)", opendml.concat, [a, np.zeros((2, 3, 1), np.float32)])
    raises(opendml.Error, "type must match", opendml.concat, [a, a.astype(np.int32)])
    raises(opendml.Error, "out has shape \\(4, 3\\) but the result has shape \\(5, 3\\)", opendml.concat,
           [a, np.zeros((3, 3), np.float32)], out=np.zeros((4, 3), np.float32))
    raises(opendml.Error, "type must match", opendml.concat, [a, a], out=np.zeros((4, 3), np.int32))
    raises(opendml.Error, "sizes add up to 3 but x.shape\\[0\\] is 2", opendml.split, a, [1, 2])
    raises(opendml.Error, "sizes\\[0\\] is -1", opendml.split, a, [-1, 3])
    # Lengths that add up past 64 bits (broadcast views of 2^62 elements): four wrapped to 0, and
    # concat returned an empty array.
    huge = np.broadcast_to(np.ones(1, np.uint8), (2**62,))
    raises(opendml.Error, "lengths along axis 0 add up past 2\\^63 - 1", opendml.concat, [huge] * 4)
    raises(opendml.Error, "lengths along axis 0 add up past 2\\^63 - 1", opendml.concat, [huge] * 2)
    raises(opendml.Error, "sizes add up past 2\\^63 - 1", opendml.split, huge, [2**62] * 5)
    raises(opendml.Error, "does not split into 2 equal sections", opendml.split, a, 2, axis=1)
    raises(opendml.Error, "does not split into 0 equal sections", opendml.split, a, 0)
    raises(opendml.Error, "sizes is 4611686018427387904 sections; DirectML's SPLIT has at most 2\\^32 - 1 outputs",
           opendml.split, np.zeros(0, np.float32), 2**62)  # an empty axis splits into any number of sections
    raises(opendml.Error, "sizes is empty", opendml.split, a, [])
    raises(opendml.Error, "out has 1 arrays but there are 2 sections", opendml.split, a, 2, out=[a])
    raises(opendml.Error, "out\\[1\\] is 2 long along axis 0 but its section is 1", opendml.split, a, 2,
           out=[np.zeros((1, 3), np.float32), np.zeros((2, 3), np.float32)])
    raises(opendml.Error, "index_dtype is 'int8'", opendml.nonzero, a, index_dtype="int8")
    raises(opendml.Error, "columns is -1", opendml.nonzero, a, columns=-1)
    raises(opendml.Error, "arrays\\[1\\] has shape \\(3,\\) and element type float32 but the whole has shape \\(2, 3\\)",
           opendml.concat, [a, np.zeros(3, np.float32)])
    raises(opendml.Error, "out\\[1\\] has shape \\(3,\\) .* every dimension other than axis 0 and the type must match",
           opendml.split, a, 2, out=[np.zeros((1, 3), np.float32), np.zeros(3, np.float32)])
    raises(opendml.Error, "columns is 0; coordinates have 1 to x.ndim \\(2\\) columns", opendml.nonzero, a, columns=0)
    raises(opendml.Error, "columns is 3; coordinates have 1 to x.ndim \\(2\\) columns", opendml.nonzero, a, columns=3)
    raises(opendml.Error, "columns is 1099511627776", opendml.nonzero, a, columns=2**40)
    raises(opendml.Error, "NONZERO_COORDINATES: OutputCoordinatesTensor", opendml.nonzero, np.zeros((2, 3), np.float32),
           columns=1, out=(np.zeros((6, 1), np.uint32), np.zeros(1, np.uint32)))  # N below the effective rank
    raises(opendml.Error, "sizes is a str; it must be a sequence", opendml.split, a, "ab")
    raises(opendml.Error, "sizes\\[0\\] is a float; it must be an integer", opendml.split, a, [1.5, 0.5])
    raises(opendml.Error, "sizes\\[0\\] is 4611686018427387904 but x.shape\\[0\\] is 2", opendml.split, a,
           [2**62, 2**62, -(2**63) + 2])
    raises(opendml.Error, "out is an int; it must be a sequence", opendml.split, a, 2, out=7)
    raises(opendml.Error, "out is an int; it must be a sequence", opendml.nonzero, a, out=5)
    raises(opendml.Error, "arrays is an int; it must be a sequence", opendml.concat, 5)
    raises(opendml.Error, "coords has 1 dimensions", opendml.nonzero, a, out=(np.zeros(6, np.uint32), np.zeros(1, np.uint32)))
    raises(opendml.Error, "out must be \\(coords, count\\)", opendml.nonzero, a, out=(np.zeros(6, np.uint32),))
    ro = np.zeros(9, np.float32)
    ro.flags.writeable = False
    raises(opendml.Error, "read-only", opendml.concat, [a.reshape(-1), a[0]], out=ro)
    raises(opendml.Error, "overlaps", opendml.concat, [a[0], a[0]], out=a.reshape(-1))
    raises(opendml.Error, "DimensionCount is 9", opendml.concat, [np.zeros([1] * 9, np.float32)])


def test_an_axis_or_columns_that_is_no_64_bit_integer_names_itself():
    """An axis or columns past 64 bits, or not an integer, is opendml.Error naming the argument, as a
    size is; nanobind's int64 parameter refused them with its TypeError listing the signature, which
    for 2**70 said that an int was given where an int is taken."""
    a = np.zeros((2, 3), np.float32)
    for call, what in ((lambda v: opendml.concat([a, a], v), "concat: axis"),
                       (lambda v: opendml.split(a, 1, v), "split: axis"),
                       (lambda v: opendml.nonzero(a, columns=v), "nonzero: columns")):
        raises(opendml.Error, f"^{what} does not fit in 64 bits$", call, 2**70)
        raises(opendml.Error, f"^{what} does not fit in 64 bits$", call, -(2**64))
        raises(opendml.Error, f"^{what} is a float; it must be an integer$", call, 1.0)
        raises(opendml.Error, f"^{what} is a str; it must be an integer$", call, "1")
    # A bool is no integer, as NumPy's bools refuse __index__ themselves: Python's True was axis 1.
    for call, what in ((lambda v: opendml.concat([a, a], v), "concat: axis"),
                       (lambda v: opendml.split(a, [1, 2], v), "split: axis"),
                       (lambda v: opendml.split(a, v, 0), "split: sizes"),
                       (lambda v: opendml.split(a, [v, 1], 0), "split: sizes\\[0\\]"),
                       (lambda v: opendml.nonzero(a, columns=v), "nonzero: columns")):
        for v in (True, False) if what == "split: sizes" else (True, False, np.True_):  # (np.True_ is no count)
            raises(opendml.Error, f"^{what} is a bool; it must be an integer$", call, v)
    for fill, offsets in ((True, None), ([0, False], None), (None, [True, 0])):
        raises(opendml.Error, r"^nonzero: (fill|offsets) holds (True|False), not an integer$",
               lambda: opendml.nonzero(a, fill=fill, offsets=offsets))
    with pytest.raises(opendml.Error, match="is a bool; it must be an integer"):
        opendml.TensorDesc(opendml.DataType.FLOAT32, [True, 3])
    # Integers of every kind are taken as before.
    assert opendml.concat([a, a], np.int64(1)).shape == (2, 6)
    assert [p.shape for p in opendml.split(a, 3, axis=np.uint8(1))] == [(2, 1)] * 3
    assert opendml.nonzero(a, columns=np.int16(2))[0].shape == (6, 2)
    assert opendml.nonzero(a, columns=None)[0].shape == (6, 2)


# ---- 64-bit indices (opendml's extension, asked for by the array layer where needed) ---------------


@pytest.mark.parametrize("index_dtype", ["int64", "uint64"])
def test_nonzero_64bit_indices(index_dtype):
    rng = np.random.default_rng(SEED)
    x = random_array(rng, (5, 7, 3), np.float32)
    coords, count = opendml.nonzero(x, index_dtype=index_dtype)
    want = np.argwhere(x)
    assert coords.dtype == index_dtype and count.dtype == index_dtype and coords.shape == (x.size, 3)
    assert int(count[0]) == len(want)
    np.testing.assert_array_equal(coords[: len(want)], want)
    coords, count = opendml.nonzero(x, transposed=True, index_dtype=index_dtype)
    np.testing.assert_array_equal(coords[:, : len(want)], want.T)
    # Widths chosen apart through out=: 32-bit coordinates with a 64-bit count.
    coords, count = np.zeros((x.size, 3), np.uint32), np.zeros(1, index_dtype)
    opendml.nonzero(x, out=(coords, count))
    assert int(count[0]) == len(want)
    np.testing.assert_array_equal(coords[: len(want)], want)


def test_torch_int64_coordinates_index_like_torch_nonzero():
    x = torch.tensor([[0.0, 1.5, 0.0], [2.0, 0.0, -3.0]])
    coords, count = opendml.nonzero(x, index_dtype="int64")
    assert coords.dtype == torch.int64 and count.dtype == torch.int64
    n = int(count.item())
    assert torch.equal(coords[:n], torch.nonzero(x))
    assert torch.equal(x[tuple(coords[:n].T)], x[x != 0])


def test_past_32_bits_is_refused_before_allocating():
    # A broadcast view past 2^32 elements needs no memory; its coordinates would need 32 GiB.
    huge = np.lib.stride_tricks.as_strided(np.zeros(1, np.uint8), shape=(2**16 + 1, 2**16), strides=(0, 0))
    raises(opendml.Error, "past 2\\^32 - 1, so its count needs 64 bits: pass index_dtype='int64'", opendml.nonzero, huge)
    one_dim = np.lib.stride_tricks.as_strided(np.zeros(1, np.uint8), shape=(2**32 + 1,), strides=(0,))
    raises(opendml.Error, "x.shape\\[0\\] is 4294967297", opendml.nonzero, one_dim, index_dtype="int64",
           out=(np.zeros((1, 1), np.int64), np.zeros(1, np.int64)))  # one size is 32 bits even so


def test_uint32_coordinates_past_2_to_the_32_elements():
    # 2^31 rows of 2 uint32 columns are 2^32 coordinates: that tensor needs 64-bit indices although
    # each coordinate and the count fit 32 bits. A broadcast input costs no memory, and coordinates
    # that no row is written to (no non-zero, no fill) cost none of their 16 GiB either.
    x = np.lib.stride_tricks.as_strided(np.zeros(1, np.uint8), shape=(2**15, 2**16), strides=(0, 0))
    coords, count = np.empty((2**31, 2), np.uint32), np.full(1, 7, np.uint32)
    assert opendml.nonzero(x, out=(coords, count))[1] is count
    assert count[0] == 0


def test_tensors_without_memory_are_refused():
    # A PyTorch tensor is borrowed through to_dlpack at once, which learns its place and layout in one call.
    raises(opendml.Error, "arrays\\[0\\]: torch.utils.dlpack.to_dlpack failed: .*meta", opendml.concat,
           [torch.empty(4, device="meta")])
    raises(opendml.Error, "arrays\\[1\\]: .*failed: .*meta", opendml.concat,
           [torch.empty(4), torch.empty(4, device="meta")])


def test_unsupported_cases_raise_not_implemented():
    e = raises(opendml.UnsupportedError, "no feature level allows FLOAT64", opendml.nonzero, np.zeros(3))
    assert isinstance(e, NotImplementedError) and e.status == "UNSUPPORTED"
    raises(opendml.UnsupportedError, "no feature level allows INT64", opendml.nonzero, np.zeros(3, np.int64))
    raises(opendml.UnsupportedError, "OutputCountTensor.DataType is INT32", opendml.nonzero, np.zeros((2, 3), np.float32),
           out=(np.zeros((6, 2), np.uint32), np.zeros(1, np.int32)))
    raises(opendml.UnsupportedError, "complex64, which has no DirectML data type", opendml.concat, [np.zeros(2, np.complex64)])
    x = np.arange(4, dtype=np.float32)
    raises(opendml.UnsupportedError, "negative stride", opendml.concat, [x[::-1]])

    raises(opendml.UnsupportedError, "not a multiple of its element size", opendml.concat,
           [np.zeros(9, np.uint8)[1:].view(np.uint16)])


class _Capsule:
    """An array that hands over a DLPack 1.x capsule of its own making (ctypes), to say what a
    producer may get wrong: a negative dimension count or size, a major version past 1, flags, a
    capsule on another device than __dlpack_device__ says."""

    def __init__(self, array, ndim=None, shape=None, major=1, flags=0, device=(1, 0)):
        import ctypes

        class Device(ctypes.Structure):
            _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]

        class DataType(ctypes.Structure):
            _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]

        class Tensor(ctypes.Structure):
            _fields_ = [("data", ctypes.c_void_p), ("device", Device), ("ndim", ctypes.c_int32), ("dtype", DataType),
                        ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                        ("byte_offset", ctypes.c_uint64)]

        class Version(ctypes.Structure):
            _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]

        class Managed(ctypes.Structure):
            pass

        deleter = ctypes.CFUNCTYPE(None, ctypes.POINTER(Managed))
        Managed._fields_ = [("version", Version), ("manager_ctx", ctypes.c_void_p), ("deleter", deleter),
                            ("flags", ctypes.c_uint64), ("dl_tensor", Tensor)]
        shape = list(array.shape) if shape is None else shape
        self._shape = (ctypes.c_int64 * max(1, len(shape)))(*shape)
        self._managed = m = Managed()
        m.version = Version(major, 0)
        m.flags = flags
        m.deleter = self._deleter = deleter(lambda p: None)
        t = m.dl_tensor
        t.data, t.device, t.ndim = array.ctypes.data, Device(*device), array.ndim if ndim is None else ndim
        t.dtype = DataType({"f": 2, "i": 0, "u": 1}[array.dtype.kind], array.itemsize * 8, 1)
        t.shape = ctypes.cast(self._shape, ctypes.POINTER(ctypes.c_int64))
        new = ctypes.pythonapi.PyCapsule_New
        new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        self._capsule = lambda: new(ctypes.addressof(m), b"dltensor_versioned", None)
        self.array = array

    def __dlpack_device__(self):
        return (1, 0)

    def __dlpack__(self, **kwargs):
        return self._capsule()


def test_what_a_producer_gets_wrong_is_an_error():
    a = np.arange(4, dtype=np.float32)
    raises(opendml.Error, "says it has -1 dimensions", opendml.concat, [_Capsule(a, ndim=-1)])  # it crashed
    raises(opendml.Error, "a size of -4 in dimension 0", opendml.concat, [_Capsule(a, shape=[-4])])
    raises(opendml.UnsupportedError, "came as DLPack 2.0; opendml reads DLPack 1.x", opendml.concat,
           [_Capsule(a, major=2)])
    assert np.array_equal(opendml.concat([_Capsule(a), a]), np.concatenate([a, a]))  # a well-made one


def test_a_capsule_is_where_and_what_it_says():
    a = np.arange(4, dtype=np.float32)
    # DLPACK_FLAG_BITMASK_IS_COPIED: results written into a copy would be lost; read from, it is fine.
    out = np.zeros(4, np.float32)
    raises(opendml.Error, "out came through DLPack as a copy, so results written to it would be lost",
           opendml.concat, [a], out=_Capsule(out, flags=2))
    assert not out.any()
    assert np.array_equal(opendml.concat([_Capsule(a, flags=2)]), a)
    # A capsule on another device than __dlpack_device__ said: its memory is not the CPU's to read.
    raises(opendml.Error, "arrays\\[1\\]: its DLPack capsule is on cuda:0, not cpu", opendml.concat,
           [a, _Capsule(a, device=(2, 0))])
    raises(opendml.Error, "out: its DLPack capsule is on cuda:0, not cpu", opendml.concat, [a],
           out=_Capsule(out, device=(2, 0)))
    assert not out.any()
    # ... nor on a device that is neither the CPU nor CUDA (kDLVulkan), read as if it were the CPU's.
    raises(opendml.UnsupportedError, "arrays\\[1\\] is on DLPack device type 7; opendml runs on the CPU and CUDA",
           opendml.concat, [a, _Capsule(a, device=(7, 0))])
    raises(opendml.UnsupportedError, "out is on DLPack device type 7", opendml.concat, [a],
           out=_Capsule(out, device=(7, 0)))
    assert not out.any()


def test_an_array_on_another_device_is_refused_before_it_is_borrowed():
    class OnCuda(_Capsule):
        exports = 0

        def __dlpack_device__(self):
            return (2, 0)

        def __dlpack__(self, **kwargs):
            OnCuda.exports += 1
            return super().__dlpack__(**kwargs)

    a = np.arange(4, dtype=np.float32)
    raises(opendml.Error, "arrays\\[1\\] is on cuda:0 but the work runs on cpu", opendml.concat,
           [a, OnCuda(a, device=(2, 0))])
    raises(opendml.Error, "out\\[0\\] is on cuda:0 but the work runs on cpu", opendml.split, a, 1,
           out=[OnCuda(np.zeros(4, np.float32), device=(2, 0))])
    assert OnCuda.exports == 0  # asked where it is, never asked for its memory


def test_element_types_that_share_a_directml_type_are_not_mixed():
    # bool and uint8 are both UINT8 to DirectML, bfloat16 and float16 both FLOAT16: joining them
    # gave one the other's bytes unconverted (a bool array holding 200).
    flags, bytes_ = np.array([1, 0], bool), np.array([200, 3], np.uint8)
    raises(opendml.Error, "element type uint8 but the whole has shape .* and type bool8", opendml.concat,
           [flags, bytes_])
    raises(opendml.Error, "type must match", opendml.concat, [bytes_], out=np.zeros(2, bool))
    raises(opendml.Error, "type must match", opendml.split, bytes_, 2, out=[np.zeros(1, bool), np.zeros(1, np.uint8)])
    half, brain = torch.tensor([1.0, 2.0], dtype=torch.float16), torch.tensor([1.0, 2.0], dtype=torch.bfloat16)
    raises(opendml.Error, "element type bfloat16 but the whole has .* type float16", opendml.concat, [half, brain])


def test_torch_views_and_out_tensors_are_what_torch_says_they_are():
    # A lazily negated view's bits are the values before negation: refused, not read as they are.
    negated = torch._neg_view(torch.arange(4.0))
    raises(opendml.Error, "lazily negated view", opendml.split, negated, 2)
    raises(opendml.Error, "lazily negated view", opendml.concat, [torch.ones(2)] * 2, out=torch._neg_view(torch.zeros(4)))
    assert torch.equal(opendml.concat([negated.resolve_neg()]), -torch.arange(4.0))
    # Writing into out= counts as an in-place change, so autograd refuses a backward pass that saved it.
    w, o = torch.ones(4, requires_grad=True), torch.zeros(4)
    y = (w * o).sum()
    version = o._version
    opendml.concat([torch.ones(2)] * 2, out=o)
    assert o._version > version
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()
    # ... but only where it is written: a refused call left the version moved, and the backward
    # pass refused.
    w, o = torch.ones(4, requires_grad=True), torch.zeros(4)
    y = (w * o).sum()
    version = o._version
    raises(opendml.Error, "out has shape \\(4,\\) but the result has shape \\(3,\\)", opendml.concat,
           [torch.ones(3)], out=o)
    raises(opendml.Error, "overlaps", opendml.concat, [o[:2], o[2:]], out=o)
    assert o._version == version
    y.backward()
    # An inference tensor is updated in place only in inference mode, as torch.cat(out=) says.
    with torch.inference_mode():
        frozen = torch.zeros(3)
    raises(opendml.Error, "inference tensor", opendml.concat, [torch.arange(3.0)], out=frozen)
    raises(opendml.Error, "inference tensor", opendml.split, torch.arange(4.0), 2, out=[frozen[:2], torch.zeros(2)])
    assert not frozen.any()
    with torch.inference_mode():
        opendml.concat([torch.arange(3.0)], out=frozen)
    assert frozen.tolist() == [0.0, 1.0, 2.0]
    # PyTorch's types of 1 to 7 bits travel as bytes: refused, not mixed with uint8 or int8.
    for dtype in (torch.uint4, torch.int4, torch.uint1):
        nibbles = torch.zeros(2, dtype=dtype)
        raises(opendml.UnsupportedError, str(dtype).replace(".", "\\.") + ", whose values PyTorch hands over as whole bytes",
               opendml.concat, [nibbles, torch.tensor([200, 201], dtype=torch.uint8)])
        raises(opendml.UnsupportedError, "no DirectML type has fewer than 8 bits", opendml.concat,
               [torch.tensor([1, 2], dtype=torch.int8)], out=nibbles)
    assert torch.equal(opendml.concat([torch.tensor([-1], dtype=torch.int8)] * 2), torch.tensor([-1, -1], dtype=torch.int8))


def test_jax_arrays_are_not_written_through_out():
    target = jnp.zeros(4, jnp.float32)
    raises(opendml.Error, "immutable", opendml.concat, [np.ones(2, np.float32)] * 2, out=target)
    assert not np.asarray(target).any()


def test_column_values_read_once_and_as_given():
    x = np.ones((2, 2), np.uint8)

    class Reenters:  # its __index__ calls nonzero again, which once cleared this call's offsets
        def __index__(self):
            opendml.nonzero(np.ones(2, np.uint8), offsets=[7])
            return 100

    coords, count = opendml.nonzero(x, offsets=[0, Reenters()])
    assert coords[: count[0]].tolist() == [[0, 100], [0, 101], [1, 100], [1, 101]]
    coords, count = opendml.nonzero(np.eye(2, dtype=np.uint8), fill=np.array(5), index_dtype="int64")
    assert coords.tolist() == [[0, 0], [1, 1], [5, 5], [5, 5]]  # a 0-d array is one value for every column
    raises(opendml.Error, "offsets is a ndarray; it must be a sequence", opendml.nonzero, x, offsets=np.array(5))


def test_nonzero_counts_into_a_0d_array():
    # A 0-d count is one element, as DirectML's count tensor of one is.
    x = np.array([[0, 5, 0], [6, 0, 7]], np.float32)
    for dtype in (np.uint32, np.int64):
        coords, count = np.zeros((6, 2), dtype), np.zeros((), dtype)
        opendml.nonzero(x, out=(coords, count))
        assert count.shape == () and int(count) == 3
        np.testing.assert_array_equal(coords[:3], expected_nonzero(x))
    t = torch.zeros((), dtype=torch.int64)
    opendml.nonzero(torch.from_numpy(x), index_dtype="int64", out=(torch.zeros(6, 2, dtype=torch.int64), t))
    assert t.item() == 3


def test_a_size_1_dimension_may_have_any_stride():
    # Its only element is reached whatever its stride: a view reversed or stepped along a dimension
    # of size 1 (its stride negative or huge) is as good as any, as NumPy and PyTorch take it.
    base = np.arange(16, dtype=np.float32).reshape(2, 8)
    for view in (base[:1, ::2][::-1], base[1:, ::2][::-1], np.lib.stride_tricks.as_strided(base, (1, 4), (2**40, 8)),
                 np.lib.stride_tricks.as_strided(base[1:], (1, 4), (-(2**36), 8))):
        assert view.shape[0] == 1 and not view.flags.c_contiguous
        np.testing.assert_array_equal(opendml.concat([view, view], axis=1), np.concatenate([view, view], axis=1))
        np.testing.assert_array_equal(opendml.concat([view, view]), np.concatenate([view, view]))
    # ... and written through out= too.
    whole = np.zeros((2, 8), np.float32)
    opendml.split(np.arange(8, dtype=np.float32).reshape(1, 8), 2, axis=1,
                  out=[whole[:1, ::2][::-1], whole[1:, ::2][::-1]])
    assert whole.tolist() == [[0, 0, 1, 0, 2, 0, 3, 0], [4, 0, 5, 0, 6, 0, 7, 0]]
    t = torch.as_strided(torch.arange(16.0), (1, 4), (2**40, 2))
    assert torch.equal(opendml.concat([t, t], axis=1), torch.cat([t, t], dim=1))


def test_empty_nonzero_checks_out_as_the_library_would():
    x = np.zeros((0, 3), np.float32)
    raises(opendml.UnsupportedError, "OutputCoordinatesTensor.DataType is FLOAT32", opendml.nonzero, x,
           out=(np.zeros((0, 2), np.float32), np.zeros(1, np.uint32)))
    raises(opendml.Error, "OutputCountTensor.Sizes\\[0\\] is 2", opendml.nonzero, x,
           out=(np.zeros((0, 2), np.uint32), np.zeros(2, np.uint32)))
    # The input's type too: NONZERO_COORDINATES takes no 64-bit elements, with elements or without.
    for dtype in (np.float64, np.int64):
        for shape in ((0, 3), (2, 3)):
            raises(opendml.UnsupportedError, "InputTensor.DataType is (FLOAT|INT)64", opendml.nonzero,
                   np.zeros(shape, dtype))
    raises(opendml.Error, "it must have 2 columns and no rows", opendml.nonzero, x,
           out=(np.zeros((0, 3), np.uint32), np.zeros(1, np.uint32)))
    raises(opendml.Error, r"coords has shape \(5, 2\); it must have 2 columns and no rows", opendml.nonzero, x,
           fill=7, out=(np.full((5, 2), 9, np.uint32), np.zeros(1, np.uint32)))
    coords, count = opendml.nonzero(x, out=(np.zeros((0, 2), np.uint32), np.ones(1, np.uint32)))
    assert count[0] == 0
    # The index types of coords and count are each their own, as for an x with elements.
    for c, k in ((np.uint32, np.int64), (np.uint64, np.uint32)):
        _, count = opendml.nonzero(x, out=(np.zeros((0, 2), c), np.ones(1, k)))
        assert count[0] == 0
        opendml.nonzero(np.ones((2, 3), np.float32), out=(np.zeros((6, 2), c), np.ones(1, k)))


def test_concat_holds_what_a_sequence_makes_as_it_is_indexed():
    """A sequence other than a list or tuple may make a new array each time it is indexed (a class of
    one's own, a NumPy array's rows): concat holds each for the whole call, so none is freed (and its
    memory reused) while its data is read."""
    class Rows:
        def __len__(self):
            return 4

        def __getitem__(self, i):
            if i >= 4:
                raise IndexError(i)
            np.zeros(1, np.int8)  # an allocation in between, where a freed array's memory would go
            return np.full(1 << 14, i + 1, np.int32)

    got = opendml.concat(Rows())
    assert np.array_equal(got, np.repeat(np.arange(1, 5, dtype=np.int32), 1 << 14))

    class TorchRows(Rows):
        def __getitem__(self, i):
            if i >= 4:
                raise IndexError(i)
            torch.zeros(1 << 14)
            return torch.full((1 << 14,), float(i + 1))

    got = opendml.concat(TorchRows())
    assert torch.equal(got, torch.cat([torch.full((1 << 14,), float(i + 1)) for i in range(4)]))
    matrix = np.arange(12, dtype=np.int16).reshape(3, 4)  # an array: the sequence of its rows
    assert np.array_equal(opendml.concat(matrix), matrix.reshape(-1))


def test_split_takes_sizes_in_a_numpy_array():
    x = np.arange(6)
    for sizes in (np.array([2, 4]), np.array([1, 2, 3], np.uint8)):
        for got, want in zip(opendml.split(x, sizes), np.split(x, np.cumsum(sizes)[:-1]), strict=True):
            assert np.array_equal(got, want)
    assert [p.tolist() for p in opendml.split(x, np.int64(3))] == [[0, 1], [2, 3], [4, 5]]  # a NumPy integer: sections
    raises(opendml.Error, "sizes add up to 5", opendml.split, x, np.array([2, 3]))


def test_narrow_float_types_are_named():
    """DLPack's float8 types, which no DirectML type matches, are named in the error."""
    raises(opendml.UnsupportedError, "x has element type float8_e4m3fn, which has no DirectML data type",
           opendml.nonzero, torch.ones(2, 3, dtype=torch.float8_e4m3fn))
    raises(opendml.UnsupportedError, "float8_e5m2", opendml.nonzero, torch.ones(2, dtype=torch.float8_e5m2))


def test_first_calls_from_many_threads_at_once():
    # The array layer imported opendml._frameworks while initialising a C++ static: the import let
    # go of the GIL, and a thread that took it waited on the static's guard for good (a hang).
    code = textwrap.dedent("""
        import threading, numpy as np, opendml
        x, barrier = np.ones(4, np.float32), threading.Barrier(8)
        def work():
            barrier.wait()
            opendml.concat([x, x])
        threads = [threading.Thread(target=work) for _ in range(8)]
        [t.start() for t in threads]
        [t.join() for t in threads]
        print("finished")
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and "finished" in result.stdout, result.stderr


def test_concat_holds_its_arrays_while_it_runs():
    # A tensor borrowed through PyTorch's exchange API is not referenced by what the array layer
    # keeps: dropped from the list by a later item's __dlpack__, it was freed mid-call and read.
    n = 1000

    class Dropper:
        def __init__(self, items):
            self.items, self.refill = items, None

        def __dlpack_device__(self):
            return (1, 0)

        def __dlpack__(self, **kwargs):
            self.items[0] = None
            self.refill = torch.full((n,), 7.0)  # takes the freed block, where it was freed
            return np.ones(4, np.float32).__dlpack__(**kwargs)

    items = [torch.arange(n, dtype=torch.float32), None]
    items[1] = Dropper(items)
    assert torch.equal(opendml.concat(items), torch.cat([torch.arange(n, dtype=torch.float32), torch.ones(4)]))


def test_shapes_past_64_bits_are_an_error():
    # A producer's shape whose element count wraps 64 bits read as empty: NONZERO of 2^96 ones
    # found none, and a concat wrote nothing, without an error.
    one = np.ones(1, np.float32)
    for shape in ([2**32, 2**32, 2**32], [2**62 + 1, 2]):
        raises(opendml.Error, "pass what 64 bits count", opendml.nonzero, _Capsule(one, len(shape), shape))
        raises(opendml.Error, "pass what 64 bits count", opendml.concat, [_Capsule(one, len(shape), shape)])


def test_interrupts_and_memory_errors_pass_through():
    # KeyboardInterrupt, SystemExit and MemoryError raised by an argument's own code came out as
    # opendml.Error (a ValueError), so Ctrl-C during a call was reported as a bad argument.
    class Producer:
        def __init__(self, error, where):
            self.error, self.where = error, where

        def __dlpack_device__(self):
            if self.where == "device":
                raise self.error
            return (1, 0)

        def __dlpack__(self, **kwargs):
            raise self.error

    class Index:
        def __init__(self, error):
            self.error = error

        def __index__(self):
            raise self.error

    x = np.ones(4, np.float32)
    for error in (KeyboardInterrupt, SystemExit, MemoryError):
        for where in ("device", "dlpack"):
            with pytest.raises(error):
                opendml.concat([Producer(error, where)])
        with pytest.raises(error):
            opendml.split(x, [Index(error), 2])
        with pytest.raises(error):
            opendml.nonzero(x, offsets=[Index(error)])
    # What an argument gets wrong is still opendml's error, naming it.
    raises(opendml.Error, "__dlpack__ failed", opendml.concat, [Producer(RuntimeError("no"), "dlpack")])
    raises(opendml.Error, "must be an integer", opendml.split, x, [1.5, 2.5])


def test_inputs_that_require_grad_are_refused_not_detached():
    # torch.cat keeps its inputs' gradients; the array layer's result came back without them.
    w = torch.ones(3, requires_grad=True)
    raises(opendml.Error, "requires grad.*opendml.torch.join", opendml.concat, [w, w])
    raises(opendml.Error, "requires grad", opendml.split, w, 3)
    with torch.no_grad():
        assert torch.equal(opendml.concat([w, w]), torch.ones(6))
        assert [p.tolist() for p in opendml.split(w, 3)] == [[1.0], [1.0], [1.0]]
    coords, count = opendml.nonzero(w)  # integer results: no gradient to keep
    assert coords.tolist() == [[0], [1], [2]] and int(count[0]) == 3
    assert odt_join_keeps_grad(w)


def test_inputs_with_a_forward_mode_tangent_are_refused():
    # The same for a tangent of torch.autograd.forward_ad, which the result dropped as silently.
    import torch.autograd.forward_ad as fwAD

    x = torch.arange(3.0)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, torch.ones(3))
        raises(opendml.Error, "arrays\\[1\\] carries a forward-mode tangent", opendml.concat, [x, d])
        raises(opendml.Error, "x carries a forward-mode tangent", opendml.split, d, 3)
        assert torch.equal(opendml.concat([x, x]), torch.cat([x, x]))  # no tangent: as outside
        coords, count = opendml.nonzero(d)  # integer results: no tangent to keep
        assert coords[:2].tolist() == [[1], [2]] and int(count[0]) == 2
    assert torch.equal(opendml.concat([x, x]), torch.cat([x, x]))


def test_tensors_of_torch_func_transforms_are_refused_by_name():
    # They have no storage for DLPack to hand over; the error was DLPack's, naming neither.
    x = torch.arange(3.0)
    msg = "arrays\\[0\\] is a tensor of a torch.func transform"
    for call in (lambda: torch.func.jvp(lambda p: opendml.concat([p, p]), (x,), (torch.ones(3),)),
                 lambda: torch.func.vmap(lambda p: opendml.concat([p, p]))(x.reshape(3, 1)),
                 lambda: torch.func.grad(lambda p: opendml.concat([p, p]).sum())(x)):
        raises(opendml.Error, msg, call)
    raises(opendml.Error, "x is a tensor of a torch.func transform", torch.func.vmap(opendml.nonzero), x.reshape(3, 1))


def odt_join_keeps_grad(w):
    import opendml.torch as odt

    y = odt.join([w, w], 0)
    y.sum().backward()
    return torch.equal(w.grad, torch.full((3,), 2.0))


def test_torch_subclasses_are_torch_tensors():
    # A torch.Tensor subclass of a user's own module was taken for a foreign array: results came
    # back as NumPy arrays, and a lazily negated view of one was read without its negation.
    class Mine(torch.Tensor):
        pass

    x = torch.arange(4.0).as_subclass(Mine)
    joined = opendml.concat([x, x])
    assert isinstance(joined, torch.Tensor) and torch.equal(joined.as_subclass(torch.Tensor), torch.arange(4.0).repeat(2))
    coords, count = opendml.nonzero(x)
    assert isinstance(coords, torch.Tensor) and coords[:3].flatten().tolist() == [1, 2, 3] and int(count[0]) == 3
    raises(opendml.Error, "lazily negated view", opendml.concat, [torch._neg_view(torch.arange(4.0)).as_subclass(Mine)])


def test_masked_arrays_and_jax_without_64_bit_types():
    # NumPy's nonzero skips a masked array's masked elements, and opendml counted them.
    m = np.ma.masked_array(np.array([1, 2, 3], np.int32), mask=[0, 1, 0])
    raises(opendml.UnsupportedError, "masked array.*x.filled", opendml.nonzero, m)
    coords, count = opendml.nonzero(m.filled(0))
    assert coords[: int(count[0])].tolist() == np.argwhere(m).tolist() == [[0], [2]]
    assert np.array_equal(opendml.concat([m, m]), np.concatenate([m, m]))  # NumPy's drops the mask too
    # Without JAX's 64-bit types, 'int64' coordinates came back refused as INT32 and 'uint64' ones as uint32.
    with (jax.enable_x64(False) if hasattr(jax, "enable_x64") else jax.experimental.disable_x64()):
        for index_dtype in ("int64", "uint64"):
            raises(opendml.Error, "jax_enable_x64", opendml.nonzero, jnp.ones(4), index_dtype=index_dtype)
        assert opendml.nonzero(jnp.ones(4))[0].dtype == jnp.uint32
