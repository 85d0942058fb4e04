"""What the GPU and CPU peer benchmarks share: cases, data, NumPy references, results, the summary.

A case is one operator on one geometry. Every implementation of a case ("peer") gets the same input
bytes and is checked against NumPy; its time is recorded in microseconds. The figures derived from
a time are the effective bandwidth (the bytes a perfect kernel must move: inputs read once and
outputs written once in opendml's output format, divided by the time) and the fraction of a copy of
the same bytes measured in the same run (copy time / time).

Results file (JSON), one per run:
    {"schema": "opendml-peers/1", "kind": "gpu" | "cpu", "placeholder": bool, "date", "device",
     "versions": {...}, "notes": [...], "copy_peak_gbps": float,
     "cases": [{"op", "group", "name", "params": {...}, "bytes", "nonzeros"?,
                "peers": {peer: {"time_us", "call_us"?, "host_us"?, "runs", "method", "format",
                                 "checked", "correct", "mismatch"?, "error"?, "implementation"?}}}]}
A peer that failed has "error" and no "time_us". "checked" false means the result was not compared
(large sizes); "correct" false means it was compared and differs from NumPy.
"""

import datetime
import json
import os
import platform
import statistics
from dataclasses import asdict, dataclass, field

import numpy as np

SCHEMA = "opendml-peers/1"
SHORT_TYPE = {"float32": "f32", "float16": "f16", "uint8": "u8", "int32": "i32", "uint32": "u32", "int8": "i8"}
# Zero test on raw bits, as opendml and the CUB harness do: every bit but the sign for floats.
BITS = {"float32": (np.uint32, 0x7FFFFFFF), "float16": (np.uint16, 0x7FFF), "uint8": (np.uint8, 0xFF),
        "int32": (np.uint32, 0xFFFFFFFF), "uint32": (np.uint32, 0xFFFFFFFF), "int8": (np.uint8, 0xFF)}


def pow2(n):
    """'2^20' for powers of two, else the number."""
    return f"2^{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 else str(n)


def size_text(nbytes):
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale and nbytes % scale == 0:
            return f"{nbytes // scale} {unit}"
    return f"{nbytes} B"


def shape_of(n, rank):
    """rank sizes whose product is n (a power of two), spread from the last dimension, as
    bench/bench_util.h's shape_of."""
    sizes = [1] * rank
    for i in range(n.bit_length() - 1):
        sizes[rank - 1 - i % rank] *= 2
    return sizes


def element_bytes(dtype):
    return np.dtype(dtype).itemsize


@dataclass
class Case:
    """One operator on one geometry. shapes: the NONZERO input, the JOIN inputs or the SPLIT
    outputs (the pieces); axis: the JOIN/SPLIT axis."""

    op: str  # "nonzero", "join" or "split"
    group: str  # what the case varies: "size", "density", "type", "rank", "slices", "many", "special"
    dtype: str
    shapes: list
    axis: int = 0
    density: float = 0.0
    pattern: str = "random"  # NONZERO data: "random", "clustered" (long runs) or "special" values
    name: str = ""
    params: dict = field(default_factory=dict)

    @property
    def elements(self):
        return sum(int(np.prod(s)) for s in self.shapes)

    @property
    def total_bytes(self):
        return self.elements * element_bytes(self.dtype)

    @property
    def whole_shape(self):
        """JOIN's output, SPLIT's input."""
        shape = list(self.shapes[0])
        shape[self.axis] = sum(s[self.axis] for s in self.shapes)
        return shape

    @property
    def split_sizes(self):
        return [s[self.axis] for s in self.shapes]


def nonzero_case(group, dtype, n, rank, density, pattern="random"):
    shape = shape_of(n, rank)
    what = {"random": f"density {density:g}", "clustered": "clustered runs", "special": "special values"}[pattern]
    name = f"nonzero {SHORT_TYPE[dtype]} n={pow2(n)} rank {rank} {what}"
    params = {"dtype": dtype, "n": n, "rank": rank, "density": density, "pattern": pattern, "shape": shape}
    return Case("nonzero", group, dtype, [shape], 0, density, pattern, name, params)


