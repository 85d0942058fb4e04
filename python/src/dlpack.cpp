#include "dlpack.h"

#include <charconv>
#include <cstdint>
#include <unordered_map>

#ifdef OPENDML_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace opendml::python {
namespace {

constexpr uint64_t kDLFlagReadOnly = 1, kDLFlagIsCopied = 2;

std::string python_type_name(nb::handle obj) { return nb::type_name(obj.type()).c_str(); }

// A tuple that another library hands over (__dlpack_device__, the CUDA array interface's data and
// strides, __cuda_stream__), checked to hold `size` items before any is read: nanobind's indexing
// does not check.
nb::tuple tuple_of(nb::handle obj, size_t size, const std::string& what) {
  if (!nb::isinstance<nb::tuple>(obj) || nb::len(obj) != size)
    invalid(what + " is " + nb::repr(obj).c_str() + "; it must be a tuple of " + std::to_string(size));
  return nb::borrow<nb::tuple>(obj);
}

// The DirectML type that moves and tests an element exactly as the array's own type would.
DML_TENSOR_DATA_TYPE dml_type(uint8_t code, uint8_t bits, uint16_t lanes) {
  if (lanes != 1) return DML_TENSOR_DATA_TYPE_UNKNOWN;
  switch (code) {
    case kDLInt:
      return bits == 8    ? DML_TENSOR_DATA_TYPE_INT8
             : bits == 16 ? DML_TENSOR_DATA_TYPE_INT16
             : bits == 32 ? DML_TENSOR_DATA_TYPE_INT32
             : bits == 64 ? DML_TENSOR_DATA_TYPE_INT64
                          : DML_TENSOR_DATA_TYPE_UNKNOWN;
    case kDLUInt:
      return bits == 8    ? DML_TENSOR_DATA_TYPE_UINT8
             : bits == 16 ? DML_TENSOR_DATA_TYPE_UINT16
             : bits == 32 ? DML_TENSOR_DATA_TYPE_UINT32
             : bits == 64 ? DML_TENSOR_DATA_TYPE_UINT64
                          : DML_TENSOR_DATA_TYPE_UNKNOWN;
    case kDLFloat:
      return bits == 16   ? DML_TENSOR_DATA_TYPE_FLOAT16
             : bits == 32 ? DML_TENSOR_DATA_TYPE_FLOAT32
             : bits == 64 ? DML_TENSOR_DATA_TYPE_FLOAT64
                          : DML_TENSOR_DATA_TYPE_UNKNOWN;
    // bfloat16 travels as FLOAT16: both are copied bit for bit, and both are zero exactly when every
    // bit but the sign is zero, which is NONZERO's test for FLOAT16.
    case kDLBfloat: return bits == 16 ? DML_TENSOR_DATA_TYPE_FLOAT16 : DML_TENSOR_DATA_TYPE_UNKNOWN;
    // A bool is one byte holding 0 or 1: UINT8 moves and tests it the same way.
    case kDLBool: return bits == 8 ? DML_TENSOR_DATA_TYPE_UINT8 : DML_TENSOR_DATA_TYPE_UNKNOWN;
    default: return DML_TENSOR_DATA_TYPE_UNKNOWN;
  }
}

std::string dl_type_name(uint8_t code, uint8_t bits, uint16_t lanes) {
  static const char* const names[] = {"int", "uint", "float", "opaque", "bfloat", "complex", "bool"};
  // DLPack 1.1's narrow float types, from code 7 on: their names hold their width.
  static const char* const narrow[] = {"float8_e3m4",     "float8_e4m3",   "float8_e4m3b11fnuz", "float8_e4m3fn",
                                       "float8_e4m3fnuz", "float8_e5m2",   "float8_e5m2fnuz",    "float8_e8m0fnu",
                                       "float6_e2m3fn",   "float6_e3m2fn", "float4_e2m1fn"};
  std::string name;
  if (code < 7)
    name = names[code] + std::to_string(bits);
  else if (code - 7u < std::size(narrow))
    name = narrow[code - 7];
  else
    name = "type code " + std::to_string(code) + " of " + std::to_string(bits);
  if (lanes != 1) name += "x" + std::to_string(lanes);
  return name;
}

void set_type(Borrowed& b, uint8_t code, uint8_t bits, uint16_t lanes, const Name& what) {
  b.type = dml_type(code, bits, lanes);
  b.code = code;
  if (b.type == DML_TENSOR_DATA_TYPE_UNKNOWN)
    unsupported(what + " has element type " + dl_type_name(code, bits, lanes) + ", which has no DirectML data type");
  b.element_bytes = bits / 8;
}

void set_layout(Borrowed& b, int ndim, const int64_t* shape, const int64_t* strides, const Name& what) {
  if (ndim > kMaxDims) invalid(what + " has " + std::to_string(ndim) + " dimensions; DirectML tensors have at most 8");
  if (ndim < 0) invalid(what + " says it has " + std::to_string(ndim) + " dimensions");
  if (ndim > 0 && shape == nullptr) invalid(what + " has no shape");
  b.ndim = ndim;
  bool empty = false;
  for (int d = 0; d < ndim; ++d) {
    if (shape[d] < 0)
      invalid(what + " has a size of " + std::to_string(shape[d]) + " in dimension " + std::to_string(d));
    b.shape[d] = shape[d];
    empty = empty || shape[d] == 0;
  }
  // A producer may describe more elements, or a wider span, than 64 bits count (no array holds
  // them): refused, since Borrowed::size() and extent_bytes() would wrap. (An empty array's
  // packed strides are never used.)
  int64_t packed = 1;
  uint64_t last = 0;  // the largest element offset
  bool wraps = false;
  for (int d = ndim - 1; d >= 0; --d) {
    b.strides[d] = strides ? strides[d] : packed;
    const uint64_t step = b.strides[d] < 0 ? uint64_t{0} - uint64_t(b.strides[d]) : uint64_t(b.strides[d]);
    uint64_t reach = 0;
    wraps = __builtin_mul_overflow(packed, shape[d], &packed) || wraps;
    if (!empty)
      wraps = __builtin_mul_overflow(uint64_t(shape[d] - 1), step, &reach) ||
              __builtin_add_overflow(last, reach, &last) || wraps;
  }
  uint64_t bytes = 0;
  if (!empty && (wraps || last == UINT64_MAX || __builtin_mul_overflow(last + 1, uint64_t{b.element_bytes}, &bytes))) {
    std::string sizes;
    for (int d = 0; d < ndim; ++d) sizes += (d ? ", " : "") + std::to_string(shape[d]);
    invalid(what + " has shape (" + sizes + "), whose elements or span in bytes pass what 64 bits count");
  }
}

#ifdef OPENDML_WITH_CUDA
void check_cuda(cudaError_t error, const std::string& what) {
  if (error != cudaSuccess) throw Error(ODML_STATUS_DEVICE_FAILURE, what + ": " + cudaGetErrorString(error));
}
#endif

int cuda_device_of(uintptr_t pointer, const Name& what) {
#ifdef OPENDML_WITH_CUDA
  if (pointer == 0) {  // an empty array has no memory to ask about: it is on the current device
    int device = 0;
    check_cuda(cudaGetDevice(&device), what + ": cudaGetDevice");
    return device;
  }
  cudaPointerAttributes attributes{};
  check_cuda(cudaPointerGetAttributes(&attributes, reinterpret_cast<const void*>(pointer)),
             what + ": cudaPointerGetAttributes");
  if (attributes.type != cudaMemoryTypeDevice && attributes.type != cudaMemoryTypeManaged)
    invalid(what + ": its __cuda_array_interface__ points at memory that is not on a CUDA device");
  return attributes.device;
#else
  (void)pointer;
  unsupported(what + " is CUDA memory (__cuda_array_interface__) but this build of opendml has no CUDA backend");
#endif
}

// An array's __cuda_array_interface__, checked to be a dict with the entries every version has and
// a shape that is a tuple, before any is read.
nb::dict cuda_array_interface(nb::handle array, const Name& what) {
  if (!nb::hasattr(array, "__cuda_array_interface__"))
    invalid(what + ": " + python_type_name(array) +
            " has __dlpack_device__ but neither __dlpack__ nor __cuda_array_interface__ to hand its memory over");
  const nb::object interface = array.attr("__cuda_array_interface__");
  if (!nb::isinstance<nb::dict>(interface))
    invalid(what + ": its __cuda_array_interface__ is a " + python_type_name(interface) + ", not a dict");
  const nb::dict cai = nb::borrow<nb::dict>(interface);
  for (const char* key : {"data", "typestr", "shape"})
    if (!cai.contains(key)) invalid(what + ": its __cuda_array_interface__ has no '" + std::string(key) + "'");
  const auto expect = [&](const char* key, bool ok, const char* type) {
    if (!ok)
      invalid(what + ": its __cuda_array_interface__['" + key + "'] is a " + python_type_name(cai[key]) + ", not a " +
              type);
  };
  expect("shape", nb::isinstance<nb::tuple>(cai["shape"]), "tuple");
  expect("typestr", nb::isinstance<nb::str>(cai["typestr"]), "str");
  return cai;
}

void borrow_cuda_array_interface(Borrowed& b, nb::handle array, const Name& what, intptr_t stream, bool writable) {
  const nb::dict cai = cuda_array_interface(array, what);
  if (cai.contains("mask") && !cai["mask"].is_none()) unsupported(what + " has a mask (__cuda_array_interface__)");
  const nb::tuple data = tuple_of(cai["data"], 2, what + ": __cuda_array_interface__['data']");
  if (writable && nb::cast<bool>(data[1])) invalid(what + " is read-only");
  b.data = reinterpret_cast<std::byte*>(nb::cast<uintptr_t>(data[0]));

  // typestr: byte order, kind, bytes ("<f4", "|b1").
  // Read as a Python str: this file has no std::string caster (nanobind/stl/string.h), and a cast to
  // a type without one compiles but fails at run time.
  const std::string typestr = nb::cast<nb::str>(cai["typestr"]).c_str();
  int bytes = 0;  // 1, 2, 4 or 8, the sizes DirectML's types have
  if (typestr.size() >= 3) {
    const char* end = typestr.data() + typestr.size();
    const auto [last, error] = std::from_chars(typestr.data() + 2, end, bytes);
    if (error != std::errc() || last != end || (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8)) bytes = 0;
  }
  const char kind = typestr.size() >= 3 ? typestr[1] : '?';
  const uint8_t code = kind == 'i'   ? kDLInt
                       : kind == 'u' ? kDLUInt
                       : kind == 'f' ? kDLFloat
                       : kind == 'b' ? kDLBool
                                     : 255;
  if (typestr[0] == '>' || code == 255 || bytes == 0)
    unsupported(what + " has element type '" + typestr + "', which has no DirectML data type");
  set_type(b, code, static_cast<uint8_t>(bytes * 8), 1, what);

  const auto shape = nb::cast<nb::tuple>(cai["shape"]);
  int64_t dims[kMaxDims], strides[kMaxDims];
  const int ndim = static_cast<int>(shape.size());
  if (ndim > kMaxDims) invalid(what + " has " + std::to_string(ndim) + " dimensions; DirectML tensors have at most 8");
  const bool strided = cai.contains("strides") && !cai["strides"].is_none();
  const nb::tuple byte_strides =
      strided ? tuple_of(cai["strides"], shape.size(), what + ": __cuda_array_interface__['strides']") : nb::tuple();
  for (int d = 0; d < ndim; ++d) {
    dims[d] = nb::cast<int64_t>(shape[d]);
    if (strided) {
      const int64_t byte_stride = nb::cast<int64_t>(byte_strides[d]);
      if (byte_stride % bytes != 0)
        unsupported(what + " has a stride of " + std::to_string(byte_stride) +
                    " bytes, not a whole number of elements");
      strides[d] = byte_stride / bytes;
    }
  }
  set_layout(b, ndim, dims, strided ? strides : nullptr, what);
  if (cai.contains("stream") && !cai["stream"].is_none())
    order_streams(nb::cast<intptr_t>(cai["stream"]), stream,
                  what + ": ordering the stream after __cuda_array_interface__['stream']");
}

// Producers that predate DLPack 1.0 reject max_version; each such type is asked once.
std::unordered_map<PyTypeObject*, bool>& legacy_producers() {
  static auto& types = *new std::unordered_map<PyTypeObject*, bool>;
  return types;
}

// array.__dlpack__(stream=..., max_version=(1, 0)) through vectorcall: this is on every call's path.
nb::object call_dlpack(nb::handle array, Place place, intptr_t stream) {
  static PyObject* const name = PyUnicode_InternFromString("__dlpack__");
  static PyObject* slots[4] = {};
  PyObject* const version = kept_object(slots[0], [] { return nb::make_tuple(1, 0); });
  PyObject* const kw_version = kept_object(slots[1], [] { return nb::make_tuple("max_version"); });
  PyObject* const kw_stream = kept_object(slots[2], [] { return nb::make_tuple("stream"); });
  PyObject* const kw_stream_version = kept_object(slots[3], [] { return nb::make_tuple("stream", "max_version"); });
  // DLPack's stream numbers: 1 is CUDA's legacy default stream, which the null handle means here.
  nb::object stream_number = nb::int_(stream == 0 ? intptr_t(1) : stream);
  bool& legacy = legacy_producers()[Py_TYPE(array.ptr())];
  PyObject* args[3] = {array.ptr(), nullptr, nullptr};
  PyObject* kwnames = nullptr;
  if (place.cuda) {
    args[1] = stream_number.ptr();
    args[2] = version;
    kwnames = legacy ? kw_stream : kw_stream_version;
  } else {
    args[1] = version;
    kwnames = legacy ? nullptr : kw_version;
  }
  const size_t nargs = 1 | PY_VECTORCALL_ARGUMENTS_OFFSET;
  PyObject* result = PyObject_VectorcallMethod(name, args, nargs, kwnames);
  if (result == nullptr && !legacy && PyErr_ExceptionMatches(PyExc_TypeError)) {
    // A producer from before DLPack 1.0 takes no max_version: asked again without it. Its type is
    // remembered as such unless the retry fails with a TypeError too (a type it cannot export, say),
    // which leaves nothing known: one array's TypeError must not take DLPack 1.0 (its read-only flag)
    // from every later array of its type. The retry's error is the producer's own.
    PyErr_Clear();
    legacy = true;
    try {
      return call_dlpack(array, place, stream);
    } catch (const nb::python_error& e) {
      if (e.matches(PyExc_TypeError)) legacy = false;
      throw;
    }
  }
  if (result == nullptr) throw nb::python_error();
  return nb::steal(result);
}

}  // namespace

