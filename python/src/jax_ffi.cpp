// JAX's way in: XLA FFI handlers for NONZERO_COORDINATES, JOIN and SPLIT, which opendml.jax registers
// for the CPU and CUDA platforms (docs/python.md, "opendml.jax"). XLA hands a handler dense row-major
// buffers whose shapes are fixed for the life of the call site, so each call site (an instance, whose
// State XLA creates at its instantiate stage) compiles its operator once per device, at its first
// execute there, and later executes only read it: no lock, no allocation of its own. On CUDA each
// target has a `_graph` twin that XLA may record into its command buffers, whose temporary region is
// its last result, sized when the call is traced (cuda_graph_execute, regions).
//
// Attributes (every target takes the four): `dml_type`, the DirectML type of the data elements (opendml.jax
// chooses it: JOIN and SPLIT move bits, NONZERO_COORDINATES tests the bits of a type with the same zero);
// `axis`, the JOIN/SPLIT axis; `batched`, nonzero only: the leading dimension of x and of both results is
// a batch (jax.vmap), each item its own NONZERO_COORDINATES, all run by the same compiled operator;
// `fill`, nonzero only: empty, or the bits of each coordinate column in the rows past the count
// (opendml's fill rows extension, docs/contract.md section 7: argwhere's fill_value).
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>
#include <xla/ffi/api/ffi.h>

#include <array>
#include <atomic>
#include <mutex>
#include <optional>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "operators.h"

#ifdef OPENDML_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace ffi = xla::ffi;

