"""Element types that NONZERO_COORDINATES can test through another type's bits.

DirectML decides "zero" by the bits of one of its own types. Some array types have no DirectML type
of their own, yet the zero test of a DirectML type of the same width, applied to the same bits,
gives exactly the right answer; those inputs are reinterpreted (a view, no copy) before the call.
docs/python.md ("Element types") explains each entry and lists the types that cannot be mapped.
The keys are dtype names, which NumPy (with ml_dtypes) and PyTorch spell the same way.
"""

ZERO_TEST_AS = {
    # False is 0x00 and True 0x01.
    "bool": "uint8",
    # Zero when every bit but the sign bit is clear, in bfloat16 as in float16 (NaN and
    # denormals are non-zero in both), so the float16 test is exact.
    "bfloat16": "float16",
    # Their only zero is 0x00 (0x80 is their NaN).
    "float8_e4m3fnuz": "uint8",
    "float8_e5m2fnuz": "uint8",
    # ml_dtypes keeps one element a byte, value in the low bits; zero is 0x00.
    "int4": "uint8",
    "uint4": "uint8",
    "int2": "uint8",
    "uint2": "uint8",
}


def dtype_name(dtype) -> str:
    """The name ZERO_TEST_AS uses for a NumPy or PyTorch dtype."""
    name = getattr(dtype, "name", None)
    return name if isinstance(name, str) else str(dtype).removeprefix("torch.")