Borrowed& Borrowed::operator=(Borrowed&& other) noexcept {
  if (this != &other) {
    release();
    data = other.data;
    place = other.place;
    type = other.type;
    element_bytes = other.element_bytes;
    code = other.code;
    ndim = other.ndim;
    std::copy(other.shape, other.shape + ndim, shape);
    std::copy(other.strides, other.strides + ndim, strides);
    managed_ = other.managed_;
    release_ = other.release_;
    other.managed_ = nullptr;
    other.release_ = nullptr;
  }
  return *this;
}

void Borrowed::release() {
  if (release_ != nullptr) release_(managed_);
  release_ = nullptr;
  managed_ = nullptr;
}

std::string Borrowed::type_name() const { return dl_type_name(code, static_cast<uint8_t>(element_bytes * 8), 1); }

bool Borrowed::contiguous() const {
  int64_t packed = 1;
  for (int d = ndim - 1; d >= 0; --d) {
    if (shape[d] != 1 && strides[d] != packed) return false;
    packed *= shape[d];
  }
  return true;
}

uint64_t Borrowed::extent_bytes() const {
  uint64_t last = 0;
  for (int d = 0; d < ndim; ++d) {
    if (shape[d] == 0) return 0;
    last += uint64_t(shape[d] - 1) * uint64_t(strides[d] < 0 ? -strides[d] : strides[d]);
  }
  return (last + 1) * element_bytes;
}

