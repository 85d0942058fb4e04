"""opendml's CUDA backend beside the GPU peers: one process, one GPU, the same input tensors.

  nonzero: opendml NONZERO_COORDINATES, torch.nonzero, torch.nonzero_static, cupy.argwhere,
           jax.jit(jnp.argwhere(size=n)), and a CUB harness (cub_nonzero.cu)
  join:    opendml JOIN, torch.cat, cupy.concatenate, jax.jit(jnp.concatenate)
  split:   opendml SPLIT, torch.split + .contiguous(), aten.split_with_sizes_copy,
           cupy.split + ascontiguousarray, jax.jit(jnp.split)
  and, under jax.jit beside JAX's own, the Python package's opendml.jax (nonzero, argwhere(size=n),
  concat, split), where it is installed with its FFI handlers
  copy:    torch copy_ of the same bytes, the roofline of every case

Inputs are torch tensors; CuPy sees them through __cuda_array_interface__, JAX through DLPack,
opendml and CUB through their addresses. opendml, CUB, torch and CuPy run on torch's current
stream and are timed with CUDA events around each call, median of many runs after a warm-up, in
two ways: time_us, with the GPU kept busy (a spin kernel) while the host issues the call, so that
the figure is the device's time plus whatever synchronisation the API forces (torch.nonzero and
cupy.argwhere wait for the count); and call_us, the call on an idle GPU, host overhead included.
JAX runs on its own streams, so its time_us is the device time that JAX's profiler records: one
trace per JAX peer and case, each call inside its own annotation and waited for before the next,
and per call the time from its first GPU event's start to its last GPU event's end (kernels and
copies), median over the calls (a trace without GPU events, as with --simulate, leaves the
wall-clock figure below as time_us, and the record's method says why). wall_us is the wall-clock
time of a batch of calls, per call (host dispatch included), and call_us one call and
block_until_ready. Inputs rotate over copies that together exceed 2.5 times
the L2 cache (for inputs of at least L2/200 bytes: smaller ones stay in L2 for every peer). Right
before each peer's timed calls, the copies those calls will read are read once in the order of the
calls (Inputs.touch), so that every peer starts from the same L2 state: where the calls' copies fit
in L2, every peer reads them from L2, and where they do not, from memory. Without it, a peer timed
right after another found the copies that peer had just read in L2, while the first found them as
the case's set-up had left them.
Every peer's result is compared with NumPy's on the GPU (inputs up to --check-mib); a peer that
fails or disagrees is recorded as such and the run goes on.

    python3 bench/peers/gpu_peers.py --lib build/peers/opendml/src/libopendml.so \
        --cub build/peers/libcub_nonzero.so --out "$OUT"
    python3 bench/peers/gpu_peers.py --dry-run    # imports and the case list, no GPU needed
    python3 bench/peers/gpu_peers.py --simulate --quick   # every peer on the CPU (torch, JAX, opendml)

Results: OUT/gpu_peers.json (written after every case), then a summary table.
"""

import argparse
import bisect
import ctypes
import gc
import glob
import gzip
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Callable

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # JAX must leave memory to torch

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import opendml  # noqa: E402

MIB = 1 << 20
MAX_ROTATIONS = 512
PAGE = 4096
BUILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "peers")  # run.sh's builds


def cases(quick):
    """The case list, most important first: a run out of time drops the last ones."""
    f32, f16, u8 = "float32", "float16", "uint8"
    nz, cat = common.nonzero_case, common.concat_case
    if quick:
        return [nz("special", f32, 1 << 10, 2, 0, "special"), nz("size", f32, 1 << 20, 2, 0.5),
                cat("join", "slices", f32, 16 * MIB, 2, 16), cat("split", "slices", f32, 16 * MIB, 2, 16),
                cat("join", "many", f32, 1000 * 4096, 1000), cat("split", "many", f32, 1000 * 4096, 1000)]
    out = [nz("special", f32, 1 << 10, 2, 0, "special"), nz("special", f16, 1 << 10, 2, 0, "special")]
    out += [nz("size", f32, 1 << k, 2, 0.5) for k in (10, 14, 17, 20, 22, 24, 26, 28)]
    for op in ("join", "split"):
        out += [cat(op, "slices", f32, 256 * MIB, 2, s) for s in (4, 8, 16, 64, 256)]
        out += [cat(op, "many", f32, 1000 * 4096, 1000), cat(op, "slices", f32, 256 * MIB, 8, 4)]
    out += [nz("type", t, 1 << k, 2, 0.5) for t in (f16, u8) for k in (24, 26)]
    out += [nz("density", f32, 1 << 24, 2, d) for d in (0.0, 0.001, 0.01, 0.99, 1.0)]
    out += [nz("density", f32, 1 << 24, 2, 0.0, "clustered")]
    out += [nz("rank", f32, 1 << 24, r, 0.5) for r in (1, 4, 8)]
    for op in ("join", "split"):
        out += [cat(op, "size", f32, 4 << k, 2) for k in (10, 14, 17, 20, 22, 24, 26, 28)]
        out += [cat(op, "type", t, 256 * MIB, 2, s) for t in (u8, f16) for s in (4, 16)]
    # Attention's fused QKV projection split into Q, K and V along its inner axis, and joined back, at
    # decode-sized batches of 32 and 256 tokens (hidden size 4096): a few pieces of wide rows.
    out += [cat(op, "wide", f16, 3 * rows * 8192, 3, 8192) for op in ("join", "split") for rows in (32, 256)]
    return out


# ---- The environment: frameworks, clocks ------------------------------------------------------------


# Each framework is first tried in a child process, with torch beside it as here: one that crashes
# (a CUDA library clash, say) is left out instead of taking the benchmark down with it.
PROBES = {
    "torch": "import torch; x = torch.ones(4, device='cuda'); torch.cuda.synchronize()",
    "cupy": "import torch, cupy; x = torch.ones(4, device='cuda'); assert float(cupy.asarray(x).sum()) == 4",
    "jax": "import os; os.environ['XLA_PYTHON_CLIENT_PREALLOCATE'] = 'false'; import torch, jax, jax.dlpack; "
           "x = torch.ones(4, device='cuda'); torch.cuda.synchronize(); "
           "assert float(jax.dlpack.from_dlpack(x).sum()) == 4",
}


