#!/usr/bin/env python3
"""Writes the binary files that the bundled models and the tool's tests read (.npy, .bin).

They are committed; run this again only to change them: python3 tools/tests/make_test_files.py
"""
import os
import struct

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def npy(descr, shape, data, version=1, fortran=False, header=None, magic=b"\x93NUMPY"):
    """The bytes of a .npy file; `header` replaces the dict text to make broken files."""
    if header is None:
        dims = ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "")
        header = f"{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': ({dims}), }}"
    length_format = "<H" if version == 1 else "<I"
    prefix = len(magic) + 2 + struct.calcsize(length_format)
    header += " " * (63 - (prefix + len(header)) % 64) + "\n"
    return magic + bytes([version, 0]) + struct.pack(length_format, len(header)) + header.encode() + data


def write(path, content):
    full = os.path.join(ROOT, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "wb") as f:
        f.write(content)


def floats(*values):
    return struct.pack(f"<{len(values)}f", *values)


# The inputs of models/join_from_files.json: the JOIN seed example's {1,1,2,3} and {1,1,2,4}.
write("models/data/join_a.npy", npy("<f4", (1, 1, 2, 3), floats(1, 2, 3, 4, 5, 6)))
write("models/data/join_b.bin", floats(7, 8, 9, 10, 11, 12, 13, 14))

# Well-formed files in other types and versions (tools/tests/good/npy_types.json).
write("tools/tests/good/data/half_v1.npy", npy("<f2", (2, 2), struct.pack("<4e", 1.5, -2.0, 65504.0, 0.099975586)))
write("tools/tests/good/data/int64_v2.npy", npy("<i8", (3,), struct.pack("<3q", -(2**63), 0, 2**63 - 1), version=2))
write("tools/tests/good/data/uint8_v3.npy", npy("|u1", (2, 2), bytes([0, 1, 128, 255]), version=3))
write("tools/tests/good/data/scalar.npy", npy("<f8", (), struct.pack("<d", 2.5)))
# DxDispatch's readings: NumPy's bool as INT8, the extension in any case, any other extension raw.
write("tools/tests/good/data/bool.npy", npy("|b1", (2, 2), bytes([0, 1, 1, 0])))
write("tools/tests/good/data/UPPER.NPY", npy("<i2", (2,), struct.pack("<2h", -7, 300)))
write("tools/tests/good/data/words.raw", struct.pack("<2H", 65535, 2))

# Broken files, one fault each (tools/tests/bad/cases.json).
good = floats(1, 2, 3, 4)
write("tools/tests/bad/data/bad_magic.npy", npy("<f4", (4,), good, magic=b"\x93NUMPX"))
write("tools/tests/bad/data/bad_header.npy", npy("<f4", (4,), good, header="{'descr': '<f4', 'shape': (4,), }"))
write("tools/tests/bad/data/unterminated_header.npy", npy("<f4", (4,), good, header="{'descr': '<f4', 'fortran_order"))
write("tools/tests/bad/data/big_endian.npy", npy(">f4", (4,), struct.pack(">4f", 1, 2, 3, 4)))
write("tools/tests/bad/data/unsupported_dtype.npy", npy("<c8", (2,), good))
write("tools/tests/bad/data/fortran_order.npy", npy("<f4", (2, 2), good, fortran=True))
write("tools/tests/bad/data/short_data.npy", npy("<f4", (5,), good))
write("tools/tests/bad/data/long_data.npy", npy("<f4", (3,), good))
write("tools/tests/bad/data/header_past_end.npy", b"\x93NUMPY\x01\x00\xff\x7f{'descr'")
write("tools/tests/bad/data/odd_size.bin", b"\x00" * 6)
write("tools/tests/bad/data/too_many_dims.npy", npy("<f4", (1,) * 65, floats(1)))
# Well-formed, but of no elements: a resource holds at least one.
write("tools/tests/bad/data/no_elements.npy", npy("<f4", (0,), b""))
