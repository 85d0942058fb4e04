// device_fuzzer: the C ABI's devices and their memory (include/opendml/opendml.h, docs/contract.md
// section 5), and the lifecycle of operators around them, as a sequence of calls in any order. An
// input is a program: each step one call, its handles and arguments chosen from the input, null
// pointers and handles included.
//
//   - odml_device_create with every kind of name ("cpu", "cuda", "cuda:N" with N past INT_MAX, a
//     sign, nothing; random bytes) and null arguments; odml_device_name; odml_device_destroy, with
//     operators still using the device;
//   - odml_device_allocate of 0 to 64 KiB and of sizes no memory holds (past 2^64 - 256), free,
//     upload and download of any range of an allocation, from and to host memory or (host memory on
//     the CPU device) another range of an allocation, overlapping ones included, synchronize with
//     any stream value, each with null handles and pointers where the contract says what happens;
//   - a JOIN of two 1-D tensors created, compiled, initialized and executed on buffers from
//     odml_device_allocate, in any order (execute before initialize, compile after the device or
//     the operator is gone), and the enum name functions on any value.
//
// The model of what each call must do is kept beside the calls: the bytes uploaded to each
// allocation, which operators were initialized. The fuzzer aborts (libFuzzer keeps the input) when
// a call returns another status than the model's, a failed call leaves no message or writes its
// output argument, a success leaves a message, a download differs from what was uploaded, or an
// execute's output differs from its inputs laid end to end; AddressSanitizer catches a call that
// touches memory outside what it was given. This build has no CUDA backend (fuzz/instrument.cmake):
// every well-formed "cuda" name is UNSUPPORTED.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "opendml/opendml.h"

namespace {

constexpr size_t kMaxSteps = 256;
constexpr size_t kMaxDevices = 4, kMaxAllocations = 16, kMaxOperators = 4;
constexpr uint64_t kMaxAllocation = uint64_t{64} << 10;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "\ndevice_fuzzer: %s\n", what.c_str());
  std::abort();
}

// A call's status against the model's, and the thread's message against the status.
void expect_status(const char* call, odml_status got, odml_status want) {
  const std::string message = odml_last_error_message();
  if (got != want)
    fail(std::string(call) + " returned " + odml_status_name(got) + " but must return " + odml_status_name(want) +
         " (" + message + ")");
  if ((got == ODML_STATUS_SUCCESS) != message.empty())
    fail(std::string(call) + " returned " + odml_status_name(got) + " with the message '" + message + "'");
}

// What odml_device_create must answer for a name (contract section 5) in a build without CUDA.
odml_status expected_for_name(const std::string& name) {
  if (name == "cpu") return ODML_STATUS_SUCCESS;
  if (name == "cuda") return ODML_STATUS_UNSUPPORTED;
  if (name.rfind("cuda:", 0) != 0) return ODML_STATUS_INVALID_ARGUMENT;
  const std::string digits = name.substr(5);
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos)
    return ODML_STATUS_INVALID_ARGUMENT;
  uint64_t ordinal = 0;  // leading zeros allowed; past INT_MAX it stops counting
  for (char c : digits) ordinal = std::min<uint64_t>(ordinal * 10 + static_cast<uint64_t>(c - '0'), uint64_t{1} << 32);
  return ordinal <= INT_MAX ? ODML_STATUS_UNSUPPORTED : ODML_STATUS_INVALID_ARGUMENT;
}

struct Allocation {
  void* data;
  uint64_t size;
  std::vector<int16_t> bytes;  // what was uploaded, -1 where nothing was
};