def import_opendml_jax():
    """The Python package's opendml.jax (docs/python.md). This directory's opendml.py, the ctypes
    binding, holds the name opendml here: the package is imported with the binding set aside, which
    is then put back (the package's modules keep their own reference to the package)."""
    here = os.path.dirname(os.path.abspath(__file__))
    binding, path = sys.modules.pop("opendml"), sys.path[:]
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    try:
        import opendml.jax as module  # noqa: F811
        return module
    finally:
        sys.path[:] = path
        sys.modules["opendml"] = binding


def probe_frameworks(timeout_s=150):
    """{name: why it failed} for the frameworks whose probe failed."""
    children = {name: subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       text=True) for name, code in PROBES.items()}
    failed = {}
    for name, child in children.items():
        try:
            _, err = child.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            child.kill()
            failed[name] = f"its probe did not finish in {timeout_s} s"
            continue
        if child.returncode != 0:
            last = (err.strip().splitlines() or ["no message"])[-1]
            failed[name] = f"its probe failed (exit status {child.returncode}): {last}"[:300]
    return failed


def import_frameworks(skip=()):
    """{name: module or None}, {name: why it is missing}."""
    modules, missing = {}, dict(skip)
    for name in ("torch", "cupy", "jax"):
        modules[name] = None
        if name in missing:
            continue
        try:
            modules[name] = __import__(name)
            if name == "jax":
                import jax.dlpack  # noqa: F401
                import jax.numpy
                modules["jnp"] = jax.numpy
        except Exception as e:  # ImportError, or a broken CUDA install
            modules[name], missing[name] = None, f"{type(e).__name__}: {e}"[:300]
    return modules, missing


class CudaClock:
    """CUDA events on torch's current stream; a spin kernel keeps the GPU busy ahead of a call."""

    def __init__(self, torch):
        self.torch = torch
        self.handle = torch.cuda.current_stream().cuda_stream
        self.start, self.end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        self.cycles_per_us = None
        sleep = getattr(torch.cuda, "_sleep", None)
        if sleep is not None:
            sleep(1000)
            self.start.record()
            sleep(2_000_000)
            self.end.record()
            self.end.synchronize()
            self.cycles_per_us = 2_000_000 / (self.start.elapsed_time(self.end) * 1e3)

    def sync(self):
        self.torch.cuda.synchronize()

    def time_us(self, call, i, preroll_us=0):
        if preroll_us and self.cycles_per_us:
            self.torch.cuda._sleep(int(preroll_us * self.cycles_per_us))
        self.start.record()
        result = call(i)
        self.end.record()
        self.end.synchronize()
        del result
        return self.start.elapsed_time(self.end) * 1e3


class WallClock:
    """--simulate: everything runs on the CPU, timed by the host's clock."""

    handle, cycles_per_us = None, None

    def sync(self):
        pass

    def time_us(self, call, i, preroll_us=0):
        start = time.perf_counter()
        result = call(i)
        del result
        return (time.perf_counter() - start) * 1e6


@dataclass
class Env:
    torch: Any
    cupy: Any
    jax: Any
    jnp: Any
    device: str  # torch's: "cuda" or "cpu" (--simulate)
    clock: Any
    odml: Any  # opendml.Device
    cub: Any  # the CUB harness (ctypes.CDLL) or None
    missing: dict  # peer family -> why it cannot run
    l2_bytes: int
    budget_s: float  # per peer and timing loop
    odml_jax: Any = None  # the Python package's opendml.jax


def rotations(env, nbytes):
    """How many copies of an input of nbytes the runs rotate over."""
    return max(1, min(MAX_ROTATIONS, math.ceil(2.5 * env.l2_bytes / max(nbytes, 1))))


# ---- Inputs ---------------------------------------------------------------------------------------------


class Inputs:
    """One case's inputs, `rotations` copies on the device: .torch[r] is copy r's list of tensors;
    .cupy and .jax are the same memory seen by those frameworks (made on first use)."""

    def __init__(self, env, host_arrays, count):
        torch = env.torch
        offsets, total = [], 0
        for a in host_arrays:
            offsets.append(total)
            total += (a.nbytes + 255) // 256 * 256
        flat = np.zeros(total, np.uint8)
        for a, offset in zip(host_arrays, offsets):
            flat[offset:offset + a.nbytes] = np.ascontiguousarray(a).reshape(-1).view(np.uint8)
        first = torch.from_numpy(flat).to(env.device)
        buffers = [first] + [first.clone() for _ in range(count - 1)]
        dtype = getattr(torch, str(host_arrays[0].dtype))
        self.torch = [[b[o:o + a.nbytes].view(dtype).view(a.shape) for a, o in zip(host_arrays, offsets)]
                      for b in buffers]
        self.buffers, self.count, self.nbytes, self._env, self._cupy, self._jax = buffers, count, total, env, None, None
        env.clock.sync()

    def touch(self, calls):
        """Reads the copies that calls 0..calls-1 read, in that order (see the module's docstring)."""
        touch_buffers(self._env, self.buffers, calls)

    @property
    def cupy(self):
        if self._cupy is None:
            self._cupy = [[self._env.cupy.asarray(t) for t in rotation] for rotation in self.torch]
        return self._cupy

    @property
    def jax(self):
        if self._jax is None:
            self._jax = [[jax_array(self._env, t) for t in rotation] for rotation in self.torch]
        return self._jax


def touch_buffers(env, buffers, calls):
    """Reads buffers[i % len(buffers)] for i < calls, each once, in that order, and waits."""
    for buffer in buffers[:min(calls, len(buffers))]:
        buffer.max()  # a reduction: reads every byte, writes one
    env.clock.sync()


