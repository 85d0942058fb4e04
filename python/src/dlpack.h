// Borrowing arrays from other libraries without a copy: DLPack (the `__dlpack__` protocol, with its
// stream handshake) and, where an object lacks it, the CUDA array interface.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "common.h"

namespace opendml::python {

// DLPack's ABI (version 1.0 and the legacy unversioned form): what a producer's capsule points to.
struct DLDevice {
  int32_t device_type;
  int32_t device_id;
};
struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements; null means packed row-major
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor*);
};
struct DLPackVersion {
  uint32_t major, minor;
};
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned*);
  uint64_t flags;
  DLTensor dl_tensor;
};

// DLPack's device types that opendml can address.
constexpr int32_t kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLCUDAManaged = 13;

// DLPack's C exchange API (DLPack 1.2 and later): a table of C functions that a library publishes on
// its array type as __dlpack_c_exchange_api__, so that a consumer can read an array's DLTensor and
// the library's current stream without a Python call or a capsule. Only the entries used here are
// typed; the layout is version 1's, the same in every minor version.
struct DLPackExchangeAPIHeader {
  DLPackVersion version;
  DLPackExchangeAPIHeader* prev_api;
};
struct DLPackExchangeAPI {
  DLPackExchangeAPIHeader header;
  void* managed_tensor_allocator;
  void* managed_tensor_from_py_object_no_sync;
  void* managed_tensor_to_py_object_no_sync;
  // Fills *out with a view of the array (valid while the array lives and is not changed); 0, or -1
  // with a Python error set.
  int (*dltensor_from_py_object_no_sync)(void* py_object, DLTensor* out);
  // The library's current stream for a device (null on the CPU); 0, or -1 with a Python error set.
  int (*current_work_stream)(int32_t device_type, int32_t device_id, void** out_stream);
};

// Where an array's memory lives, as the opendml device that can address it.
struct Place {
  bool cuda = false;
  int32_t id = 0;
  bool operator==(const Place&) const = default;
  std::string name() const { return cuda ? "cuda:" + std::to_string(id) : "cpu"; }
  // Field by field: the bytes between them are padding, whatever a Place was built from.
  void append_key(std::string& key) const {
    key.push_back(cuda ? 'g' : 'h');
    key.append(reinterpret_cast<const char*>(&id), sizeof id);
  }
};

// Storage for dimensions; DirectML's own limit (8) is the library's to report, with its message.
constexpr int kMaxDims = 32;

// DLPack's type codes (DLDataTypeCode) that the array layer reads.
enum : uint8_t { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4, kDLBool = 6 };

// An array borrowed for the length of one call: its address, data type and layout in elements.
class Borrowed {
 public:
  Borrowed() = default;
  Borrowed(Borrowed&& other) noexcept { *this = std::move(other); }
  Borrowed& operator=(Borrowed&& other) noexcept;
  Borrowed(const Borrowed&) = delete;
  ~Borrowed() { release(); }

  std::byte* data = nullptr;
  Place place;
  DML_TENSOR_DATA_TYPE type = DML_TENSOR_DATA_TYPE_UNKNOWN;
  uint8_t code = 0;  // DLPack's type code: bool and uint8, bfloat16 and float16 share a DirectML type
  uint32_t element_bytes = 0;
  int ndim = 0;
  // Only the first ndim entries are set: left uninitialized, since a call makes several Borrowed.
  int64_t shape[kMaxDims];
  int64_t strides[kMaxDims];  // in elements

  int64_t size() const {
    int64_t n = 1;
    for (int d = 0; d < ndim; ++d) n *= shape[d];
    return n;
  }
  // The element type in DLPack's words ("bool8", "bfloat16", "float32", ...).
  std::string type_name() const;
  // Packed row-major (dimensions of size 1 may have any stride).
  bool contiguous() const;
  // Bytes from the first element to one past the last, as a binding region must cover.
  uint64_t extent_bytes() const;

 private:
  friend Borrowed borrow(nb::handle, const Name&, Place, intptr_t, bool);
  friend void borrow_capsule(nb::handle, const Name&, bool, Borrowed&);
  void release();
  void* managed_ = nullptr;
  void (*release_)(void*) = nullptr;
};

// A new reference from the C API, or the Python error it set.
nb::object checked(PyObject* result);

// The device an array's memory is on (its __dlpack_device__, or the CUDA array interface's pointer).
Place place_of(nb::handle array, const Name& what);

// Borrows `array` (named `what` in messages) that lives at `place`. On CUDA, `stream` is the
// cudaStream_t the work will run on: the producer makes it wait for the array (DLPack's handshake).
// A `writable` array must not come back read-only or copied.
Borrowed borrow(nb::handle array, const Name& what, Place place, intptr_t stream, bool writable);

// Takes over a DLPack capsule (legacy or versioned) that a producer made, filling b with its
// memory, place, type and layout; b releases the capsule's tensor when it goes.
void borrow_capsule(nb::handle capsule, const Name& what, bool writable, Borrowed& b);
// Whether a DLTensor is on a device opendml can address.
bool on_cpu_or_cuda(const DLTensor& t);
// Fills b with a DLTensor's memory, place, type and layout (the tensor's owner keeps the memory).
void describe(const DLTensor& t, const Name& what, Borrowed& b);
// A PyTorch tensor's place, or none where it is neither on the CPU nor on CUDA (DLPack tells then).
std::optional<Place> torch_place(nb::handle tensor);

}  // namespace opendml::python

namespace opendml::python {

// A cudaStream_t from Python: None (the null stream), an int, or a stream object of PyTorch
// (.cuda_stream), CuPy (.ptr) or any library that speaks __cuda_stream__.
intptr_t stream_handle(nb::handle stream);

// Orders stream `consumer` after the work queued so far on stream `producer` (an event, not the
// host); nothing where they are the same stream. `what` begins the message of a CUDA error.
void order_streams(intptr_t producer, intptr_t consumer, const std::string& what);

// The device that an opendml::Device runs on, from its name ("cpu (...)", "cuda:N (...)").
Place place_of(const Device& device);

}  // namespace opendml::python