namespace opendml::python {
namespace {

enum class Kind { kNonzero, kJoin, kSplit };

// Device ordinals a call site can run on (slots are cheap: a flag and a pointer).
constexpr int kMaxDevices = 64;

// A call site's compiled operator on one device, and the bytes between batch items of each tensor
// (inputs then outputs; the batch's length in `items`). `ready` is published once all of it is set;
// the mutex is taken only until then. (Not std::call_once: with a compile that throws, some
// libstdc++ builds leave the next call_once waiting forever.)
struct Slot {
  std::atomic<const Entry*> ready{nullptr};
  std::mutex compiling;
  std::unique_ptr<Entry> entry;
  std::vector<uint64_t> item_bytes;
  int64_t items = 1;
};

struct State {
  DML_TENSOR_DATA_TYPE type;
  uint32_t axis;
  bool batched;
  std::vector<uint64_t> fill;
  std::array<Slot, kMaxDevices> slots;  // by CUDA device ordinal; slot 0 on the CPU
};

// The State type once per platform: jaxlib's CPU client and the CUDA plugin each keep their own
// type registry, so an id that one assigned may name another type in the other (on the GPU
// machine, the CPU's id for State was the CUDA plugin's id for a Mosaic type, and XLA crashed
// serializing it). XLA assigns each id when opendml.jax registers the type for that platform.
template <int kPlatform>
struct PlatformState : State {
  static ffi::TypeId id;
};
template <int kPlatform>
ffi::TypeId PlatformState<kPlatform>::id = {};
using CpuState = PlatformState<0>;
using CudaState = PlatformState<1>;

// Operators compiled by the handlers so far: tests prove with it that calls reuse them.
std::atomic<uint64_t> g_compiles{0};
// Calls of the _graph targets made while XLA recorded a command buffer: tests prove with it that XLA
// records them (a replay calls no handler).
std::atomic<uint64_t> g_recorded{0};

template <class S>
const XLA_FFI_TypeInfo kStateInfo = {XLA_FFI_TypeInfo_STRUCT_SIZE, nullptr,
                                     [](void* state) { delete static_cast<S*>(state); }};

template <class S>
ffi::ErrorOr<std::unique_ptr<S>> instantiate(int64_t type, int64_t axis, int64_t batched,
                                             ffi::Span<const int64_t> fill) {
  if (type < 0 || type > INT32_MAX || odml_data_type_bits(static_cast<DML_TENSOR_DATA_TYPE>(type)) == 0 || axis < 0 ||
      axis > UINT32_MAX)
    return ffi::Unexpected(ffi::Error::InvalidArgument("opendml.jax: the call's attributes are not opendml.jax's"));
  auto state = std::make_unique<S>();
  state->type = static_cast<DML_TENSOR_DATA_TYPE>(type);
  state->axis = static_cast<uint32_t>(axis);
  state->batched = batched != 0;
  state->fill.assign(fill.begin(), fill.end());  // two's complement bits, as the coordinates hold them
  return state;
}

// The coordinates' and count's index type, as the results' element type says.
DML_TENSOR_DATA_TYPE index_type(ffi::DataType t) {
  switch (t) {
    case ffi::DataType::U32:
    case ffi::DataType::S32: return DML_TENSOR_DATA_TYPE_UINT32;  // argwhere's int32, as uint32 bits
    case ffi::DataType::S64: return DML_TENSOR_DATA_TYPE_INT64;
    case ffi::DataType::U64: return DML_TENSOR_DATA_TYPE_UINT64;
    default: invalid("opendml.jax: nonzero's results must be uint32, int32, int64 or uint64");
  }
}

// What compiling needs of a buffer: its dimensions and element type, from XLA's buffer at the first
// execute, or from the abstract value at trace time (`_jax_regions`, which sizes a workspace).
struct BufferShape {
  std::vector<int64_t> dims;
  size_t byte_width = 0;
  ffi::DataType type = ffi::DataType::INVALID;  // read for nonzero's results (index_type)
  uint64_t size_bytes() const {
    uint64_t n = byte_width;
    for (int64_t d : dims) n *= static_cast<uint64_t>(d);
    return n;
  }
};

// A buffer without its `skip` leading (batch) dimensions, as a packed DirectML tensor. A batch item
// starts item_bytes past the last, which may be less aligned than XLA's 16 bytes.
Spec spec_of(const BufferShape& b, DML_TENSOR_DATA_TYPE type, int skip, uint64_t item_bytes, bool& wide) {
  const auto& dims = b.dims;
  Spec s;
  s.type = type;
  if (dims.size() - skip > kMaxDims) invalid("opendml.jax: a buffer has more than 32 dimensions");
  s.rank = static_cast<uint32_t>(dims.size() - skip);
  uint64_t elements = 1;
  for (uint32_t d = 0; d < s.rank; ++d) {
    s.sizes[d] = to_uint32(dims[skip + d], "opendml.jax: a dimension");
    elements *= s.sizes[d];
  }
  wide |= elements > UINT32_MAX;
  if (skip) {
    const uint64_t lowest = item_bytes & (~item_bytes + 1);
    if (lowest < 16) s.alignment = static_cast<uint32_t>(lowest);
  }
  return s;
}

// A call's buffers must be as many as the target takes (inputs then results), and a batch must lead
// every one of them. opendml.jax's primitives always pass what the target takes, but the targets are
// registered under their names for anyone's jax.ffi.ffi_call, so this is checked before anything is
// read through them.
void check_counts(Kind kind, size_t ins, size_t outs) {
  const bool counts_fit = kind == Kind::kNonzero ? ins == 1 && outs == 2
                          : kind == Kind::kJoin  ? ins >= 1 && outs == 1
                                                 : ins == 1 && outs >= 1;
  if (!counts_fit)
    invalid(std::string("opendml.jax: ") +
            (kind == Kind::kNonzero ? "nonzero takes one input and two results (count, coordinates)"
             : kind == Kind::kJoin  ? "join takes one input or more and one result"
                                    : "split takes one input and one result or more") +
            "; this call has " + std::to_string(ins) + " and " + std::to_string(outs));
}

void check_batch(Kind kind, const State& state, const std::vector<BufferShape>& shapes) {
  if (kind != Kind::kNonzero || !state.batched) return;
  const auto& batch = shapes[0].dims;
  if (batch.size() == 0) invalid("opendml.jax: a batched nonzero's x has no batch dimension");
  for (size_t i = 1; i < shapes.size(); ++i) {
    const auto& dims = shapes[i].dims;
    if (dims.size() == 0 || dims[0] != batch[0])
      invalid("opendml.jax: a batched nonzero's results lead with x's batch of " + std::to_string(batch[0]) +
              "; result " + std::to_string(i - 1) +
              (dims.size() == 0 ? " has no dimensions" : " leads with " + std::to_string(dims[0])));
  }
}

// The call's buffers, inputs then its first `results` results (a workspace may follow them).
std::vector<ffi::AnyBuffer> buffers_of(Kind kind, const ffi::RemainingArgs& args, const ffi::RemainingRets& rets,
                                       size_t results) {
  check_counts(kind, args.size(), results);
  std::vector<ffi::AnyBuffer> buffers;
  for (size_t i = 0; i < args.size(); ++i) {
    auto b = args.get<ffi::AnyBuffer>(i);
    if (!b.has_value()) invalid("opendml.jax: input " + std::to_string(i) + " is not a buffer");
    buffers.push_back(b.value());
  }
  for (size_t i = 0; i < results; ++i) {
    auto b = rets.get<ffi::AnyBuffer>(i);
    if (!b.has_value()) invalid("opendml.jax: result " + std::to_string(i) + " is not a buffer");
    buffers.push_back(*b.value());
  }
  return buffers;
}

// A call site's operator for these shapes on `place`, with the bytes between batch items of each
// tensor and the number of items.
struct Compiled {
  std::unique_ptr<Entry> entry;
  std::vector<uint64_t> item_bytes;
  int64_t items = 1;
};

Compiled compile_shapes(Kind kind, const State& state, Place place, const std::vector<BufferShape>& shapes) {
  check_batch(kind, state, shapes);
  Compiled c;
  const int skip = kind == Kind::kNonzero && state.batched ? 1 : 0;
  c.items = skip ? shapes[0].dims[0] : 1;
  bool wide = false;
  std::vector<Spec> specs;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const bool index = kind == Kind::kNonzero && i > 0;
    const DML_TENSOR_DATA_TYPE type = index ? index_type(shapes[i].type) : state.type;
    wide |= index && type != DML_TENSOR_DATA_TYPE_UINT32;
    if (!index && shapes[i].byte_width * 8 != odml_data_type_bits(type))
      invalid("opendml.jax: a buffer's element type does not have the width of the call's type");
    c.item_bytes.push_back(c.items > 0 ? shapes[i].size_bytes() / c.items : 0);
    specs.push_back(spec_of(shapes[i], type, skip, c.item_bytes.back(), wide));
  }
  std::vector<const Spec*> tensors;
  for (const Spec& s : specs) tensors.push_back(&s);
  const uint32_t extensions = wide ? ODML_EXTENSION_64BIT_INDICES : 0;
  const Device& device = device_for(place);
  const uint32_t axis = state.axis;
  if (kind == Kind::kNonzero)
    c.entry = compile_entry(device, tensors, extensions, nonzero_desc, ColumnValues{{}, state.fill});
  else if (kind == Kind::kJoin)
    c.entry = compile_entry(device, tensors, extensions, [axis](auto& d) { return join_desc(d, axis); });
  else
    c.entry = compile_entry(device, tensors, extensions, [axis](auto& d) { return split_desc(d, axis); });
  return c;
}

// Bytes an element of a buffer of type t: XLA packs types narrower than a byte several to a byte,
// where ffi::ByteWidth counts one each, so their buffers are refused rather than read past their end
// (no DirectML type is narrower than a byte).
size_t element_bytes(ffi::DataType t) {
  switch (t) {
    case ffi::DataType::S1:
    case ffi::DataType::S2:
    case ffi::DataType::S4:
    case ffi::DataType::U1:
    case ffi::DataType::U2:
    case ffi::DataType::U4:
    case ffi::DataType::F4E2M1FN:
      invalid("opendml.jax: a buffer's elements are narrower than a byte (XLA packs them), and no DirectML type is");
    default: return ffi::ByteWidth(t);
  }
}

void compile(Kind kind, const State& state, Slot& slot, Place place, void* stream,
             const std::vector<ffi::AnyBuffer>& buffers) {
  std::vector<BufferShape> shapes;
  for (const ffi::AnyBuffer& b : buffers) {
    // JOIN and SPLIT move the bits of one type: buffers of two types of one width (float32 and
    // int32, say) would pass the width check below and be joined bit for bit.
    if (kind != Kind::kNonzero && b.element_type() != buffers[0].element_type())
      invalid("opendml.jax: a join's or split's buffers must share one element type");
    const auto dims = b.dimensions();
    shapes.push_back({{dims.begin(), dims.end()}, element_bytes(b.element_type()), b.element_type()});
  }
  Compiled c = compile_shapes(kind, state, place, shapes);
  slot.entry = std::move(c.entry);
  slot.item_bytes = std::move(c.item_bytes);
  slot.items = c.items;
  g_compiles.fetch_add(1, std::memory_order_relaxed);
  // An operator with a persistent region is initialized at every call (run, below).
  if (!slot.entry->persistent_bytes) initialize(*slot.entry, nullptr, stream);
}

ffi::Error failure(const Error& e) {
  return ffi::Error(e.status() == ODML_STATUS_UNSUPPORTED        ? ffi::ErrorCode::kUnimplemented
                    : e.status() == ODML_STATUS_INVALID_ARGUMENT ? ffi::ErrorCode::kInvalidArgument
                                                                 : ffi::ErrorCode::kInternal,
                    e.what());
}

// One call: compiles on the first call on this device, then binds XLA's buffers and executes (once per
// batch item) on `stream`. The operator's results are the first `results` of `rets` (a workspace may
// follow). `scratch(bytes)` gives a 256-byte-aligned region that lasts the call, or null; `graph`: the
// call may be recorded into a command buffer, so nothing may be copied from the host.
template <class Scratch>
ffi::Error run(Kind kind, State* state, Place place, void* stream, const ffi::RemainingArgs& args,
               const ffi::RemainingRets& rets, size_t results, bool graph, Scratch&& scratch) try {
  if (place.id < 0 || place.id >= kMaxDevices)
    return ffi::Error::InvalidArgument("opendml.jax: device ordinal " + std::to_string(place.id) + " is past " +
                                       std::to_string(kMaxDevices - 1));
  Slot& slot = state->slots[place.id];
  const Entry* ready = slot.ready.load(std::memory_order_acquire);
  if (!ready) {
    std::lock_guard lock(slot.compiling);
    if (!(ready = slot.ready.load(std::memory_order_relaxed))) {
      slot.item_bytes.clear();  // from an attempt that failed
      compile(kind, *state, slot, place, stream, buffers_of(kind, args, rets, results));
      slot.ready.store(ready = slot.entry.get(), std::memory_order_release);
    }
  }
  const Entry& e = *ready;
  // On CUDA the persistent region lasts one call (XLA lends no memory across calls), so it is
  // filled on the stream before every execute; on the CPU no operator has one.
  void* persistent = nullptr;
  if (e.persistent_bytes) {
    if (graph)
      return ffi::Error::InvalidArgument(
          "opendml.jax: this operator fills a persistent region from the host at every call, which a command "
          "buffer cannot record; its target is the one without _graph");
    persistent = scratch(e.persistent_bytes);
    if (!persistent) return ffi::Error(ffi::ErrorCode::kResourceExhausted, "opendml.jax: no persistent region");
    initialize(e, persistent, stream);
  }
  void* temporary = nullptr;
  if (e.temporary_bytes && !(temporary = scratch(e.temporary_bytes)))
    return ffi::Error(ffi::ErrorCode::kResourceExhausted,
                      "opendml.jax: no temporary region of " + std::to_string(e.temporary_bytes) + " bytes" +
                          (graph ? " in the workspace (its last result, sized when the call was traced)" : ""));

  thread_local std::vector<std::byte*> in, out;
  thread_local std::vector<odml_buffer_binding> regions;
  for (int64_t item = 0; item < slot.items; ++item) {
    in.clear();
    out.clear();
    size_t t = 0;
    for (size_t i = 0; i < args.size(); ++i)  // as many as compile checked
      in.push_back(static_cast<std::byte*>(args.get<ffi::AnyBuffer>(i).value().untyped_data()) +
                   item * slot.item_bytes[t++]);
    for (size_t i = 0; i < results; ++i)
      out.push_back(static_cast<std::byte*>((*rets.get<ffi::AnyBuffer>(i).value()).untyped_data()) +
                    item * slot.item_bytes[t++]);
    e.op.execute(bindings(e, in, out, temporary, persistent, regions), stream);
  }
  return ffi::Error::Success();
} catch (const Error& e) {
  return failure(e);
} catch (const std::exception& e) {
  return ffi::Error::Internal(std::string("opendml.jax: ") + e.what());
}

// The CPU runs the operators before returning; the regions come from this thread's own memory.
template <Kind kind>
ffi::Error cpu_execute(CpuState* state, ffi::RemainingArgs args, ffi::RemainingRets rets, int64_t, int64_t, int64_t,
                       ffi::Span<const int64_t>) {
  thread_local std::vector<std::byte> regions[2];
  size_t next = 0;
  return run(kind, state, Place{}, nullptr, args, rets, rets.size(), false, [&](uint64_t bytes) -> void* {
    auto& r = regions[next++ % 2];
    r.resize(bytes + 256);
    return align_256(r.data());
  });
}

#define OPENDML_BIND_ATTRS \
  .Attr<int64_t>("dml_type").Attr<int64_t>("axis").Attr<int64_t>("batched").Attr<ffi::Span<const int64_t>>("fill")

XLA_FFI_DEFINE_HANDLER(kCpuInstantiate, instantiate<CpuState>, ffi::Ffi::BindInstantiate() OPENDML_BIND_ATTRS);

#define OPENDML_CPU_HANDLER(name, kind) \
  XLA_FFI_DEFINE_HANDLER(               \
      name, cpu_execute<kind>,          \
      ffi::Ffi::Bind().Ctx<ffi::State<CpuState>>().RemainingArgs().RemainingRets() OPENDML_BIND_ATTRS)
OPENDML_CPU_HANDLER(kCpuNonzero, Kind::kNonzero);
OPENDML_CPU_HANDLER(kCpuJoin, Kind::kJoin);
OPENDML_CPU_HANDLER(kCpuSplit, Kind::kSplit);

#ifdef OPENDML_WITH_CUDA
// On XLA's stream, with the regions from XLA's scratch allocator (stream-ordered, freed after the call).
// XLA refuses alignments past its allocator's (64 bytes): the region asked for is 256 bytes longer
// and aligned here.
template <Kind kind>
ffi::Error cuda_execute(cudaStream_t stream, ffi::ScratchAllocator scratch, int32_t ordinal, CudaState* state,
                        ffi::RemainingArgs args, ffi::RemainingRets rets, int64_t, int64_t, int64_t,
                        ffi::Span<const int64_t>) {
  return run(kind, state, Place{true, ordinal}, stream, args, rets, rets.size(), false, [&](uint64_t bytes) -> void* {
    const std::optional<void*> p = scratch.Allocate(bytes + 256);
    if (!p || *p == nullptr) return nullptr;
    return align_256(*p);
  });
}

// The same, compatible with XLA's command buffers (CUDA graphs): a recorded call is replayed with the
// addresses it was recorded with, which memory from the scratch allocator does not keep. So the
// temporary region comes from the call's last result, a workspace that opendml.jax sizes when it
// traces the call (_jax_regions) and XLA places like any other result; operators with a persistent
// region are not called through these targets.
template <Kind kind>
ffi::Error cuda_graph_execute(cudaStream_t stream, int32_t ordinal, CudaState* state, ffi::RemainingArgs args,
                              ffi::RemainingRets rets, int64_t, int64_t, int64_t, ffi::Span<const int64_t>) {
  auto workspace = rets.size() ? std::optional(rets.get<ffi::AnyBuffer>(rets.size() - 1)) : std::nullopt;
  if (!workspace || !workspace->has_value())
    return ffi::Error::InvalidArgument(
        "opendml.jax: a _graph target's last result is its workspace; this call has none");
  const ffi::AnyBuffer w = *workspace->value();
  std::byte* const begin = static_cast<std::byte*>(w.untyped_data());
  std::byte* const end = begin + w.size_bytes();
  std::byte* next = begin;
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &capture) == cudaSuccess && capture == cudaStreamCaptureStatusActive)
    g_recorded.fetch_add(1, std::memory_order_relaxed);
  return run(kind, state, Place{true, ordinal}, stream, args, rets, rets.size() - 1, true,
             [&](uint64_t bytes) -> void* {
               std::byte* const p = static_cast<std::byte*>(align_256(next));
               if (p > end || static_cast<uint64_t>(end - p) < bytes) return nullptr;
               next = p + bytes;
               return p;
             });
}

