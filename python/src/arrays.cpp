// The array layer: opendml.nonzero, concat and split on any DLPack array, without a copy. Each call
// describes the arrays as DirectML buffer tensors (a view's strides become DirectML strides), finds
// the compiled operator for that description in a bounded cache, and executes it on the caller's
// stream. The rules are the library's: this file only translates and reports in NumPy's terms.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <list>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "frameworks.h"
#include "operators.h"

#ifdef OPENDML_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace opendml::python {
namespace {

using namespace nb::literals;

// ---- Devices and calls -------------------------------------------------------------------------

// One array-layer call: the device and stream every array of it must share.
struct Call {
  const char* prefix;  // "concat: ", for messages
  nb::handle like;     // the first array: results are allocated like it
  const Framework* framework;
  Target target;
  Place& place = target.place;
  intptr_t& stream = target.stream;
  std::optional<Borrowed> first;  // a PyTorch first array, borrowed once to learn its place

  Call(const char* prefix_, nb::handle first_array, const char* what, nb::handle stream_arg)
      : prefix(prefix_), like(first_array), framework(&framework_for(first_array)) {
    if (framework->is_torch()) {
      first.emplace(take_torch(*framework, first_array, {prefix, what}, std::nullopt, false));
      place = first->place;
    } else {
      place = place_of_array(first_array, {prefix, what});
    }
    // The caller's stream: given (checked wherever the arrays live, as the descriptor layer does), or
    // its library's current one, on which no handshake is needed.
    const intptr_t given = stream_handle(stream_arg);
    if (stream_arg.is_none()) target.current_of = framework;
    if (place.cuda) stream = stream_arg.is_none() ? framework->current_stream(first_array, place.id) : given;
    if (place.cuda && !stream_arg.is_none() && !framework->synchronize) order_current_after_given();
  }
  Call(const Call&) = delete;

  // Where the call runs on another stream than its library's current one (stream=), the current one
  // waits for the call's work (finish) if the call took memory from the library (empty): the results
  // and the temporary region come from the current stream's pool, which hands their memory on as
  // soon as nothing holds them, the temporary region at once. `after`: that stream, or -1. The two
  // must be outside any CUDA graph capture or in one: a stream in a capture cannot wait for one
  // outside it, nor can a capture keep what that pool takes back.
  intptr_t after = -1;
  bool allocated = false;
  void order_current_after_given() {
    const intptr_t current = framework->current_stream(like, place.id);
    if (current == stream) return;
#ifdef OPENDML_WITH_CUDA
    const DeviceScope scope(place.id);
    const auto capture_of = [](intptr_t s) -> std::pair<bool, unsigned long long> {
      cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
      unsigned long long id = 0;
      if (cudaStreamGetCaptureInfo(reinterpret_cast<cudaStream_t>(s), &status, &id) != cudaSuccess) {
        cudaGetLastError();
        return {false, 0};
      }
      return {status != cudaStreamCaptureStatusNone, id};
    };
    const auto given = capture_of(stream), mine = capture_of(current);
    if ((given.first || mine.first) && given != mine)
      unsupported(std::string(prefix) + "stream= " + (given.first ? "is" : "is not") +
                  " capturing a CUDA graph and the current stream of the arrays' library " +
                  (mine.first ? "is" : "is not") + (given.first && mine.first ? ", another one" : "") +
                  "; the results and the temporary region come from the current stream's pool, and the call "
                  "orders the current stream after stream=, which needs both in one capture or neither: "
                  "capture on the current stream (torch.cuda.graph and CuPy's `with stream:` make it so), or "
                  "fork stream= into its capture first");
#endif
    after = current;
  }
  // After the call's work is queued.
  void finish() {
    if (after < 0 || !allocated) return;
#ifdef OPENDML_WITH_CUDA
    const DeviceScope scope(place.id);
#endif
    order_streams(stream, after, std::string(prefix) + "ordering the library's current stream after stream=");
  }

