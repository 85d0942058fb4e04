"""Host time per jitted call of opendml.jax, beside a trivial jitted function, JAX's own operations
and a no-op FFI handler bound exactly as opendml.jax's handlers are (jax_noop_ffi.cpp), on inputs of
4 elements, so that the work itself is negligible and the figure is each layer's bookkeeping.

The no-op handler separates XLA's cost from opendml's: jit(x + 1) to the no-op is what XLA charges
for a custom call with a State and two results; the no-op to opendml.jax.nonzero is opendml's
(its handler, the library's execute, on CUDA the launch). On CUDA a second no-op also takes 4 KiB
from XLA's scratch allocator, as opendml.jax's nonzero takes its temporary region.

Each round times `--calls` calls of every case in turn, waiting for the last result only; the
rounds are interleaved so that a machine's drift touches every case alike. Printed per case: the
median and the least wall-clock time per call over the rounds, and the median process CPU time
per call (all threads: on a busy machine the wall clock also counts time spent descheduled).
The garbage collector is off while timing.

    python bench/python/bench_jax_host.py                  # JAX's default backend
    JAX_PLATFORMS=cpu python bench/python/bench_jax_host.py --rounds 21
"""

import argparse
import ctypes
import gc
import os
import statistics
import subprocess
import sys
import tempfile
import time

import jax
import jax.numpy as jnp
import numpy as np

import opendml.jax as oj

HERE = os.path.dirname(os.path.abspath(__file__))
CUDA_INCLUDE = "/usr/local/cuda/include"


def parse(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--calls", type=int, default=1000, help="calls per case and round")
    p.add_argument("--rounds", type=int, default=15, help="interleaved rounds")
    p.add_argument("--cxx", default=os.environ.get("CXX", "c++"), help="the C++ compiler for the no-op handlers")
    args = p.parse_args(argv)
    for name in ("calls", "rounds"):
        if getattr(args, name) < 1:
            p.error(f"--{name} must be at least 1")
    return args


def noop_targets(cxx, cuda):
    """Compiles and registers the no-op handlers; returns their target name for this platform."""
    folder = tempfile.mkdtemp(prefix="jax_noop_ffi_")
    library = os.path.join(folder, "libjax_noop_ffi.so")
    command = [cxx, "-std=c++17", "-O2", "-shared", "-fPIC", f"-I{jax.ffi.include_dir()}",
               os.path.join(HERE, "jax_noop_ffi.cpp"), "-o", library]
    if cuda:
        command[1:1] = ["-DWITH_CUDA", f"-I{CUDA_INCLUDE}"]
    built = subprocess.run(command, capture_output=True, text=True)  # jaxlib's headers warn: shown on failure
    if built.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{built.stderr}")
    lib = ctypes.CDLL(library)
    capsule = ctypes.pythonapi.PyCapsule_New
    capsule.restype, capsule.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

    def pointer(name):
        function = getattr(lib, name)
        function.restype = ctypes.c_void_p
        return capsule(function(), None, None)

    platform = "CUDA" if cuda else "cpu"
    state = {"type_id": pointer("noop_state_id"), "type_info": pointer("noop_state_info")}
    if hasattr(jax.ffi, "register_ffi_type"):
        jax.ffi.register_ffi_type("bench_noop_state", state, platform=platform)
    else:  # JAX before register_ffi_type took the type id alone
        jax.ffi.register_ffi_type_id("bench_noop_state", state["type_id"], platform=platform)
    stages = {"instantiate": pointer("noop_instantiate"), "execute": pointer("noop_cuda" if cuda else "noop_cpu")}
    jax.ffi.register_ffi_target("bench_noop", stages, platform=platform)
    return "bench_noop"


def cases(x, target, cuda):
    """{name: (jitted function, arguments)}, the first the baseline of the printed differences."""
    two = (jax.ShapeDtypeStruct((1,), np.uint32), jax.ShapeDtypeStruct((x.size, 1), np.uint32))

    def noop(scratch):  # the attributes opendml.jax passes; `axis` is the no-op's scratch bytes
        return jax.jit(lambda a: jax.ffi.ffi_call(target, two)(a, dml_type=np.int64(1), axis=np.int64(scratch),
                                                                batched=np.int64(0), fill=np.zeros(0, np.int64)))

    out = {
        "jit(x + 1)": jax.jit(lambda a: a + 1),
        "jit((x + 1, x * 2))": jax.jit(lambda a: (a + 1, a * 2)),
        "no-op FFI call, opendml's binding": noop(0),
    }
    if cuda:
        out["no-op FFI call + 4 KiB scratch"] = noop(4096)
    out.update({
        "opendml.jax.nonzero": jax.jit(oj.nonzero),
        "jnp.nonzero(size=n)": jax.jit(lambda a: jnp.nonzero(a, size=a.size)),
        "opendml.jax.argwhere(size=n)": jax.jit(lambda a: oj.argwhere(a, size=a.size)),
        "jnp.argwhere(size=n)": jax.jit(lambda a: jnp.argwhere(a, size=a.size)),
        "opendml.jax.concat 2 x (4,)": jax.jit(lambda a: oj.concat([a, a])),
        "jnp.concatenate 2 x (4,)": jax.jit(lambda a: jnp.concatenate([a, a])),
        "opendml.jax.split (4,) in 2": jax.jit(lambda a: oj.split(a, 2)),
        "jnp.split (4,) in 2": jax.jit(lambda a: jnp.split(a, 2)),
    })
    return out


def main(argv=None):
    args = parse(argv)
    device = jax.devices()[0]
    cuda = device.platform == "gpu"
    x = jax.device_put(np.array([1, 0, 2, 0], np.float32), device)
    functions = cases(x, noop_targets(args.cxx, cuda), cuda)
    for f in functions.values():  # compile, and warm every path up
        for _ in range(200):
            result = f(x)
        jax.block_until_ready(result)
    wall = {name: [] for name in functions}
    cpu = {name: [] for name in functions}
    gc.disable()
    try:
        for _ in range(args.rounds):
            for name, f in functions.items():
                start, start_cpu = time.perf_counter(), time.process_time()
                for _ in range(args.calls):
                    result = f(x)
                jax.block_until_ready(result)
                wall[name].append((time.perf_counter() - start) / args.calls * 1e6)
                cpu[name].append((time.process_time() - start_cpu) / args.calls * 1e6)
                del result
    finally:
        gc.enable()
    print(f"{device} ({device.device_kind}), jax {jax.__version__}, {args.rounds} rounds of {args.calls} calls")
    print(f"{'call':40s} {'wall median us':>15s} {'(+ first)':>10s} {'wall least':>11s} {'CPU median us':>14s}")
    first = statistics.median(next(iter(wall.values())))
    for name in functions:
        median = statistics.median(wall[name])
        print(f"{name:40s} {median:15.2f} {median - first:+10.2f} {min(wall[name]):11.2f} "
              f"{statistics.median(cpu[name]):14.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