def jax_array(env, tensor):
    """The tensor's memory as a JAX array (DLPack, no copy; a copy through the host if that fails)."""
    try:
        return env.jax.dlpack.from_dlpack(tensor)
    except Exception:
        return env.jax.device_put(tensor.cpu().numpy())


def as_torch(env, x):
    if isinstance(x, env.torch.Tensor):
        return x
    try:
        return env.torch.from_dlpack(x)
    except Exception:
        return env.torch.as_tensor(np.asarray(x), device=env.device)


# ---- Peers: make(env, case, inputs) -> Peer ------------------------------------------------------------


@dataclass
class Peer:
    call: Callable[[int], Any]  # call(i) runs on rotation i and returns its output
    outputs: Callable[[Any], list]  # the output of a call as a list of arrays, for the check
    format: str
    batched: bool = False  # JAX: timed by its profiler's trace (measure)
    padded: bool = False  # coordinates padded past the count with filler rows
    implementation: str = None
    touch: Callable[[int], None] = None  # reads what calls 0..n-1 read, in order (default: Inputs.touch)


def torch_dtype(env, case):
    return getattr(env.torch, case.dtype)


def opendml_peer(env, case, inputs):
    torch = env.torch
    if case.op == "nonzero":
        descriptor = opendml.nonzero_coordinates(case.dtype, case.shapes[0])
        count = torch.zeros(1, dtype=torch.int32, device=env.device)
        coordinates = torch.empty((case.elements, len(case.shapes[0])), dtype=torch.int32, device=env.device)
        outputs = [count, coordinates]
        results = (lambda _: [coordinates[:int(count.item())]])
        fmt = "[count, N] uint32, count on the device"
    else:
        shapes = [case.whole_shape] if case.op == "join" else case.shapes
        outputs = [torch.empty(s, dtype=torch_dtype(env, case), device=env.device) for s in shapes]
        if case.op == "join":
            descriptor = opendml.join(case.dtype, case.shapes, case.whole_shape, case.axis)
        else:
            descriptor = opendml.split(case.dtype, case.whole_shape, case.shapes, case.axis)
        results = (lambda _: outputs)
        fmt = "preallocated outputs"
    op = env.odml.compile(descriptor)

    def region(size):
        return torch.empty(size, dtype=torch.uint8, device=env.device) if size else None

    temporary, persistent = region(op.temporary_size_in_bytes), region(op.persistent_size_in_bytes)
    op.initialize(temporary, persistent, env.clock.handle)
    bindings = [op.bind(rotation, outputs, temporary, persistent) for rotation in inputs.torch]
    handle, rotation_count = env.clock.handle, inputs.count
    return Peer(lambda i: op.execute(bindings[i % rotation_count], handle), results, fmt,
                implementation=op.implementation)


def copy_size(nbytes):
    """The copy a case that moves nbytes is divided by: half of them, so that it reads and writes as
    many, in whole 16-byte vectors, and from 1 MiB in whole 4 KiB pages: on an H100, torch's copy_ of
    4 MiB to 64 MiB took 2.3-3.0 us longer for any byte count that is not a multiple of 4096, 16
    bytes over one included (bench/NOTES.md, "The copy question decided"; at 256 MiB + 4 KiB it was
    still 3 us slower than 256 MiB, a granularity not yet probed)."""
    half = nbytes // 2
    return half // PAGE * PAGE if half >= MIB else max(16, half // 16 * 16)


COPY_FORMAT = "copy_ of {} bytes"  # the copy peer's format: copied_bytes reads it back


def copied_bytes(record):
    """The bytes a results record's copy moved, as its run recorded them: runs before whole pages
    copied other counts than copy_size gives now."""
    return int(record["peers"]["copy"]["format"].split()[2])


def copy_peer(env, nbytes):
    """torch copy_ of nbytes, the sources rotated like the inputs."""
    torch = env.torch
    count = rotations(env, nbytes)
    sources = [torch.empty(nbytes, dtype=torch.uint8, device=env.device) for _ in range(count)]
    target = torch.empty(nbytes, dtype=torch.uint8, device=env.device)
    return Peer(lambda i: target.copy_(sources[i % count]), None, COPY_FORMAT.format(nbytes),
                touch=lambda calls: touch_buffers(env, sources, calls))


def torch_nonzero(env, case, inputs):
    xs, count = [r[0] for r in inputs.torch], inputs.count
    return Peer(lambda i: env.torch.nonzero(xs[i % count]), lambda r: [r], "[count, N] int64; waits for the count")


def torch_nonzero_static(env, case, inputs):
    xs, count, n = [r[0] for r in inputs.torch], inputs.count, case.elements
    return Peer(lambda i: env.torch.nonzero_static(xs[i % count], size=n), lambda r: [r],
                "[n, N] int64 padded with -1 rows", padded=True)


def cupy_argwhere(env, case, inputs):
    xs, count = [r[0] for r in inputs.cupy], inputs.count
    return Peer(lambda i: env.cupy.argwhere(xs[i % count]), lambda r: [r], "[count, N] int64; waits for the count")


def jax_argwhere(env, case, inputs):
    jnp, n = env.jnp, case.elements
    function = env.jax.jit(lambda a: jnp.argwhere(a, size=n))
    xs, count = [r[0] for r in inputs.jax], inputs.count
    return Peer(lambda i: function(xs[i % count]), lambda r: [r], "[n, N] int32 padded with 0 rows (size=n)",
                batched=True, padded=True)