  // `fresh`: an array this call allocated (empty, below).
  Borrowed take(nb::handle array, const Name& what, bool writable, bool fresh = false) {
    if (first && array.ptr() == like.ptr() && !writable) {
      // Borrowed before the stream was known: with a stream given explicitly, PyTorch's handshake
      // may be needed, which only __dlpack__ makes; so the first borrow serves where none is.
      Borrowed b = std::move(*first);
      first.reset();
      if (target.no_handshake(*framework, array)) return b;
    }
    return opendml::python::take(array, what, target, writable, fresh);
  }
  nb::object empty(std::span<const int64_t> shape, const char* dtype = nullptr) {
    allocated = true;
    return framework->empty(like, shape, dtype);
  }
  nb::object empty(std::initializer_list<int64_t> shape, const char* dtype = nullptr) {
    return empty(std::span<const int64_t>(shape.begin(), shape.size()), dtype);
  }
};

using BorrowedArrays = Few<Borrowed, 4>;

std::span<const int64_t> shape_of(const Borrowed& b) { return {b.shape, static_cast<size_t>(b.ndim)}; }

std::string shape_string(std::span<const int64_t> shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

// NumPy's rule: -ndim <= axis < ndim.
uint32_t normalize_axis(int64_t axis, int ndim, const char* prefix) {
  if (axis < -ndim || axis >= ndim)
    invalid(std::string(prefix) + "axis " + std::to_string(axis) + " is out of bounds for arrays of dimension " +
            std::to_string(ndim) + " (" + std::to_string(-ndim) + " to " + std::to_string(ndim - 1) + ")");
  return static_cast<uint32_t>(axis < 0 ? axis + ndim : axis);
}

// ---- Arrays as DirectML buffer tensors ------------------------------------------------------------

// `order` permutes the array's dimensions into DirectML's (a transposed view of the coordinates).
Spec spec_of(const Borrowed& b, const Name& what, const int* order = nullptr) {
  Spec s;
  s.type = b.type;
  s.rank = static_cast<uint32_t>(b.ndim);
  s.data = b.data;
  s.packed = order == nullptr && b.contiguous();
  for (uint32_t d = 0; d < s.rank; ++d) {
    const int from = order ? order[d] : static_cast<int>(d);
    const int64_t size = b.shape[from], stride = b.shape[from] == 1 ? 0 : b.strides[from];
    if (size > int64_t(UINT32_MAX)) to_uint32(size, what + ".shape[" + std::to_string(from) + "]");
    s.sizes[d] = static_cast<uint32_t>(size);
    if (s.packed) continue;
    if (stride < 0)
      unsupported(what + " has a negative stride along dimension " + std::to_string(from) +
                  " (a reversed view); DirectML's strides are unsigned, and opendml makes no hidden copy");
    if (stride > int64_t(UINT32_MAX)) to_uint32(stride, what + ".strides[" + std::to_string(from) + "] (in elements)");
    s.strides[d] = static_cast<uint32_t>(stride);  // 0 for a size of 1: any stride reaches its only element
  }
  // DirectML binds at multiples of 16 bytes unless the tensor says less; a view may start anywhere
  // its element size allows.
  const auto address = reinterpret_cast<uintptr_t>(b.data);
  const uintptr_t lowest = address & (~address + 1);
  if (address != 0 && lowest < 16) {
    if (lowest < b.element_bytes)
      unsupported(what + " starts at an address that is not a multiple of its element size");
    s.alignment = static_cast<uint32_t>(lowest);
  }
  return s;
}

// ---- Compiled operators, cached by description and device ----------------------------------------

class Cache {
 public:
  std::shared_ptr<Entry> find(const std::string& key) {
    auto it = index_.find(key);
    if (it == index_.end()) {
      ++misses_;
      return nullptr;
    }
    ++hits_;
    lru_.splice(lru_.begin(), lru_, it->second);  // most recently used first
    return it->second->second;
  }
  void insert(const std::string& key, std::shared_ptr<Entry> entry) {
    if (capacity_ == 0) return;
    lru_.emplace_front(key, std::move(entry));
    index_.emplace(lru_.front().first, lru_.begin());
    trim();
  }
  void set_capacity(size_t capacity) {
    capacity_ = capacity;
    trim();
  }
  void clear() {
    index_.clear();
    lru_.clear();
    hits_ = misses_ = 0;
  }
  nb::dict info() const {
    nb::dict d;
    d["size"] = lru_.size();
    d["capacity"] = capacity_;
    d["hits"] = hits_;
    d["misses"] = misses_;
    return d;
  }

 private:
  void trim() {
    while (lru_.size() > capacity_) {
      index_.erase(lru_.back().first);
      lru_.pop_back();
    }
  }
  using Item = std::pair<std::string, std::shared_ptr<Entry>>;
  std::list<Item> lru_;
  std::unordered_map<std::string_view, std::list<Item>::iterator> index_;  // views of the keys in lru_
  size_t capacity_ = 256;
  uint64_t hits_ = 0, misses_ = 0;
};

Cache& cache() {
  static auto& c = *new Cache;
  return c;
}

// What execute binds, reused by every call on the thread (a warm call allocates nothing there, and
// reaches the thread's storage once). The pointers stay after the call: tests prove zero copy with
// them (_last_bindings).
struct Bound {
  std::vector<std::byte*> in, out;
  std::vector<odml_buffer_binding> regions;
};
thread_local Bound t_bound;

// Creates, compiles and initializes an operator once per description. Initialization uploads the
// persistent region on the caller's stream and waits for it, once, so that the entry can then run on
// any stream; every later call finds it here and never waits.
template <class MakeDesc>
std::shared_ptr<Entry> compiled(const std::string& key, Call& call, std::span<const Spec* const> tensors,
                                uint32_t extensions, MakeDesc make_desc, ColumnValues columns = {}) {
  if (std::shared_ptr<Entry> hit = cache().find(key)) return hit;
  const Device& device = device_for(call.place);
  std::shared_ptr<Entry> entry = compile_entry(device, tensors, extensions, make_desc, columns);
  if (entry->persistent_bytes) entry->persistent = std::make_unique<Buffer>(device, entry->persistent_bytes);
  void* stream = reinterpret_cast<void*>(call.stream);
  initialize(*entry, entry->persistent ? entry->persistent->binding().data : nullptr, stream);
  if (entry->persistent) device.synchronize(stream);
  cache().insert(key, entry);
  return entry;
}

void execute(const Entry& e, Call& call, std::span<const Spec* const> inputs, std::span<const Spec* const> outputs) {
  // The temporary region comes from the caller's library, so that it is stream-ordered like any
  // other of its allocations; over-allocated to meet DirectML's 256-byte alignment. Allocated
  // before t_bound is filled: the library's Python code could call opendml again on this thread.
  nb::object temporary_array;
  void* temporary = nullptr;
  if (e.temporary_bytes) {
    const int64_t bytes = static_cast<int64_t>(e.temporary_bytes + 256);
    temporary_array = call.empty({bytes}, "uint8");
    const Borrowed t = call.take(temporary_array, {call.prefix, "the temporary region"}, true, true);
    temporary = align_256(t.data);
  }
  Bound& bound = t_bound;
  bound.in.clear();
  bound.out.clear();
  for (const Spec* s : inputs) bound.in.push_back(s->data);
  for (const Spec* s : outputs) bound.out.push_back(s->data);
  const odml_bindings b =
      bindings(e, bound.in, bound.out, temporary, e.persistent ? e.persistent->binding().data : nullptr, bound.regions);
  void* stream = reinterpret_cast<void*>(call.stream);
  if (call.place.cuda) {
    e.op.execute(b, stream);
    if (call.framework->synchronize) device_for(call.place).synchronize(stream);
    call.finish();
    call.target.written();  // last: what raises here leaves the streams ordered
  } else if (e.bytes < (1u << 20)) {
    e.op.execute(b, stream);  // small: releasing the GIL would cost more than the copy
    call.target.written();
  } else {
    {
      nb::gil_scoped_release release;  // the CPU backend runs here, on its own threads
      e.op.execute(b, stream);
    }
    call.target.written();
  }
}

// Writes a zero count for an empty input, which DirectML cannot describe.
void zero(Call& call, std::byte* data, uint64_t bytes) {
  if (!call.place.cuda) {
    std::memset(data, 0, bytes);
    call.target.written();
    return;
  }
#ifdef OPENDML_WITH_CUDA
  const DeviceScope scope(call.place.id);  // on the array's device, which need not be the current one
  const cudaError_t error = cudaMemsetAsync(data, 0, bytes, reinterpret_cast<cudaStream_t>(call.stream));
  if (error != cudaSuccess)
    throw Error(ODML_STATUS_DEVICE_FAILURE, std::string(call.prefix) + cudaGetErrorString(error));
  call.finish();
  call.target.written();
#else
  unsupported(std::string(call.prefix) + "this build of opendml has no CUDA backend");
#endif
}

// ---- The operations ----------------------------------------------------------------------------------

// Arrays past DirectML's 32-bit element counts and extents need opendml's 64-bit indices extension,
// which the array layer asks for wherever the arrays need it.
bool beyond_32_bits(const Borrowed& b) {
  return uint64_t(b.size()) > UINT32_MAX || b.extent_bytes() / std::max(b.element_bytes, 1u) > UINT32_MAX;
}

bool is_64bit_index(const std::string& index_dtype) {
  if (index_dtype == "uint32") return false;
  if (index_dtype == "int64" || index_dtype == "uint64") return true;
  invalid("nonzero: index_dtype is '" + index_dtype +
          "'; it must be 'uint32', or 'int64' or 'uint64' (opendml's "
          "64-bit indices extension)");
}

// The coordinates as DirectML's (M, N), through the strides of the (N, M) array when transposed.
// Past 2^32 - 1 rows, which one 32-bit size cannot hold, the rows go as two dimensions (the 64-bit
// indices extension allows row dimensions that multiply to M while the rows stay evenly spaced):
// the sizes of a prefix and of the rest of x's shape.
Spec coords_spec(const Borrowed& c, bool transposed, const Borrowed& x, const Name& what) {
  static const int kTransposed[2] = {1, 0};
  const int row = transposed ? 1 : 0, column = 1 - row;
  if (uint64_t(c.shape[row]) <= UINT32_MAX) return spec_of(c, what, transposed ? kTransposed : nullptr);
  if (c.shape[row] != x.size())
    invalid(what + " has " + std::to_string(c.shape[row]) + " rows but x has " + std::to_string(x.size()) +
            " elements");
  for (int split = 1; split < x.ndim; ++split) {
    int64_t outer = 1;
    for (int d = 0; d < split; ++d) outer *= x.shape[d];
    const int64_t inner = x.size() / outer;
    if (uint64_t(outer) > UINT32_MAX || uint64_t(inner) > UINT32_MAX ||
        uint64_t(inner) * uint64_t(c.strides[row]) > UINT32_MAX)
      continue;
    Borrowed rows;  // the same memory, described with the rows in two dimensions
    rows.data = c.data;
    rows.type = c.type;
    rows.code = c.code;
    rows.element_bytes = c.element_bytes;
    rows.ndim = 3;
    const int64_t shape[3] = {outer, inner, c.shape[column]},
                  strides[3] = {inner * c.strides[row], c.strides[row], c.strides[column]};
    std::copy(shape, shape + 3, rows.shape);
    std::copy(strides, strides + 3, rows.strides);
    return spec_of(rows, what);
  }
  unsupported(what + ": the " + std::to_string(c.shape[row]) +
              " rows of x's coordinates cannot be laid out with DirectML's "
              "32-bit sizes and strides (split x's shape differently, or do not transpose)");
}

std::string repr_of(nb::handle v) { return nb::repr(v).c_str(); }

// An integer (anything with __index__: NumPy's too; not a bool) per coordinate column, or with `scalar` one for
// every column, into `values`, each through convert(v as a Python int, v as int64, whether it fits
// int64); nothing for None.
template <class Convert>
void column_values(Call& call, nb::handle arg, int64_t n, const char* name, bool scalar, std::vector<uint64_t>& values,
                   Convert&& convert) {
  values.clear();
  if (arg.is_none()) return;
  const Name what{call.prefix, name};
  const auto one = [&](nb::handle v) {
    const bool is_bool = PyBool_Check(v.ptr());  // no integer here, as for an axis (python_index)
    PyObject* index = is_bool ? nullptr : PyNumber_Index(v.ptr());
    if (index == nullptr) {
      if (!is_bool) clear_expected(PyExc_TypeError);
      invalid(what + " holds " + repr_of(v) + ", not an integer");
    }
    const nb::object i = nb::steal(index);
    int64_t s = 0;
    const bool is_signed = nb::try_cast<int64_t>(i, s, false);
    values.push_back(convert(i, s, is_signed));
  };
  // A sequence has a length; a 0-d array passes for a sequence but has none, and is one integer. A
  // string is a sequence of strings, not of integers.
  const bool text = PyUnicode_Check(arg.ptr()) || PyBytes_Check(arg.ptr());
  Py_ssize_t length = PySequence_Check(arg.ptr()) && !text ? PyObject_Length(arg.ptr()) : -1;
  if (length < 0) PyErr_Clear();
  if (scalar && PyIndex_Check(arg.ptr()) && length < 0) {
    for (int64_t j = 0; j < n; ++j) one(arg);
    return;
  }
  if (length < 0)
    invalid(what + " is " + a_type(arg) + "; it must be a sequence (a list or tuple)" +
            (scalar ? " or an integer" : ""));
  if (int64_t(length) != n)
    invalid(what + " has " + std::to_string(length) + " values; it needs one per coordinate column (" +
            std::to_string(n) + ")");
  for (nb::handle v : nb::borrow<nb::sequence>(arg)) one(v);
}

nb::tuple nonzero(nb::handle x, nb::handle columns, bool transposed, const std::string& index_dtype,
                  nb::handle offsets_arg, nb::handle fill_arg, nb::handle out, nb::handle stream) {
  Call call("nonzero: ", x, "x", stream);
  // NumPy's nonzero skips a masked array's masked elements; its data, which DLPack hands over, keeps them.
  if (framework_for(x).masked)
    unsupported(
        "nonzero: x is a masked array, whose masked elements NumPy's nonzero skips and opendml would "
        "count; pass x.filled(0)");
  const bool wide_index = is_64bit_index(index_dtype);
  const Borrowed input = call.take(x, {call.prefix, "x"}, false);
  if (input.ndim == 0) invalid("nonzero: x is 0-d; DirectML tensors have at least one dimension (reshape it to (1,))");
  const int64_t m = input.size();
  const int64_t n = columns.is_none() ? input.ndim : integer(columns, {call.prefix, "columns"});
  if (n < 1 || n > input.ndim)
    invalid("nonzero: columns is " + std::to_string(n) + "; coordinates have 1 to x.ndim (" +
            std::to_string(input.ndim) + ") columns");
  uint32_t extensions = wide_index || beyond_32_bits(input) ? ODML_EXTENSION_64BIT_INDICES : 0;
  // Coordinate offsets (opendml's extension): a non-negative integer per column. Not thread_local:
  // reading them calls each value's __index__, which may call nonzero again on this thread.
  std::vector<uint64_t> offsets, fill;
  column_values(call, offsets_arg, n, "offsets", false, offsets,
                [](nb::handle v, int64_t s, bool is_signed) -> uint64_t {
                  if (!is_signed || s < 0)
                    invalid("nonzero: offsets holds " + repr_of(v) + "; offsets are not negative (and below 2^63)");
                  return static_cast<uint64_t>(s);
                });
  // Checked before allocating coordinates for so many rows.
  if (out.is_none() && !wide_index && uint64_t(m) > UINT32_MAX)
    invalid("nonzero: x has " + std::to_string(m) +
            " elements, past 2^32 - 1, so its count needs 64 bits: pass "
            "index_dtype='int64' or 'uint64'");

  // Fill rows (opendml's extension): each column's value in the rows past the count, as the
  // coordinates' type holds it: index_dtype's, read before the coordinates are allocated, or out='s.
  // Of a type the library refuses for coordinates any 64-bit value is taken, and the library says why.
  const auto read_fill = [&](const std::string& type) {
    const bool u32 = type == "uint32", u64 = type == "uint64", i64 = type == "int64", known = u32 || u64 || i64;
    column_values(call, fill_arg, n, "fill", true, fill, [&](nb::handle v, int64_t s, bool is_signed) -> uint64_t {
      if (is_signed && (i64 || !known || (s >= 0 && (u64 || s <= int64_t{UINT32_MAX}))))
        return static_cast<uint64_t>(s);
      uint64_t u = 0;
      if (!is_signed && (u64 || !known) && nb::try_cast<uint64_t>(v, u, false)) return u;
      invalid("nonzero: fill holds " + repr_of(v) + ", which " + (type == "int64" ? "an " : "a ") + type +
              " coordinate cannot hold");
    });
  };
  nb::object coords, count;
  if (out.is_none()) {
    read_fill(index_dtype);
    const char* dtype = index_dtype.c_str();
    count = call.empty({1}, dtype);
    coords = transposed ? call.empty({n, m}, dtype) : call.empty({m, n}, dtype);
  } else {
    const nb::sequence pair = sequence(out, {call.prefix, "out"});
    if (nb::len(pair) != 2) invalid("nonzero: out must be (coords, count)");
    coords = pair[0];
    count = pair[1];
  }
  const bool fresh = out.is_none();
  const Borrowed c = call.take(coords, {call.prefix, "coords"}, true, fresh),
                 k = call.take(count, {call.prefix, "count"}, true, fresh);
  // out= of 64-bit indices, or uint32 coordinates past 2^32 - 1 elements (2^31 rows of 2 columns)
  for (const Borrowed* b : {&c, &k})
    if (b->element_bytes == 8 || beyond_32_bits(*b)) extensions = ODML_EXTENSION_64BIT_INDICES;
  if (!fresh) read_fill(c.type_name());
  if (c.ndim != 2)
    invalid("nonzero: coords has " + std::to_string(c.ndim) + " dimensions; it must be 2-D, (x.size, columns)" +
            (transposed ? " transposed" : ""));
  Spec in, cnt, crd;
  if (m == 0) {
    // DirectML has no empty tensors: the operator is compiled for a stand-in x of one element (and one
    // row of coordinates), so that the library checks the types and extensions as it does for any x;
    // then only the count is written.
    if (c.shape[transposed ? 0 : 1] != n || c.shape[transposed ? 1 : 0] != 0)
      invalid("nonzero: coords has shape " + shape_string(shape_of(c)) + "; it must have " + std::to_string(n) +
              " columns and no rows (x has no elements)");
    in.type = input.type;
    in.rank = static_cast<uint32_t>(input.ndim);
    std::fill_n(in.sizes, in.rank, 1u);
    crd.type = c.type;
    crd.rank = 2;
    crd.sizes[0] = 1;
    crd.sizes[1] = static_cast<uint32_t>(n);
  } else {
    in = spec_of(input, {call.prefix, "x"});
    crd = coords_spec(c, transposed, input, {call.prefix, "coords"});
  }
  cnt = spec_of(k, {call.prefix, "count"});
  if (cnt.rank == 0) cnt.rank = 1, cnt.sizes[0] = 1;  // a 0-d count is one element

  thread_local std::string key;
  key.assign("N");
  call.place.append_key(key);
  key.append(reinterpret_cast<const char*>(&extensions), sizeof extensions);
  for (const Spec* s : std::initializer_list<const Spec*>{&in, &cnt, &crd}) s->append_key(key);
  for (const std::vector<uint64_t>* values : {&offsets, &fill}) {
    key.push_back(static_cast<char>(values->size()));
    key.append(reinterpret_cast<const char*>(values->data()), values->size() * sizeof(uint64_t));
  }
  const Spec* const tensors[] = {&in, &cnt, &crd};
  const auto entry = compiled(key, call, tensors, extensions, nonzero_desc, ColumnValues{offsets, fill});
  if (m == 0) {
    zero(call, k.data, k.element_bytes);
    return nb::make_tuple(coords, count);
  }
  execute(*entry, call, std::span(tensors).first(1), std::span(tensors).subspan(1));
  return nb::make_tuple(coords, count);
}

// The shape every piece must have but along axis; names the first piece that differs.
void check_pieces(Call& call, std::span<const Borrowed> pieces, const char* name, const Borrowed& whole,
                  uint32_t axis) {
  for (size_t i = 0; i < pieces.size(); ++i) {
    const Borrowed& p = pieces[i];
    // The element types themselves, not only their DirectML types: bool and uint8 share one, and
    // joining them would give one the other's bytes unconverted.
    bool same = p.ndim == whole.ndim && p.type == whole.type && p.code == whole.code;
    for (int d = 0; same && d < p.ndim; ++d) same = d == int(axis) || p.shape[d] == whole.shape[d];
    if (!same)
      invalid(Name{call.prefix, name, int(i)} + " has shape " + shape_string(shape_of(p)) + " and element type " +
              p.type_name() + " but the whole has shape " + shape_string(shape_of(whole)) + " and type " +
              whole.type_name() + "; every dimension other than axis " + std::to_string(axis) +
              " and the type must match");
  }
}

// The cache key of a JOIN or SPLIT, built in a buffer that every call on the thread reuses (nothing
// runs between building it and looking it up).
const std::string& join_split_key(char op, Call& call, uint32_t axis, uint32_t extensions, const Spec& whole,
                                  std::span<const Spec> pieces) {
  thread_local std::string key;
  key.assign(1, op);
  call.place.append_key(key);
  key.append(reinterpret_cast<const char*>(&extensions), sizeof extensions);
  key.append(reinterpret_cast<const char*>(&axis), sizeof axis);
  size_t bytes = whole.key_bytes();
  for (const Spec& s : pieces) bytes += s.key_bytes();
  const size_t at = key.size();
  key.resize(at + bytes);
  char* p = whole.write_key(key.data() + at);
  for (const Spec& s : pieces) p = s.write_key(p);
  return key;
}

nb::object concat(nb::handle arrays_arg, nb::handle axis_arg, nb::handle out, nb::handle stream) {
  // The arrays as a tuple of the call's own, which holds each for the whole call: the array layer
  // keeps only their handles (a PyTorch tensor borrowed through its exchange API, its memory too),
  // while a sequence that makes its items as it is indexed (a NumPy array's rows) would drop them,
  // and a list can be changed meanwhile (by an item's __dlpack__, or by another thread while the
  // call runs without the GIL).
  const nb::object held = nb::steal(PySequence_Tuple(sequence(arrays_arg, {"concat: ", "arrays"}).ptr()));
  if (!held.is_valid()) throw nb::python_error();
  const nb::sequence arrays = nb::borrow<nb::sequence>(held);
  const size_t count = nb::len(arrays);
  if (count == 0) invalid("concat: arrays is empty; concatenation needs at least one array");
  Call call("concat: ", arrays[0], "arrays[0]", stream);
  const int64_t axis = integer(axis_arg, {call.prefix, "axis"});
  BorrowedArrays in(count);
  for (size_t i = 0; i < count; ++i) {
    check_gradient_kept(arrays[i], {call.prefix, "arrays", int(i)});
    in[i] = call.take(arrays[i], {call.prefix, "arrays", int(i)}, false);
  }
  if (in[0].ndim == 0) invalid("concat: arrays[0] is 0-d; zero-dimensional arrays cannot be concatenated");
  const uint32_t a = normalize_axis(axis, in[0].ndim, call.prefix);

  int64_t shape_storage[kMaxDims];
  const std::span<int64_t> shape(shape_storage, static_cast<size_t>(in[0].ndim));
  std::copy(in[0].shape, in[0].shape + in[0].ndim, shape.begin());
  shape[a] = 0;
  for (const Borrowed& b : in.all())
    if (b.ndim == in[0].ndim && __builtin_add_overflow(shape[a], b.shape[a], &shape[a]))
      invalid("concat: the arrays' lengths along axis " + std::to_string(a) + " add up past 2^63 - 1");
  nb::object result = out.is_none() ? call.empty(shape) : nb::borrow(out);
  const Borrowed whole = call.take(result, {call.prefix, "out"}, true, out.is_none());
  if (!std::ranges::equal(shape_of(whole), shape))
    invalid("concat: out has shape " + shape_string(shape_of(whole)) + " but the result has shape " +
            shape_string(shape));
  check_pieces(call, in.all(), "arrays", whole, a);
  if (whole.size() == 0) return result;

  // Arrays empty along axis take no part: DirectML has no empty tensors. tensors: the pieces, then
  // the whole.
  Few<Spec, 4> pieces(count);
  Few<const Spec*, 5> tensors(count + 1);
  size_t n = 0;
  for (size_t i = 0; i < count; ++i)
    if (in[i].size() > 0) pieces[n++] = spec_of(in[i], {call.prefix, "arrays", int(i)});
  const Spec w = spec_of(whole, {call.prefix, "out"});
  for (size_t i = 0; i < n; ++i) tensors[i] = &pieces[i];
  tensors[n] = &w;
  uint32_t extensions = beyond_32_bits(whole) ? ODML_EXTENSION_64BIT_INDICES : 0;
  for (const Borrowed& b : in.all()) extensions |= beyond_32_bits(b) ? ODML_EXTENSION_64BIT_INDICES : 0;
  const auto entry = compiled(join_split_key('J', call, a, extensions, w, pieces.first(n)), call, tensors.first(n + 1),
                              extensions, [a](std::vector<TensorDesc>& d) { return join_desc(d, a); });
  execute(*entry, call, tensors.first(n), tensors.all().subspan(n, 1));
  return result;
}

nb::list split(nb::handle x, nb::handle sizes, nb::handle axis_arg, nb::handle out, nb::handle stream) {
  Call call("split: ", x, "x", stream);
  const int64_t axis = integer(axis_arg, {call.prefix, "axis"});
  check_gradient_kept(x, {call.prefix, "x"});
  const Borrowed input = call.take(x, {call.prefix, "x"}, false);
  if (input.ndim == 0) invalid("split: x is 0-d; zero-dimensional arrays cannot be split");
  const uint32_t a = normalize_axis(axis, input.ndim, call.prefix);
  const int64_t length = input.shape[a];

  // A number of equal sections, or their sizes. A 1-D NumPy array has __index__ too (which fails on
  // use): an object with a length is a sequence.
  const auto one_number = [](nb::handle h) {
    if (!PyIndex_Check(h.ptr()) || !PySequence_Check(h.ptr())) return PyIndex_Check(h.ptr()) != 0;
    const Py_ssize_t length = PySequence_Size(h.ptr());
    if (length < 0) PyErr_Clear();
    return length < 0;
  };
  std::vector<int64_t> sections;
  if (one_number(sizes)) {
    const int64_t n = integer(sizes, {call.prefix, "sizes"});
    if (n > int64_t{UINT32_MAX})  // an empty axis splits into any number of sections
      invalid("split: sizes is " + std::to_string(n) + " sections; DirectML's SPLIT has at most 2^32 - 1 outputs");
    if (n <= 0 || length % n != 0)
      invalid("split: x.shape[" + std::to_string(a) + "] is " + std::to_string(length) +
              ", which does not split into " + std::to_string(n) + " equal sections");
    sections.assign(static_cast<size_t>(n), length / n);
  } else {
    int64_t sum = 0;
    for (nb::handle s : sequence(sizes, {call.prefix, "sizes"})) {
      const Name name{call.prefix, "sizes", int(sections.size())};
      const int64_t v = integer(s, name);
      if (v < 0) invalid(name + " is " + std::to_string(v) + "; section sizes cannot be negative");
      if (v > length)
        invalid(name + " is " + std::to_string(v) + " but x.shape[" + std::to_string(a) + "] is " +
                std::to_string(length));
      sections.push_back(v);
      if (__builtin_add_overflow(sum, v, &sum)) invalid("split: sizes add up past 2^63 - 1");
    }
    if (sections.empty()) invalid("split: sizes is empty; it needs at least one section");
    if (sum != length)
      invalid("split: sizes add up to " + std::to_string(sum) + " but x.shape[" + std::to_string(a) + "] is " +
              std::to_string(length));
  }

  uint32_t extensions = beyond_32_bits(input) ? ODML_EXTENSION_64BIT_INDICES : 0;
  nb::list parts;
  if (out.is_none()) {
    int64_t shape[kMaxDims];
    std::copy(input.shape, input.shape + input.ndim, shape);
    for (int64_t s : sections) {
      shape[a] = s;
      parts.append(call.empty({shape, static_cast<size_t>(input.ndim)}));
    }
  } else {
    for (nb::handle o : sequence(out, {call.prefix, "out"})) parts.append(o);
    if (parts.size() != sections.size())
      invalid("split: out has " + std::to_string(parts.size()) + " arrays but there are " +
              std::to_string(sections.size()) + " sections");
  }
  BorrowedArrays outs(sections.size());
  for (size_t i = 0; i < sections.size(); ++i) {
    outs[i] = call.take(parts[i], {call.prefix, "out", int(i)}, true, out.is_none());
    if (outs[i].ndim == input.ndim && outs[i].shape[a] != sections[i])
      invalid("split: out[" + std::to_string(i) + "] is " + std::to_string(outs[i].shape[a]) + " long along axis " +
              std::to_string(a) + " but its section is " + std::to_string(sections[i]));
    extensions |= beyond_32_bits(outs[i]) ? ODML_EXTENSION_64BIT_INDICES : 0;  // as concat's out=
  }
  check_pieces(call, outs.all(), "out", input, a);
  if (input.size() == 0) return parts;

  // Sections empty along axis take no part. tensors: the whole, then the pieces.
  Few<Spec, 4> pieces(sections.size());
  Few<const Spec*, 5> tensors(sections.size() + 1);
  size_t n = 0;
  for (size_t i = 0; i < sections.size(); ++i)
    if (outs[i].size() > 0) pieces[n++] = spec_of(outs[i], {call.prefix, "out", int(i)});
  const Spec w = spec_of(input, {call.prefix, "x"});
  tensors[0] = &w;
  for (size_t i = 0; i < n; ++i) tensors[i + 1] = &pieces[i];
  const auto entry = compiled(join_split_key('S', call, a, extensions, w, pieces.first(n)), call, tensors.first(n + 1),
                              extensions, [a](std::vector<TensorDesc>& d) { return split_desc(d, a); });
  execute(*entry, call, tensors.first(1), tensors.all().subspan(1, n));
  return parts;
}

}  // namespace

void bind_arrays(nb::module_& m) {
  m.def("nonzero", &nonzero, "x"_a, nb::kw_only(), "columns"_a = nb::none(), "transposed"_a = false,
        "index_dtype"_a = "uint32", "offsets"_a = nb::none(), "fill"_a = nb::none(), "out"_a = nb::none(),
        "stream"_a = nb::none(),
        "coords, count = nonzero(x): DirectML's NONZERO_COORDINATES. coords is (x.size, columns) (or "
        "(columns, x.size) transposed, ONNX Runtime's layout), count one element on x's device; rows past count "
        "are unspecified. columns: the trailing dimensions to report (default x.ndim). index_dtype: 'uint32', or "
        "'int64'/'uint64' (opendml's 64-bit indices extension). offsets: an integer per column added to every "
        "coordinate (opendml's coordinate offsets extension: the coordinates of a shard in the whole tensor). "
        "fill: an integer per column (or one for all) written into every row past count, in the same pass "
        "(opendml's fill rows extension; torch.nonzero_static's fill_value). out: (coords, count) to write into.");
  m.def("concat", &concat, "arrays"_a, "axis"_a = 0, nb::kw_only(), "out"_a = nb::none(), "stream"_a = nb::none(),
        "DirectML's JOIN: the arrays joined along axis (negative counts from the end), as the first array's type.");
  m.def("split", &split, "x"_a, "sizes"_a, "axis"_a = 0, nb::kw_only(), "out"_a = nb::none(), "stream"_a = nb::none(),
        "DirectML's SPLIT: x cut along axis into sections of the given sizes, or into that many equal sections.");
  m.def("cache_info", [] { return cache().info(); });
  m.def(
      "set_cache_capacity", [](size_t n) { cache().set_capacity(n); }, "capacity"_a);
  m.def("clear_cache", [] { cache().clear(); });
  m.def("_last_bindings", [] {
    const auto addresses = [](const std::vector<std::byte*>& v) {
      std::vector<uintptr_t> a;
      for (std::byte* p : v) a.push_back(reinterpret_cast<uintptr_t>(p));
      return a;
    };
    return std::make_pair(addresses(t_bound.in), addresses(t_bound.out));
  });
  // Whether arrays of this one's type are borrowed through their library's DLPack C exchange API.
  m.def("_borrows_through_exchange_api", [](nb::handle array) { return framework_for(array).exchange != nullptr; });
  // Whether results like this array are allocated through opendml._torch_alloc (PyTorch's at::empty).
  m.def("_allocates_through_torch_alloc", [](nb::handle array) { return framework_for(array).torch_empty != nullptr; });
}

}  // namespace opendml::python
