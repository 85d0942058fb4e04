#!/usr/bin/env python3
"""Tests of opendml-dispatch (Python 3, standard library only). Each mode checks one thing:

  run_tests.py --tool TOOL model MODEL.json      prints what FOLDER/expected/MODEL.txt says
  run_tests.py --tool TOOL bad NAME              the case NAME of bad/cases.json fails as it says
  run_tests.py --tool TOOL timing MODEL.json     -i 5 prints a well-formed timing line
  run_tests.py --tool TOOL write_file MODEL.json writeFile's .npy and .bin files hold the values
  run_tests.py --tool TOOL cli MODEL.json        DxDispatch's options and the lines they print
  run_tests.py --tool TOOL all                   all of the above, for every model and case

Expected-output files hold the lines printed after `Running on '...'`, with `--adapter cpu`. A
line that ends in "..." matches any printed line that starts with the text before it: NONZERO's
coordinate rows past the count are undefined, so only the first count*N values are given.
"""
import argparse
import glob
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(os.path.dirname(os.path.dirname(HERE)), "models")
BAD = os.path.join(HERE, "bad")
TIMEOUT_S = 60
RUNNING_ON = re.compile(r"^Running on '.+'$")
# DxDispatch's timing line, which every dispatch prints (with a GPU column on CUDA).
TIMING = re.compile(r"^Dispatch '([^']+)': (\d+) iterations, \d+\.\d{4} ms median \(CPU\)"
                    r"(, \d+\.\d{6} ms median \(GPU\))?$")
ERROR_PREFIX = "opendml-dispatch: error: "


class Failure(Exception):
    pass