// A JOIN of UINT8 {a} and {b} into {a + b}: its descriptor, copied by create.
struct Join {
  uint32_t sizes[3];
  DML_BUFFER_TENSOR_DESC buffers[3];
  DML_TENSOR_DESC tensors[3];
  DML_JOIN_OPERATOR_DESC join;
  DML_OPERATOR_DESC op;
  Join(uint32_t a, uint32_t b) : sizes{a, b, a + b} {
    for (int i = 0; i < 3; ++i) {
      buffers[i] = {DML_TENSOR_DATA_TYPE_UINT8,
                    DML_TENSOR_FLAG_NONE,
                    1,
                    &sizes[i],
                    nullptr,
                    DMLCalcBufferTensorSize(DML_TENSOR_DATA_TYPE_UINT8, 1, &sizes[i], nullptr),
                    0};
      tensors[i] = {DML_TENSOR_TYPE_BUFFER, &buffers[i]};
    }
    join = {2, tensors, &tensors[2], 0};
    op = {DML_OPERATOR_JOIN, &join};
  }
};

struct Operator {
  odml_operator handle;
  uint32_t a, b;
};
struct Compiled {
  odml_compiled_operator handle;
  uint32_t a, b;
  bool initialized;
};

enum Call {
  kCreateDevice,
  kDestroyDevice,
  kDeviceName,
  kAllocate,
  kFree,
  kUpload,
  kDownload,
  kSynchronize,
  kCreateOperator,
  kDestroyOperator,
  kCompile,
  kDestroyCompiled,
  kInitialize,
  kExecute,
  kEnumNames,
  kCalls
};

class Program {
 public:
  Program(const uint8_t* data, size_t size) : in_(data, size) {}
  ~Program() {
    for (Compiled& c : compiled_) odml_compiled_operator_destroy(c.handle);
    for (Operator& o : operators_) odml_operator_destroy(o.handle);
    for (Allocation& a : allocations_) odml_device_free(devices_.front(), a.data);  // there are devices (below)
    for (odml_device d : devices_) odml_device_destroy(d);
  }

  void run() {
    for (size_t step = 0; step < kMaxSteps && in_.remaining_bytes() > 0; ++step) {
      switch (in_.ConsumeIntegralInRange<int>(0, kCalls - 1)) {
        case kCreateDevice: create_device(); break;
        case kDestroyDevice: destroy_device(); break;
        case kDeviceName: device_name(); break;
        case kAllocate: allocate(); break;
        case kFree: free(); break;
        case kUpload: upload(); break;
        case kDownload: download(); break;
        case kSynchronize: synchronize(); break;
        case kCreateOperator: create_operator(); break;
        case kDestroyOperator: destroy_operator(); break;
        case kCompile: compile(); break;
        case kDestroyCompiled: destroy_compiled(); break;
        case kInitialize: initialize(); break;
        case kExecute: execute(); break;
        default: enum_names(); break;
      }
    }
  }

 private:
  // A live device, or null (one time in 8, or when there is none).
  odml_device device_or_null() {
    if (devices_.empty() || in_.ConsumeIntegralInRange<int>(0, 7) == 0) return nullptr;
    return devices_[in_.ConsumeIntegralInRange<size_t>(0, devices_.size() - 1)];
  }
  // Any live device, opened when there is none (the calls that need memory to work on).
  odml_device some_device() {
    if (devices_.empty()) {
      odml_device d = nullptr;
      expect_status("odml_device_create(\"cpu\")", odml_device_create("cpu", &d), ODML_STATUS_SUCCESS);
      devices_.push_back(d);
    }
    return devices_[in_.ConsumeIntegralInRange<size_t>(0, devices_.size() - 1)];
  }
  template <class T>
  size_t pick(const std::vector<T>& list) {
    return in_.ConsumeIntegralInRange<size_t>(0, list.size() - 1);
  }