XLA_FFI_DEFINE_HANDLER(kCudaInstantiate, instantiate<CudaState>, ffi::Ffi::BindInstantiate() OPENDML_BIND_ATTRS);

#define OPENDML_CUDA_HANDLER(name, kind)                               \
  XLA_FFI_DEFINE_HANDLER(name, cuda_execute<kind>,                     \
                         ffi::Ffi::Bind()                              \
                             .Ctx<ffi::PlatformStream<cudaStream_t>>() \
                             .Ctx<ffi::ScratchAllocator>()             \
                             .Ctx<ffi::DeviceOrdinal>()                \
                             .Ctx<ffi::State<CudaState>>()             \
                             .RemainingArgs()                          \
                             .RemainingRets() OPENDML_BIND_ATTRS)
OPENDML_CUDA_HANDLER(kCudaNonzero, Kind::kNonzero);
OPENDML_CUDA_HANDLER(kCudaJoin, Kind::kJoin);
OPENDML_CUDA_HANDLER(kCudaSplit, Kind::kSplit);

#define OPENDML_CUDA_GRAPH_HANDLER(name, kind)                         \
  XLA_FFI_DEFINE_HANDLER(name, cuda_graph_execute<kind>,               \
                         ffi::Ffi::Bind()                              \
                             .Ctx<ffi::PlatformStream<cudaStream_t>>() \
                             .Ctx<ffi::DeviceOrdinal>()                \
                             .Ctx<ffi::State<CudaState>>()             \
                             .RemainingArgs()                          \
                             .RemainingRets() OPENDML_BIND_ATTRS,      \
                         {ffi::Traits::kCmdBufferCompatible})
