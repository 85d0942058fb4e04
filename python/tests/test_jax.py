"""opendml.jax against jnp.argwhere, jnp.concatenate and jnp.split, bit for bit: eager, under jax.jit,
jax.vmap (nested too) and, for concat and split, jax.grad and jax.jvp; then the error paths. Every
test runs on JAX's CPU backend, and again on its GPU backend where there is one (marked `cuda`)."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import opendml
import opendml.jax as oj


def _gpu():
    try:
        return jax.devices("gpu")[0]
    except RuntimeError as e:
        pytest.skip(f"JAX has no GPU backend here (pip install 'jax[cuda13]'): {e}")


@pytest.fixture(params=["cpu", pytest.param("cuda", marks=pytest.mark.cuda)])
def put(request):
    """Puts a NumPy array on the test's JAX device."""
    device = jax.devices("cpu")[0] if request.param == "cpu" else _gpu()
    return lambda a: jax.device_put(a, device)


NONZERO_DTYPES = [np.bool_, np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32, np.float16, np.float32,
                  jnp.bfloat16]
MOVE_DTYPES = NONZERO_DTYPES + [np.complex64, jnp.float8_e4m3fn]


def sample(rng, shape, dtype, density=0.5):
    """About `density` non-zero values; floats include -0.0 (a zero) and NaN (not one)."""
    nonzero = rng.random(shape) < density
    if np.dtype(dtype).kind in "fc" or dtype in (jnp.bfloat16, jnp.float8_e4m3fn):
        values = rng.choice(np.array([1.0, -2.5, np.nan, 0.5], np.float32), shape)
        zeros = rng.choice(np.array([0.0, -0.0], np.float32), shape)
        return np.where(nonzero, values, zeros).astype(dtype)
    return np.where(nonzero, rng.integers(1, 100, shape), 0).astype(dtype)


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


SHAPES = [(1,), (37,), (5, 7), (2, 3, 4), (1, 4, 1, 6), (2, 1, 3, 1, 2, 3)]


@pytest.mark.parametrize("dtype", NONZERO_DTYPES)
def test_nonzero_matches_argwhere(put, dtype):
    rng = np.random.default_rng(hash(np.dtype(dtype).name) % 1000)
    for shape, density in zip(SHAPES, [1.0, 0.0, 0.5, 0.1, 0.9, 0.5], strict=True):
        x = put(sample(rng, shape, dtype, density))
        coords, count = oj.nonzero(x)
        expected = jnp.argwhere(x)
        assert coords.dtype == count.dtype == np.uint32
        assert coords.shape == (x.size, x.ndim) and count.shape == (1,)
        assert int(count[0]) == len(expected)
        assert same_bits(coords[: int(count[0])].astype(expected.dtype), expected)
        assert coords.devices() == x.devices()


@pytest.mark.parametrize("density", [0.0, 0.01, 0.5, 1.0])
def test_argwhere_is_jnp_argwhere_under_jit(put, density):
    rng = np.random.default_rng(int(density * 100))
    x = put(sample(rng, (40, 3, 5), np.float32, density))
    for size, fill in [(1, None), (17, -1), (600, (7, 8, 9)), (1000, None), (x.size + 7, (7, 8, 9))]:
        ours = jax.jit(lambda x: oj.argwhere(x, size=size, fill_value=fill))(x)
        theirs = jax.jit(lambda x: jnp.argwhere(x, size=size, fill_value=fill))(x)
        assert same_bits(ours, theirs), (size, fill)
    assert same_bits(oj.argwhere(x), jnp.argwhere(x))  # eager, without size


def test_nonzero_fill_value_and_argwhere_has_no_extra_pass(put):
    rng = np.random.default_rng(4)
    x = put(sample(rng, (9, 7), np.uint8, 0.3))
    coords, count = jax.jit(lambda x: oj.nonzero(x, fill_value=(5, -1)))(x)
    n = int(count[0])
    assert same_bits(coords[:n].astype(np.int32), jnp.argwhere(x))
    assert same_bits(coords[n:], np.broadcast_to(np.array([5, 0xFFFFFFFF], np.uint32), (x.size - n, 2)))
    # The kernel writes the fill rows itself (opendml's fill rows extension), and the int32 rows are
    # the uint32 coordinates' bits: no other operation writes or reads the coordinates.
    hlo = jax.jit(lambda x: oj.argwhere(x, size=x.size, fill_value=-1)).lower(x).compile().as_text()
    assert "custom-call" in hlo
    assert not any(op in hlo for op in ("select(", "broadcast(", "output_to_operand_aliasing", "fusion", "copy(")), hlo


def test_a_traced_fill_value_is_jnp_argwheres(put):
    """fill_value may be traced, as jnp.argwhere's may: a scalar or one a column, under jit and
    vmap, rows past x.size included; the rows past the count are then written by one more pass."""
    rng = np.random.default_rng(6)
    x = put(sample(rng, (5, 4), np.float32, 0.4))
    for fill in (7, (3, -2)):
        for size in (6, x.size + 3):
            ours = jax.jit(lambda x, f, size=size: oj.argwhere(x, size=size, fill_value=f))(x, fill)
            assert same_bits(ours, jnp.argwhere(x, size=size, fill_value=fill))
    fills = put(np.array([9, -1, 4], np.int32))
    ours = jax.vmap(lambda r, f: oj.argwhere(r, size=5, fill_value=f), in_axes=(1, 0))(x[:, :3], fills)
    theirs = jax.vmap(lambda r, f: jnp.argwhere(r, size=5, fill_value=f), in_axes=(1, 0))(x[:, :3], fills)
    assert same_bits(ours, theirs)
    # nonzero's rows past the count, in its uint32 coordinates: -1 as its bits.
    coords, count = jax.jit(lambda x, f: oj.nonzero(x, fill_value=f))(x, -1)
    n = int(count[0])
    assert same_bits(coords[:n].astype(np.int32), jnp.argwhere(x))
    assert same_bits(coords[n:], np.full((x.size - n, 2), 0xFFFFFFFF, np.uint32))


def test_nonzero_of_scalars_and_empty_arrays(put):
    for x in (np.float32(0), np.int32(3), np.zeros((0, 4), np.float32), np.ones((3, 0, 2), np.uint8)):
        x = put(x)
        assert same_bits(oj.argwhere(x, size=3), jnp.argwhere(x, size=3))
        coords, count = jax.jit(oj.nonzero)(x)
        assert int(count[0]) == len(jnp.argwhere(x))
    # Batched over empty items, with a fill that argwhere's int32 holds only as uint32 bits.
    x = put(np.zeros((3, 0, 2), np.float32))
    got = jax.vmap(lambda r: oj.argwhere(r, size=2, fill_value=-1))(x)
    assert same_bits(got, np.full((3, 2, 2), -1, np.int32))  # every row past the count (0) is fill