def run(tool, args, cwd):
    """Runs the tool; a hang or a death by signal is a failure whatever the test expects."""
    try:
        result = subprocess.run([tool] + args, cwd=cwd, capture_output=True, text=True, errors="replace",
                                timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise Failure(f"hung: no exit within {TIMEOUT_S} s")
    if result.returncode < 0:
        raise Failure(f"killed by signal {-result.returncode}\nstderr:\n{result.stderr}")
    return result


def expect(condition, message, result=None):
    if not condition:
        if result is not None:
            message += f"\nexit status: {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
        raise Failure(message)


def printed_lines(result):
    """The lines after `Running on '...'`, which must come first."""
    lines = result.stdout.splitlines()
    expect(lines and RUNNING_ON.match(lines[0]), "the first line is not `Running on '...'`", result)
    return lines[1:]


def compare(actual, expected, result):
    expect(len(actual) == len(expected), f"printed {len(actual)} lines, expected {len(expected)}", result)
    for got, want in zip(actual, expected):
        matches = got.startswith(want[:-3]) if want.endswith("...") else got == want
        expect(matches, f"printed   {got!r}\nexpected  {want!r}", result)


def expected_lines(model, extension=".txt"):
    """The lines FOLDER/expected/NAME.txt lists (NAME.stderr: the warnings; none when it is absent)."""
    folder, name = os.path.split(model)
    path = os.path.join(folder, "expected", os.path.splitext(name)[0] + extension)
    if extension != ".txt" and not os.path.exists(path):
        return []
    with open(path) as f:
        return f.read().splitlines()


def check_model(tool, model, adapter="cpu"):
    """The model's output, less its timing lines, is FOLDER/expected/NAME.txt; NAME.args, when there,
    holds more arguments (one a line)."""
    with tempfile.TemporaryDirectory() as cwd:
        result = run(tool, ["--adapter", adapter] + expected_lines(model, ".args") + [model], cwd)
    expect(result.returncode == 0, "the model did not run cleanly", result)
    compare(result.stderr.splitlines(), expected_lines(model, ".stderr"), result)
    compare([line for line in printed_lines(result) if not TIMING.match(line)], expected_lines(model), result)


# Models too large to commit, written by a case's "generate": the reproducers of issue 9's stack
# overflow, a value nested deep and followed by another key in its object, and a model of 2 MB
# whose parsed tree (64 bytes a value) passes a budget that the file alone fits, and an object of
# more members than a model may have (reading each key compared it with every one before it).
GENERATED = {
    "long_array": lambda: '{"resources": {"big": {"initialValuesDataType": "UINT8", "initialValues": [' +
                          ",".join(["0"] * 1000000) + ']}}, "dispatchables": {}, "commands": []}',
    "deep_arrays": lambda: '{"resources": ' + "[" * 150000 + "]" * 150000 + ', "dispatchables": {}, "commands": []}',
    "many_resources": lambda: '{"resources": {' + ", ".join(
        f'"R{i}": {{"initialValuesDataType": "UINT8", "initialValues": [1]}}' for i in range(160000)) +
        '}, "dispatchables": {}, "commands": []}',
    "deep_objects": lambda: '{"resources": ' + '{"a": ' * 100000 + "0" + "}" * 100000 +
                            ', "dispatchables": {}, "commands": []}',
}


def check_bad(tool, case):
    args = [a.format(models=MODELS) for a in case.get("args", ["--adapter", "cpu"])]
    if "model" in case:
        args.append(os.path.join(BAD, case["model"].format(models=MODELS)))
    with tempfile.TemporaryDirectory() as cwd:
        if "generate" in case:
            with open(os.path.join(cwd, "generated.json"), "w") as f:
                f.write(GENERATED[case["generate"]]())
            args.append("generated.json")
        result = run(tool, args, cwd)
    expect(result.returncode == case["status"], f"exit status {result.returncode}, expected {case['status']}", result)
    lines = result.stderr.splitlines()
    expect(len(lines) == 1 and result.stderr.endswith("\n"), "stderr is not exactly one line", result)
    expect(lines[0].startswith(ERROR_PREFIX), f"stderr does not start with {ERROR_PREFIX!r}", result)
    for part in (case["error"], case.get("error_also", "")):
        expect(part in lines[0], f"stderr does not contain {part!r}", result)
    if result.stdout:
        compare([line for line in printed_lines(result) if not TIMING.match(line)], case.get("printed", []), result)


def check_timing(tool, model):
    with tempfile.TemporaryDirectory() as cwd:
        result = run(tool, ["--adapter", "cpu", "-i", "5", model], cwd)
    expect(result.returncode == 0 and result.stderr == "", "the model did not run cleanly", result)
    lines = printed_lines(result)
    timings = [line for line in lines if TIMING.match(line)]
    dispatches = sum(1 for c in json.load(open(model))["commands"] if c["type"] == "dispatch")
    expect(len(timings) == dispatches, f"{len(timings)} timing lines for {dispatches} dispatches", result)
    expect(all(TIMING.match(t).group(2) == "5" for t in timings), "the iteration count is not 5", result)
    compare([line for line in lines if not TIMING.match(line)], expected_lines(model), result)


def read_npy(path):
    """(descr, shape, data) of a version 1.0 .npy file, as the tool writes them."""
    with open(path, "rb") as f:
        content = f.read()
    expect(content[:8] == b"\x93NUMPY\x01\x00", f"{path}: not a version 1.0 .npy file")
    (length,) = struct.unpack("<H", content[8:10])
    expect((10 + length) % 64 == 0, f"{path}: the data does not start at a multiple of 64")
    header = content[10:10 + length].decode("latin-1")
    match = re.fullmatch(r"\{'descr': '([^']+)', 'fortran_order': False, 'shape': \(([\d, ]+)\), \} *\n", header)
    expect(match is not None, f"{path}: unexpected header {header!r}")
    shape = tuple(int(n) for n in match.group(2).split(",") if n.strip())
    return match.group(1), shape[0] if len(shape) == 1 else shape, content[10 + length:]


def check_write_file(tool, model):
    """The model writes these files (see write_file.json); a second model reads values.npy back."""
    expected = {
        "values.npy": ("<f4", 3, struct.pack("<3f", 1, 2.5, -3)),
        "half.npy": ("<f2", 2, struct.pack("<2e", 1, -2)),
        "bytes.npy": ("|u1", 64, bytes([0, 7, 255]) + bytes(61)),  # the whole sizeInBytes, as DxDispatch
        "wide.npy": ("<i8", 1, struct.pack("<q", -(2**40))),
        "sub/folder/matrix.npy": ("|u1", (8, 8), bytes([0, 7, 255]) + bytes(61)),  # "dimensions"; folders made
        "flat.npy": ("<f4", 3, struct.pack("<3f", 1, 2.5, -3)),  # "dimensions": [] is 1-D, as in DxDispatch
        "wide_flat.npy": ("<i8", 1, struct.pack("<q", -(2**40))),  # shape (1,), not ()
    }
    with tempfile.TemporaryDirectory() as cwd:
        result = run(tool, ["--adapter", "cpu", model], cwd)
        expect(result.returncode == 0 and result.stderr == "", "the model did not run cleanly", result)
        written = [f"Resource '{r}' written to '{t}'" for r, t in [("values", "values.npy"), ("values", "values.bin"),
                   ("half", "half.npy"), ("bytes", "bytes.npy"), ("wide", "wide.npy"), ("bytes", "sub/folder/matrix.npy"),
                   ("odd", "odd.bin"), ("values", "flat.npy"), ("wide", "wide_flat.npy"),
                   ("shifted", "shifted.bin"), ("values", "values.JPEG")]]
        compare(printed_lines(result), written, result)
        for name, want in expected.items():
            expect(read_npy(os.path.join(cwd, name)) == want, f"{name} does not hold {want}")
        with open(os.path.join(cwd, "values.bin"), "rb") as f:
            expect(f.read() == struct.pack("<3f", 1, 2.5, -3), "values.bin does not hold 1, 2.5, -3")
        with open(os.path.join(cwd, "odd.bin"), "rb") as f:  # sizeInBytes 6: every byte, as DxDispatch writes it
            expect(f.read() == struct.pack("<f", 1) + bytes(2), "odd.bin does not hold 1 and 2 zero bytes")
        with open(os.path.join(cwd, "shifted.bin"), "rb") as f:  # the values first, whatever their offset says
            expect(f.read() == struct.pack("<2f", 1, 2) + bytes(8), "shifted.bin does not hold 1, 2 and 8 zero bytes")
        with open(os.path.join(cwd, "values.JPEG"), "rb") as f:  # not an image to DxDispatch: raw bytes
            expect(f.read() == struct.pack("<3f", 1, 2.5, -3), "values.JPEG does not hold 1, 2.5, -3")
        reader = os.path.join(cwd, "read_back.json")
        shutil.copy(os.path.join(HERE, "read_back.json"), reader)
        result = run(tool, ["--adapter", "cpu", reader], cwd)
        expect(result.returncode == 0 and result.stderr == "", "read_back.json did not run cleanly", result)
        compare(printed_lines(result), ["Resource 'values': 1, 2.5, -3", "Resource 'raw': 1, 2.5, -3",
                                        "Resource 'jpeg': 1, 2.5, -3"], result)


def run_ok(tool, args, cwd):
    result = run(tool, args, cwd)
    expect(result.returncode == 0 and result.stderr == "", f"{args} did not run cleanly", result)
    return result


def peak_memory_kib(tool, args, cwd, expected_status=0):
    """The tool's peak resident memory in KiB (ru_maxrss of that one child), which must exit with
    expected_status."""
    child = subprocess.Popen([tool] + args, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    expect(child.returncode == expected_status, f"{args}: exit status {child.returncode}, not {expected_status}")
    return usage.ru_maxrss


def check_cli(tool, model):
    """DxDispatch's options, each with the lines it prints (MODEL: a JOIN model of one dispatch)."""
    with tempfile.TemporaryDirectory() as cwd:
        result = run_ok(tool, [], cwd)  # no arguments: the help, as DxDispatch
        expect(result.stdout.startswith("Usage: opendml-dispatch"), "no arguments did not print the help", result)
        result = run_ok(tool, ["-s"], cwd)
        expect(re.search(r"^cpu \(\d+ threads\), \d+\.\d GiB memory$", result.stdout, re.M), "-s lists no cpu line", result)
        result = run_ok(tool, ["-S"], cwd)
        expect(re.match(r"opendml \d+\.\d+\.\d+\nCUDA", result.stdout), "-S prints no versions", result)
        for args in (["-i5"], ["-i", "5"], ["--dispatch_iterations=5"], ["-r", "3", "-i5"], ["-m", model, "-i5"]):
            lines = printed_lines(run_ok(tool, ["-a", "cpu"] + args + ([] if "-m" in args else [model]), cwd))
            timings = [line for line in lines if TIMING.match(line)]
            expect(len(timings) == 1 and TIMING.match(timings[0]).group(2) == "5", f"{args}: no 5-iteration line", result)
        lines = printed_lines(run_ok(tool, ["-a", "cpu", "-t", "20", model], cwd))
        expect(any(TIMING.match(line) for line in lines), "-t: no timing line")
        # -t's samples are bounded (SampleRun::kMaxKept, 8 MiB in all): they grew ~90 MB a second on
        # this model, millions of iterations, so 2 s took ~180 MB more than one iteration does.
        grown = peak_memory_kib(tool, ["-a", "cpu", "-t", "2000", model], cwd) - \
            peak_memory_kib(tool, ["-a", "cpu", "-i", "1", model], cwd)
        expect(grown < 32 * 1024, f"-t 2000 took {grown} KiB more than -i 1")
        stats = r"samples, \d+\.\d{4} ms average, \d+\.\d{4} ms min, \d+\.\d{4} ms median, \d+\.\d{4} ms max$"
        for args, cold, hot in ((["-v", "1", "-i", "3"], 1, 2), (["-v1", "-i", "3", "-w", "2"], 2, 1),
                                (["-v", "1", "-i", "2", "-w", "0"], 0, 2), (["-v", "1", "-w", "5"], 0, 1)):
            result = run_ok(tool, ["-a", "cpu"] + args + [model], cwd)
            lines = printed_lines(result)
            expect(f"Dispatch 'join': {cold + hot} iterations" in lines, f"{args}: no head line", result)
            cold_lines = [line for line in lines if re.match(r"CPU Timings \(Cold\) : " + str(cold) + " " + stats, line)]
            hot_lines = [line for line in lines if re.match(r"CPU Timings \(Hot\)  : " + str(hot) + " " + stats, line)]
            expect(len(cold_lines) == (1 if cold else 0) and len(hot_lines) == 1, f"{args}: cold/hot lines", result)
        for level in ("2", "3"):  # DxDispatch takes any level, and lists every sample from 2 on
            result = run_ok(tool, ["-a", "cpu", "-v", level, "-i", "2", model], cwd)
            lines = printed_lines(result)
            expect("The timings of each iteration: " in lines and
                   sum(1 for line in lines if re.fullmatch(r"iteration [01]: \d+\.\d{4} ms \(CPU\)", line)) == 2,
                   f"-v {level}: no line per iteration", result)
        # -i 0, as in DxDispatch: no dispatch and no timing line; the other commands run.
        for args in (["-i", "0"], ["-i0", "-v", "2"]):
            lines = printed_lines(run_ok(tool, ["-a", "cpu"] + args + [model], cwd))
            expect(not any(line.startswith("Dispatch ") for line in lines) and
                   any(line.startswith("Resource 'Out': 0, 0") for line in lines), f"{args}: a dispatch ran", result)
        for adapter in ("CPU", "thread", "cpu"):  # any part of the name, any case
            result = run_ok(tool, ["-a", adapter, model], cwd)
            expect(result.stdout.startswith("Running on 'cpu ("), f"-a {adapter} did not choose the cpu", result)
        for level in ("5.0", "5_0", "DML_FEATURE_LEVEL_5_0"):
            run_ok(tool, ["-a", "cpu", "--dml_feature_level", level, model], cwd)
        run_ok(tool, ["-a", "cpu", "--feature-level", "5.0", model], cwd)
        # --dml_feature_level is the lowest level the device must support, as DxDispatch asks it of
        # DirectML: operators are still created at the highest, so a JOIN of rank 2 (4_1 and up) runs
        # at 3.0, where --feature-level 3.0 refuses it (bad/join_rank_at_3_0).
        result = run_ok(tool, ["-a", "cpu", "--dml_feature_level", "3.0", os.path.join(BAD, "join_rank_at_3_0.json")], cwd)
        expect("Resource 'Out': 1, 2, 3, 4, 5, 6, 7, 8" in printed_lines(result), "--dml_feature_level 3.0", result)
        # Results that reach no one (standard output on a full device, or closed) are an error.
        for where in ("/dev/full", "closed"):
            if where == "/dev/full" and not os.path.exists(where):
                continue
            with open(where if where != "closed" else os.devnull, "w") as sink:
                done = subprocess.run([tool, "-a", "cpu", model], cwd=cwd, stdout=sink, stderr=subprocess.PIPE, text=True,
                                      timeout=TIMEOUT_S, preexec_fn=(lambda: os.close(1)) if where == "closed" else None)
            expect(done.returncode == 1 and "writing the results to standard output failed" in done.stderr,
                   f"stdout {where}: status {done.returncode}, stderr {done.stderr!r}")
        result = run_ok(tool, ["-a", "cpu", "--print_commands", model], cwd)
        lines = printed_lines(result)
        expect(lines[0].startswith("[StartCmd][   0]\t: {\"type\":\"dispatch\"") and
               "[EndCmd][   0]\t: hr=0x0        " in lines and "[StartCmd][   1]\t: {\"type\":\"print\",\"resource\":\"Out\"}"
               in lines, "--print_commands lines", result)
        # --input_path: the model and its sourcePaths are found there; --output_path: files are written there.
        models = os.path.dirname(model)
        result = run_ok(tool, ["-a", "cpu", "--input_path", models, "join_from_files.json"], cwd)
        compare([line for line in printed_lines(result) if not TIMING.match(line)],
                expected_lines(os.path.join(models, "join_from_files.json")), result)
        # A name the file system cannot even ask about (too long, a loop of links) is a model that
        # cannot be read, not an internal error.
        os.symlink("loop2", os.path.join(cwd, "loop1"))
        os.symlink("loop1", os.path.join(cwd, "loop2"))
        for name in ("a" * 300 + ".json", os.path.join("loop1", "m.json")):
            done = run(tool, ["-a", "cpu", "--input_path", models, name], cwd)
            expect(done.returncode == 1 and "cannot read" in done.stderr and "internal error" not in done.stderr,
                   f"--input_path with {name[:20]}...: status {done.returncode}", done)
        # --max-memory bounds what the tool takes beyond its own: 2 * 10^6 array values (about 120 MB
        # in nlohmann's tree, which was charged 16 bytes a value) are refused under 64 MiB while the
        # peak stays within it.
        with open(os.path.join(cwd, "long.json"), "w") as f:
            f.write('{"resources": {"A": {"initialValuesDataType": "UINT8", "initialValues": [' +
                    ",".join(["0"] * 2_000_000) + ']}}, "dispatchables": {}, "commands": []}')
        own = peak_memory_kib(tool, ["-a", "cpu", model], cwd)
        for budget_mib, status in ((64, 1), (512, 0)):
            peak = peak_memory_kib(tool, ["-a", "cpu", "--max-memory", f"{budget_mib}M", "long.json"], cwd, status)
            expect(peak <= budget_mib * 1024 + own, f"--max-memory {budget_mib}M: a peak of {peak} KiB ({own} its own)")
        # --max-memory is a bound the tool may reach: raised by each shortfall it reports until the
        # model runs, the budget is exactly what the model takes, and one byte less is refused.
        budget, done = 1024, None
        for _ in range(20):
            done = run(tool, ["-a", "cpu", "--max-memory", str(budget), model], cwd)
            shortfall = re.search(r"needs (\d+) bytes, but only (\d+) of the memory budget", done.stderr)
            if done.returncode != 0 and shortfall and int(shortfall.group(1)) > int(shortfall.group(2)):
                budget += int(shortfall.group(1)) - int(shortfall.group(2))
            else:
                break
        expect(done.returncode == 0 and done.stderr == "", f"--max-memory {budget}: the exact budget is refused", done)
        done = run(tool, ["-a", "cpu", "--max-memory", str(budget - 1), model], cwd)
        expect(done.returncode == 1 and "of the memory budget" in done.stderr, f"--max-memory {budget - 1}", done)
        # print's text is made a piece at a time: 2^24 INT8 elements printed verbose (one 16 MiB
        # chunk) made ~400 MB of text at once, far past the 64 MiB budget of the resource itself.
        with open(os.path.join(cwd, "verbose.json"), "w") as f:
            f.write('{"resources": {"A": {"initialValuesDataType": "INT8", "initialValues": {"valueCount": 16777216, '
                    '"value": -128}}}, "dispatchables": {}, "commands": [{"type": "print", "resource": "A", '
                    '"verbose": true}]}')
        peak = peak_memory_kib(tool, ["-a", "cpu", "--max-memory", "64M", "verbose.json"], cwd)
        expect(peak <= 64 * 1024 + own, f"verbose print of 16 MiB: a peak of {peak} KiB ({own} its own)")
        shutil.copy(os.path.join(HERE, "write_file.json"), os.path.join(cwd, "w.json"))
        result = run_ok(tool, ["-a", "cpu", "--output_path", "out", "w.json"], cwd)
        expect("Resource 'half' written to 'out/half.npy'" in printed_lines(result) and
               os.path.exists(os.path.join(cwd, "out", "sub", "folder", "matrix.npy")), "--output_path", result)


def check_cuda_lines(tool, model, adapter):
    """On a GPU: the GPU column of the timing line, GPU statistics, -s and -S lines for CUDA."""
    with tempfile.TemporaryDirectory() as cwd:
        result = run_ok(tool, ["-a", adapter, "-i", "3", model], cwd)
        timings = [TIMING.match(line) for line in printed_lines(result) if TIMING.match(line)]
        expect(timings and all(t.group(3) for t in timings), "no GPU column in the timing line", result)
        result = run_ok(tool, ["-a", adapter, "-i", "3", "-v", "1", model], cwd)
        expect(any(line.startswith("GPU Timings (Hot)  : 2 samples") for line in printed_lines(result)),
               "-v 1: no GPU statistics", result)
        result = run_ok(tool, ["-s"], cwd)
        expect(re.search(r"^cuda:0 \(.+\), \d+\.\d GiB memory$", result.stdout, re.M), "-s lists no cuda:0 line", result)
        result = run_ok(tool, ["-S"], cwd)
        expect(re.search(r"^CUDA runtime \d+\.\d+$", result.stdout, re.M) and
               re.search(r"^CUDA driver \d+\.\d+$", result.stdout, re.M), "-S: no CUDA versions", result)


def load_cases():
    with open(os.path.join(BAD, "cases.json")) as f:
        return {case["name"]: case for case in json.load(f)}


def all_checks(tool):
    models = sorted(glob.glob(os.path.join(MODELS, "*.json")) + glob.glob(os.path.join(HERE, "good", "*.json")))
    checks = [(f"model {os.path.basename(m)}", lambda m=m: check_model(tool, m)) for m in models]
    checks += [(f"bad {name}", lambda c=c: check_bad(tool, c)) for name, c in load_cases().items()]
    checks.append(("timing", lambda: check_timing(tool, os.path.join(MODELS, "join_axis3.json"))))
    checks.append(("write_file", lambda: check_write_file(tool, os.path.join(HERE, "write_file.json"))))
    checks.append(("cli", lambda: check_cli(tool, os.path.join(MODELS, "join_axis3.json"))))
    return checks


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tool", required=True, help="the opendml-dispatch executable")
    parser.add_argument("--adapter", default="cpu", help="the device the `models` mode runs on")
    parser.add_argument("mode", choices=["model", "models", "bad", "timing", "write_file", "cli", "all"])
    parser.add_argument("target", nargs="?", help="a model file, or a case name for `bad`")
    options = parser.parse_args()
    tool = os.path.abspath(options.tool)
    if options.mode == "models":  # every bundled model on --adapter; exit 77 (skip) if it is absent
        with tempfile.TemporaryDirectory() as cwd:
            probe = run(tool, ["--adapter", options.adapter, os.path.join(MODELS, "join_axis3.json")], cwd)
        if probe.returncode != 0 and "cannot open" in probe.stderr:
            print(f"SKIP: {probe.stderr.strip()}")
            return 77
        models = sorted(glob.glob(os.path.join(MODELS, "*.json")))
        checks = [(f"model {os.path.basename(m)} on {options.adapter}",
                   lambda m=m: check_model(tool, m, options.adapter)) for m in models]
        if options.adapter.startswith("cuda"):
            checks.append(("CUDA lines", lambda: check_cuda_lines(tool, os.path.join(MODELS, "join_axis3.json"),
                                                                  options.adapter)))
    elif options.mode == "all":
        checks = all_checks(tool)
    elif options.mode == "bad":
        checks = [(f"bad {options.target}", lambda: check_bad(tool, load_cases()[options.target]))]
    else:
        run_check = {"model": check_model, "timing": check_timing, "write_file": check_write_file,
                     "cli": check_cli}[options.mode]
        model = os.path.abspath(options.target)
        checks = [(f"{options.mode} {os.path.basename(model)}", lambda: run_check(tool, model))]
    failed = 0
    for name, check in checks:
        try:
            check()
            print(f"PASS {name}")
        except Failure as failure:
            failed += 1
            print(f"FAIL {name}: {failure}")
    if len(checks) > 1:
        print(f"{len(checks) - failed} of {len(checks)} passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