def cub_nonzero(env, case, inputs):
    if env.cub is None:
        raise RuntimeError(env.missing.get("cub", "the CUB harness is not loaded"))
    torch, lib, n, rank = env.torch, env.cub, case.elements, len(case.shapes[0])
    size = common.element_bytes(case.dtype)
    temp_bytes = ctypes.c_uint64()
    check_cub(lib, lib.cub_nonzero_temp_bytes(n, size, ctypes.byref(temp_bytes)))
    temporary = torch.empty(temp_bytes.value, dtype=torch.uint8, device=env.device)
    count = torch.zeros(1, dtype=torch.int32, device=env.device)
    coordinates = torch.empty((n, rank), dtype=torch.int32, device=env.device)
    sizes = (ctypes.c_uint32 * rank)(*case.shapes[0])
    mask = common.BITS[case.dtype][1]
    addresses, rotation_count, handle = [r[0].data_ptr() for r in inputs.torch], inputs.count, env.clock.handle
    fixed = (temporary.data_ptr(), temp_bytes.value, count.data_ptr(), coordinates.data_ptr(), handle)

    def call(i):
        check_cub(lib, lib.cub_nonzero(addresses[i % rotation_count], n, size, mask, rank, sizes, *fixed))

    return Peer(call, lambda _: [coordinates[:int(count.item())]],
                "[count, N] uint32, count on the device (DeviceSelect::FlaggedIf + unravel)")


def check_cub(lib, error):
    if error != 0:
        raise RuntimeError(f"CUB harness: {lib.cub_nonzero_error_string(error).decode()}")


def odml_jax_nonzero(env, case, inputs):
    function = env.jax.jit(env.odml_jax.nonzero)
    xs, count = [r[0] for r in inputs.jax], inputs.count
    return Peer(lambda i: function(xs[i % count]), lambda r: [r[0][:int(r[1][0])]],
                "[n, N] uint32 (rows past count unspecified), count on the device", batched=True)


def odml_jax_argwhere(env, case, inputs):
    n = case.elements
    function = env.jax.jit(lambda a: env.odml_jax.argwhere(a, size=n))
    xs, count = [r[0] for r in inputs.jax], inputs.count
    return Peer(lambda i: function(xs[i % count]), lambda r: [r], "[n, N] int32 padded with 0 rows (size=n)",
                batched=True, padded=True)


def odml_jax_concat(env, case, inputs):
    function = env.jax.jit(lambda *a: env.odml_jax.concat(a, axis=case.axis))
    pieces, count = inputs.jax, inputs.count
    return Peer(lambda i: function(*pieces[i % count]), lambda r: [r], "new array", batched=True)


def odml_jax_split(env, case, inputs):
    bounds = np.cumsum(case.split_sizes)[:-1].tolist()
    function = env.jax.jit(lambda a: env.odml_jax.split(a, bounds, axis=case.axis))
    xs, count = [r[0] for r in inputs.jax], inputs.count
    return Peer(lambda i: function(xs[i % count]), lambda r: list(r), "new arrays", batched=True)


def torch_cat(env, case, inputs):
    pieces, count = inputs.torch, inputs.count
    return Peer(lambda i: env.torch.cat(pieces[i % count], dim=case.axis), lambda r: [r], "new tensor")


def cupy_concatenate(env, case, inputs):
    pieces, count = inputs.cupy, inputs.count
    return Peer(lambda i: env.cupy.concatenate(pieces[i % count], axis=case.axis), lambda r: [r], "new array")


def jax_concatenate(env, case, inputs):
    function = env.jax.jit(lambda *a: env.jnp.concatenate(a, axis=case.axis))
    pieces, count = inputs.jax, inputs.count
    return Peer(lambda i: function(*pieces[i % count]), lambda r: [r], "new array", batched=True)


def torch_split_contiguous(env, case, inputs):
    xs, count, sizes = [r[0] for r in inputs.torch], inputs.count, case.split_sizes
    return Peer(lambda i: [p.contiguous() for p in env.torch.split(xs[i % count], sizes, dim=case.axis)],
                lambda r: r, "new tensors; views where a piece is already contiguous (no copy)")


def torch_split_with_sizes_copy(env, case, inputs):
    xs, count, sizes = [r[0] for r in inputs.torch], inputs.count, case.split_sizes
    function = env.torch.ops.aten.split_with_sizes_copy
    return Peer(lambda i: function(xs[i % count], sizes, case.axis), lambda r: list(r), "new tensors")


def cupy_split(env, case, inputs):
    xs, count = [r[0] for r in inputs.cupy], inputs.count
    bounds = np.cumsum(case.split_sizes)[:-1].tolist()
    cp = env.cupy
    return Peer(lambda i: [cp.ascontiguousarray(p) for p in cp.split(xs[i % count], bounds, axis=case.axis)],
                lambda r: r, "new arrays; views where a piece is already contiguous (no copy)")


def jax_split(env, case, inputs):
    bounds = np.cumsum(case.split_sizes)[:-1].tolist()
    function = env.jax.jit(lambda a: env.jnp.split(a, bounds, axis=case.axis))
    xs, count = [r[0] for r in inputs.jax], inputs.count
    return Peer(lambda i: function(xs[i % count]), lambda r: list(r), "new arrays", batched=True)


PEERS = {
    "nonzero": {"opendml": opendml_peer, "torch.nonzero": torch_nonzero, "torch.nonzero_static": torch_nonzero_static,
                "cupy.argwhere": cupy_argwhere, "jax.argwhere": jax_argwhere, "cub": cub_nonzero,
                "opendml.jax.nonzero": odml_jax_nonzero, "opendml.jax.argwhere": odml_jax_argwhere},
    "join": {"opendml": opendml_peer, "torch.cat": torch_cat, "cupy.concatenate": cupy_concatenate,
             "jax.concatenate": jax_concatenate, "opendml.jax.concat": odml_jax_concat},
    "split": {"opendml": opendml_peer, "torch.split+contiguous": torch_split_contiguous,
              "torch.split_with_sizes_copy": torch_split_with_sizes_copy, "cupy.split+ascontiguousarray": cupy_split,
              "jax.split": jax_split, "opendml.jax.split": odml_jax_split},
}


def family(peer_name):
    """The package a peer needs: "torch" for "torch.cat", "opendml.jax" for its rows."""
    return "opendml.jax" if peer_name.startswith("opendml.jax.") else peer_name.split(".")[0]


# ---- Measuring ---------------------------------------------------------------------------------------------