def test_a_0d_x_is_counted_by_its_bits(put):
    """Subnormals are non-zero, as for any x: a 0-d x (and every 0-d item under vmap) went through
    XLA's x != 0, which the CPU evaluates with subnormals flushed to zero."""
    tiny = np.array([1], np.uint32).view(np.float32)  # the smallest subnormal float32
    tiny_bf16 = np.array([1], np.uint16).view(jnp.bfloat16)
    for one in (tiny, tiny_bf16):
        x = put(one)
        assert int(oj.nonzero(x[0])[1][0]) == 1
        assert oj.argwhere(x[0]).shape == (1, 0)
        assert np.asarray(jax.vmap(lambda r: oj.nonzero(r)[1])(x)).ravel().tolist() == [1]
        assert int(jax.jit(oj.nonzero)(x[0])[1][0]) == 1
    assert int(oj.nonzero(put(np.float32(0)))[1][0]) == 0


def test_nonzero_under_vmap_is_one_call_per_item(put):
    rng = np.random.default_rng(3)
    x = put(sample(rng, (4, 6, 5), np.int16, 0.3))
    ours = jax.jit(jax.vmap(lambda r: oj.argwhere(r, size=30, fill_value=-1), in_axes=1))(x)
    theirs = jax.vmap(lambda r: jnp.argwhere(r, size=30, fill_value=-1), in_axes=1)(x)
    assert same_bits(ours, theirs)
    # Nested: the two batches fold into one FFI call's batch.
    ours = jax.vmap(jax.vmap(lambda r: oj.argwhere(r, size=5)))(x)
    theirs = jax.vmap(jax.vmap(lambda r: jnp.argwhere(r, size=5)))(x)
    assert same_bits(ours, theirs)
    jaxpr = str(jax.make_jaxpr(jax.vmap(jax.vmap(oj.nonzero)))(x))
    assert jaxpr.count("opendml_nonzero") == 1 and "batched=True" in jaxpr


def test_calls_reuse_the_compiled_operator(put):
    from opendml import _opendml

    rng = np.random.default_rng(10)
    x = put(sample(rng, (13, 3), np.int8))
    f = jax.jit(lambda x: (oj.nonzero(x), oj.split(oj.concat([x, x], axis=1), 2, axis=1)))
    jax.block_until_ready(f(x))
    compiles = _opendml._jax_compiles()
    for _ in range(3):
        jax.block_until_ready(f(put(sample(rng, (13, 3), np.int8))))
    assert _opendml._jax_compiles() == compiles  # three call sites, each compiled once, before


def test_threads_share_a_call_site(put):
    """XLA may run one compiled computation from several threads at once: the first call on a device
    compiles (once, whichever thread gets there), the others wait for it, then all only read."""
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(13)
    xs = [put(sample(rng, (50, 9), np.float16, 0.3)) for _ in range(8)]
    f = jax.jit(lambda x: (oj.argwhere(x, size=200, fill_value=-1), oj.concat([x, x[:, :2]], axis=1)))
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda x: jax.block_until_ready(f(x)), xs * 3))
    for x, (rows, joined) in zip(xs * 3, results, strict=True):
        assert same_bits(rows, jnp.argwhere(x, size=200, fill_value=-1))
        assert same_bits(joined, jnp.concatenate([x, x[:, :2]], axis=1))


def test_a_handler_that_cannot_compile_fails_every_call():
    """Past the Python checks (the primitive bound directly), the handler's own compile reports the
    library's error, and a second call reports it again rather than waiting."""
    x = jnp.ones((1,) * 9, np.float32)  # DirectML takes at most 8 dimensions
    f = jax.jit(lambda x: oj.nonzero_p.bind(x, dml_type=int(opendml.DataType.FLOAT32), batched=False,
                                            index="uint32", fill=None))
    for _ in range(2):
        with pytest.raises(jax.errors.JaxRuntimeError, match="DimensionCount is 9"):
            jax.block_until_ready(f(x))


def test_nonzero_has_no_gradient(put):
    x = put(np.array([0.0, 2.0, 0.0, 3.0], np.float32))
    f = lambda argwhere: lambda x: (x * argwhere(x, size=4)[:, 0].astype(x.dtype)).sum()  # noqa: E731
    assert same_bits(jax.grad(f(oj.argwhere))(x), np.array([1, 3, 0, 0], np.float32))  # d/dx of x * rows
    assert same_bits(jax.grad(f(oj.argwhere))(x), jax.grad(f(jnp.argwhere))(x))


def shapes_and_axes(rng):
    """Random shapes of rank 1, 3 and 5, each with a random axis (negative ones too)."""
    for rank in (1, 3, 5):
        yield list(rng.integers(1, 5, rank)), int(rng.integers(-rank, rank))


@pytest.mark.parametrize("dtype", MOVE_DTYPES)
def test_concat_matches_concatenate(put, dtype):
    rng = np.random.default_rng(11)
    for shape, axis in shapes_and_axes(rng):
        parts = []
        for length in [3, 0, 1, 4][: int(rng.integers(1, 5))]:  # an empty part takes no part
            s = list(shape)
            s[axis] = length
            parts.append(put(sample(rng, s, dtype)))
        expected = jnp.concatenate(parts, axis=axis)
        assert same_bits(oj.concat(parts, axis=axis), expected)
        assert same_bits(jax.jit(lambda *p: oj.concat(p, axis=axis))(*parts), expected)


@pytest.mark.parametrize("dtype", MOVE_DTYPES)
def test_split_matches_jnp_split(put, dtype):
    rng = np.random.default_rng(12)
    for shape, axis in shapes_and_axes(rng):
        shape[axis] = 6
        x = put(sample(rng, shape, dtype))
        for how in (3, [2], [0, 2, 2, 5], [1, 6, 6]):  # sections, or where they start (empty ones too)
            expected = jnp.split(x, how, axis=axis)
            for ours in (oj.split(x, how, axis=axis), jax.jit(lambda x: oj.split(x, how, axis=axis))(x)):
                assert len(ours) == len(expected)
                assert all(same_bits(a, b) for a, b in zip(ours, expected, strict=True)), how


