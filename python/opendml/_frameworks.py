"""How the array layer allocates results like the caller's arrays, and finds the caller's stream.

One adapter per array library. The extension asks `framework_of(type)` once per array type and
keeps the answer. An adapter has:
  empty(like, shape, dtype)        a new array on `like`'s device; dtype None means like's, else a
                                   name ("uint32", "int64", "uint64", "uint8")
  current_stream(like, device)     the cudaStream_t (an int) the library runs on for that device
  synchronize                      True where the library cannot order its own work after ours
  immutable                        True where the library's arrays must not be written (out= refused)
  masked                           True where its arrays carry a mask that their data leaves out
"""


class _NumPy:
    synchronize = False
    immutable = False
    masked = False

    def __init__(self):
        import numpy

        self._np = numpy

    def empty(self, like, shape, dtype):
        return self._np.empty(shape, like.dtype if dtype is None else dtype)

    def current_stream(self, like, device):
        return 0


def _torch_alloc(version):
    """opendml._torch_alloc's allocation (a capsule), where the package was built with it for this
    torch version, else None: built for another version, its C++ would not match this torch's."""
    try:
        from . import _torch_alloc
    except ImportError:
        return None
    return _torch_alloc.empty if _torch_alloc.torch_version == version else None


class _Torch:
    synchronize = False
    immutable = False
    masked = False

    def __init__(self):
        import torch
        import torch.utils.dlpack

        self._torch = torch
        # The extension allocates, finds the stream and borrows tensors itself, through PyTorch's own
        # functions (python/src/frameworks.h): these.
        self.dtypes = {name: getattr(torch, name) for name in ("uint32", "int64", "uint64", "uint8", "int8")}
        self.raw_current_stream = torch._C._cuda_getCurrentRawStream if torch.cuda.is_available() else None
        self.to_dlpack = torch.utils.dlpack.to_dlpack
        # What torch's own in-place operations do to a tensor they write, so that autograd sees an out=
        # tensor saved for a backward pass change (torch.autograd.graph.increment_version's C function).
        self.increment_version = getattr(torch._C, "_increment_version", None)
        self.grad_enabled = torch.is_grad_enabled  # inputs that require grad: see check_gradient_kept
        self.inference_mode = torch.is_inference_mode_enabled  # out= inference tensors: see check_torch
        # Inputs that carry a forward-mode tangent: see check_gradient_kept. Its level is -1 outside
        # forward_ad.dual_level(); a torch without that module global has no check.
        fwad = torch.autograd.forward_ad
        self.forward_ad = fwad if isinstance(getattr(fwad, "_current_level", None), int) else None
        # Below ADInplaceOrView (a fake implementation's stand-in run, inference mode) no operation
        # sees a tangent, and unpack_dual asserts there: none is dropped.
        excluded, below = torch._C._dispatch_tls_is_dispatch_key_excluded, torch._C.DispatchKey.ADInplaceOrView
        self.tangent_of = lambda t: None if excluded(below) else fwad.unpack_dual(t).tangent
        # A torch.func transform's tensor, which DLPack cannot hand over: asked where borrowing failed.
        self.transformed = getattr(torch._C._functorch, "is_functorch_wrapped_tensor", None)
        self.tensor_type = torch.Tensor  # whose __dlpack_c_exchange_api__, where PyTorch has one, the extension uses
        self.fast_empty = _torch_alloc(torch.__version__)

    def empty(self, like, shape, dtype):
        return like.new_empty(shape, dtype=like.dtype if dtype is None else self.dtypes[dtype])

    def current_stream(self, like, device):
        # The raw cudaStream_t of torch.cuda.current_stream(device), without building a Stream object.
        return self._torch._C._cuda_getCurrentRawStream(device)


class _CuPy:
    synchronize = False
    immutable = False
    masked = False

    def __init__(self):
        import cupy

        self._cupy = cupy

    def empty(self, like, shape, dtype):
        with like.device:
            return self._cupy.empty(shape, like.dtype if dtype is None else dtype)

    def current_stream(self, like, device):
        with self._cupy.cuda.Device(device):
            return self._cupy.cuda.get_current_stream().ptr


class _Jax:
    # JAX has no current stream to join and no way to order its streams after a foreign one, so on
    # CUDA the work runs on the default stream and the host waits for it before JAX reads results.
    synchronize = True
    immutable = True  # results are fresh buffers the array layer fills; out= would change a JAX array
    masked = False

    def __init__(self):
        import jax.numpy as jnp

        self._jnp = jnp

    def empty(self, like, shape, dtype):
        # A fresh buffer that nothing else references; the operator fills it in place.
        array = self._jnp.empty(shape, like.dtype if dtype is None else dtype, device=like.device)
        if dtype is not None and array.dtype != dtype:  # 64-bit types without jax_enable_x64
            from . import Error

            raise Error(f"JAX makes {array.dtype} arrays where {dtype} is asked for unless 64-bit types are on: "
                        "jax.config.update('jax_enable_x64', True), or index_dtype='uint32'")
        return array

    def current_stream(self, like, device):
        return 0


class _Other:
    """Any other DLPack or CUDA-array-interface producer: results come back as NumPy arrays on the
    CPU; on CUDA the caller passes out=."""

    synchronize = False
    immutable = False
    masked = False

    def __init__(self, name):
        self._name = name

    def empty(self, like, shape, dtype):
        import numpy

        # Memory offered only through the CUDA array interface is CUDA memory, whatever a
        # __dlpack_device__ beside it says (as the extension's place_of takes it).
        device = like.__dlpack_device__()[0] if hasattr(like, "__dlpack__") and hasattr(like, "__dlpack_device__") else 2
        if device not in (1, 3):
            from ._opendml import UnsupportedError

            raise UnsupportedError(
                f"opendml cannot allocate results like a {self._name} array on the GPU; pass out= "
                "(arrays of NumPy, PyTorch, CuPy or JAX are allocated for you)"
            )
        if dtype is None:
            try:  # the producer's element type, as NumPy reads it
                dtype = numpy.from_dlpack(like).dtype
            except (BufferError, RuntimeError, TypeError, ValueError) as e:  # bfloat16, say
                from ._opendml import UnsupportedError

                raise UnsupportedError(
                    f"opendml cannot allocate results like this {self._name} array as NumPy arrays ({e}); pass out="
                ) from None
        return numpy.empty(shape, dtype)

    def current_stream(self, like, device):
        return 0


class _NumPyMasked(_NumPy):
    """numpy.ma.MaskedArray and its subclasses: DLPack hands over their data without the mask, so
    nonzero, where NumPy's skips masked elements, refuses them; concat and split move the data, as
    numpy.concatenate does."""

    masked = True


_ADAPTERS = {"numpy": _NumPy, "torch": _Torch, "cupy": _CuPy, "jax": _Jax, "jaxlib": _Jax, "numpy.ma": _NumPyMasked}
_made = {}


def _root(array_type):
    return getattr(array_type, "__module__", "").split(".")[0]


def framework_of(array_type):
    # A subclass defined elsewhere (a torch.Tensor subclass of one's own) is its library's.
    root = next((_root(t) for t in array_type.__mro__ if _root(t) in _ADAPTERS), _root(array_type))
    if root == "numpy":
        import numpy

        if issubclass(array_type, numpy.ma.MaskedArray):
            root = "numpy.ma"
    if root not in _made:
        _made[root] = _ADAPTERS[root]() if root in _ADAPTERS else _Other(array_type.__qualname__)
    return _made[root]