def clamp(value, low, high):
    return int(max(low, min(high, value)))


def measure(env, peer, touch):
    """{time_us, call_us, host_us, runs, method} (JAX peers: also wall_us, and traced_calls or
    trace_error): see the module's docstring. touch(n) reads what calls 0..n-1 read, in order."""
    clock = env.clock
    wall = []
    for i in range(3):  # warm-up
        start = time.perf_counter()
        result = peer.call(i)
        block(env, peer, result)
        wall.append((time.perf_counter() - start) * 1e6)
        del result
    estimate = common.median(wall)
    host = []
    for i in range(5):  # the host's time in the call itself (launches; syncs for some peers)
        clock.sync()
        start = time.perf_counter()
        result = peer.call(i)
        host.append((time.perf_counter() - start) * 1e6)
        block(env, peer, result)
        del result
    host_us = common.median(host)
    budget_us = env.budget_s * 1e6
    extra = {}
    if peer.batched:
        batch = clamp(1000 / estimate, 1, 32)
        runs = clamp(budget_us / (batch * estimate), 5, 50)
        times = []
        touch(runs * batch)
        for r in range(runs):
            start = time.perf_counter()
            results = [peer.call(r * batch + j) for j in range(batch)]
            block(env, peer, results)
            times.append((time.perf_counter() - start) * 1e6 / batch)
            del results
        extra["wall_us"] = common.median(times)
        method = f"wall clock, batches of {batch}"
        traced_count = clamp(budget_us / estimate, 10, 100)
        touch(traced_count)
        traced, facts = jax_device_times(env, peer, traced_count)
        extra.update(facts)
        if traced:
            times, runs = traced, len(traced)
            method = "device time from JAX's profiler trace: each call's first GPU event to its last"
        else:  # the CPU (--simulate), or a profiler that failed: the wall clock stands
            method += f" ({facts['trace_error']})"
    else:
        preroll = min(2 * host_us + 20, 2000) if clock.cycles_per_us else 0
        runs = clamp(budget_us / (estimate + preroll + 30), 10, 200)
        touch(runs)
        times = [clock.time_us(peer.call, i, preroll) for i in range(runs)]
        method = "events, GPU busy ahead of the call" if preroll else "events" if clock.handle is not None else "wall"
    calls, idle_runs = [], clamp(runs / 3, 5, 50)
    touch(idle_runs)
    for i in range(idle_runs):
        if peer.batched:
            start = time.perf_counter()
            block(env, peer, peer.call(i))
            calls.append((time.perf_counter() - start) * 1e6)
        else:
            calls.append(clock.time_us(peer.call, i))
    return {"time_us": common.median(times), "call_us": common.median(calls), "host_us": host_us, "runs": runs,
            "method": method, **extra}


def block(env, peer, result):
    if peer.batched:
        env.jax.block_until_ready(result)
    else:
        env.clock.sync()


# The name of the profiler annotation around call k of a JAX peer.
CALL_ANNOTATION = "gpu_peers call {}"


def jax_device_times(env, peer, count):
    """The device time of `count` calls of a JAX peer (microseconds, for the calls that had GPU
    events), and facts for the record: traced_calls, gpu_events_outside_calls and trace_s (the
    trace's cost), or trace_error (why there are no times). One trace of JAX's profiler covers the
    calls; each call runs inside its own annotation and is waited for before the next starts, so
    that the GPU work of call k lies inside annotation k (device_spans_us)."""
    jax = env.jax
    names = [CALL_ANNOTATION.format(k) for k in range(count)]
    folder = tempfile.mkdtemp(prefix="gpu_peers_trace_")
    started = time.perf_counter()
    try:
        options = jax.profiler.ProfileOptions()
        options.python_tracer_level = 0  # Python's own calls, and the HLO of every module: not needed
        options.enable_hlo_proto = False
        jax.profiler.start_trace(folder, create_perfetto_trace=True, profiler_options=options)
        try:
            for k, name in enumerate(names):
                with jax.profiler.TraceAnnotation(name):
                    block(env, peer, peer.call(k))
        finally:
            jax.profiler.stop_trace()
        path = next(iter(glob.glob(os.path.join(folder, "**", "*perfetto_trace.json.gz"), recursive=True)), None)
        if path is None:
            return [], {"trace_error": "the profiler wrote no perfetto_trace.json.gz"}
        with gzip.open(path, "rt") as f:
            trace = json.load(f)
    except Exception as e:  # a profiler that cannot start here (or one already running): the wall clock stands
        return [], {"trace_error": f"JAX's profiler failed: {type(e).__name__}: {e}"[:300]}
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    spans, outside = device_spans_us(trace, names)
    spans = [s for s in spans if s is not None]
    if not spans:
        wanted = set(names)
        found = sum(1 for e in trace.get("traceEvents", []) if e.get("name") in wanted)
        return [], {"trace_error": f"the profiler's trace has no GPU events in the calls ({found} of {count} "
                    f"calls' annotations found, {outside} GPU events outside them)"}
    return spans, {"traced_calls": len(spans), "gpu_events_outside_calls": outside,
                   "trace_s": round(time.perf_counter() - started, 3)}