def test_many_small_inputs(put):
    rng = np.random.default_rng(5)
    parts = [put(sample(rng, (int(rng.integers(1, 9)), 3), np.float32)) for _ in range(300)]
    f = jax.jit(lambda *p: oj.concat(p, axis=0))
    assert same_bits(f(*parts), jnp.concatenate(parts))
    whole = f(*parts)
    starts = np.cumsum([p.shape[0] for p in parts])[:-1]
    assert all(same_bits(a, b) for a, b in zip(jax.jit(lambda w: oj.split(w, starts))(whole), parts, strict=True))


def test_concat_and_split_under_vmap(put):
    rng = np.random.default_rng(6)
    a = put(sample(rng, (3, 4, 5), np.float32))
    for in_axes, b_shape in [((0, None), (4, 2)), ((2, None), (3, 2)), ((1, 1), (3, 4, 2))]:
        b = put(sample(rng, b_shape, np.float32))
        ours = jax.jit(jax.vmap(lambda a, b: oj.concat([a, b], axis=-1), in_axes=in_axes))(a, b)
        theirs = jax.vmap(lambda a, b: jnp.concatenate([a, b], axis=-1), in_axes=in_axes)(a, b)
        assert same_bits(ours, theirs), in_axes
    for in_axes in [0, 1, 2]:
        ours = jax.vmap(lambda x: oj.split(x, [1, 3], axis=0), in_axes=in_axes)(a)
        theirs = jax.vmap(lambda x: jnp.split(x, [1, 3], axis=0), in_axes=in_axes)(a)
        assert all(same_bits(p, q) for p, q in zip(ours, theirs, strict=True)), in_axes
    ours = jax.vmap(jax.vmap(lambda x: oj.concat([x, x[::-1]])))(a)
    assert same_bits(ours, jax.vmap(jax.vmap(lambda x: jnp.concatenate([x, x[::-1]])))(a))
    jaxpr = str(jax.make_jaxpr(jax.vmap(lambda x: oj.concat([x, x])))(a))
    assert jaxpr.count("opendml_concat") == 1  # one call for the whole batch


def test_concat_and_split_gradients(put):
    rng = np.random.default_rng(8)
    a, b = put(rng.standard_normal((3, 4), np.float32)), put(rng.standard_normal((3, 2), np.float32))
    w = put(rng.standard_normal((3, 6), np.float32))

    def loss(cat, a, b):
        return (jnp.sin(cat([a, b * 2.0], axis=1)) * w).sum()

    ours = jax.jit(jax.grad(lambda a, b: loss(oj.concat, a, b), argnums=(0, 1)))(a, b)
    theirs = jax.grad(lambda a, b: loss(jnp.concatenate, a, b), argnums=(0, 1))(a, b)
    assert all(same_bits(p, q) for p, q in zip(ours, theirs, strict=True))
    # A part that is not differentiated, and one whose cotangent is zero.
    ours = jax.grad(lambda a: (oj.concat([a, b]) ** 2).sum())(put(np.ones((3, 2), np.float32)))
    assert same_bits(ours, jax.grad(lambda a: (jnp.concatenate([a, b]) ** 2).sum())(put(np.ones((3, 2), np.float32))))

    x = put(rng.standard_normal((4, 7), np.float32))
    f = lambda split: lambda x: (split(x, [2, 3], axis=1)[0] * 3.0).sum() + jnp.cos(split(x, [2, 3], axis=1)[2]).sum()  # noqa: E731
    assert same_bits(jax.jit(jax.grad(f(oj.split)))(x), jax.grad(f(jnp.split))(x))
    t = put(rng.standard_normal((4, 7), np.float32))
    ours = jax.jvp(lambda x: oj.split(x, 7, axis=1), (x,), (t,))
    theirs = jax.jvp(lambda x: jnp.split(x, 7, axis=1), (x,), (t,))
    assert all(same_bits(p, q) for p, q in zip(jax.tree.leaves(ours), jax.tree.leaves(theirs), strict=True))
    ours = jax.jvp(lambda a, b: oj.concat([a, b], 1), (a, b), (a * 2, b))
    theirs = jax.jvp(lambda a, b: jnp.concatenate([a, b], 1), (a, b), (a * 2, b))
    assert all(same_bits(p, q) for p, q in zip(ours, theirs, strict=True))
    # Gradients of gradients go through the same rules (the transposes are each other).
    g = jax.grad(lambda x: jax.grad(lambda x: (oj.split(x, 7, axis=1)[1] ** 3).sum())(x).sum())(x)
    assert same_bits(g, jax.grad(lambda x: jax.grad(lambda x: (jnp.split(x, 7, axis=1)[1] ** 3).sum())(x).sum())(x))


def x64():
    """JAX's 64-bit mode for a block (jax.enable_x64 in newer JAX, jax.experimental's before)."""
    return jax.enable_x64(True) if hasattr(jax, "enable_x64") else jax.experimental.enable_x64()


def _weakly_typed(a) -> bool:
    return (getattr(jax, "typeof", None) or jax.core.get_aval)(a).weak_type


def test_concat_takes_what_jnp_concatenate_takes(put):
    """Arrays of different types (promoted as jnp.concatenate promotes them), an array standing for
    its rows, and axis=None (the arrays flattened): the same values, type and weak type as jnp's."""
    pairs = [(np.float32, np.int32), (np.float32, np.float16), (np.float32, jnp.bfloat16), (np.int8, np.uint8),
             (np.bool_, np.int32), (np.uint16, np.int8)]
    rng = np.random.default_rng(5)
    for a, b in pairs:
        xs = [put(sample(rng, (2, 3), a)), put(sample(rng, (4, 3), b))]
        for f in (oj.concat, jax.jit(oj.concat)):
            got, want = f(xs), jnp.concatenate(xs)
            assert same_bits(got, want) and _weakly_typed(got) == _weakly_typed(want), (a, b)
    m = put(np.arange(24, dtype=np.int32).reshape(2, 3, 4))
    for axis in (0, 1, -1, None):
        assert same_bits(oj.concat(m, axis=axis), jnp.concatenate(m, axis=axis))
        assert same_bits(oj.concat([m, m[:1]], axis=None), jnp.concatenate([m, m[:1]], axis=None))
    assert same_bits(oj.concat(np.asarray(m)), jnp.concatenate(np.asarray(m)))


