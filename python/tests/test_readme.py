"""README.md's Python example is examples/readme_example.py, and it prints what its comments say."""

import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "readme_example.py"


def region(text):
    match = re.search(r"# example-begin\n(.*)# example-end", text, re.S)
    assert match, "no example-begin/example-end region"
    return match.group(1)


def test_readme_shows_the_example():
    assert region((ROOT / "README.md").read_text()) == region(EXAMPLE.read_text())


def test_example_prints_what_it_says():
    expected = [line.split("  # ", 1)[1] for line in EXAMPLE.read_text().splitlines() if line.startswith("print(")]
    run = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True, check=True)
    assert run.stdout.splitlines() == expected
