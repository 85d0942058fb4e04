"""The descriptor layer: DirectML's vocabulary, lifecycle and messages, on the CPU."""

import numpy as np
import pytest

import opendml
from opendml import DataType, TensorDesc

F32 = DataType.FLOAT32


def test_enum_values_equal_directml():
    assert [DataType.UNKNOWN, DataType.FLOAT32, DataType.FLOAT16, DataType.UINT32, DataType.UINT16] == [0, 1, 2, 3, 4]
    assert [DataType.UINT8, DataType.INT32, DataType.INT16, DataType.INT8, DataType.FLOAT64] == [5, 6, 7, 8, 9]
    assert [DataType.UINT64, DataType.INT64, DataType.UINT4, DataType.INT4] == [10, 11, 12, 13]
    assert opendml.TensorFlags.OWNED_BY_DML == 1
    assert opendml.FeatureLevel.LEVEL_1_0 == 0x1000
    assert opendml.FeatureLevel.LEVEL_4_1 == 0x4100
    assert opendml.FeatureLevel.LEVEL_6_4 == 0x6400
    assert opendml.EXTENSION_64BIT_INDICES == 1


def test_tensor_desc_fields():
    t = TensorDesc(DataType.UINT8, [3])
    assert t.sizes == [3] and t.strides is None and t.total_size == 4  # rounded up to 4 bytes
    t = TensorDesc(F32, [2, 3], strides=[1, 2], total_size=64, alignment=4)
    assert t.strides == [1, 2] and t.total_size == 64 and t.alignment == 4 and t.dtype == F32
    assert TensorDesc(F32, [2, 3], strides=[4, 1]).total_size == (1 * 4 + 2 + 1) * 4


def join_op(device="cpu", level=0):
    join = opendml.JoinDesc([TensorDesc(F32, [1, 1, 2, 3]), TensorDesc(F32, [1, 1, 2, 4])], TensorDesc(F32, [1, 1, 2, 7]), 3)
    return opendml.Operator(opendml.Device(device), join, level).compile()


def test_join_seed_example():
    op = join_op()
    props = op.binding_properties()
    assert (props.input_count, props.output_count) == (2, 1)
    assert isinstance(op.implementation(), str) and op.implementation()
    op.initialize()
    a = np.array([1, 2, 3, 4, 5, 6], np.float32)
    b = np.array([7, 8, 9, 10, 11, 12, 13, 14], np.float32)
    out = np.full(14, -1, np.float32)
    op.execute([a, b], [out])
    np.testing.assert_array_equal(out, [1, 2, 3, 7, 8, 9, 10, 4, 5, 6, 11, 12, 13, 14])


def test_split_seed_example():
    x = np.arange(1, 13, dtype=np.int32)
    outs = [np.full(n, -1, np.int32) for n in (4, 2, 6)]
    desc = opendml.SplitDesc(TensorDesc(DataType.INT32, [1, 1, 6, 2]),
                             [TensorDesc(DataType.INT32, [1, 1, s, 2]) for s in (2, 1, 3)], 2)
    op = opendml.Operator(opendml.Device(), desc).compile()
    op.initialize()
    op.execute([x], outs)
    assert [o.tolist() for o in outs] == [[1, 2, 3, 4], [5, 6], [7, 8, 9, 10, 11, 12]]


def test_nonzero_seed_example():
    x = np.array([1.0, 0.0, 0.0, 2.0, -0.0, 3.5, 0.0, -5.2], np.float32)
    count = np.full(1, 99, np.uint32)
    coords = np.full((8, 3), 77, np.uint32)
    desc = opendml.NonzeroCoordinatesDesc(TensorDesc(F32, [1, 1, 2, 4]), TensorDesc(DataType.UINT32, [1, 1, 1, 1]),
                                          TensorDesc(DataType.UINT32, [1, 1, 8, 3]))
    op = opendml.Operator(opendml.Device("cpu"), desc).compile()
    op.initialize()
    op.execute([x], [count, coords])
    assert count[0] == 4
    assert coords[:4].tolist() == [[0, 0, 0], [0, 0, 3], [0, 1, 1], [0, 1, 3]]


def test_execute_binds_more_arrays_than_it_keeps_in_place():
    # execute keeps the arrays it borrows and their regions in place up to a few, on the heap past
    # them (python/src/descriptors.cpp): nine inputs, each bound where it is, whatever the count.
    parts = [np.arange(k, k + 3, dtype=np.float32) for k in range(0, 27, 3)]
    desc = opendml.JoinDesc([TensorDesc(F32, [3])] * 9, TensorDesc(F32, [27]), 0)
    op = opendml.Operator(opendml.Device(), desc).compile()
    op.initialize()
    for n_raw in (0, 4, 9):  # arrays and (address, bytes) regions mixed
        bound = [(p.ctypes.data, p.nbytes) if i < n_raw else p for i, p in enumerate(parts)]
        out = np.full(27, -1, np.float32)
        op.execute(bound, [out])
        np.testing.assert_array_equal(out, np.arange(27, dtype=np.float32))