def test_weak_types_stay_weak_as_in_jnp(put):
    """Results of weakly typed arrays (Python scalars broadcast) are weakly typed, as jnp's are, so
    that arithmetic after them takes the same type: bfloat16 + a weak float32 is bfloat16."""
    w = [put(jnp.broadcast_to(float(v), (2,))) for v in (1, 2)]  # weak float32 arrays
    assert all(map(_weakly_typed, w))
    strong = put(np.ones(8, jnp.bfloat16))
    empty = [jnp.broadcast_to(1.0, (0,))] * 2
    cases = [
        (lambda: oj.concat(w), lambda: jnp.concatenate(w)),
        (lambda: jax.jit(oj.concat)(w), lambda: jnp.concatenate(w)),
        (lambda: oj.concat([w[0], strong[:2]]), lambda: jnp.concatenate([w[0], strong[:2]])),
        (lambda: oj.concat(empty), lambda: jnp.concatenate(empty)),
        (lambda: oj.split(jnp.concatenate(w), 2)[0], lambda: jnp.split(jnp.concatenate(w), 2)[0]),
        (lambda: oj.split(jnp.concatenate(w), [0, 2])[0], lambda: jnp.split(jnp.concatenate(w), [0, 2])[0]),
        (lambda: jax.vmap(lambda v: oj.concat([v, v]))(jnp.stack(w)),
         lambda: jax.vmap(lambda v: jnp.concatenate([v, v]))(jnp.stack(w))),
        (lambda: jax.vmap(lambda v: oj.split(v, 2)[1])(jnp.stack(w)),
         lambda: jax.vmap(lambda v: jnp.split(v, 2)[1])(jnp.stack(w))),
    ]
    for i, (ours, theirs) in enumerate(cases):
        got, want = ours(), theirs()
        assert same_bits(got, want) and _weakly_typed(got) == _weakly_typed(want), i
        n = got.size
        if n:
            assert (got.ravel() + strong[:n]).dtype == (want.ravel() + strong[:n]).dtype, i
    # Under vmap over a batch of none, too (its zeros took the strong type of a converted operand).
    for n in (3, 0):
        def pair(cat):
            return jax.vmap(lambda r: cat([r, jnp.broadcast_to(1.5, (2,))]))(jnp.zeros((n, 2), jnp.int32))
        got, want = pair(oj.concat), pair(jnp.concatenate)
        assert same_bits(got, want) and _weakly_typed(got) == _weakly_typed(want) is True, n
    grad = jax.grad(lambda v: oj.concat([v, v]).sum())(jnp.float32(2) * jnp.ones(3))
    assert same_bits(grad, jnp.full(3, 2, np.float32))
    # Promotion decides the result's weak type, as in jnp: a strong int32 beside a weak float gives a
    # weak float32 (it took the strong flag of the int32), and a weak array beside a strong one of its
    # own type is converted, so that its gradient comes back weak.
    rng = np.random.default_rng(11)
    operands = [put(sample(rng, (2,), d)) for d in (np.int32, np.uint8, np.float32, np.float16, jnp.bfloat16)]
    operands += [put(jnp.broadcast_to(v, (2,))) for v in (1.5, 3, True)]  # weak float32, int32, bool
    for a in operands:
        for b in operands:
            got, want = oj.concat([a, b]), jnp.concatenate([a, b])
            assert same_bits(got, want) and _weakly_typed(got) == _weakly_typed(want), (a.dtype, b.dtype)
            assert (got * strong[:4]).dtype == (want * strong[:4]).dtype, (a.dtype, b.dtype)
    def grad_of(concatenate):
        return jax.grad(lambda s: concatenate([jnp.broadcast_to(s, (3,)), put(jnp.ones(2))]).sum())(2.0)
    ours, theirs = grad_of(oj.concat), grad_of(jnp.concatenate)
    assert same_bits(ours, theirs) and _weakly_typed(ours) == _weakly_typed(theirs)


def test_results_vary_over_shard_map_axes_as_jnp_results_do():
    """Inside jax.shard_map, a result varies over the mesh axes its operands vary over (JAX's vma, its
    manual axis type since 0.10), as jnp's do: the results were typed as the same on every device, so
    an out_specs of P() returned device 0's result where jnp raises, and jax.grad failed on the
    cotangents' types. Traced only (jax.eval_shape over an abstract mesh): no devices needed."""
    if not hasattr(jax, "shard_map") or not hasattr(jax.sharding, "AxisType"):
        pytest.skip("this JAX has no jax.shard_map with typed mesh axes")
    P, S = jax.sharding.PartitionSpec, jax.ShapeDtypeStruct
    mesh = jax.sharding.AbstractMesh((2,), ("i",), axis_types=(jax.sharding.AxisType.Auto,))
    x, w = S((4, 2), np.float32), S((1, 2), np.float32)

    def types(a, b):
        ours = (oj.concat([a, a]), oj.concat([a, b]), oj.concat([b, b]), *oj.split(a, [1]), oj.argwhere(a, size=3),
                *oj.nonzero(b))
        theirs = (jnp.concatenate([a, a]), jnp.concatenate([a, b]), jnp.concatenate([b, b]), *jnp.split(a, [1]),
                  jnp.argwhere(a, size=3), jnp.argwhere(b, size=1), jnp.argwhere(b, size=2))
        varying = [str(jax.typeof(r)).endswith("{V:i}") for r in ours]
        assert varying == [str(jax.typeof(r)).endswith("{V:i}") for r in theirs] == [True, True, False] + [True] * 3 + [False] * 2
        return a

    jax.eval_shape(jax.shard_map(types, mesh=mesh, in_specs=(P("i"), P()), out_specs=P("i")), x, w)
    for f in (lambda a: oj.concat([a, a]), lambda a: oj.split(a, 2)[0], lambda a: oj.argwhere(a, size=2)):
        with pytest.raises(ValueError, match="out_specs which require replication"):
            jax.eval_shape(jax.shard_map(f, mesh=mesh, in_specs=P("i"), out_specs=P()), x)

    def grads(concat, split):
        def inner(w, a):
            loss = lambda w: jax.lax.psum((concat([a * w[0], a]) ** 2).sum() + (split(a * w, [1])[0] ** 2).sum(), "i")
            return jax.grad(loss)(w)
        return jax.shard_map(inner, mesh=mesh, in_specs=(P(), P("i")), out_specs=P())

    assert jax.eval_shape(grads(oj.concat, oj.split), w, x) == jax.eval_shape(grads(jnp.concatenate, jnp.split), w, x)