  void create_device() {
    static const char* const kNames[] = {"cpu",
                                         "cuda",
                                         "cuda:0",
                                         "cuda:7",
                                         "cuda:-1",
                                         "cuda:+1",
                                         "cuda:",
                                         "cuda:0x1",
                                         "cuda:2147483647",
                                         "cuda:2147483648",
                                         "CPU",
                                         "",
                                         "cpu ",
                                         "cuda:1 ",
                                         "cuda:99999999999",
                                         "gpu",
                                         "cuda:01",
                                         "cudax",
                                         " cpu",
                                         "cpu\n"};
    const int kind = in_.ConsumeIntegralInRange<int>(0, 3);
    std::string name =
        kind == 0 ? in_.ConsumeRandomLengthString(24) : kNames[in_.ConsumeIntegralInRange<size_t>(0, 19)];
    name = name.substr(0, name.find('\0'));  // what a C string holds
    const bool null_name = kind == 1 && in_.ConsumeBool(), null_out = kind == 1 && !null_name && in_.ConsumeBool();
    const auto sentinel = reinterpret_cast<odml_device>(uintptr_t{0x1230});
    odml_device d = sentinel;
    const odml_status s = odml_device_create(null_name ? nullptr : name.c_str(), null_out ? nullptr : &d);
    const odml_status want = null_name || null_out ? ODML_STATUS_INVALID_ARGUMENT : expected_for_name(name);
    expect_status(("odml_device_create(\"" + name + "\")").c_str(), s, want);
    if (s != ODML_STATUS_SUCCESS) {
      if (d != sentinel) fail("a failed odml_device_create wrote a handle");
      return;
    }
    if (std::strncmp(odml_device_name(d), "cpu", 3) != 0)
      fail(std::string("a cpu device named ") + odml_device_name(d));
    if (devices_.size() == kMaxDevices) {
      odml_device_destroy(d);
      return;
    }
    devices_.push_back(d);
  }

  // Destroying a device: all memory is freed first (the model frees nothing after its device, so
  // memory exists only while some device does); its operators and compiled operators keep it alive
  // (contract section 5).
  void destroy_device() {
    if (devices_.empty()) return odml_device_destroy(nullptr);
    const size_t i = pick(devices_);
    odml_device d = devices_[i];
    for (Allocation& a : allocations_)
      expect_status("odml_device_free", odml_device_free(d, a.data), ODML_STATUS_SUCCESS);
    allocations_.clear();
    odml_device_destroy(d);
    devices_.erase(devices_.begin() + static_cast<ptrdiff_t>(i));
  }

  void device_name() {
    const odml_device d = device_or_null();
    const char* name = odml_device_name(d);
    if (name == nullptr || (d == nullptr ? *name != '\0' : std::strncmp(name, "cpu (", 5) != 0))
      fail(std::string("odml_device_name gave '") + (name ? name : "(null)") + "'");
  }

  void allocate() {
    const odml_device d = device_or_null();
    uint64_t size = 0;
    switch (in_.ConsumeIntegralInRange<int>(0, 3)) {
      case 0: size = in_.ConsumeIntegralInRange<uint64_t>(0, 512); break;
      case 1: size = in_.ConsumeIntegralInRange<uint64_t>(0, kMaxAllocation); break;
      case 2: size = ~uint64_t{0} - in_.ConsumeIntegralInRange<uint64_t>(0, 254); break;  // no memory holds it
      default: size = 0; break;
    }
    const bool null_out = in_.ConsumeIntegralInRange<int>(0, 15) == 0;
    void* const sentinel = reinterpret_cast<void*>(uintptr_t{0x4560});
    void* p = sentinel;
    const odml_status s = odml_device_allocate(d, size, null_out ? nullptr : &p);
    const odml_status want = d == nullptr || null_out ? ODML_STATUS_INVALID_ARGUMENT
                             : size > kMaxAllocation  ? ODML_STATUS_OUT_OF_MEMORY
                                                      : ODML_STATUS_SUCCESS;
    expect_status("odml_device_allocate", s, want);
    if (s != ODML_STATUS_SUCCESS) {
      if (p != sentinel) fail("a failed odml_device_allocate wrote a pointer");
      return;
    }
    if (p == nullptr || reinterpret_cast<uintptr_t>(p) % 256 != 0) fail("odml_device_allocate: not 256-aligned");
    if (allocations_.size() == kMaxAllocations) {
      expect_status("odml_device_free", odml_device_free(d, p), ODML_STATUS_SUCCESS);
      return;
    }
    allocations_.push_back({p, size, std::vector<int16_t>(size, -1)});
  }