def concat_case(op, group, dtype, total_bytes, pieces, slice_bytes=None):
    """op "join" or "split" of `pieces` equal pieces, total_bytes in all. slice_bytes None: the
    outer axis (1-D pieces joined end to end); else the inner axis of [rows, slice] pieces."""
    size = element_bytes(dtype)
    if slice_bytes is None:
        shapes, axis = [[total_bytes // pieces // size]] * pieces, 0
        where = "outer axis"
    else:
        rows = total_bytes // (slice_bytes * pieces)
        shapes, axis = [[rows, slice_bytes // size]] * pieces, 1
        where = f"axis 1, {slice_bytes} B slices"
    name = f"{op} {SHORT_TYPE[dtype]} {pieces} x {shapes[0]} {where} ({size_text(total_bytes)})"
    params = {"dtype": dtype, "total_bytes": total_bytes, "pieces": pieces, "slice_bytes": slice_bytes,
              "axis": axis, "piece_shape": shapes[0]}
    return Case(op, group, dtype, shapes, axis, name=name, params=params)


# ---- Data ------------------------------------------------------------------------------------------


def random_bytes(nbytes, seed):
    words = np.random.default_rng(seed).integers(0, 2**64 - 1, size=(nbytes + 7) // 8, dtype=np.uint64,
                                                 endpoint=True)
    return words.view(np.uint8)[:nbytes]


def nonzero_data(case, seed=1):
    """The NONZERO input of case as a NumPy array of case.dtype, shaped. Non-zero elements have
    random bits (so floats include negatives, NaNs and denormals) and are never zero or -0.0."""
    n, (bits_type, _) = case.elements, BITS[case.dtype]
    rng = np.random.default_rng(seed)
    bits = random_bytes(n * element_bytes(case.dtype), seed).view(bits_type).copy()
    np.bitwise_or(bits, 1, out=bits)
    if case.pattern == "special":
        specials = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1e-45 if case.dtype == "float32" else 6e-8, -1.0],
                            dtype=case.dtype).view(bits_type)
        bits = specials[rng.integers(0, len(specials), size=n)]
    elif case.pattern == "clustered":
        bits *= clustered_mask(n, rng).astype(bits_type)
    elif case.density < 1.0:
        bits *= (rng.random(n, dtype=np.float32) < case.density).astype(bits_type)
    return bits.view(case.dtype).reshape(case.shapes[0])


def clustered_mask(n, rng, mean_run=4096):
    """Alternating runs of zeros and non-zeros, geometric lengths of mean mean_run: density ~0.5."""
    lengths = rng.geometric(1.0 / mean_run, size=2 * (n // mean_run) + 16)
    while lengths.sum() < n:
        lengths = np.concatenate([lengths, rng.geometric(1.0 / mean_run, size=len(lengths))])
    values = np.arange(len(lengths), dtype=np.uint8) % 2  # starts with a run of zeros
    return np.repeat(values, lengths)[:n]


def count_nonzero(data, dtype):
    bits_type, mask = BITS[dtype]
    return int(np.count_nonzero(data.reshape(-1).view(bits_type) & bits_type(mask)))


def nonzero_bytes(case, nonzeros):
    """Bytes a perfect NONZERO_COORDINATES moves: the input read, the count and the uint32
    coordinates of the non-zeros written."""
    return case.total_bytes + nonzeros * len(case.shapes[0]) * 4 + 4


def concat_bytes(case):
    return 2 * case.total_bytes


def concat_data(case, pool):
    """JOIN inputs (the pieces) or the SPLIT input (the whole), as views of a random byte pool."""
    if case.op == "join":
        pieces, offset = [], 0
        for shape in case.shapes:
            nbytes = int(np.prod(shape)) * element_bytes(case.dtype)
            pieces.append(pool[offset:offset + nbytes].view(case.dtype).reshape(shape))
            offset += nbytes
        return pieces
    return [pool[:case.total_bytes].view(case.dtype).reshape(case.whole_shape)]


def reference(case, inputs):
    """NumPy's answer: a list of arrays (the coordinates as [count, rank] int64, or the pieces)."""
    if case.op == "nonzero":
        return [np.argwhere(inputs[0])]
    if case.op == "join":
        return [np.concatenate(inputs, axis=case.axis)]
    bounds = np.cumsum(case.split_sizes)[:-1]
    return np.split(inputs[0], bounds, axis=case.axis)


def compare(expected, got, coordinates=False):
    """None when got (a list of arrays) equals expected bit for bit, else what differs. With
    coordinates, values are compared in any integer type."""
    if len(expected) != len(got):
        return f"{len(got)} outputs, expected {len(expected)}"
    for k, (e, g) in enumerate(zip(expected, got)):
        g = np.asarray(g)
        if coordinates:
            if g.shape != e.shape:
                return f"output {k}: shape {list(g.shape)}, expected {list(e.shape)}"
            g = g.astype(np.int64)
            bad = np.flatnonzero(np.any(g != e, axis=1))
            if len(bad):
                first = bad[0]
                return f"output {k}: {len(bad)} rows differ, row {first} is {g[first].tolist()}, not {e[first].tolist()}"
        else:
            if g.shape != e.shape or g.dtype.itemsize != e.dtype.itemsize:
                return f"output {k}: {g.dtype}{list(g.shape)}, expected {e.dtype}{list(e.shape)}"
            if not np.array_equal(np.ascontiguousarray(g).view(np.uint8), np.ascontiguousarray(e).view(np.uint8)):
                return f"output {k}: bytes differ"
    return None


def aligned_empty(shape, dtype, alignment=64):
    """An uninitialised NumPy array at an aligned address, its buffer padded to a multiple of 4
    bytes (opendml binds at least DMLCalcBufferTensorSize bytes, which rounds up to 4)."""
    nbytes = int(np.prod(shape)) * element_bytes(dtype)
    raw = np.empty((nbytes + 3) // 4 * 4 + alignment, dtype=np.uint8)
    start = -raw.ctypes.data % alignment
    return raw[start:start + nbytes].view(dtype).reshape(shape)


# ---- Results ---------------------------------------------------------------------------------------


def median(values):
    return statistics.median(values) if values else float("nan")


def new_results(kind, device, versions, notes=()):
    return {"schema": SCHEMA, "kind": kind, "placeholder": False,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "device": device, "versions": dict(versions, python=platform.python_version(), numpy=np.__version__,
                                               platform=platform.platform()),
            "notes": list(notes), "copy_peak_gbps": None, "cases": []}


def case_record(case, nbytes, nonzeros=None):
    record = {"op": case.op, "group": case.group, "name": case.name, "params": case.params, "bytes": nbytes,
              "peers": {}}
    if nonzeros is not None:
        record["nonzeros"] = nonzeros
    return record


def save(results, path):
    """Writes atomically, so that a run cut short leaves the cases it finished."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path + ".tmp", "w") as f:
        json.dump(results, f, indent=1, default=lambda o: asdict(o) if hasattr(o, "__dataclass_fields__") else str(o))
    os.replace(path + ".tmp", path)


def derived(record, peer):
    """(GB/s, fraction of the same-bytes copy) of one peer in a case record, or Nones."""
    result, copy = record["peers"].get(peer, {}), record["peers"].get("copy", {})
    time_us = result.get("time_us")
    if not time_us:
        return None, None
    gbps = record["bytes"] / (time_us * 1e3)
    return gbps, (copy["time_us"] / time_us if copy.get("time_us") else None)


def peer_cell(record, peer, main="opendml"):
    """A summary cell: the peer's time, and what opendml's speedup over it is."""
    result = record["peers"].get(peer)
    if result is None:
        return "-"
    if "time_us" not in result:
        return "ERR"
    mark = "!" if result.get("correct") is False else ""
    mine = record["peers"].get(main, {}).get("time_us")
    speed = f" {result['time_us'] / mine:.2f}x" if mine and peer != main else ""
    return f"{result['time_us']:.1f}{mark}{speed}"


def summary(results):
    """A compact text table: per case opendml's time and copy fraction, then each peer's time and
    opendml's speedup over it ('!' marks a result that disagrees with NumPy)."""
    lines = []
    for op in ("nonzero", "join", "split"):
        records = [r for r in results["cases"] if r["op"] == op]
        if not records:
            continue
        peers = []
        for r in records:
            peers += [p for p in r["peers"] if p not in peers and p not in ("opendml", "copy")]
        header = ["case", "opendml us", "of copy"] + [f"{p} us (x)" for p in peers]
        rows = []
        for r in records:
            _, fraction = derived(r, "opendml")
            rows.append([r["name"], peer_cell(r, "opendml"), f"{fraction:.2f}" if fraction else "-"]
                        + [peer_cell(r, p) for p in peers])
        widths = [max(len(str(x)) for x in column) for column in zip(header, *rows)]
        lines.append("")
        for row in [header] + rows:
            lines.append("  ".join(str(x).ljust(w) for x, w in zip(row, widths)).rstrip())
    lines.append("\n(x): that peer's time over opendml's, so above 1 means opendml is faster; ! result differs from "
                 "NumPy; ERR the peer failed (see the JSON)")
    return "\n".join(lines)