def test_64bit_mode(put):
    with x64():
        rng = np.random.default_rng(9)
        x = put(sample(rng, (6, 7), np.float32, 0.4))
        coords, count = jax.jit(oj.nonzero)(x)
        assert coords.dtype == count.dtype == np.int64
        assert same_bits(coords[: int(count[0])], jnp.argwhere(x))
        assert same_bits(jax.jit(lambda x: oj.argwhere(x, size=50, fill_value=-3))(x),
                         jnp.argwhere(x, size=50, fill_value=-3))
        coords, count = oj.nonzero(x, index_dtype="uint64")
        assert coords.dtype == np.uint64 and int(count[0]) == len(jnp.argwhere(x))
        # A sequence's items are read as they are: NumPy made [2^64 - 1, -1] floats, then refused them.
        coords, count = oj.nonzero(put(np.zeros((2, 2), np.int8)), index_dtype="uint64", fill_value=[2**64 - 1, -1])
        assert int(count[0]) == 0 and (np.asarray(coords) == np.uint64(2**64 - 1)).all()
        for dtype in (np.float64, np.int64, np.uint64):
            parts = [put(sample(rng, (2, n), dtype)) for n in (1, 3)]
            assert same_bits(oj.concat(parts, axis=1), jnp.concatenate(parts, axis=1))
            whole = put(sample(rng, (2, 5), dtype))
            assert all(same_bits(p, q) for p, q in zip(oj.split(whole, [2], 1), jnp.split(whole, [2], 1), strict=True))


def test_errors():
    x = jnp.ones((2, 3), np.float32)
    with pytest.raises(opendml.Error, match="axis 2"):
        oj.concat([x, x], axis=2)
    with pytest.raises(opendml.Error, match="only axis 0 may differ"):
        oj.concat([x, jnp.ones((2, 4), np.float32)], axis=0)
    with pytest.raises(opendml.Error, match="dtype, rank"):
        oj.concat([x, jnp.ones((2,), np.float32)])
    with pytest.raises(opendml.Error, match="at least one"):
        oj.concat([])
    with pytest.raises(opendml.Error, match="0-d"):
        oj.concat([jnp.float32(1)])
    with pytest.raises(opendml.Error, match="sequence of arrays, or an array"):
        oj.concat(7)
    with pytest.raises(opendml.Error, match="arrays is 0-d"):
        oj.concat(jnp.float32(1))
    with pytest.raises(opendml.Error, match="equal parts"):
        oj.split(x, 2, axis=1)
    with pytest.raises(opendml.Error, match="must not decrease"):
        oj.split(x, [2, 1], axis=1)
    with pytest.raises(opendml.Error, match="must not decrease"):
        oj.split(x, [-1], axis=1)
    with pytest.raises(opendml.Error, match="must not decrease"):
        oj.split(x, [4], axis=1)
    with pytest.raises(opendml.Error, match="must be an integer or a sequence"):
        oj.split(x, 1.5, axis=1)
    with pytest.raises(opendml.Error, match="must be concrete integers"):
        oj.split(x, [1.5], axis=1)
    with pytest.raises(opendml.Error, match="axis -3"):
        oj.split(x, 1, axis=-3)
    with pytest.raises(opendml.Error, match="0-d"):
        oj.split(jnp.float32(1), 1)
    with pytest.raises(opendml.UnsupportedError, match="complex64"):
        oj.nonzero(jnp.ones(3, np.complex64))
    with pytest.raises(opendml.Error, match="index_dtype"):
        oj.nonzero(x, index_dtype="int16")
    with pytest.raises(opendml.Error, match="index_dtype is 'foo'"):
        oj.nonzero(x, index_dtype="foo")
    # Axes that are not one integer, keys, float0 and bytes: opendml's errors, not NumPy's or JAX's.
    for axis in (np.array([1]), jnp.array(1.0), np.array([0, 1])):
        with pytest.raises(opendml.Error, match="axis is a"):
            oj.concat([x, x], axis=axis)
        with pytest.raises(opendml.Error, match="axis is a"):
            oj.split(x, 1, axis=axis)
    keys = jax.random.split(jax.random.key(0), 4)
    for call in (lambda: oj.concat([keys, keys]), lambda: oj.split(keys, 2),
                 lambda: oj.concat([np.zeros(3, jax.dtypes.float0)] * 2)):
        with pytest.raises(opendml.UnsupportedError, match="no width in bytes"):
            call()
    with pytest.raises(opendml.Error, match="must be an integer or a sequence"):
        oj.split(x, b"\x01", 1)
    with pytest.raises(opendml.Error, match="64-bit mode"):
        oj.nonzero(x, index_dtype="int64")
    with pytest.raises(opendml.Error, match="size is needed"):
        jax.jit(oj.argwhere)(x)
    with pytest.raises(opendml.Error, match="DimensionCount is 9"):  # DirectML's limit, the library's message
        oj.nonzero(jnp.ones((1,) * 9, np.float32))