OPENDML_CUDA_GRAPH_HANDLER(kCudaNonzeroGraph, Kind::kNonzero);
OPENDML_CUDA_GRAPH_HANDLER(kCudaJoinGraph, Kind::kJoin);
OPENDML_CUDA_GRAPH_HANDLER(kCudaSplitGraph, Kind::kSplit);
#endif

// The regions a call needs, at trace time: the largest temporary and persistent region the operator
// takes on any of `ordinals` (-1: the CPU), for `buffers` (dimensions, bytes an element and type name
// of each input, then each result), compiled as the handler compiles them at its first execute.
// opendml.jax sizes the workspace of a _graph target with it.
std::pair<uint64_t, uint64_t> regions(const std::string& target, int64_t type, int64_t axis, int64_t batched,
                                      const std::vector<int64_t>& fill,
                                      const std::vector<std::tuple<std::vector<int64_t>, size_t, std::string>>& buffers,
                                      const std::vector<int>& ordinals) {
  Kind kind = Kind::kNonzero;
  if (target == "opendml_join")
    kind = Kind::kJoin;
  else if (target == "opendml_split")
    kind = Kind::kSplit;
  else if (target != "opendml_nonzero")
    invalid("opendml.jax: no target '" + target + "'");
  auto state = instantiate<CpuState>(type, axis, batched, fill);
  if (!state.has_value()) invalid("opendml.jax: the call's attributes are not opendml.jax's");
  // nonzero's results are typed by name; the rest move bits, and only their width is read.
  static const std::pair<std::string_view, ffi::DataType> kIndexTypes[] = {{"uint32", ffi::DataType::U32},
                                                                           {"int32", ffi::DataType::S32},
                                                                           {"int64", ffi::DataType::S64},
                                                                           {"uint64", ffi::DataType::U64}};
  std::vector<BufferShape> shapes;
  for (const auto& [dims, width, name] : buffers) {
    BufferShape b{dims, width};
    for (const auto& [n, t] : kIndexTypes)
      if (name == n) b.type = t;
    for (int64_t d : dims)
      if (d < 0) invalid("opendml.jax: a dimension is " + std::to_string(d));
    shapes.push_back(std::move(b));
  }
  const size_t results = shapes.empty() ? 0 : kind == Kind::kJoin ? 1 : shapes.size() - 1;
  check_counts(kind, shapes.size() - results, results);
  std::pair<uint64_t, uint64_t> most{0, 0};
  for (int ordinal : ordinals) {
    if (ordinal < -1 || ordinal >= kMaxDevices) invalid("opendml.jax: device ordinal " + std::to_string(ordinal));
    const Compiled c = compile_shapes(kind, *state.value(), ordinal < 0 ? Place{} : Place{true, ordinal}, shapes);
    most = {std::max(most.first, c.entry->temporary_bytes), std::max(most.second, c.entry->persistent_bytes)};
  }
  return most;
}

