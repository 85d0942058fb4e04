"""A small ctypes binding to libopendml.so's C ABI (include/opendml/opendml.h).

Enough for the peer benchmarks: devices, JOIN / SPLIT / NONZERO_COORDINATES descriptors built from
DirectML's structs, compile, binding properties, initialize and execute on a stream. Buffers are
plain addresses; anything with an address and a size can be bound: a NumPy array, a torch or CuPy
tensor, or an (address, size_in_bytes) pair.

    import opendml
    lib = opendml.load("build/src/libopendml.so")
    device = opendml.Device(lib, "cpu")
    op = device.compile(opendml.join("float32", [(2, 3), (2, 4)], (2, 7), axis=1))
    op.initialize()
    op.execute(op.bind([a, b], [out]))

Every call that fails raises OpendmlError with opendml's status and message.
"""

import ctypes
import os
from ctypes import POINTER, Structure, byref, c_char_p, c_int, c_uint32, c_uint64, c_void_p

# DML_TENSOR_DATA_TYPE, by the names NumPy and torch give their types.
DATA_TYPES = {
    "float32": 1, "float16": 2, "uint32": 3, "uint16": 4, "uint8": 5, "int32": 6, "int16": 7, "int8": 8,
    "float64": 9, "uint64": 10, "int64": 11,
}
ELEMENT_BYTES = {
    "float32": 4, "float16": 2, "uint32": 4, "uint16": 2, "uint8": 1, "int32": 4, "int16": 2, "int8": 1,
    "float64": 8, "uint64": 8, "int64": 8,
}
TENSOR_TYPE_BUFFER = 1
OPERATOR_SPLIT, OPERATOR_JOIN, OPERATOR_NONZERO_COORDINATES = 62, 63, 133


class BufferTensorDesc(Structure):
    _fields_ = [("DataType", c_int), ("Flags", c_int), ("DimensionCount", c_uint32), ("Sizes", POINTER(c_uint32)),
                ("Strides", POINTER(c_uint32)), ("TotalTensorSizeInBytes", c_uint64),
                ("GuaranteedBaseOffsetAlignment", c_uint32)]


class TensorDesc(Structure):
    _fields_ = [("Type", c_int), ("Desc", c_void_p)]


class OperatorDesc(Structure):
    _fields_ = [("Type", c_int), ("Desc", c_void_p)]


class JoinOperatorDesc(Structure):
    _fields_ = [("InputCount", c_uint32), ("InputTensors", POINTER(TensorDesc)), ("OutputTensor", POINTER(TensorDesc)),
                ("Axis", c_uint32)]


class SplitOperatorDesc(Structure):
    _fields_ = [("InputTensor", POINTER(TensorDesc)), ("OutputCount", c_uint32), ("OutputTensors", POINTER(TensorDesc)),
                ("Axis", c_uint32)]


class NonzeroCoordinatesOperatorDesc(Structure):
    _fields_ = [("InputTensor", POINTER(TensorDesc)), ("OutputCountTensor", POINTER(TensorDesc)),
                ("OutputCoordinatesTensor", POINTER(TensorDesc))]


class BufferBinding(Structure):
    _fields_ = [("data", c_void_p), ("size_in_bytes", c_uint64)]


class Bindings(Structure):
    _fields_ = [("inputs", POINTER(BufferBinding)), ("input_count", c_uint32), ("outputs", POINTER(BufferBinding)),
                ("output_count", c_uint32), ("temporary", BufferBinding), ("persistent", BufferBinding)]


class BindingProperties(Structure):
    _fields_ = [("input_count", c_uint32), ("output_count", c_uint32), ("temporary_size_in_bytes", c_uint64),
                ("persistent_size_in_bytes", c_uint64)]


class OpendmlError(RuntimeError):
    def __init__(self, status, message):
        super().__init__(f"{status}: {message}")
        self.status = status