def test_owned_by_dml_input_is_bound_at_initialize():
    owned = TensorDesc(F32, [1, 1, 1, 2], flags=opendml.TensorFlags.OWNED_BY_DML)
    desc = opendml.JoinDesc([owned, TensorDesc(F32, [1, 1, 1, 1])], TensorDesc(F32, [1, 1, 1, 3]), 3)
    op = opendml.Operator(opendml.Device(), desc).compile()
    persistent = np.zeros(op.binding_properties().persistent_size_in_bytes + 256, np.uint8)
    region = persistent[(-persistent.ctypes.data) % 256:]  # 256-aligned
    weights = np.array([5, 6], np.float32)
    op.initialize([weights, None], persistent=region)
    out = np.zeros(3, np.float32)
    op.execute([None, np.array([7], np.float32)], [out], persistent=region)
    assert out.tolist() == [5, 6, 7]


def test_a_failed_initialize_keeps_no_unfilled_region():
    # initialize() without the owned input fails; it kept the persistent region it made and never
    # filled, and an execute without persistent= then bound it and read its garbage.
    owned = TensorDesc(F32, [1, 1, 1, 2], flags=opendml.TensorFlags.OWNED_BY_DML)
    desc = opendml.JoinDesc([owned, TensorDesc(F32, [1, 1, 1, 1])], TensorDesc(F32, [1, 1, 1, 3]), 3)
    op = opendml.Operator(opendml.Device(), desc).compile()
    with pytest.raises(opendml.Error, match="initialize: input_count is 0 but the operator has 2 inputs"):
        op.initialize()
    persistent = np.zeros(op.binding_properties().persistent_size_in_bytes + 256, np.uint8)
    region = persistent[(-persistent.ctypes.data) % 256:]
    op.initialize([np.array([5, 6], np.float32), None], persistent=region)
    out = np.full(3, -1, np.float32)
    with pytest.raises(opendml.Error, match="persistent"):
        op.execute([None, np.array([7], np.float32)], [out])
    assert out.tolist() == [-1, -1, -1]


def test_region_arguments_are_checked_by_value():
    # (address, bytes) took any int through a cast: -1 bytes was "a type opendml does not take",
    # naming neither the argument nor the value, and KeyboardInterrupt from __index__ became an error.
    desc = opendml.JoinDesc([TensorDesc(F32, [1, 1, 1, 2])], TensorDesc(F32, [1, 1, 1, 2]), 3)
    op = opendml.Operator(opendml.Device(), desc).compile()
    op.initialize()
    a, out = np.ones(2, np.float32), np.zeros(2, np.float32)
    with pytest.raises(opendml.Error, match=r"inputs\[0\]'s byte count is -1; it must be 0 to 2\^64 - 1"):
        op.execute([(a.ctypes.data, -1)], [out])
    with pytest.raises(opendml.Error, match=r"inputs\[0\]'s address is 18446744073709551616"):
        op.execute([(2**64, 8)], [out])

    class Interrupting:
        def __index__(self):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        op.execute([(a.ctypes.data, Interrupting())], [out])
    # An empty array is a region of no bytes, refused for its size, not called a strided view.
    with pytest.raises(opendml.Error, match="bound to 0 bytes"):
        op.execute([np.zeros(0, np.float32)], [out])
    # A device name with a NUL named another device (the C ABI reads up to the NUL).
    with pytest.raises(opendml.Error, match="NUL"):
        opendml.Device("cpu\0xyz")