nb::capsule capsule(const void* pointer) { return nb::capsule(const_cast<void*>(pointer)); }

// {platform: {target: {stage: capsule}}}, for jax.ffi.register_ffi_target.
nb::dict targets() {
  nb::dict platforms;
  auto bundle = [](XLA_FFI_Handler* instantiate, XLA_FFI_Handler* execute) {
    nb::dict stages;
    stages["instantiate"] = capsule(reinterpret_cast<const void*>(instantiate));
    stages["execute"] = capsule(reinterpret_cast<const void*>(execute));
    return stages;
  };
  nb::dict cpu;
  cpu["opendml_nonzero"] = bundle(kCpuInstantiate, kCpuNonzero);
  cpu["opendml_join"] = bundle(kCpuInstantiate, kCpuJoin);
  cpu["opendml_split"] = bundle(kCpuInstantiate, kCpuSplit);
  platforms["cpu"] = cpu;
#ifdef OPENDML_WITH_CUDA
  nb::dict cuda;
  cuda["opendml_nonzero"] = bundle(kCudaInstantiate, kCudaNonzero);
  cuda["opendml_join"] = bundle(kCudaInstantiate, kCudaJoin);
  cuda["opendml_split"] = bundle(kCudaInstantiate, kCudaSplit);
  cuda["opendml_nonzero_graph"] = bundle(kCudaInstantiate, kCudaNonzeroGraph);
  cuda["opendml_join_graph"] = bundle(kCudaInstantiate, kCudaJoinGraph);
  cuda["opendml_split_graph"] = bundle(kCudaInstantiate, kCudaSplitGraph);
  platforms["CUDA"] = cuda;
#endif
  return platforms;
}