def test_bad_arguments_are_errors_while_tracing():
    """Arguments of the wrong kind or range raise opendml.Error, not a Python or NumPy error from
    inside, nor a result: a negative size sliced rows from the end, a fill of 2^33 wrapped to 0."""
    x = jnp.array([[0, 1, 0], [1, 1, 0]], np.int32)
    for size, message in ((-1, "must not be negative"), (2.7, "size is a float"), ("2", "size is a str")):
        with pytest.raises(opendml.Error, match=message):
            oj.argwhere(x, size=size)
    for fill in ((1, 2, 3), "a", 1.9, [[1, 2]]):
        with pytest.raises(opendml.Error, match="must be an integer, or a sequence of 2 integers"):
            oj.argwhere(x, size=4, fill_value=fill)
    with pytest.raises(opendml.Error, match="does not fit in uint32"):
        oj.nonzero(x, fill_value=2**33)
    with pytest.raises(opendml.Error, match="does not fit in int32"):
        oj.argwhere(x, size=4, fill_value=2**31)
    with pytest.raises(opendml.Error, match="fill_value is a traced float32 of shape"):
        jax.jit(lambda x, f: oj.argwhere(x, size=5, fill_value=f))(x, 1.5)
    with pytest.raises(opendml.Error, match=r"fill_value is a traced int32 of shape \(3,\)"):
        jax.jit(lambda x, f: oj.argwhere(x, size=5, fill_value=f))(x, (1, 2, 3))
    with pytest.raises(opendml.Error, match=r"fill_value is a traced int32 of shape \(1, 2\)"):
        jax.jit(lambda x, f: oj.argwhere(x, size=5, fill_value=f))(x, jnp.array([[1, 2]]))
    # The ends of each index type's range are fills like any other.
    ends = (-2**31, 2**31 - 1)
    assert same_bits(oj.argwhere(x, size=8, fill_value=ends), jnp.argwhere(x, size=8, fill_value=ends))
    coords, count = oj.nonzero(x, fill_value=(-2**31, 2**32 - 1))
    assert int(count[0]) == 3 and coords[3:].tolist() == [[0x80000000, 0xFFFFFFFF]] * 3
    with pytest.raises(opendml.Error, match="jax.vmap"):
        jax.vmap(oj.argwhere)(x)
    for axis in (1.0, "1"):
        with pytest.raises(opendml.Error, match="axis is a"):
            oj.concat([x, x], axis=axis)
    with pytest.raises(opendml.Error, match="axis is traced"):
        jax.jit(lambda x, axis: oj.concat([x, x], axis=axis))(x, 1)
    with pytest.raises(opendml.Error, match="axis is traced"):
        jax.jit(lambda x, axis: oj.split(x, 1, axis=axis))(x, 1)
    # Integers past 64 bits are integers: the message says they do not fit.
    with pytest.raises(opendml.Error, match=r"fill_value \[-9223372036854775809, 1\] does not fit in int32"):
        oj.argwhere(x, size=4, fill_value=(-2**63 - 1, 1))
    # argwhere's int32 coordinates count at most 2^31 - 1 rows: refused before any are made.
    with pytest.raises(opendml.Error, match="size is 2147483648; int32 coordinates count at most 2147483647 rows"):
        oj.argwhere(x, size=2**31)
    with pytest.raises(opendml.Error, match="concrete integer"):
        jax.jit(lambda x, n: oj.split(x, n))(jnp.arange(6), 2)
    # A 0-d x has no columns, but its fill_value is checked all the same (it was taken unread).
    for fill, message in (("abc", "must be an integer"), (1.5, "must be an integer"), (2**80, "does not fit")):
        with pytest.raises(opendml.Error, match=message):
            oj.argwhere(jnp.float32(1), size=2, fill_value=fill)
        with pytest.raises(opendml.Error, match=message):
            oj.nonzero(jnp.float32(1), fill_value=fill)
    assert same_bits(oj.argwhere(jnp.float32(1), size=2, fill_value=5), jnp.argwhere(jnp.float32(1), size=2, fill_value=5))
    # Within range, the fill takes the index type's values; an unsigned one also takes -1 as its bits.
    assert same_bits(oj.argwhere(x, size=5, fill_value=(7, -9)), jnp.argwhere(x, size=5, fill_value=(7, -9)))
    assert int(oj.nonzero(x, fill_value=-1)[0][-1, 0]) == 0xFFFFFFFF
    # A 0-d array is a number of sections, as for jnp.split.
    y = jnp.arange(6)
    for n in (np.array(3), jnp.array(2)):
        assert all(same_bits(p, q) for p, q in zip(oj.split(y, n), jnp.split(y, int(n)), strict=True))


def test_sizes_past_what_the_handlers_take_fail_while_tracing():
    """Shapes only (jax.eval_shape): argwhere's int32 coordinates end at 2^31 - 1 elements (it wrote
    coordinates of -2^31 past them), nonzero's uint32 ones at 2^32 - 1 (the message names the
    function), and concat and split fold into three dimensions that must each stay within DirectML's
    32 bits (they failed only when run)."""
    big = jax.ShapeDtypeStruct((2**31 + 1,), np.uint8)
    with pytest.raises(opendml.Error, match="64-bit mode"):
        jax.eval_shape(lambda a: oj.argwhere(a, size=3), big)
    with pytest.raises(opendml.Error, match=r"opendml.jax.nonzero: x of shape \(4294967296,\) is past what one"):
        jax.eval_shape(oj.nonzero, jax.ShapeDtypeStruct((2**32,), np.bool_))
    tall = jax.ShapeDtypeStruct((2**33, 2), np.uint8)
    with pytest.raises(opendml.Error, match=r"opendml.jax.concat: the arrays, as .* = \(8589934592, 4, 1\)"):
        jax.eval_shape(lambda a: oj.concat([a, a], axis=1), tall)
    with pytest.raises(opendml.Error, match=r"opendml.jax.split: .*sizes\[0\] is 8589934592"):
        jax.eval_shape(lambda a: oj.split(a, 2, axis=1), tall)
    # Under vmap the batch folds into the dimension before the axis: each item within 32 bits, the
    # fold past them, refused while tracing too (it failed when run).
    batch = jax.ShapeDtypeStruct((2**16, 2**16, 1), np.uint8)
    with pytest.raises(opendml.Error, match=r"opendml.jax.split under jax.vmap: the arrays, as .* = \(4294967296, 1, 1\)"):
        jax.eval_shape(jax.vmap(lambda a: oj.split(a, 1, axis=1)), batch)
    with pytest.raises(opendml.Error, match=r"opendml.jax.concat under jax.vmap: the arrays, as .* = \(4294967296, 2, 1\)"):
        jax.eval_shape(jax.vmap(lambda a: oj.concat([a, a], axis=1)), batch)
    # Coordinates past 2^32 - 1 elements, of an x under it, go through the 64-bit indices extension,
    # as the handler compiles them: refused while tracing once.
    square = jax.ShapeDtypeStruct((65535, 65535), np.uint8)
    assert jax.eval_shape(oj.nonzero, square)[0].shape == (65535 * 65535, 2)
    assert jax.eval_shape(lambda a: oj.argwhere(a, size=3), jax.ShapeDtypeStruct((1290,) * 3, np.uint8)).shape == (3, 3)
    wide = jax.ShapeDtypeStruct((2**16, 2**17), np.uint8)  # 2^33 elements in dimensions of 32 bits: fine
    assert jax.eval_shape(lambda a: oj.concat([a, a], axis=1), wide).shape == (2**16, 2**18)