nb::object checked(PyObject* result) {
  if (result == nullptr) throw nb::python_error();
  return nb::steal(result);
}

std::optional<Place> torch_place(nb::handle tensor) {
  static PyObject* const is_cuda = PyUnicode_InternFromString("is_cuda");
  static PyObject* const is_cpu = PyUnicode_InternFromString("is_cpu");
  static PyObject* const get_device = PyUnicode_InternFromString("get_device");
  if (PyObject_IsTrue(checked(PyObject_GetAttr(tensor.ptr(), is_cuda)).ptr()) == 1)
    return Place{true, nb::cast<int>(checked(PyObject_CallMethodNoArgs(tensor.ptr(), get_device)))};
  if (PyObject_IsTrue(checked(PyObject_GetAttr(tensor.ptr(), is_cpu)).ptr()) == 1) return Place{false, 0};
  return std::nullopt;
}

Place place_of(nb::handle array, const Name& what) {
  // Memory that only the CUDA array interface hands over (borrow) is placed by its pointer: a
  // __dlpack_device__ beside it could claim the CPU, and the CPU backend would read a device address.
  const bool interface_only = !nb::hasattr(array, "__dlpack__") && nb::hasattr(array, "__cuda_array_interface__");
  if (nb::hasattr(array, "__dlpack_device__") && !interface_only) {
    nb::object result;
    try {
      result = array.attr("__dlpack_device__")();
    } catch (nb::python_error& e) {
      if (passes_through(e)) throw;
      invalid(what + ": " + python_type_name(array) + ".__dlpack_device__ failed: " + error_line(e));
    }
    const nb::tuple device = tuple_of(result, 2, what + ": " + python_type_name(array) + ".__dlpack_device__()");
    const int32_t type = nb::cast<int32_t>(device[0]), id = nb::cast<int32_t>(device[1]);
    if (type == kDLCPU || type == kDLCUDAHost) return {false, 0};
    if (type == kDLCUDA || type == kDLCUDAManaged) return {true, id};
    unsupported(what + " is on DLPack device type " + std::to_string(type) + "; opendml runs on the CPU and CUDA");
  }
  if (interface_only) {
    const nb::tuple data =
        tuple_of(cuda_array_interface(array, what)["data"], 2, what + ": __cuda_array_interface__['data']");
    return {true, cuda_device_of(nb::cast<uintptr_t>(data[0]), what)};
  }
  invalid(what + " is " + a_type(array) +
          ", which speaks neither DLPack (__dlpack__) nor the CUDA array interface; pass an array "
          "(NumPy, PyTorch, CuPy, JAX, ...)");
}