def test_raw_address_regions():
    op = join_op()
    op.initialize()
    a, b = np.ones(6, np.float32), np.full(8, 2, np.float32)
    out = np.zeros(14, np.float32)
    op.execute([(a.ctypes.data, a.nbytes), (b.ctypes.data, b.nbytes)], [(out.ctypes.data, out.nbytes)])
    assert out.tolist() == [1, 1, 1, 2, 2, 2, 2, 1, 1, 1, 2, 2, 2, 2]


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: opendml.JoinDesc([TensorDesc(F32, [1, 1, 2, 3])], TensorDesc(F32, [1, 1, 2, 7]), 3),
         "JOIN: the InputTensors' Sizes[3] add up to 3 but OutputTensor.Sizes[3] is 7"),
        (lambda: opendml.JoinDesc([TensorDesc(F32, [2, 3])], TensorDesc(F32, [2, 3]), 2),
         "JOIN: Axis is 2; it must be less than OutputTensor.DimensionCount (2)"),
        (lambda: opendml.SplitDesc(TensorDesc(F32, [2, 3]), [TensorDesc(DataType.INT32, [2, 3])], 0),
         "SPLIT: OutputTensors[0].DataType is INT32 but InputTensor.DataType is FLOAT32"),
        (lambda: opendml.NonzeroCoordinatesDesc(TensorDesc(F32, [4]), TensorDesc(DataType.UINT32, [1]),
                                                TensorDesc(DataType.UINT32, [4, 2])),
         "NONZERO_COORDINATES"),
        (lambda: opendml.JoinDesc([TensorDesc(F32, [2, 0])], TensorDesc(F32, [2, 0]), 0), "Sizes[1] is 0"),
    ],
)
def test_invalid_descriptors_raise_the_library_message(make, message):
    with pytest.raises(opendml.Error, match=None) as e:
        opendml.Operator(opendml.Device(), make())
    assert message in str(e.value)
    assert e.value.status == "INVALID_ARGUMENT"
    assert isinstance(e.value, ValueError)


def test_feature_level_is_checked():
    two_d = opendml.JoinDesc([TensorDesc(F32, [2, 3])], TensorDesc(F32, [2, 3]), 1)
    with pytest.raises(opendml.Error, match="2 dimensions needs 4_1"):
        opendml.Operator(opendml.Device(), two_d, opendml.FeatureLevel.LEVEL_3_0)
    opendml.Operator(opendml.Device(), opendml.JoinDesc([TensorDesc(F32, [1, 1, 2, 3]), TensorDesc(F32, [1, 1, 2, 4])],
                                                        TensorDesc(F32, [1, 1, 2, 7]), 3), opendml.FeatureLevel.LEVEL_1_0)


def test_out_of_range_integers_are_errors_not_wraps():
    with pytest.raises(opendml.Error, match="sizes\\[0\\] is -1"):
        TensorDesc(F32, [-1])
    with pytest.raises(opendml.Error, match="sizes\\[1\\] is 4294967296"):
        TensorDesc(F32, [1, 2**32])
    with pytest.raises(opendml.Error, match="axis is -1"):
        opendml.JoinDesc([TensorDesc(F32, [2])], TensorDesc(F32, [2]), -1)
    with pytest.raises(opendml.Error, match="total_size is -4"):
        TensorDesc(F32, [2], total_size=-4)


@pytest.mark.parametrize("make, message", [
    # Past 64 bits too: the same message, not nanobind's TypeError of incompatible arguments.
    (lambda d: TensorDesc(F32, [2**63]), "sizes\\[0\\] is 9223372036854775808; DirectML takes an unsigned 32-bit"),
    (lambda d: TensorDesc(F32, [2, 2], strides=[-2**70, 1]), "strides\\[0\\] is -1180591620717411303424"),
    (lambda d: TensorDesc(F32, [2], total_size=2**64), "total_size is 18446744073709551616; it must be 0 to 2\\^64"),
    (lambda d: TensorDesc(F32, [2], alignment=2**40), "alignment is 1099511627776"),
    (lambda d: opendml.JoinDesc([d], d, 2**64), "JoinDesc: axis is 18446744073709551616"),
    (lambda d: opendml.SplitDesc(d, [d], axis=-2**64), "SplitDesc: axis is -18446744073709551616"),
    (lambda d: opendml.Operator(opendml.Device("cpu"), opendml.JoinDesc([d], d, 0), feature_level=2**40),
     "feature_level is 1099511627776"),
    (lambda d: opendml.Operator(opendml.Device("cpu"), opendml.JoinDesc([d], d, 0), extensions=-1),
     "extensions is -1"),
    (lambda d: opendml.Operator(opendml.Device("cpu"), opendml.JoinDesc([d], d, 0), coordinate_offsets=[2**64]),
     "coordinate_offsets\\[0\\] is 18446744073709551616"),
    (lambda d: opendml.Operator(opendml.Device("cpu"), opendml.JoinDesc([d], d, 0), fill_values=[-1]),
     "fill_values\\[0\\] is -1"),
    # Not integers, or not sequences of them: named, as the array layer names them.
    (lambda d: TensorDesc(F32, [2.0]), "sizes\\[0\\] is a float; it must be an integer"),
    (lambda d: TensorDesc(F32, "ab"), "sizes is a str; it must be a sequence"),
    (lambda d: opendml.JoinDesc([d], d, "0"), "axis is a str; it must be an integer"),
    (lambda d: opendml.Operator(opendml.Device("cpu"), opendml.JoinDesc([d], d, 0), fill_values=5),
     "fill_values is an int; it must be a sequence"),
])
def test_integers_past_64_bits_and_non_integers_are_opendml_errors(make, message):
    with pytest.raises(opendml.Error, match=message):
        make(TensorDesc(F32, [2]))