def device_spans_us(trace, names):
    """For each annotation in `names`, the time in microseconds from the first GPU event's start to the
    last GPU event's end among the GPU events inside that annotation's span, or None where none is;
    and how many GPU events lie inside no annotation.

    trace: a Chrome trace as JAX's profiler writes it ({"traceEvents": [...]}, times in us): process
    names in "M" events (the GPU's contain "/device:GPU:"), complete events ("X") with ts and dur;
    the annotations are complete events of the host, the GPU's kernels and copies those of the GPU's
    processes. A GPU event belongs to the annotation whose span holds it whole: the caller waits for
    each call's results inside its annotation, so no call's GPU work starts before its annotation
    does or ends after it ends."""
    events = trace.get("traceEvents", [])
    gpu = {e.get("pid") for e in events if e.get("ph") == "M" and e.get("name") == "process_name"
           and "/device:GPU:" in str(e.get("args", {}).get("name"))}
    index = {name: k for k, name in enumerate(names)}
    windows = []  # (start, end, k), sorted by start
    for e in events:
        if e.get("ph") == "X" and e.get("pid") not in gpu and e.get("name") in index:
            windows.append((float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0)), index[e["name"]]))
    windows.sort()
    starts = [w[0] for w in windows]
    first, last, outside = [None] * len(names), [None] * len(names), 0
    for e in events:
        if e.get("ph") != "X" or e.get("pid") not in gpu:
            continue
        begin = float(e["ts"])
        end = begin + float(e.get("dur", 0))
        w = bisect.bisect_right(starts, begin) - 1
        if w < 0 or end > windows[w][1]:
            outside += 1  # not one of the calls' (or host and GPU clocks that disagree)
            continue
        k = windows[w][2]
        first[k] = begin if first[k] is None else min(first[k], begin)
        last[k] = end if last[k] is None else max(last[k], end)
    return [None if a is None else b - a for a, b in zip(first, last)], outside


def check(env, case, peer, expected):
    """None when the peer's output equals NumPy's (expected: torch tensors on the device)."""
    torch = env.torch
    got = [as_torch(env, g) for g in peer.outputs(peer.call(0))]
    env.clock.sync()
    if len(got) != len(expected):
        return f"{len(got)} outputs, expected {len(expected)}"
    for k, (e, g) in enumerate(zip(expected, got)):
        if case.op == "nonzero":
            rows_ok = g.shape[0] >= e.shape[0] if peer.padded else g.shape[0] == e.shape[0]
            if g.dim() != 2 or g.shape[1] != e.shape[1] or not rows_ok:
                return f"coordinates of shape {list(g.shape)}, expected {list(e.shape)}"
            g = g[:e.shape[0]].to(torch.int64)
            if not torch.equal(g, e):
                row = int((g != e).any(dim=1).nonzero()[0, 0])
                return f"row {row} is {g[row].tolist()}, expected {e[row].tolist()}"
        else:
            if list(g.shape) != list(e.shape) or g.element_size() != e.element_size():
                return f"output {k}: {g.dtype}{list(g.shape)}, expected {e.dtype}{list(e.shape)}"
            if not torch.equal(g.contiguous().view(torch.uint8), e.view(torch.uint8)):
                return f"output {k}: bytes differ"
    return None


def aliases(env, peer, inputs):
    """Whether a split peer's outputs are views of its input (nothing was copied)."""
    if peer.outputs is None:
        return False
    source = inputs.torch[0][0]
    low, high = source.data_ptr(), source.data_ptr() + source.numel() * source.element_size()
    return any(low <= as_torch(env, g).data_ptr() < high for g in peer.outputs(peer.call(0)))


# ---- A case ----------------------------------------------------------------------------------------------------


def run_case(env, case, seed, check_limit, peers=None):
    """The case's record: the copy, then each of `peers` ({name: maker}; by default every peer of
    the case's operator), timed and checked."""
    if case.op == "nonzero":
        host = [common.nonzero_data(case, seed)]
        nonzeros = common.count_nonzero(host[0], case.dtype)
        nbytes = common.nonzero_bytes(case, nonzeros)
    else:
        host = common.concat_data(case, common.random_bytes(case.total_bytes, seed))
        nonzeros, nbytes = None, common.concat_bytes(case)
    record = common.case_record(case, nbytes, nonzeros)
    record["rotations"] = rotations(env, case.total_bytes)
    inputs = Inputs(env, host, record["rotations"])
    expected = None
    if case.total_bytes <= check_limit:
        expected = [env.torch.from_numpy(np.ascontiguousarray(e)).to(env.device)
                    for e in common.reference(case, host)]
    del host

    makers = {"copy": lambda *_: copy_peer(env, copy_size(nbytes))}
    makers.update(PEERS[case.op] if peers is None else peers)
    for name, make in makers.items():
        entry = {}
        try:
            if family(name) in env.missing:
                raise RuntimeError(env.missing[family(name)])
            peer = make(env, case, inputs)
            entry = {"format": peer.format}
            if peer.implementation:
                entry["implementation"] = peer.implementation
            if expected is not None and peer.outputs is not None:
                mismatch = check(env, case, peer, expected)
                entry.update(checked=True, correct=mismatch is None)
                if mismatch:
                    entry["mismatch"] = mismatch
            else:
                entry["checked"] = False
            if case.op == "split" and aliases(env, peer, inputs):
                entry["no_copy"] = True
            entry.update(measure(env, peer, peer.touch or inputs.touch))
            del peer
        except Exception as e:  # one peer's failure (missing package, OOM, API) is recorded; the run goes on
            entry["error"] = f"{type(e).__name__}: {e}"[:500]
            try:
                env.clock.sync()
            except Exception:
                pass  # the error broke the CUDA context: the peers after this one will say so
        record["peers"][name] = entry
    del inputs, expected
    release(env)
    return record


def release(env):
    gc.collect()
    if env.device == "cuda":
        env.torch.cuda.empty_cache()
    if env.cupy is not None:
        env.cupy.get_default_memory_pool().free_all_blocks()
    if env.jax is not None:
        env.jax.clear_caches()


def progress_line(record):
    peers = record["peers"]
    mine, copy = peers.get("opendml", {}), peers.get("copy", {})
    text = f"{record['name'][:70]:70s}"
    if "time_us" in mine and "time_us" in copy:
        fraction = copy["time_us"] / mine["time_us"]
        text += f" opendml {mine['time_us']:9.1f} us  copy {copy['time_us']:9.1f} us  of copy {fraction:5.2f}"
    else:
        text += f" opendml: {mine.get('error', 'no time')}"
    others = [(p, r["time_us"]) for p, r in peers.items() if p not in ("opendml", "copy") and "time_us" in r]
    if others and "time_us" in mine:
        best = min(others, key=lambda x: x[1])
        text += f"  best peer {best[0]} {best[1]:.1f} us"
    bad = [p for p, r in peers.items() if r.get("correct") is False or "error" in r]
    if bad:
        text += "  [" + ", ".join(f"{p}: {'MISMATCH' if 'error' not in peers[p] else 'ERROR'}" for p in bad) + "]"
    return text


