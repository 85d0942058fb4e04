"""opendml's CPU backend beside the CPU peers, in one run, on the same arrays:

  nonzero: opendml NONZERO_COORDINATES, np.argwhere, ONNX Runtime's NonZero
  join:    opendml JOIN, np.concatenate (into a preallocated output), ONNX Runtime's Concat
  split:   opendml SPLIT, np.split + a copy of each piece, ONNX Runtime's Split
  copy:    np.copyto of the same bytes (a single-threaded memcpy), the roofline of every case

Times are host wall-clock medians (after a warm-up run). Every result is checked against NumPy.
ONNX Runtime runs with as many intra-op threads as there are cores, its outputs bound in advance
where their shape is known (IOBinding). Results go to OUT/cpu_peers.json.

Needs numpy, onnx and onnxruntime:  python3 -m pip install numpy onnx onnxruntime

    python3 bench/peers/cpu_peers.py --lib build/src/libopendml.so --out build/peers [--quick]
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import opendml  # noqa: E402

MIB = 1 << 20


def cases(quick):
    f32 = "float32"
    if quick:
        return [common.nonzero_case("size", f32, 1 << 14, 2, 0.5), common.concat_case("join", "size", f32, MIB, 2),
                common.concat_case("split", "size", f32, MIB, 2)]
    out = [common.nonzero_case("size", f32, n, 2, 0.5) for n in (1 << 10, 1 << 14, 1 << 18, 1 << 22, 1 << 26)]
    out += [common.nonzero_case("density", f32, 1 << 24, 2, d) for d in (0.0, 0.01, 0.99)]
    out += [common.nonzero_case("density", f32, 1 << 24, 2, 0.0, "clustered"),
            common.nonzero_case("type", "uint8", 1 << 26, 2, 0.5),
            common.nonzero_case("type", "float16", 1 << 25, 2, 0.5),
            common.nonzero_case("rank", f32, 1 << 24, 1, 0.5), common.nonzero_case("rank", f32, 1 << 24, 4, 0.5)]
    for op in ("join", "split"):
        out += [common.concat_case(op, "size", f32, total, 2) for total in (4096, 64 << 10, MIB, 16 * MIB, 256 * MIB)]
        out += [common.concat_case(op, "slices", f32, 256 * MIB, 2, s) for s in (16, 256)]
        out.append(common.concat_case(op, "many", f32, 1000 * 4096, 1000))
    return out


def time_us(call, budget_s=1.0, min_runs=3, max_runs=50):
    """Median wall-clock microseconds of call(), after one warm-up call, with as many runs as fit
    in about budget_s."""
    start = time.perf_counter()
    call()
    estimate = time.perf_counter() - start
    runs = int(min(max(budget_s / max(estimate, 1e-6), min_runs), max_runs))
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1e6)
    return common.median(times), runs


def copy_us(nbytes):
    """The roofline: np.copyto (a memcpy) of nbytes."""
    source, target = common.random_bytes(nbytes, 0), np.empty(nbytes, np.uint8)
    return time_us(lambda: np.copyto(target, source))


# ---- Peers: each returns (call, outputs, format); outputs(result of call) gives NumPy arrays --------


def opendml_peer(device):
    def make(case, inputs):
        if case.op == "nonzero":
            descriptor = opendml.nonzero_coordinates(case.dtype, case.shapes[0])
            outputs = [common.aligned_empty((1,), "uint32"),
                       common.aligned_empty((case.elements, len(case.shapes[0])), "uint32")]
        elif case.op == "join":
            descriptor = opendml.join(case.dtype, case.shapes, case.whole_shape, case.axis)
            outputs = [common.aligned_empty(case.whole_shape, case.dtype)]
        else:
            descriptor = opendml.split(case.dtype, case.whole_shape, case.shapes, case.axis)
            outputs = [common.aligned_empty(s, case.dtype) for s in case.shapes]
        op = device.compile(descriptor)
        temporary = common.aligned_empty((op.temporary_size_in_bytes,), "uint8", 256)
        persistent = common.aligned_empty((op.persistent_size_in_bytes,), "uint8", 256)
        temporary = temporary if op.temporary_size_in_bytes else None
        persistent = persistent if op.persistent_size_in_bytes else None
        op.initialize(temporary, persistent)
        bindings = op.bind(inputs, outputs, temporary, persistent)
        make.implementation = op.implementation

        def results(_):
            if case.op == "nonzero":
                return [outputs[1][:int(outputs[0][0])]]
            return outputs

        fmt = "[count, N] uint32 + count" if case.op == "nonzero" else "preallocated outputs"
        return (lambda: op.execute(bindings)), results, fmt
    return make


def numpy_peer(case, inputs):
    if case.op == "nonzero":
        return (lambda: np.argwhere(inputs[0])), (lambda r: [r]), "[count, N] int64"
    if case.op == "join":
        out = np.empty(case.whole_shape, case.dtype)
        return (lambda: np.concatenate(inputs, axis=case.axis, out=out)), (lambda r: [r]), \
            "np.concatenate(out=preallocated)"
    outs = [np.empty(s, case.dtype) for s in case.shapes]
    bounds = np.cumsum(case.split_sizes)[:-1]

    def call():
        for out, piece in zip(outs, np.split(inputs[0], bounds, axis=case.axis)):
            np.copyto(out, piece)
        return outs
    return call, (lambda r: r), "np.split + np.copyto into preallocated pieces"


def onnxruntime_peer(case, inputs):
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper

    element = helper.np_dtype_to_tensor_dtype(np.dtype(case.dtype))
    extra_inits = []
    if case.op == "nonzero":
        names_in, names_out = ["x"], ["y"]
        node = helper.make_node("NonZero", names_in, names_out)
        out_infos = [helper.make_tensor_value_info("y", TensorProto.INT64, [len(case.shapes[0]), "count"])]
    elif case.op == "join":
        names_in, names_out = [f"x{i}" for i in range(len(inputs))], ["y"]
        node = helper.make_node("Concat", names_in, names_out, axis=case.axis)
        out_infos = [helper.make_tensor_value_info("y", element, case.whole_shape)]
    else:
        names_in, names_out = ["x"], [f"y{i}" for i in range(len(case.shapes))]
        extra_inits = [helper.make_tensor("sizes", TensorProto.INT64, [len(case.shapes)], case.split_sizes)]
        node = helper.make_node("Split", ["x", "sizes"], names_out, axis=case.axis)
        out_infos = [helper.make_tensor_value_info(n, element, s) for n, s in zip(names_out, case.shapes)]
    in_infos = [helper.make_tensor_value_info(n, element, list(x.shape)) for n, x in zip(names_in, inputs)]
    graph = helper.make_graph([node], case.op, in_infos, out_infos, initializer=extra_inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=9)
    onnx.checker.check_model(model)
    options = ort.SessionOptions()
    options.intra_op_num_threads = os.cpu_count()
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    binding = session.io_binding()
    for name, x in zip(names_in, inputs):
        binding.bind_cpu_input(name, x)
    if case.op == "nonzero":
        binding.bind_output("y", "cpu")
        fmt = "[N, count] int64"
        results = (lambda _: [binding.copy_outputs_to_cpu()[0].T])
    else:
        shapes = [case.whole_shape] if case.op == "join" else case.shapes
        outs = [np.empty(s, case.dtype) for s in shapes]
        for name, out in zip(names_out, outs):
            binding.bind_output(name, "cpu", 0, out.dtype, list(out.shape), out.ctypes.data)
        fmt = "outputs bound in advance"
        results = (lambda _: outs)
    return (lambda: session.run_with_iobinding(binding)), results, fmt


def run_case(case, peers, results, seed):
    if case.op == "nonzero":
        inputs = [common.aligned_empty(case.shapes[0], case.dtype)]
        inputs[0][...] = common.nonzero_data(case, seed)
        nonzeros = common.count_nonzero(inputs[0], case.dtype)
        nbytes = common.nonzero_bytes(case, nonzeros)
    else:
        pool = common.random_bytes(case.total_bytes, seed)
        inputs = []
        for x in common.concat_data(case, pool):
            inputs.append(common.aligned_empty(x.shape, case.dtype))
            inputs[-1][...] = x
        nonzeros, nbytes = None, common.concat_bytes(case)
    expected = common.reference(case, inputs)
    record = common.case_record(case, nbytes, nonzeros)
    results["cases"].append(record)

    median, runs = copy_us(nbytes // 2)
    record["peers"]["copy"] = {"time_us": median, "runs": runs, "method": "wall", "format": "np.copyto",
                               "checked": False}
    for name, make in peers.items():
        try:
            call, outputs, fmt = make(case, inputs)
            mismatch = common.compare(expected, outputs(call()), coordinates=case.op == "nonzero")
            median, runs = time_us(call)
            entry = {"time_us": median, "runs": runs, "method": "wall", "format": fmt, "checked": True,
                     "correct": mismatch is None}
            if mismatch:
                entry["mismatch"] = mismatch
            if hasattr(make, "implementation"):
                entry["implementation"] = make.implementation
        except Exception as e:  # a peer that cannot run this case is reported, and the run goes on
            entry = {"error": f"{type(e).__name__}: {e}"[:500]}
        record["peers"][name] = entry
    copy = record["peers"]["copy"]["time_us"]
    mine = record["peers"].get("opendml", {}).get("time_us")
    print(f"{case.name:60s} copy {copy:10.1f} us  opendml {mine or float('nan'):10.1f} us", flush=True)


def versions():
    out = {}
    for module in ("onnx", "onnxruntime"):
        try:
            out[module] = __import__(module).__version__
        except ImportError as e:
            out[module] = f"missing: {e}"
    try:
        with open("/proc/cpuinfo") as f:
            out["cpu"] = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    out["cores"] = os.cpu_count()
    # OpenMP's idle threads spin by default; on a loaded machine a team member that lost its core
    # can hold a call up for a scheduler tick (ms), so runs there may set this to "passive".
    out["OMP_WAIT_POLICY"] = os.environ.get("OMP_WAIT_POLICY", "(unset)")
    out["load_average_at_start"] = os.getloadavg()[0]
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lib", default=os.environ.get("OPENDML_LIBRARY", "build/src/libopendml.so"))
    parser.add_argument("--out", default=os.environ.get("OUT", "build/peers"))
    parser.add_argument("--quick", action="store_true", help="three small cases, to check the script")
    parser.add_argument("--filter", default="", help="only cases whose name contains this")
    args = parser.parse_args()

    try:
        device = opendml.Device(opendml.load(args.lib), "cpu")
    except (OSError, AttributeError, opendml.OpendmlError) as e:  # no such file, not opendml's library
        parser.error(f"--lib {args.lib}: cannot load opendml's CPU device: {type(e).__name__}: {e}")
    results = common.new_results("cpu", device.name, versions(), notes=[
        "Times are host wall-clock medians; the copy is np.copyto of half the case's bytes (one thread), so "
        "'of copy' = copy time / time.",
        "NumPy is single-threaded; opendml uses every core (OpenMP); ONNX Runtime uses intra_op_num_threads = cores.",
        "Inputs are not rotated: small cases run from the CPU caches, for every peer and for the copy alike."])
    peak_us, _ = copy_us(256 * MIB)
    results["copy_peak_gbps"] = 2 * 256 * MIB / (peak_us * 1e3)
    print(f"opendml device: {device.name}; copy of 256 MiB: {peak_us:.0f} us, "
          f"{results['copy_peak_gbps']:.1f} GB/s read + written", flush=True)

    peers = {"opendml": opendml_peer(device), "numpy": numpy_peer, "onnxruntime": onnxruntime_peer}
    path = os.path.join(args.out, "cpu_peers.json")
    for seed, case in enumerate(cases(args.quick)):
        if args.filter in case.name:
            run_case(case, peers, results, seed + 1)
            common.save(results, path)
    results["versions"]["load_average_at_end"] = os.getloadavg()[0]
    if max(results["versions"]["load_average_at_start"], os.getloadavg()[0]) > 0.5:
        results["notes"].append("Other processes were running (load average above 0.5): times may be inflated.")
    common.save(results, path)
    print(common.summary(results))
    print(f"\nresults: {path}")


if __name__ == "__main__":
    main()
