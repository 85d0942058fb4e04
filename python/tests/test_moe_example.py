"""examples/moe_routing.py: mixture-of-experts routing dispatched to every expert at once, with
opendml's nonzero (eager, under torch.compile(fullgraph=True), and on a GPU replayed from a CUDA
graph) and with torch.nonzero_static, gives the output of the expert-by-expert torch.nonzero version
bit for bit."""

import importlib.util
import pathlib
import subprocess
import sys

import pytest
import torch

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "examples" / "moe_routing.py"
sys.path.insert(0, str(SCRIPT.parent))  # its moe_layer.py, as running the script finds it
spec = importlib.util.spec_from_file_location("moe_routing", SCRIPT)
moe = importlib.util.module_from_spec(spec)
spec.loader.exec_module(moe)


@pytest.mark.parametrize(
    "tokens,hidden,experts,top_k,factor,dropped",
    [(64, 16, 4, 2, 1.0, True), (100, 8, 5, 3, 0.5, True), (37, 4, 8, 1, 100.0, False)],  # a few, many, none
)
def test_opendml_routing_equals_torch_nonzero_routing(tokens, hidden, experts, top_k, factor, dropped):
    x, router, weights = moe.make_layer(tokens, hidden, experts, seed=tokens, device="cpu", exact=True)
    gates, chosen = moe.exact_gates(*moe.route(x, router, top_k))
    capacity = moe.moe_layer.capacity_for(tokens, experts, top_k, factor)
    # The case holds what it is for: some expert past its capacity, or none.
    assert bool((torch.bincount(chosen.reshape(-1), minlength=experts) > capacity).any()) == dropped
    want = moe.moe_torch(x, gates, chosen, weights, capacity)
    assert want.abs().sum() > 0
    assert torch.equal(moe.moe_opendml(x, gates, chosen, weights, capacity), want)
    assert torch.equal(moe.moe_torch_static(x, gates, chosen, weights, capacity), want)
    torch._dynamo.reset()
    compiled = torch.compile(moe.moe_opendml, fullgraph=True, backend="aot_eager")
    assert torch.equal(compiled(x, gates, chosen, weights, capacity), want)


def test_the_checks_sums_are_exact_in_any_order():
    """On a GPU the combine's index_add_ adds a token's experts in no fixed order (atomic adds), so
    the bit-for-bit check holds only where every token's sum is exact in any order: adding its
    experts backwards (the experts numbered from the last) changes no bit."""
    tokens, hidden, experts, top_k = 100, 8, 5, 3
    x, router, weights = moe.make_layer(tokens, hidden, experts, seed=tokens, device="cpu", exact=True)
    gates, chosen = moe.exact_gates(*moe.route(x, router, top_k))
    want = moe.moe_torch(x, gates, chosen, weights, tokens)
    assert torch.equal(moe.moe_torch(x, gates, experts - 1 - chosen, weights.flip(0), tokens), want)


def test_capacity_drops_tokens_in_token_order():
    x, router, weights = moe.make_layer(40, 4, 2, seed=1, device="cpu", exact=True)
    gates, experts = moe.route(x, router, 1)
    full = moe.moe_opendml(x, gates, experts, weights, 40)
    capacity = 5
    kept = torch.zeros(40, dtype=torch.bool)
    for e in range(2):
        kept[torch.nonzero(experts[:, 0] == e)[:capacity, 0]] = True
    assert 0 < int(kept.sum()) < 40
    dropped = moe.moe_opendml(x, gates, experts, weights, capacity)
    assert torch.equal(dropped[kept], full[kept]) and bool((dropped[~kept] == 0).all())


def test_main_refuses_bad_arguments(capsys):
    """Through examples/moe_layer.py, whose every check test_moe_layer.py covers."""
    with pytest.raises(SystemExit) as exit:
        moe.main(["--device", "cpu", "--experts", "4", "--top-k", "5"])
    assert exit.value.code == 2 and "--top-k must be 1 to --experts (4)" in capsys.readouterr().err


def test_the_script_checks_itself():
    run = subprocess.run([sys.executable, str(SCRIPT), "--device", "cpu", "--tokens", "48"], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.count("equal to the torch.nonzero version") == 3, run.stdout


@pytest.mark.cuda
def test_on_the_gpu_with_a_cuda_graph(capsys):
    assert moe.main(["--device", "cuda", "--tokens", "256", "--hidden", "32", "--experts", "8"]) == 0
    out = capsys.readouterr().out
    assert out.count("equal to the torch.nonzero version") == 4 and "CUDA graph replay" in out, out