# ---- Set-up -----------------------------------------------------------------------------------------------------


def command_output(command):
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception as e:
        return f"unavailable: {e}"


def opendml_commit():
    """The commit measured: OPENDML_COMMIT when the caller gives it (run.sh does), since a copy of
    the tree may carry a git history that is not its own (the device machine's copy reports the
    session's first commit); else git's HEAD here."""
    return os.environ.get("OPENDML_COMMIT") or command_output(
        ["git", "-C", os.path.dirname(os.path.abspath(__file__)), "rev-parse", "--short", "HEAD"])


def versions(env, modules):
    v = {"opendml_device": env.odml.name if env.odml else None, "opendml_commit": opendml_commit()}
    torch = modules.get("torch")
    if torch is not None:
        v["torch"], v["torch_cuda"] = torch.__version__, torch.version.cuda
        if env.device == "cuda":
            props = torch.cuda.get_device_properties(0)
            v.update(gpu=props.name, multiprocessors=props.multi_processor_count,
                     gpu_memory_gib=round(props.total_memory / 2**30, 1), l2_bytes=env.l2_bytes)
            v["driver"] = command_output(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"])
    if modules.get("cupy") is not None:
        cupy = modules["cupy"]
        v["cupy"] = cupy.__version__
        try:
            v["cupy_cuda_runtime"] = cupy.cuda.runtime.runtimeGetVersion()
            v["cuda_driver_api"] = cupy.cuda.runtime.driverGetVersion()
        except Exception as e:
            v["cupy_cuda_runtime"] = f"unavailable: {e}"
    if modules.get("jax") is not None:
        jax = modules["jax"]
        v["jax"] = jax.__version__
        try:
            import jaxlib
            v["jaxlib"] = jaxlib.__version__
            v["jax_devices"] = [str(d) for d in jax.devices()]
        except Exception as e:
            v["jax_devices"] = f"unavailable: {e}"
    if env.cub is not None:
        v["cub"] = env.cub.cub_nonzero_cub_version()
    v["nvcc"] = command_output(["nvcc", "--version"]).splitlines()[-1:] or None
    return v


def load_cub(path, missing):
    if not path or not os.path.exists(path):
        missing["cub"] = f"the CUB harness was not built ({path or 'no --cub given'})"
        return None
    try:
        lib = ctypes.CDLL(os.path.abspath(path))
        c_u32, c_u64, c_p = ctypes.c_uint32, ctypes.c_uint64, ctypes.c_void_p
        lib.cub_nonzero_temp_bytes.argtypes = [c_u64, ctypes.c_int, ctypes.POINTER(c_u64)]
        lib.cub_nonzero.argtypes = [c_p, c_u64, ctypes.c_int, c_u32, c_u32, ctypes.POINTER(c_u32), c_p, c_u64, c_p, c_p,
                                    c_p]
        lib.cub_nonzero_error_string.restype = ctypes.c_char_p
        lib.cub_nonzero_error_string.argtypes = [ctypes.c_int]
        return lib
    except OSError as e:
        missing["cub"] = f"OSError: {e}"
        return None


def make_env(args, modules, missing):
    torch = modules["torch"]
    if args.simulate:
        device, clock, l2 = "cpu", WallClock(), 4 * MIB
        missing.setdefault("cupy", "--simulate: CuPy needs a GPU")
        missing["cub"] = "--simulate: the CUB harness needs a GPU"
        if modules.get("jax") is not None:
            modules["jax"].config.update("jax_platforms", "cpu")
    else:
        device, clock = "cuda", CudaClock(torch)
        l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 50 * MIB) or 50 * MIB
        if modules.get("jax") is not None and modules["jax"].devices()[0].platform != "gpu":
            missing["jax"] = f"JAX has no GPU backend here (devices: {modules['jax'].devices()})"
    if modules.get("cupy") is not None and clock.handle:  # CuPy on torch's stream, when it is not the default
        modules["cupy"].cuda.ExternalStream(clock.handle).use()
    odml = None
    try:
        odml = opendml.Device(opendml.load(args.lib), "cpu" if args.simulate else "cuda")
    except (OSError, opendml.OpendmlError) as e:  # the peers still run, and the page says why opendml did not
        missing["opendml"] = f"{type(e).__name__}: {e}"
    cub = None if args.simulate else load_cub(args.cub, missing)
    odml_jax = None  # imported once JAX's platforms are set: it starts them
    if "jax" in missing or modules.get("jax") is None:
        missing["opendml.jax"] = f"JAX is missing: {missing.get('jax', 'not imported')}"
    else:
        try:
            odml_jax = import_opendml_jax()
        except Exception as e:  # the package is not installed, or was built without JAX
            missing["opendml.jax"] = f"{type(e).__name__}: {e}"[:300]
    return Env(torch, modules.get("cupy"), modules.get("jax"), modules.get("jnp"), device, clock, odml, cub, missing,
               l2, args.budget_per_peer_s, odml_jax)


def peak_copy_gbps(env, nbytes):
    peer = copy_peer(env, nbytes)
    times = [env.clock.time_us(peer.call, i) for i in range(12)]
    return 2 * nbytes / (common.median(times[2:]) * 1e3)