def test_integer_arguments_take_any_index():
    # NumPy integers and arrays, as the array layer takes them.
    t = TensorDesc(F32, np.array([2, 3]), strides=(np.int64(3), np.uint8(1)), total_size=np.uint64(24),
                   alignment=np.int32(4))
    assert (t.sizes, t.strides, t.total_size, t.alignment) == ([2, 3], [3, 1], 24, 4)
    # The axis is read as 1: joining along it gives [2, 6], which axis 0 would not.
    u = TensorDesc(F32, np.array([2, 6]))
    assert opendml.Operator(opendml.Device(), opendml.JoinDesc([t, t], u, np.uint32(1))).compile() is not None
    with pytest.raises(opendml.Error, match=r"other than Axis \(0\) must match"):
        opendml.Operator(opendml.Device(), opendml.JoinDesc([t, t], u, np.uint32(0))).compile()


def test_a_stream_object_with_a_short_cuda_stream_tuple_is_an_error():
    class ShortStream:
        def __cuda_stream__(self):
            return (0,)

    op = join_op()
    op.initialize()
    a, b, out = np.ones(6, np.float32), np.ones(8, np.float32), np.zeros(14, np.float32)
    with pytest.raises(opendml.Error, match="stream.__cuda_stream__\\(\\) is \\(0,\\); it must be a tuple of 2"):
        op.execute([a, b], [out], stream=ShortStream())


def test_strides_take_one_per_size():
    for strides in ([12], [12, 4, 1, 1], []):
        with pytest.raises(opendml.Error, match=f"{len(strides)} strides for 3 sizes"):
            TensorDesc(F32, [2, 3, 4], strides=strides)


def test_bad_bindings_raise():
    op = join_op()
    op.initialize()
    a, b, out = np.ones(6, np.float32), np.ones(8, np.float32), np.zeros(14, np.float32)
    with pytest.raises(opendml.Error, match="is bound to 24 bytes but its TotalTensorSizeInBytes is 32"):
        op.execute([a, a], [out])
    with pytest.raises(opendml.Error, match="input_count is 1 but the operator has 2 inputs"):
        op.execute([a], [out])
    with pytest.raises(opendml.Error, match="overlaps"):
        op.execute([out[:6], out[:8]], [out])
    with pytest.raises(opendml.Error, match="a region is \\(address, bytes\\)"):
        op.execute([(1, 2, 3), b], [out])
    with pytest.raises(opendml.Error, match="speaks neither DLPack"):
        op.execute([[1.0] * 6, b], [out])
    with pytest.raises(opendml.Error, match="stream is a str"):
        op.execute([a, b], [out], stream="now")
    with pytest.raises(opendml.Error, match="stream is -5; a cudaStream_t is an address"):
        op.execute([a, b], [out], stream=-5)
    assert not out.any()  # nothing written by a call that failed validation


def test_regions_are_contiguous_arrays_and_written_ones_writable():
    # A region is the bytes from an array's first element on: a strided view handed over the memory
    # between and after its elements (out= big[1:9][::-1] was written into big[8:16]), and an output,
    # temporary or persistent region was borrowed read-only, so immutable bytes were overwritten.
    op = join_op()
    op.initialize()
    a, b = np.ones(6, np.float32), np.full(8, 2, np.float32)
    big = np.zeros(32, np.float32)
    for view in (big[1:15][::-1], big[::2][:14]):
        with pytest.raises(opendml.Error, match="outputs\\[0\\] is a strided view"):
            op.execute([a, b], [view])
    with pytest.raises(opendml.Error, match="inputs\\[1\\] is a strided view"):
        op.execute([a, big[::2][:8]], [np.zeros(14, np.float32)])
    assert not big.any()
    frozen = np.frombuffer(bytes(56), np.float32)
    with pytest.raises(opendml.Error, match="outputs\\[0\\].*read-only"):
        op.execute([a, b], [frozen])
    assert not frozen.any()
    op.execute([np.frombuffer(a.tobytes(), np.float32), b], [big[:14]])  # read-only inputs are fine
    assert big[:14].tolist() == [1, 1, 1, 2, 2, 2, 2, 1, 1, 1, 2, 2, 2, 2]