  void free() {
    const odml_device d = device_or_null();
    if (allocations_.empty() || in_.ConsumeIntegralInRange<int>(0, 7) == 0) {
      expect_status("odml_device_free(null)", odml_device_free(d, nullptr),
                    d ? ODML_STATUS_SUCCESS : ODML_STATUS_INVALID_ARGUMENT);
      return;
    }
    const size_t i = pick(allocations_);
    const odml_status s = odml_device_free(d, allocations_[i].data);
    expect_status("odml_device_free", s, d ? ODML_STATUS_SUCCESS : ODML_STATUS_INVALID_ARGUMENT);
    if (s == ODML_STATUS_SUCCESS) allocations_.erase(allocations_.begin() + static_cast<ptrdiff_t>(i));
  }

  // A range [offset, offset + size) of an allocation, or null (a null buffer with a size must fail;
  // with size 0 it is allowed).
  struct Range {
    Allocation* allocation = nullptr;
    uint64_t offset = 0, size = 0;
    std::byte* data() const { return allocation ? static_cast<std::byte*>(allocation->data) + offset : nullptr; }
  };
  Range range() {
    Range r;
    if (allocations_.empty() || in_.ConsumeIntegralInRange<int>(0, 15) == 0) {
      r.size = in_.ConsumeBool() ? 0 : in_.ConsumeIntegralInRange<uint64_t>(1, 64);
      return r;
    }
    r.allocation = &allocations_[pick(allocations_)];
    r.offset = in_.ConsumeIntegralInRange<uint64_t>(0, r.allocation->size);
    r.size = in_.ConsumeIntegralInRange<uint64_t>(0, r.allocation->size - r.offset);
    return r;
  }

  // The host side of an upload or a download: fresh host memory (null h.allocation), or one time in
  // 8 a range of an allocation, which is host memory on the CPU device (contract section 5): perhaps
  // the device side's own allocation, overlapping it.
  Range host_range(uint64_t size) {
    Range h;
    if (allocations_.empty() || in_.ConsumeIntegralInRange<int>(0, 7) != 0) return h;
    Allocation& a = allocations_[pick(allocations_)];
    if (a.size < size) return h;
    h = {&a, in_.ConsumeIntegralInRange<uint64_t>(0, a.size - size), size};
    return h;
  }
  // What the model knows of `from`'s bytes, copied to `to` (the ranges may overlap).
  static void copy_model(const Range& from, const Range& to) {
    const std::vector<int16_t> bytes(from.allocation->bytes.begin() + static_cast<ptrdiff_t>(from.offset),
                                     from.allocation->bytes.begin() + static_cast<ptrdiff_t>(from.offset + from.size));
    std::copy(bytes.begin(), bytes.end(), to.allocation->bytes.begin() + static_cast<ptrdiff_t>(to.offset));
  }

  void upload() {
    const odml_device d = device_or_null();
    const Range r = range();
    const bool null_host = in_.ConsumeIntegralInRange<int>(0, 15) == 0;
    const Range h = host_range(r.size);
    std::vector<uint8_t> host(h.allocation ? 0 : r.size);
    for (uint8_t& b : host) b = in_.ConsumeIntegral<uint8_t>();
    const void* src = null_host ? nullptr : h.allocation ? static_cast<const void*>(h.data()) : host.data();
    const bool null_buffer = r.size > 0 && (r.allocation == nullptr || null_host);
    const odml_status s = odml_device_upload(d, r.data(), src, r.size);
    expect_status("odml_device_upload", s,
                  d == nullptr || null_buffer ? ODML_STATUS_INVALID_ARGUMENT : ODML_STATUS_SUCCESS);
    if (s != ODML_STATUS_SUCCESS || r.size == 0) return;
    if (h.allocation) return copy_model(h, r);
    for (uint64_t i = 0; i < r.size; ++i) r.allocation->bytes[r.offset + i] = host[i];
  }