void borrow_capsule(nb::handle capsule, const Name& what, bool writable, Borrowed& b) {
  PyObject* cap = capsule.ptr();
  DLTensor* t = nullptr;
  uint64_t flags = 0;
  if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
    auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(cap, "dltensor_versioned"));
    PyCapsule_SetName(cap, "used_dltensor_versioned");  // the deleter is now ours to call
    b.managed_ = m;
    b.release_ = [](void* p) {
      auto* m = static_cast<DLManagedTensorVersioned*>(p);
      if (m->deleter) m->deleter(m);
    };
    t = &m->dl_tensor;
    flags = m->flags;
    if (m->version.major != 1)  // DLPack: a consumer must not read a major version it does not know
      unsupported(what + " came as DLPack " + std::to_string(m->version.major) + "." +
                  std::to_string(m->version.minor) + "; opendml reads DLPack 1.x");
  } else if (PyCapsule_IsValid(cap, "dltensor")) {
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, "dltensor"));
    PyCapsule_SetName(cap, "used_dltensor");
    b.managed_ = m;
    b.release_ = [](void* p) {
      auto* m = static_cast<DLManagedTensor*>(p);
      if (m->deleter) m->deleter(m);
    };
    t = &m->dl_tensor;
  } else {
    invalid(what + ": its producer returned something other than a DLPack capsule");
  }
  if (writable && (flags & kDLFlagReadOnly)) invalid(what + " is read-only");
  if (writable && (flags & kDLFlagIsCopied))
    invalid(what + " came through DLPack as a copy, so results written to it would be lost");
  const int32_t type = t->device.device_type;
  if (!on_cpu_or_cuda(*t))
    unsupported(what + " is on DLPack device type " + std::to_string(type) + "; opendml runs on the CPU and CUDA");
  describe(*t, what, b);
}