def test_temporary_and_persistent_regions_are_written_so_must_be_writable():
    # Both are the operator's to write (a temporary region as scratch), like an output.
    op = join_op()
    op.initialize()
    a, b, out = np.ones(6, np.float32), np.full(8, 2, np.float32), np.zeros(14, np.float32)
    frozen = np.frombuffer(bytes(512), np.uint8)
    with pytest.raises(opendml.Error, match="^temporary is read-only"):
        op.execute([a, b], [out], temporary=frozen)
    with pytest.raises(opendml.Error, match="^persistent is read-only"):
        op.execute([a, b], [out], persistent=frozen)
    with pytest.raises(opendml.Error, match="^persistent is read-only"):
        op.initialize(persistent=frozen)
    assert not out.any()
    op.execute([a, b], [out], temporary=np.zeros(512, np.uint8))  # a writable one is fine
    assert out.tolist() == [1, 1, 1, 2, 2, 2, 2, 1, 1, 1, 2, 2, 2, 2]


def test_extensions():
    desc = opendml.JoinDesc([TensorDesc(F32, [2])], TensorDesc(F32, [2]), 0)
    with pytest.raises(opendml.Error, match="extensions 0x8"):
        opendml.Operator(opendml.Device(), desc, extensions=8)
    with pytest.raises(opendml.Error, match="ODML_EXTENSION_COORDINATE_OFFSETS applies to NONZERO_COORDINATES only"):
        opendml.Operator(opendml.Device(), desc, extensions=opendml.EXTENSION_COORDINATE_OFFSETS)


def test_coordinate_offsets_extension():
    x = np.array([0, 3, 0, 5, 6, 0], np.int16)
    nz = opendml.NonzeroCoordinatesDesc(TensorDesc(DataType.INT16, [2, 3]), TensorDesc(DataType.UINT32, [1]),
                                        TensorDesc(DataType.UINT32, [6, 2]))
    with pytest.raises(opendml.Error, match="without ODML_EXTENSION_COORDINATE_OFFSETS"):
        opendml.Operator(opendml.Device(), nz, coordinate_offsets=[1, 2])
    op = opendml.Operator(opendml.Device(), nz, extensions=opendml.EXTENSION_COORDINATE_OFFSETS,
                          coordinate_offsets=[10, 20]).compile()
    op.initialize()
    count, coords = np.zeros(1, np.uint32), np.zeros((6, 2), np.uint32)
    op.execute([x], [count, coords])
    assert count[0] == 3 and coords[:3].tolist() == [[10, 21], [11, 20], [11, 21]]


def test_64bit_indices_extension():
    x = np.array([0, 3, 0, 5, 6, 0], np.int16)
    nz = opendml.NonzeroCoordinatesDesc(TensorDesc(DataType.INT16, [2, 3]), TensorDesc(DataType.INT64, [1]),
                                        TensorDesc(DataType.UINT64, [6, 2]))
    with pytest.raises(opendml.Error, match="64"):
        opendml.Operator(opendml.Device(), nz)  # DirectML's rules without the opt-in
    op = opendml.Operator(opendml.Device(), nz, extensions=opendml.EXTENSION_64BIT_INDICES).compile()
    op.initialize()
    count, coords = np.full(1, -1, np.int64), np.full((6, 2), 99, np.uint64)
    op.execute([x], [count, coords])
    assert count[0] == 3 and coords[:3].tolist() == [[0, 1], [1, 0], [1, 1]]
    # Past 2^32 elements: described, validated and compiled here; run on the GPU (test_cuda.py).
    big = [TensorDesc(DataType.UINT8, [2**16 + 1, 2**16])]
    join = opendml.JoinDesc(big * 2, TensorDesc(DataType.UINT8, [2 * (2**16 + 1), 2**16]), 0)
    with pytest.raises(opendml.Error, match="ODML_EXTENSION_64BIT_INDICES allows more"):
        opendml.Operator(opendml.Device(), join)
    opendml.Operator(opendml.Device(), join, extensions=opendml.EXTENSION_64BIT_INDICES).compile()


def test_devices():
    assert opendml.Device().name.startswith("cpu")
    assert "Device" in repr(opendml.Device("cpu"))
    with pytest.raises(opendml.Error, match="device name 'tpu' is not one of cpu, cuda, cuda:N"):
        opendml.Device("tpu")
    if not opendml.built_with_cuda:
        with pytest.raises(opendml.UnsupportedError, match="no CUDA backend"):
            opendml.Device("cuda")
