"""opendml: DirectML's JOIN, SPLIT and NONZERO_COORDINATES on the CPU and CUDA.

Two layers over one C++ library:

* the descriptor layer, DirectML's vocabulary as the C++ API has it: ``Device``, ``TensorDesc``,
  ``JoinDesc``, ``SplitDesc``, ``NonzeroCoordinatesDesc``, ``Operator(...).compile()``, then
  ``initialize`` and ``execute`` on the compiled operator;
* the array layer, for any array that speaks DLPack (NumPy, PyTorch, CuPy, JAX) or the CUDA array
  interface, without a copy: ``nonzero``, ``concat``, ``split``. Results come back as the caller's
  own array type; on CUDA the work runs on the caller's current stream (or ``stream=``) and nothing
  waits for it.

Invalid input raises ``opendml.Error`` (a ``ValueError``) with the library's message; a valid
request that opendml cannot carry out raises ``opendml.UnsupportedError`` (a
``NotImplementedError``).
"""

from ._opendml import (
    EXTENSION_64BIT_INDICES,
    EXTENSION_COORDINATE_OFFSETS,
    EXTENSION_FILL_ROWS,
    BindingProperties,
    CompiledOperator,
    DataType,
    Device,
    DeviceError,
    Error,
    FeatureLevel,
    JoinDesc,
    NonzeroCoordinatesDesc,
    Operator,
    OperatorDesc,
    OutOfMemoryError,
    SplitDesc,
    TensorDesc,
    TensorFlags,
    UnsupportedError,
    built_with_cuda,
    cache_info,
    clear_cache,
    concat,
    nonzero,
    set_cache_capacity,
    split,
)

__version__ = "0.1.0"

__all__ = [
    "EXTENSION_64BIT_INDICES",
    "EXTENSION_COORDINATE_OFFSETS",
    "EXTENSION_FILL_ROWS",
    "BindingProperties",
    "CompiledOperator",
    "DataType",
    "Device",
    "DeviceError",
    "Error",
    "FeatureLevel",
    "JoinDesc",
    "NonzeroCoordinatesDesc",
    "Operator",
    "OperatorDesc",
    "OutOfMemoryError",
    "SplitDesc",
    "TensorDesc",
    "TensorFlags",
    "UnsupportedError",
    "built_with_cuda",
    "cache_info",
    "clear_cache",
    "concat",
    "nonzero",
    "set_cache_capacity",
    "split",
]
