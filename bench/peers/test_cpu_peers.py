"""cpu_peers.py's command line: a library that cannot be loaded is refused in a line; with the
library (OPENDML_LIBRARY), its quick run checks every peer against NumPy.

    OPENDML_LIBRARY=build/src/libopendml.so python3 -m unittest bench/peers/test_cpu_peers.py
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "cpu_peers.py")
LIBRARY = os.environ.get("OPENDML_LIBRARY", "build/src/libopendml.so")


def run(*argv):
    return subprocess.run([sys.executable, SCRIPT, *argv], capture_output=True, text=True, timeout=600)


class CommandLineTest(unittest.TestCase):
    def test_a_library_that_cannot_be_loaded_is_refused(self):
        with tempfile.TemporaryDirectory() as folder:
            not_a_library = os.path.join(folder, "libopendml.so")
            with open(not_a_library, "w") as f:
                f.write("not a shared object")
            for path in (os.path.join(folder, "missing.so"), not_a_library):
                done = run("--lib", path, "--out", folder)
                self.assertEqual(done.returncode, 2, done.stderr)
                self.assertIn(f"--lib {path}: cannot load opendml's CPU device: OSError", done.stderr)
                self.assertNotIn("Traceback", done.stderr)

    @unittest.skipUnless(os.path.exists(LIBRARY), f"no library at {LIBRARY} (set OPENDML_LIBRARY)")
    def test_quick_run(self):
        with tempfile.TemporaryDirectory() as folder:
            done = run("--lib", LIBRARY, "--out", folder, "--quick")
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            with open(os.path.join(folder, "cpu_peers.json")) as f:
                results = json.load(f)
        self.assertEqual([c["op"] for c in results["cases"]], ["nonzero", "join", "split"])
        for case in results["cases"]:
            self.assertIs(case["peers"]["opendml"]["correct"], True, case["name"])
            self.assertIs(case["peers"]["numpy"]["correct"], True, case["name"])


if __name__ == "__main__":
    unittest.main()