bool on_cpu_or_cuda(const DLTensor& t) {
  const int32_t type = t.device.device_type;
  return type == kDLCPU || type == kDLCUDAHost || type == kDLCUDA || type == kDLCUDAManaged;
}

void describe(const DLTensor& t, const Name& what, Borrowed& b) {
  const int32_t type = t.device.device_type;
  b.place = {type == kDLCUDA || type == kDLCUDAManaged,
             type == kDLCUDA || type == kDLCUDAManaged ? t.device.device_id : 0};
  b.data = static_cast<std::byte*>(t.data) + t.byte_offset;
  set_type(b, t.dtype.code, t.dtype.bits, t.dtype.lanes, what);
  set_layout(b, t.ndim, t.shape, t.strides, what);
}

Borrowed borrow(nb::handle array, const Name& what, Place place, intptr_t stream, bool writable) {
  Borrowed b;
  b.place = place;
  if (!nb::hasattr(array, "__dlpack__")) {
    borrow_cuda_array_interface(b, array, what, stream, writable);
    return b;
  }
  nb::object capsule;
  try {
    capsule = call_dlpack(array, place, stream);
  } catch (nb::python_error& e) {
    if (passes_through(e)) throw;
    // NumPy refuses to export a read-only array through unversioned DLPack, for instance.
    invalid(what + ": " + python_type_name(array) + ".__dlpack__ failed: " + error_line(e));
  }
  borrow_capsule(capsule, what, writable, b);
  if (!(b.place == place)) invalid(what + ": its DLPack capsule is on " + b.place.name() + ", not " + place.name());
  return b;
}

}  // namespace opendml::python