def load(path):
    """Loads libopendml.so from path and declares the C ABI's signatures."""
    lib = ctypes.CDLL(os.path.abspath(path))
    handle = c_void_p
    signatures = {
        "odml_status_name": (c_char_p, [c_int]),
        "odml_last_error_message": (c_char_p, []),
        "odml_device_create": (c_int, [c_char_p, POINTER(handle)]),
        "odml_device_destroy": (None, [handle]),
        "odml_device_name": (c_char_p, [handle]),
        "odml_device_synchronize": (c_int, [handle, c_void_p]),
        "odml_operator_create": (c_int, [handle, POINTER(OperatorDesc), c_int, POINTER(handle)]),
        "odml_operator_destroy": (None, [handle]),
        "odml_operator_compile": (c_int, [handle, POINTER(handle)]),
        "odml_compiled_operator_destroy": (None, [handle]),
        "odml_compiled_operator_get_binding_properties": (c_int, [handle, POINTER(BindingProperties)]),
        "odml_compiled_operator_initialize": (c_int, [handle, POINTER(Bindings), c_void_p]),
        "odml_compiled_operator_execute": (c_int, [handle, POINTER(Bindings), c_void_p]),
        "odml_compiled_operator_implementation": (c_char_p, [handle]),
    }
    for name, (restype, argtypes) in signatures.items():
        function = getattr(lib, name)
        function.restype, function.argtypes = restype, argtypes
    return lib


def _check(lib, status):
    if status != 0:
        raise OpendmlError(lib.odml_status_name(status).decode(), lib.odml_last_error_message().decode())


def region(buffer):
    """(address, size in bytes) of a NumPy array, a torch or CuPy tensor, or an (address, size) pair.

    The size of an array is its bytes rounded up to a multiple of 4, as DirectML's
    TotalTensorSizeInBytes is: the memory behind an array of odd size must have that padding."""
    if isinstance(buffer, tuple):
        return int(buffer[0]), int(buffer[1])
    if hasattr(buffer, "data_ptr"):  # torch
        address, nbytes = buffer.data_ptr(), buffer.numel() * buffer.element_size()
    elif hasattr(buffer, "__cuda_array_interface__"):  # CuPy and others
        address, nbytes = buffer.__cuda_array_interface__["data"][0], buffer.nbytes
    else:  # NumPy
        address, nbytes = buffer.__array_interface__["data"][0], buffer.nbytes
    return address, (nbytes + 3) // 4 * 4


def type_name(dtype):
    """'float32' for np.float32, np.dtype('float32'), torch.float32 or 'float32'."""
    name = getattr(dtype, "__name__", None) or str(dtype)
    return name.replace("torch.", "")


def tensor_size_in_bytes(dtype, sizes):
    """DMLCalcBufferTensorSize for packed sizes: the bytes a bound region needs at least."""
    count = 1
    for size in sizes:
        count *= size
    return (count * ELEMENT_BYTES[type_name(dtype)] + 3) // 4 * 4


class _Descriptor:
    """A DML_OPERATOR_DESC and every struct and array it points to, kept alive together."""

    def __init__(self):
        self._keep = []

    def tensor(self, dtype, sizes):
        sizes = [int(s) for s in sizes]
        size_array = (c_uint32 * len(sizes))(*sizes)
        buffer = BufferTensorDesc(DATA_TYPES[type_name(dtype)], 0, len(sizes), size_array, None,
                                  tensor_size_in_bytes(dtype, sizes), 0)
        self._keep += [size_array, buffer]
        return TensorDesc(TENSOR_TYPE_BUFFER, ctypes.addressof(buffer))

    def tensors(self, dtype, shapes):
        array = (TensorDesc * len(shapes))(*[self.tensor(dtype, s) for s in shapes])
        self._keep.append(array)
        return array

    def operator(self, operator_type, desc):
        self._keep.append(desc)
        self.desc = OperatorDesc(operator_type, ctypes.addressof(desc))
        return self


def join(dtype, input_shapes, output_shape, axis):
    d = _Descriptor()
    inputs, output = d.tensors(dtype, input_shapes), d.tensors(dtype, [output_shape])
    return d.operator(OPERATOR_JOIN, JoinOperatorDesc(len(input_shapes), inputs, output, axis))