  void download() {
    const odml_device d = device_or_null();
    const Range r = range();
    const bool null_host = in_.ConsumeIntegralInRange<int>(0, 15) == 0;
    const Range h = host_range(r.size);
    std::vector<uint8_t> host(r.size + 1, 0xA5);  // one byte past the range, which must stay
    void* dst = null_host ? nullptr : h.allocation ? static_cast<void*>(h.data()) : host.data();
    const bool null_buffer = r.size > 0 && (r.allocation == nullptr || null_host);
    const odml_status s = odml_device_download(d, dst, r.data(), r.size);
    expect_status("odml_device_download", s,
                  d == nullptr || null_buffer ? ODML_STATUS_INVALID_ARGUMENT : ODML_STATUS_SUCCESS);
    if (h.allocation && s == ODML_STATUS_SUCCESS && r.size > 0) {
      // Into device memory: the model moves the bytes, and the destination must hold what it knows.
      copy_model(r, h);
      for (uint64_t i = 0; i < h.size; ++i) {
        const int want = h.allocation->bytes[h.offset + i];
        const auto got = static_cast<uint8_t>(h.data()[i]);
        if (want >= 0 && got != want)
          fail("odml_device_download into an allocation: byte " + std::to_string(i) + " of " + std::to_string(h.size) +
               " is " + std::to_string(got) + " but " + std::to_string(want) + " was uploaded");
      }
      return;
    }
    if (h.allocation) return;
    for (uint64_t i = 0; i <= r.size; ++i) {
      const int want = s != ODML_STATUS_SUCCESS || i == r.size ? 0xA5 : r.allocation->bytes[r.offset + i];
      if (want >= 0 && host[i] != want)
        fail("odml_device_download: byte " + std::to_string(i) + " of " + std::to_string(r.size) + " is " +
             std::to_string(host[i]) + " but " + std::to_string(want) + " was " +
             (s == ODML_STATUS_SUCCESS && i < r.size ? "uploaded" : "there before"));
    }
  }

  void synchronize() {
    const odml_device d = device_or_null();
    void* stream = reinterpret_cast<void*>(static_cast<uintptr_t>(in_.ConsumeIntegral<uint64_t>()));
    expect_status("odml_device_synchronize", odml_device_synchronize(d, stream),
                  d ? ODML_STATUS_SUCCESS : ODML_STATUS_INVALID_ARGUMENT);
  }

  void create_operator() {
    const odml_device d = device_or_null();
    const auto a = in_.ConsumeIntegralInRange<uint32_t>(1, 300), b = in_.ConsumeIntegralInRange<uint32_t>(1, 300);
    const Join join(a, b);
    const bool null_out = in_.ConsumeIntegralInRange<int>(0, 15) == 0;
    const auto sentinel = reinterpret_cast<odml_operator>(uintptr_t{0x7890});
    odml_operator op = sentinel;
    const odml_status s = odml_operator_create(d, &join.op, DML_FEATURE_LEVEL(0), null_out ? nullptr : &op);
    expect_status("odml_operator_create", s,
                  d == nullptr || null_out ? ODML_STATUS_INVALID_ARGUMENT : ODML_STATUS_SUCCESS);
    if (s != ODML_STATUS_SUCCESS) {
      if (op != sentinel) fail("a failed odml_operator_create wrote a handle");
      return;
    }
    if (operators_.size() == kMaxOperators) return odml_operator_destroy(op);
    operators_.push_back({op, a, b});
  }