// The State type's id and deleter for one platform, for jax.ffi.register_ffi_type.
template <class S>
nb::dict state_type() {
  nb::dict d;
  d["type_id"] = capsule(&S::id);
  d["type_info"] = capsule(&kStateInfo<S>);
  return d;
}

}  // namespace

void bind_jax(nb::module_& m) {
  // Which headers the handlers were compiled against: a jaxlib whose FFI API is older refuses them.
  m.attr("_jax_built_with") = nb::make_tuple(OPENDML_JAXLIB_VERSION, XLA_FFI_API_MAJOR, XLA_FFI_API_MINOR);
  m.def("_jax_targets", &targets, "The FFI handlers, {platform: {target: {stage: capsule}}}.");
  m.def(
      "_jax_start_platforms",
      [](nb::callable start) {
#ifdef OPENDML_WITH_CUDA
        // XLA leaves the last GPU it sets up current on the calling thread, and PyTorch and CuPy
        // then put their "cuda" arrays there: the caller's device (0 where none was chosen) is
        // made current again, even where start() raises.
        const DeviceScope keep;
#endif
        start();
      },
      nb::arg("start"), "Calls start() (jax.devices) and keeps the calling thread's current CUDA device where it was.");
  m.def("_jax_regions", &regions, nb::arg("target"), nb::arg("dml_type"), nb::arg("axis"), nb::arg("batched"),
        nb::arg("fill"), nb::arg("buffers"), nb::arg("ordinals"),
        "(temporary, persistent) bytes of the operator a call of `target` compiles, the most over `ordinals` "
        "(-1: the CPU); buffers: (dimensions, bytes an element, type name), inputs then results.");
  m.def(
      "_jax_recorded", [] { return g_recorded.load(std::memory_order_relaxed); },
      "How many calls of the _graph targets XLA has made while recording a command buffer, in this process.");
  m.def(
      "_jax_compiles", [] { return g_compiles.load(std::memory_order_relaxed); },
      "How many operators the FFI handlers have compiled in this process.");
  m.def(
      "_jax_state_type",
      [](const std::string& platform) {
#ifdef OPENDML_WITH_CUDA
        if (platform == "CUDA") return state_type<CudaState>();
#endif
        if (platform == "cpu") return state_type<CpuState>();
        throw Error(ODML_STATUS_INVALID_ARGUMENT, "opendml.jax: no handlers for platform '" + platform + "'");
      },
      nb::arg("platform"), "The handlers' State type on `platform` ('cpu', 'CUDA'), for jax.ffi.register_ffi_type.");
}

}  // namespace opendml::python