def split(dtype, input_shape, output_shapes, axis):
    d = _Descriptor()
    source, outputs = d.tensors(dtype, [input_shape]), d.tensors(dtype, output_shapes)
    return d.operator(OPERATOR_SPLIT, SplitOperatorDesc(source, len(output_shapes), outputs, axis))


def nonzero_coordinates(dtype, input_shape, columns=None):
    """Coordinates of the trailing `columns` dimensions (default: all): count {1}, coordinates {M, N}."""
    element_count = 1
    for size in input_shape:
        element_count *= size
    columns = columns or len(input_shape)
    d = _Descriptor()
    source = d.tensors(dtype, [input_shape])
    count = d.tensors("uint32", [[1]])
    coordinates = d.tensors("uint32", [[element_count, columns]])
    return d.operator(OPERATOR_NONZERO_COORDINATES, NonzeroCoordinatesOperatorDesc(source, count, coordinates))


class Device:
    def __init__(self, lib, name="cpu"):
        self._lib = lib
        handle = c_void_p()
        _check(lib, lib.odml_device_create(name.encode(), byref(handle)))
        self._handle = handle

    @property
    def name(self):
        return self._lib.odml_device_name(self._handle).decode()

    def compile(self, descriptor, feature_level=0):
        """A CompiledOperator for a descriptor made by join(), split() or nonzero_coordinates()."""
        lib, op, compiled = self._lib, c_void_p(), c_void_p()
        _check(lib, lib.odml_operator_create(self._handle, byref(descriptor.desc), feature_level, byref(op)))
        try:
            _check(lib, lib.odml_operator_compile(op, byref(compiled)))
        finally:
            lib.odml_operator_destroy(op)
        return CompiledOperator(lib, compiled)

    def synchronize(self, stream=None):
        _check(self._lib, self._lib.odml_device_synchronize(self._handle, stream))

    def __del__(self):
        if getattr(self, "_handle", None):
            self._lib.odml_device_destroy(self._handle)


class PreparedBindings:
    """odml_bindings built once, so that executing costs one foreign call (see CompiledOperator.bind)."""

    def __init__(self, inputs, outputs, temporary, persistent):
        def array(buffers):
            return (BufferBinding * max(len(buffers), 1))(*[BufferBinding(*region(b)) for b in buffers])

        def single(buffer):
            return BufferBinding(*region(buffer)) if buffer is not None else BufferBinding(None, 0)

        self._inputs, self._outputs = array(inputs), array(outputs)
        self._buffers = (inputs, outputs, temporary, persistent)  # keeps the memory alive
        self.struct = Bindings(self._inputs, len(inputs), self._outputs, len(outputs), single(temporary),
                               single(persistent))
        self.ref = byref(self.struct)


class CompiledOperator:
    def __init__(self, lib, handle):
        self._lib, self._handle = lib, handle
        properties = BindingProperties()
        _check(lib, lib.odml_compiled_operator_get_binding_properties(handle, byref(properties)))
        self.input_count, self.output_count = properties.input_count, properties.output_count
        self.temporary_size_in_bytes = properties.temporary_size_in_bytes
        self.persistent_size_in_bytes = properties.persistent_size_in_bytes
        self.implementation = lib.odml_compiled_operator_implementation(handle).decode()

    def bind(self, inputs, outputs, temporary=None, persistent=None):
        """Bindings for execute: inputs and outputs in binding order (docs/contract.md section 1)."""
        return PreparedBindings(list(inputs), list(outputs), temporary, persistent)

    def initialize(self, temporary=None, persistent=None, stream=None):
        bindings = PreparedBindings([], [], temporary, persistent)
        _check(self._lib, self._lib.odml_compiled_operator_initialize(self._handle, bindings.ref, stream))

    def execute(self, bindings, stream=None):
        """Runs with bindings from bind(); on a CUDA device, asynchronously on stream (a cudaStream_t)."""
        status = self._lib.odml_compiled_operator_execute(self._handle, bindings.ref, stream)
        if status != 0:
            _check(self._lib, status)

    def __del__(self):
        if getattr(self, "_handle", None):
            self._lib.odml_compiled_operator_destroy(self._handle)