def test_the_handlers_check_what_a_direct_ffi_call_hands_them(put):
    """The targets are registered by name, so anyone's jax.ffi.ffi_call reaches them: the wrong number
    of buffers, or a batch the results do not share, is an error (it read past its buffers). On CUDA
    the error comes with the results, so each call is waited for."""
    S, u8 = jax.ShapeDtypeStruct, np.int64(int(opendml.DataType.UINT8))
    attrs = dict(dml_type=u8, axis=np.int64(1), fill=np.array([], np.int64))
    with pytest.raises(jax.errors.JaxRuntimeError, match="nonzero takes one input and two results"):
        jax.block_until_ready(jax.ffi.ffi_call("opendml_nonzero", [S((1,), np.uint32)])(
            put(np.ones(4, np.uint8)), batched=np.int64(0), **attrs))
    with pytest.raises(jax.errors.JaxRuntimeError, match="results lead with x's batch of 2; result 1 leads with 1"):
        jax.block_until_ready(jax.ffi.ffi_call("opendml_nonzero", [S((2, 1), np.uint32), S((1, 100, 1), np.uint32)])(
            put(np.ones((2, 100), np.uint8)), batched=np.int64(1), **attrs))
    with pytest.raises(jax.errors.JaxRuntimeError, match="join takes one input or more and one result"):
        jax.block_until_ready(jax.ffi.ffi_call("opendml_join", [S((4,), np.uint8)])(batched=np.int64(0), **attrs))
    # float32 and int32 share a width, and were joined bit for bit.
    with pytest.raises(jax.errors.JaxRuntimeError, match="must share one element type"):
        jax.block_until_ready(jax.ffi.ffi_call("opendml_join", S((1, 8), np.float32))(
            put(np.ones((1, 4), np.float32)), put(np.ones((1, 4), np.int32)), batched=np.int64(0),
            **dict(attrs, dml_type=np.int64(int(opendml.DataType.FLOAT32)))))
    with pytest.raises(jax.errors.JaxRuntimeError, match="must share one element type"):
        jax.block_until_ready(jax.ffi.ffi_call("opendml_split", [S((1, 4), np.float32), S((1, 4), np.int32)])(
            put(np.ones((1, 8), np.float32)), batched=np.int64(0),
            **dict(attrs, dml_type=np.int64(int(opendml.DataType.FLOAT32)))))
    # XLA packs int4 two to a byte: taken as bytes, the buffers were read and written past their end.
    x = put(jnp.arange(8, dtype=jnp.int32).reshape(1, 8).astype(jnp.int4))
    with pytest.raises(jax.errors.JaxRuntimeError, match="narrower than a byte"):
        jax.block_until_ready(jax.ffi.ffi_call("opendml_join", S((1, 16), jnp.int4))(x, x, batched=np.int64(0), **attrs))
    with pytest.raises(jax.errors.JaxRuntimeError, match="narrower than a byte"):
        jax.block_until_ready(jax.ffi.ffi_call("opendml_nonzero", [S((1,), np.uint32), S((8, 2), np.uint32)])(
            x, batched=np.int64(0), **attrs))


def _homes(text, target):
    """The names of the computations of compiled HLO text that hold a custom call of `target`."""
    homes, current = [], None
    for line in text.splitlines():
        header = re.match(r"^(?:ENTRY )?%?([\w.\-]+) .*\{$", line)
        if header:
            current = header.group(1)
        if f'custom_call_target="{target}"' in line:
            homes.append(current)
    return homes


def test_the_cpu_calls_no_graph_target():
    """Command buffers are CUDA's: on the CPU the calls keep their targets."""
    x = jax.device_put(np.arange(6, dtype=np.float32), jax.devices("cpu")[0])
    text = jax.jit(lambda a: oj.argwhere(a, size=6)).lower(x).compile().as_text()
    assert _homes(text, "opendml_nonzero") and "opendml_nonzero_graph" not in text


def test_calls_lowered_for_cuda_where_jax_has_no_gpu_take_the_scratch_targets(monkeypatch):
    """A computation lowered for CUDA where JAX has no GPU (to export it, say) cannot size a _graph
    target's workspace, which needs the GPU's operator: its calls take the scratch targets."""
    from opendml import _opendml
    if "CUDA" not in _opendml._jax_targets():
        pytest.skip("this build of opendml has no CUDA handlers to lower to")

    def no_gpu(backend=None):
        raise RuntimeError(f"Unknown backend {backend}")

    monkeypatch.setattr(jax, "local_devices", no_gpu)  # as on a machine without one
    oj._regions.cache_clear()
    f = jax.jit(lambda a: (oj.argwhere(a > 0, size=a.size), oj.concat([a, a])))
    text = f.trace(jax.ShapeDtypeStruct((100,), np.float32)).lower(lowering_platforms=("cuda",)).as_text()
    assert "@opendml_nonzero(" in text and "@opendml_join(" in text and "_graph" not in text
    oj._regions.cache_clear()


def test_regions_are_sized_as_the_handlers_compile():
    """_jax_regions compiles a call's operator as its handler does (the CPU here: ordinal -1), with the
    same checks, so that a bad call is refused when it is traced."""
    from opendml import _opendml
    T, u32 = opendml.DataType, ([1], 4, "uint32")
    temporary, persistent = _opendml._jax_regions("opendml_nonzero", int(T.FLOAT32), 1, 0, [],
                                                  [([1000], 4, "float32"), u32, ([1000, 1], 4, "uint32")], [-1])
    assert temporary >= 0 and persistent == 0
    join = [([2, 3, 4], 4, "float32"), ([2, 5, 4], 4, "float32"), ([2, 8, 4], 4, "float32")]
    assert _opendml._jax_regions("opendml_join", int(T.UINT32), 1, 0, [], join, [-1]) == (0, 0)
    cases = [("opendml_concat", [], "no target 'opendml_concat'"),
             ("opendml_nonzero", [([10], 4, "float32")], "nonzero takes one input and two results"),
             ("opendml_nonzero", [([-1], 4, "float32"), u32, ([1, 1], 4, "uint32")], "a dimension is -1"),
             ("opendml_nonzero", [([10], 4, "float32"), ([1], 4, "float32"), ([10, 1], 4, "uint32")],
              "results must be uint32, int32, int64 or uint64"),
             ("opendml_join", [([2, 3], 2, "float16"), ([2, 3], 2, "float16")], "width of the call's type")]
    for target, buffers, message in cases:
        with pytest.raises(opendml.Error, match=re.escape(message)):
            _opendml._jax_regions(target, int(T.FLOAT32 if target == "opendml_nonzero" else T.UINT32), 0, 0, [],
                                  buffers, [-1])
    with pytest.raises(opendml.Error, match="not opendml.jax's"):
        _opendml._jax_regions("opendml_join", 12345, 0, 0, [], join, [-1])


@pytest.mark.cuda
def test_gpu_calls_are_recorded_into_xla_command_buffers():
    """On CUDA the calls go through the _graph targets, which XLA records into its command buffers
    (CUDA graphs) with the operations around them; replayed on new data, they give jnp's results."""
    from opendml import _opendml
    gpu = _gpu()
    rng = np.random.default_rng(11)

    def layer(nonzero, concat, split):
        def f(x, a, b):
            y = jnp.tanh(x) * 3 - 1  # fused operations around the calls, as a model's layer has them
            rows = nonzero(y > 0)
            p, q = split(concat([a * 2, b + 1]))
            return rows, rows.sum(), p - 1, q * 3
        return jax.jit(f)

    ours = layer(lambda m: oj.argwhere(m, size=m.size), lambda ab: oj.concat(ab, axis=1),
                 lambda c: oj.split(c, [3], axis=1))
    theirs = layer(lambda m: jnp.argwhere(m, size=m.size), lambda ab: jnp.concatenate(ab, axis=1),
                   lambda c: jnp.split(c, [3], axis=1))

    def inputs():
        return [jax.device_put(v, gpu) for v in (rng.normal(size=(64, 33)).astype(np.float32),
                                                  rng.normal(size=(40, 5)).astype(np.float32),
                                                  rng.normal(size=(40, 7)).astype(np.float32))]

    text = ours.lower(*inputs()).compile().as_text()
    for target in ("opendml_nonzero_graph", "opendml_join_graph", "opendml_split_graph"):
        assert _homes(text, target), target
    recorded = _opendml._jax_recorded()
    for _ in range(4):  # new data through the same recorded commands
        args = inputs()
        for got, want in zip(ours(*args), theirs(*args), strict=True):
            assert same_bits(got, want)
    # XLA records the thunks it runs as command buffers (its default; again where the arrays' addresses
    # change): the handlers were called while it recorded, each of the three at least once.
    assert _opendml._jax_recorded() - recorded >= 3