  void destroy_operator() {
    if (operators_.empty()) return odml_operator_destroy(nullptr);
    const size_t i = pick(operators_);
    odml_operator_destroy(operators_[i].handle);
    operators_.erase(operators_.begin() + static_cast<ptrdiff_t>(i));
  }

  void compile() {
    const bool null_op = operators_.empty() || in_.ConsumeIntegralInRange<int>(0, 15) == 0;
    const Operator* op = null_op ? nullptr : &operators_[pick(operators_)];
    const bool null_out = in_.ConsumeIntegralInRange<int>(0, 15) == 0;
    const auto sentinel = reinterpret_cast<odml_compiled_operator>(uintptr_t{0xABC0});
    odml_compiled_operator c = sentinel;
    const odml_status s = odml_operator_compile(op ? op->handle : nullptr, null_out ? nullptr : &c);
    expect_status("odml_operator_compile", s,
                  op == nullptr || null_out ? ODML_STATUS_INVALID_ARGUMENT : ODML_STATUS_SUCCESS);
    if (s != ODML_STATUS_SUCCESS) {
      if (c != sentinel) fail("a failed odml_operator_compile wrote a handle");
      return;
    }
    if (std::strcmp(odml_compiled_operator_implementation(c), "cpu.copy") != 0)
      fail(std::string("JOIN compiled to ") + odml_compiled_operator_implementation(c));
    odml_binding_properties p{};
    expect_status("odml_compiled_operator_get_binding_properties", odml_compiled_operator_get_binding_properties(c, &p),
                  ODML_STATUS_SUCCESS);
    if (p.input_count != 2 || p.output_count != 1 || p.temporary_size_in_bytes != 0 || p.persistent_size_in_bytes != 0)
      fail("JOIN's binding properties");
    if (compiled_.size() == kMaxOperators) return odml_compiled_operator_destroy(c);
    compiled_.push_back({c, op->a, op->b, false});
  }

  void destroy_compiled() {
    if (compiled_.empty()) return odml_compiled_operator_destroy(nullptr);
    const size_t i = pick(compiled_);
    odml_compiled_operator_destroy(compiled_[i].handle);
    compiled_.erase(compiled_.begin() + static_cast<ptrdiff_t>(i));
  }

  // Initialize binds nothing for this JOIN (no OWNED_BY_DML input, no persistent region); one time
  // in 8 its bindings are null, or list an output.
  void initialize() {
    Compiled* c =
        compiled_.empty() || in_.ConsumeIntegralInRange<int>(0, 15) == 0 ? nullptr : &compiled_[pick(compiled_)];
    odml_buffer_binding output{};
    odml_bindings b{nullptr, 0, nullptr, 0, {}, {}};
    const int broken = in_.ConsumeIntegralInRange<int>(0, 7) == 0 ? 1 + in_.ConsumeIntegralInRange<int>(0, 1) : 0;
    if (broken == 2) b = {nullptr, 0, &output, 1, {}, {}};
    const odml_status s =
        odml_compiled_operator_initialize(c ? c->handle : nullptr, broken == 1 ? nullptr : &b, nullptr);
    expect_status("odml_compiled_operator_initialize", s,
                  c == nullptr || broken ? ODML_STATUS_INVALID_ARGUMENT : ODML_STATUS_SUCCESS);
    if (s == ODML_STATUS_SUCCESS) c->initialized = true;
  }