def dry_run(args, modules, missing, case_list):
    print("frameworks:", {k: (getattr(m, "__version__", "ok") if m else "MISSING") for k, m in modules.items()})
    for name, why in missing.items():
        print(f"  {name}: {why}")
    device = None
    if os.path.exists(args.lib):
        device = opendml.Device(opendml.load(args.lib), "cpu")
        print(f"opendml: {args.lib} loaded; descriptors are validated on its CPU device")
    else:
        print(f"opendml: {args.lib} not found; descriptors not validated")
    print(f"CUB harness: {args.cub} {'present' if args.cub and os.path.exists(args.cub) else 'NOT BUILT'}")
    peak = 0
    for case in case_list:
        if device is not None:
            if case.op == "nonzero":
                device.compile(opendml.nonzero_coordinates(case.dtype, case.shapes[0]))
            elif case.op == "join":
                device.compile(opendml.join(case.dtype, case.shapes, case.whole_shape, case.axis))
            else:
                device.compile(opendml.split(case.dtype, case.whole_shape, case.shapes, case.axis))
        count = max(1, min(MAX_ROTATIONS, math.ceil(2.5 * 50 * MIB / case.total_bytes)))
        peak = max(peak, case.total_bytes * (count + 6))
        print(f"  {case.name:75s} {count:4d} rotations")
    print(f"{len(case_list)} cases; peak device memory roughly {peak / 2**30:.1f} GiB")


def data_seed(place):
    """The seed of the data of the case at `place` in the whole list (run_case's seed)."""
    return place + 1


def selected(args):
    """[(place, case)] of the cases that --filter and --max-mib keep, each with its place in the
    whole list, which seeds its data (data_seed): a case run alone gets the same input as in a full
    run."""
    return [(place, c) for place, c in enumerate(cases(args.quick))
            if (not args.filter or any(f in c.name for f in args.filter)) and c.total_bytes <= args.max_mib * MIB]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lib", default=os.path.join(BUILD, "opendml", "src", "libopendml.so"))
    parser.add_argument("--cub", default=os.path.join(BUILD, "libcub_nonzero.so"))
    parser.add_argument("--out", default=os.environ.get("OUT") or BUILD)
    parser.add_argument("--quick", action="store_true", help="a few cases, to check the set-up")
    parser.add_argument("--filter", action="append", default=[],
                        help="only cases whose name contains this (given several times: any of them)")
    parser.add_argument("--max-mib", type=float, default=float("inf"), help="skip cases with larger inputs")
    parser.add_argument("--check-mib", type=float, default=256, help="compare with NumPy up to this input size")
    parser.add_argument("--budget-s", type=float, default=240, help="start no case after this many seconds")
    parser.add_argument("--budget-per-peer-s", type=float, default=0.05, help="time spent in one timing loop")
    parser.add_argument("--dry-run", action="store_true", help="imports and the case list only; no GPU needed")
    parser.add_argument("--simulate", action="store_true", help="run on the CPU (torch, JAX, opendml), wall clock")
    args = parser.parse_args()
    started = time.perf_counter()

    seeded = selected(args)
    case_list = [case for _, case in seeded]
    skip = {} if args.dry_run or args.simulate else probe_frameworks()
    if "torch" in skip:
        print(f"torch cannot use the GPU: {skip['torch']}")
        return 1
    modules, missing = import_frameworks(skip)
    if args.dry_run:
        dry_run(args, modules, missing, case_list)
        return 0
    if modules["torch"] is None or not (args.simulate or modules["torch"].cuda.is_available()):
        print(f"torch with CUDA is required: {missing.get('torch', 'torch.cuda.is_available() is False')}")
        return 1
    env = make_env(args, modules, missing)
    device = "simulation on the CPU" if args.simulate else modules["torch"].cuda.get_device_name(0)
    results = common.new_results("gpu", device, versions(env, modules), notes=[
        "time_us: CUDA events around one call, the GPU kept busy ahead of it so that launch overhead is hidden "
        "where the API allows; torch.nonzero and cupy.argwhere include their wait for the count. JAX (on its own "
        "streams): per call, its first GPU event to its last in JAX's profiler trace; wall_us: wall clock over "
        "batches of calls. call_us: one call on an idle GPU, host included.",
        f"Inputs rotate over copies totalling at least 2.5 x L2 ({env.l2_bytes / MIB:.0f} MiB), at most "
        f"{MAX_ROTATIONS} copies; before each peer's timed calls, the copies those calls read are read once, in "
        "their order, so that every peer starts from the same L2 state. 'of copy' = time of a torch copy_ of half "
        "the case's bytes (so it reads and writes as many) / time.",
        "opendml's bytes: inputs read once, outputs written once in opendml's format (uint32 coordinates).",
    ] + ([f"{k}: {v}" for k, v in missing.items()]))
    results["inputs_touched"] = True  # each peer's calls start from the same L2 state (Inputs.touch)
    if args.simulate:
        results["notes"].insert(0, "SIMULATION on the CPU: a check of the script, not a measurement of a GPU.")
        results["placeholder"] = True
    print("versions:", results["versions"], flush=True)
    results["copy_peak_gbps"] = peak_copy_gbps(env, (64 if args.simulate else 512) * MIB)
    print(f"device-to-device copy: {results['copy_peak_gbps']:.0f} GB/s (read + written); "
          f"spin kernel: {env.clock.cycles_per_us or 0:.0f} cycles/us", flush=True)

    path = os.path.join(args.out, "gpu_peers.json")
    results["skipped"] = []
    for place, case in seeded:
        if time.perf_counter() - started > args.budget_s:
            results["skipped"].append(case.name)
            continue
        print(f"... {case.name}", flush=True)  # where it was, should the process die
        try:
            record = run_case(env, case, data_seed(place), args.check_mib * MIB)
        except Exception as e:  # the case's data could not be made: record it, go on
            record = common.case_record(case, 0)
            record["error"] = f"{type(e).__name__}: {e}"[:500]
            release(env)
        results["cases"].append(record)
        print(progress_line(record), flush=True)
        common.save(results, path)
    if results["skipped"]:
        print(f"\n{len(results['skipped'])} cases skipped: out of time (--budget-s {args.budget_s:g})")
    results["elapsed_s"] = round(time.perf_counter() - started, 1)
    common.save(results, path)
    print(common.summary(results))
    print(f"\nresults: {path} ({results['elapsed_s']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
