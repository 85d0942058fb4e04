"""examples/moe_routing_jax.py: mixture-of-experts routing in JAX dispatched to every expert at once
with opendml.jax.nonzero, with jnp.argwhere(size=n) and with GShard's one-hot einsum (eager, under
jax.jit, and under jax.vmap over a batch of layers) gives the output of the expert-by-expert host
version bit for bit, on JAX's CPU backend and, marked `cuda`, on its GPU backend."""

import importlib.util
import pathlib
import subprocess
import sys

import jax
import numpy as np
import pytest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "examples" / "moe_routing_jax.py"
sys.path.insert(0, str(SCRIPT.parent))  # its moe_layer.py, as running the script finds it
spec = importlib.util.spec_from_file_location("moe_routing_jax", SCRIPT)
moe = importlib.util.module_from_spec(spec)
spec.loader.exec_module(moe)

CHECKS = 3 * len(moe.VERSIONS)  # eager, jax.jit and jax.vmap for each version


def run_check(capsys, device, tokens, hidden, experts, top_k, factor):
    argv = ["--device", device, "--tokens", str(tokens), "--hidden", str(hidden), "--experts", str(experts),
            "--top-k", str(top_k), "--capacity-factor", str(factor)]
    status = moe.main(argv)
    out = capsys.readouterr().out
    assert status == 0 and out.count(moe.MATCH) == CHECKS, out


@pytest.mark.parametrize(
    "tokens,hidden,experts,top_k,factor,dropped",
    [(64, 16, 4, 2, 1.0, True), (100, 8, 5, 3, 0.5, True), (37, 4, 8, 1, 100.0, False)],  # a few, many, none
)
def test_every_version_equals_the_host_version(capsys, tokens, hidden, experts, top_k, factor, dropped):
    # The case holds what it is for: with the script's default seed, some expert past its capacity, or none.
    x, router, _ = moe.make_layer(tokens, hidden, experts, 0, exact=True)
    loads = np.bincount(np.asarray(moe.route(x, router, top_k)[1]).reshape(-1), minlength=experts)
    assert bool((loads > moe.moe_layer.capacity_for(tokens, experts, top_k, factor)).any()) == dropped
    run_check(capsys, "cpu", tokens, hidden, experts, top_k, factor)


def test_capacity_drops_tokens_in_token_order():
    x, router, weights = moe.make_layer(40, 4, 2, seed=1, exact=True)
    gates, chosen = moe.exact_gates(*moe.route(x, router, 1))
    full = np.asarray(moe.moe_opendml(x, gates, chosen, weights, 40))
    capacity = 5
    kept = np.zeros(40, bool)
    for e in range(2):
        kept[np.nonzero(np.asarray(chosen[:, 0]) == e)[0][:capacity]] = True
    assert 0 < kept.sum() < 40
    for version in moe.VERSIONS.values():
        dropped = np.asarray(version(x, gates, chosen, weights, capacity))
        assert np.array_equal(dropped[kept], full[kept]) and (dropped[~kept] == 0).all()


def test_main_refuses_bad_arguments(capsys):
    """Through examples/moe_layer.py, whose every check test_moe_layer.py covers."""
    with pytest.raises(SystemExit) as exit:
        moe.main(["--device", "cpu", "--experts", "4", "--top-k", "5"])
    assert exit.value.code == 2 and "--top-k must be 1 to --experts (4)" in capsys.readouterr().err


def test_the_script_checks_itself():
    run = subprocess.run([sys.executable, str(SCRIPT), "--device", "cpu", "--tokens", "48"], capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.count(moe.MATCH) == CHECKS, run.stdout


@pytest.mark.cuda
def test_on_the_gpu(capsys):
    try:
        jax.devices("gpu")
    except RuntimeError as e:
        pytest.skip(f"JAX has no GPU backend here (pip install 'jax[cuda13]'): {e}")
    run_check(capsys, "gpu", 256, 32, 8, 2, 1.25)