@pytest.mark.cuda
def test_gpu_calls_with_a_persistent_region_keep_their_targets():
    """A JOIN or SPLIT whose piece table lives in a persistent region (more narrow pieces than a
    kernel's arguments hold) fills it from the host at every call, which a command buffer cannot
    record: it keeps the target that takes its regions from XLA's scratch allocator. So do all calls
    where the tests turn the _graph targets off."""
    put = lambda a: jax.device_put(a, _gpu())  # noqa: E731
    rng = np.random.default_rng(12)
    pieces = [put(rng.integers(0, 100, (50, w)).astype(np.int32)) for w in range(1, 21)]
    joined = jnp.concatenate(pieces, axis=1)
    f = jax.jit(lambda *a: oj.concat(a, axis=1))
    text = f.lower(*pieces).compile().as_text()
    assert _homes(text, "opendml_join") and "opendml_join_graph" not in text
    assert same_bits(f(*pieces), joined)
    g = jax.jit(lambda c: oj.split(c, np.cumsum(range(1, 20)), axis=1))
    assert "opendml_split_graph" not in g.lower(joined).compile().as_text()
    for got, want in zip(g(joined), pieces, strict=True):
        assert same_bits(got, want)
    x = put(rng.normal(size=(300,)).astype(np.float32))
    try:
        oj._graph_targets = False
        h = jax.jit(lambda a: oj.argwhere(a > 0, size=300))
        text = h.lower(x).compile().as_text()
        assert _homes(text, "opendml_nonzero") and "opendml_nonzero_graph" not in text
        assert same_bits(h(x), jnp.argwhere(x > 0, size=300))
    finally:
        oj._graph_targets = True


@pytest.mark.cuda
def test_a_graph_target_takes_its_regions_from_its_last_result():
    """A direct ffi_call of a _graph target: its last result is the workspace, and one too small for
    the operator's temporary region is an error, not a write past it. 100000 elements: more than one
    tile (a NONZERO of one tile, cuda.lookback, needs no temporary region)."""
    put = lambda a: jax.device_put(a, _gpu())  # noqa: E731
    S = jax.ShapeDtypeStruct
    attrs = dict(dml_type=np.int64(int(opendml.DataType.FLOAT32)), axis=np.int64(1), batched=np.int64(0),
                 fill=np.array([], np.int64))
    n = 100000
    x = put(np.ones(n, np.float32))
    with pytest.raises(jax.errors.JaxRuntimeError, match=r"no temporary region of \d+ bytes in the workspace"):
        jax.block_until_ready(jax.ffi.ffi_call("opendml_nonzero_graph", [S((1,), np.uint32), S((n, 1), np.uint32),
                                                                        S((8,), np.uint8)])(x, **attrs))
    with pytest.raises(jax.errors.JaxRuntimeError, match="nonzero takes one input and two results .* this call has 1 and 1"):
        jax.block_until_ready(jax.ffi.ffi_call("opendml_nonzero_graph", [S((1,), np.uint32), S((4096,), np.uint8)])(
            x, **attrs))
    count, coords, _ = jax.ffi.ffi_call("opendml_nonzero_graph", [S((1,), np.uint32), S((n, 1), np.uint32),
                                                                  S((1 << 20,), np.uint8)])(x, **attrs)
    assert int(count[0]) == n and same_bits(coords, np.arange(n, dtype=np.uint32)[:, None])


def test_a_build_without_jax_says_so(monkeypatch):
    """An extension built where JAX was missing has no handlers: importing opendml.jax says why."""
    import importlib
    import sys

    from opendml import _opendml

    monkeypatch.delattr(_opendml, "_jax_targets")
    monkeypatch.delitem(sys.modules, "opendml.jax")
    with pytest.raises(ImportError, match="no XLA FFI handlers, because JAX was not importable"):
        importlib.import_module("opendml.jax")


@pytest.mark.parametrize("built", ["0.0.1", "installed"])
def test_handlers_another_jaxlib_refuses_say_to_reinstall(monkeypatch, built):
    """A jaxlib older than the headers the handlers were compiled against refuses them at import:
    the error names both versions and the remedy; with the same jaxlib, JAX's own error passes on."""
    import importlib
    import sys

    import jaxlib

    from opendml import _opendml

    def refuse(*args, **kwargs):
        raise RuntimeError("handler's API version (9.9) is incompatible with the framework's")

    _, major, minor = _opendml._jax_built_with
    monkeypatch.setattr(_opendml, "_jax_built_with", (jaxlib.__version__ if built == "installed" else built, major, minor))
    monkeypatch.setattr(jax.ffi, "register_ffi_target", refuse)
    monkeypatch.delitem(sys.modules, "opendml.jax")
    if built == "installed":
        with pytest.raises(RuntimeError, match=r"API version \(9\.9\)"):
            importlib.import_module("opendml.jax")
    else:
        message = (rf"compiled against jaxlib 0\.0\.1 \(XLA FFI API {major}\.{minor}\) and jaxlib {re.escape(jaxlib.__version__)} "
                   r"refused them: .*API version \(9\.9\).*Reinstall opendml")
        with pytest.raises(ImportError, match=message):
            importlib.import_module("opendml.jax")


def test_starting_the_platforms_passes_errors_on():
    """The import starts JAX's platforms through the extension, which keeps the current CUDA device
    (test_cuda.py checks that on 2 GPUs): what the start raises reaches the caller unchanged, and
    its result is not needed."""
    from opendml import _opendml

    def start():
        raise RuntimeError("no platform today")

    with pytest.raises(RuntimeError, match="no platform today"):
        _opendml._jax_start_platforms(start)
    assert _opendml._jax_start_platforms(lambda: "ignored") is None
    with pytest.raises(TypeError):
        _opendml._jax_start_platforms("jax.devices")
