"""examples/moe_layer.py: the command line both MoE routing examples share, refusing sizes that make
no layer with the parser's error (exit status 2). test_moe_example.py and test_moe_example_jax.py
check that each script's main goes through it."""

import importlib.util
import pathlib

import pytest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "examples" / "moe_layer.py"
spec = importlib.util.spec_from_file_location("moe_layer", SCRIPT)
moe_layer = importlib.util.module_from_spec(spec)
spec.loader.exec_module(moe_layer)


@pytest.mark.parametrize("argv,message", [
    (["--experts", "4", "--top-k", "5"], "--top-k must be 1 to --experts (4)"),
    (["--experts", "4", "--top-k", "0"], "--top-k must be 1 to --experts (4)"),
    (["--tokens", "0"], "--tokens must be at least 1"),
    (["--hidden", "0"], "--hidden must be at least 1"),
    (["--experts", "0"], "--experts must be at least 1"),
    (["--repeats", "0"], "--repeats must be at least 1"),
    (["--capacity-factor", "0"], "--capacity-factor must be above 0"),
    (["--capacity-factor", "-1"], "--capacity-factor must be above 0"),
    (["--capacity-factor", "nan"], "--capacity-factor must be above 0"),
])
def test_bad_arguments_are_refused(capsys, argv, message):
    with pytest.raises(SystemExit) as exit:
        moe_layer.parse(moe_layer.arguments("test", tokens=8, experts=4), argv)
    assert exit.value.code == 2 and message in capsys.readouterr().err


def test_good_arguments_and_the_capacity():
    args = moe_layer.parse(moe_layer.arguments("test", tokens=8, experts=4), ["--top-k", "4", "--capacity-factor", "0.5"])
    assert (args.tokens, args.hidden, args.experts, args.top_k, args.capacity_factor) == (8, 16, 4, 4, 0.5)
    assert moe_layer.capacity_for(8, 4, 4, 0.5) == 4   # 8 tokens x 4 choices / 4 experts x 0.5
    assert moe_layer.capacity_for(10, 4, 2, 1.25) == 7  # ceil(6.25)
    assert moe_layer.capacity_for(8, 1, 1, 2.0) == 8    # never past the tokens