namespace opendml::python {

// Orders stream `consumer` after the work queued so far on stream `producer` (an event, not the
// host): the CUDA array interface's producer stream before ours, and ours before the caller's
// library's current stream where a call ran on another (Call::after).
void order_streams(intptr_t producer, intptr_t consumer, const std::string& what) {
#ifdef OPENDML_WITH_CUDA
  if (producer == consumer) return;
  cudaEvent_t event;
  check_cuda(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), what);
  cudaError_t error = cudaEventRecord(event, reinterpret_cast<cudaStream_t>(producer));
  if (error == cudaSuccess) error = cudaStreamWaitEvent(reinterpret_cast<cudaStream_t>(consumer), event, 0);
  cudaEventDestroy(event);
  check_cuda(error, what);
#else
  (void)producer, (void)consumer;
  unsupported(what + ": this build of opendml has no CUDA backend");
#endif
}

intptr_t stream_handle(nb::handle stream) {
  if (stream.is_none()) return 0;
  // The handle, and what it was read from, for the messages.
  nb::object value;
  const char* from = "stream";
  if (PyLong_Check(stream.ptr()) && !PyBool_Check(stream.ptr())) {
    value = nb::borrow(stream);
  } else if (nb::hasattr(stream, "__cuda_stream__")) {
    value = tuple_of(stream.attr("__cuda_stream__")(), 2, "stream.__cuda_stream__()")[1];
    from = "stream.__cuda_stream__()[1]";
  } else if (nb::hasattr(stream, "cuda_stream")) {
    value = stream.attr("cuda_stream");
    from = "stream.cuda_stream";
  } else if (nb::hasattr(stream, "ptr")) {
    value = stream.attr("ptr");
    from = "stream.ptr";
  } else {
    invalid("stream is " + a_type(stream) +
            "; pass None, a cudaStream_t as an int, or a stream object (PyTorch, CuPy, __cuda_stream__)");
  }
  if (!PyLong_Check(value.ptr()) || PyBool_Check(value.ptr()))
    invalid(std::string(from) + " is " + a_type(value) + "; a cudaStream_t is an int");
  // A cudaStream_t is an address (or 0, 1 and 2, the CUDA runtime's default streams): never
  // negative, and never past a pointer. Anything else would reach the CUDA runtime as a handle.
  int overflow = 0;
  const long long handle = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
  if (overflow != 0 || handle < 0 || handle > INTPTR_MAX)
    invalid(std::string(from) + " is " + nb::str(value).c_str() + "; a cudaStream_t is an address from 0 to 2^" +
            std::to_string(sizeof(intptr_t) * 8 - 1) + " - 1");
  return static_cast<intptr_t>(handle);
}

Place place_of(const Device& device) {
  const std::string name = device.name();
  if (name.rfind("cuda:", 0) == 0) return {true, std::atoi(name.c_str() + 5)};
  return {false, 0};
}

}  // namespace opendml::python