  // Execute on buffers from odml_device_allocate, filled by odml_device_upload and read back by
  // odml_device_download: the output must be the inputs end to end, and stay unwritten when execute
  // fails (before initialize).
  void execute() {
    if (compiled_.empty()) {
      const odml_bindings none{};
      expect_status("odml_compiled_operator_execute(null)", odml_compiled_operator_execute(nullptr, &none, nullptr),
                    ODML_STATUS_INVALID_ARGUMENT);
      return;
    }
    const Compiled& c = compiled_[pick(compiled_)];
    const odml_device d = some_device();
    const uint32_t sizes[3] = {c.a, c.b, c.a + c.b};
    const uint64_t extra = in_.ConsumeIntegralInRange<uint64_t>(0, 3);  // bytes past each tensor's 4-byte multiple
    void* buffers[3] = {};
    odml_buffer_binding bindings[3];
    std::vector<uint8_t> host[3];
    for (int i = 0; i < 3; ++i) {
      const uint64_t bytes = (sizes[i] + 3) / 4 * 4 + extra;
      expect_status("odml_device_allocate", odml_device_allocate(d, bytes, &buffers[i]), ODML_STATUS_SUCCESS);
      host[i].resize(bytes);
      for (uint8_t& v : host[i]) v = i < 2 ? in_.ConsumeIntegral<uint8_t>() : 0x5A;
      expect_status("odml_device_upload", odml_device_upload(d, buffers[i], host[i].data(), bytes),
                    ODML_STATUS_SUCCESS);
      bindings[i] = {buffers[i], bytes};
    }
    const odml_bindings b{bindings, 2, &bindings[2], 1, {}, {}};
    expect_status("odml_compiled_operator_execute", odml_compiled_operator_execute(c.handle, &b, nullptr),
                  c.initialized ? ODML_STATUS_SUCCESS : ODML_STATUS_INVALID_ARGUMENT);
    std::vector<uint8_t> out(host[2].size());
    expect_status("odml_device_download", odml_device_download(d, out.data(), buffers[2], out.size()),
                  ODML_STATUS_SUCCESS);
    std::vector<uint8_t> want = host[2];  // poison past the JOIN's c.a + c.b bytes, and everywhere if it failed
    if (c.initialized) {
      std::memcpy(want.data(), host[0].data(), c.a);
      std::memcpy(want.data() + c.a, host[1].data(), c.b);
    }
    if (out != want) fail("JOIN of " + std::to_string(c.a) + " and " + std::to_string(c.b) + " bytes: wrong output");
    for (void* p : buffers) expect_status("odml_device_free", odml_device_free(d, p), ODML_STATUS_SUCCESS);
  }

  // The name functions take any value: a name or null, never a crash.
  void enum_names() {
    uint32_t v = 0;  // a small value, one shaped like a feature level (0x1000 to 0x7F00), or any
    switch (in_.ConsumeIntegralInRange<int>(0, 2)) {
      case 0: v = in_.ConsumeIntegralInRange<uint32_t>(0, 16); break;
      case 1:
        v = in_.ConsumeIntegralInRange<uint32_t>(1, 7) << 12 | in_.ConsumeIntegralInRange<uint32_t>(0, 15) << 8;
        break;
      default: v = in_.ConsumeIntegral<uint32_t>(); break;
    }
    int value;
    std::memcpy(&value, &v, sizeof value);  // C code may pass any bits; the enums' underlying type is int
    const char* status = odml_status_name(static_cast<odml_status>(value));
    if (status == nullptr || (v > 4 && std::strcmp(status, "UNKNOWN_STATUS") != 0)) fail("odml_status_name");
    const char* type = odml_data_type_name(static_cast<DML_TENSOR_DATA_TYPE>(value));
    const uint32_t bits = odml_data_type_bits(static_cast<DML_TENSOR_DATA_TYPE>(value));
    if ((type == nullptr) != (bits == 0) || (type != nullptr && (v == 0 || v > 13))) fail("odml_data_type_name");
    const char* level = odml_feature_level_name(static_cast<DML_FEATURE_LEVEL>(value));
    if (level != nullptr && std::strlen(level) != 3) fail("odml_feature_level_name");
  }

  FuzzedDataProvider in_;
  std::vector<odml_device> devices_;
  std::vector<Allocation> allocations_;
  std::vector<Operator> operators_;
  std::vector<Compiled> compiled_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Program(data, size).run();
  return 0;
}
