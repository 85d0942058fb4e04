// What a backend provides: a Device that owns memory and compiles plans into Kernels, each kernel
// chosen from the backend's ordered list of implementations (fastest first; the first that accepts
// the plan wins). Set OPENDML_VERBOSE=1 to print each choice and why the faster ones declined.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "core/status.h"
#include "ops/plan.h"

namespace opendml::internal {

struct ExecuteArgs {
  std::span<const std::byte* const> inputs;  // one per input slot (owned inputs point into persistent)
  std::span<std::byte* const> outputs;       // one per output slot
  std::byte* temporary = nullptr;            // Kernel::temporary_bytes() bytes, 256-aligned
  const std::byte* persistent = nullptr;     // Kernel::persistent_bytes() bytes, filled by initialize
  void* stream = nullptr;                    // cudaStream_t on CUDA devices
};

// A plan compiled for one device. Execute is const and keeps no state, so one kernel may run
// from several threads at once.
class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual uint64_t temporary_bytes() const { return 0; }
  virtual uint64_t persistent_bytes() const { return 0; }
  virtual Status initialize(std::byte* /*persistent*/, void* /*stream*/) const { return {}; }
  virtual Status execute(const ExecuteArgs& args) const = 0;
};

struct CompiledKernel {
  std::unique_ptr<Kernel> kernel;
  const char* implementation = "";  // "cpu.copy", "cuda.slices", ...
};

class Device {
 public:
  virtual ~Device() = default;
  virtual const std::string& name() const = 0;
  virtual Result<CompiledKernel> compile(const Plan& plan) const = 0;

  virtual Result<void*> allocate(uint64_t bytes) const = 0;  // 256-byte aligned
  virtual Status free(void* data) const = 0;
  virtual Status upload(void* dst, const void* host_src, uint64_t bytes) const = 0;
  virtual Status download(void* host_dst, const void* src, uint64_t bytes) const = 0;
  // Device-to-device, stream-ordered (initialize copies OWNED_BY_DML inputs with it).
  virtual Status copy(void* dst, const void* src, uint64_t bytes, void* stream) const = 0;
  virtual Status synchronize(void* stream) const = 0;
};

// "cpu", "cuda", "cuda:N".
Result<std::shared_ptr<Device>> open_device(std::string_view name);

// One way to run plans of type P on devices of type D. `declines` says why it cannot run a plan,
// or returns "" when it can. `passes_over`, where given, says why the selector leaves a plan it could
// run to the implementations after it (they are faster there), or returns "": OPENDML_IMPLEMENTATION
// still forces it onto such a plan.
template <class P, class D>
struct Implementation {
  const char* name;
  std::string (*declines)(const P& plan, const D& device);
  Result<std::unique_ptr<Kernel>> (*create)(const P& plan, const D& device);  // fails where the device does
  std::string (*passes_over)(const P& plan, const D& device) = nullptr;
};

// An environment switch: set, and to something other than "" or "0".
bool env_flag(const char* name);
bool verbose();  // OPENDML_VERBOSE
void log_verbose(const std::string& line);

// The implementation named by OPENDML_IMPLEMENTATION, or null: a test mode that makes every plan
// the named implementation accepts run on it, however rarely the selector would pick it.
const char* forced_implementation();

// The first implementation of `list` that accepts plan (the forced one first, if it accepts).
template <class P, class D>
Result<CompiledKernel> choose_implementation(std::span<const Implementation<P, D>> list, const P& plan,
                                             const D& device) {
  const auto create = [&](const Implementation<P, D>& impl) -> Result<CompiledKernel> {
    Result<std::unique_ptr<Kernel>> kernel = impl.create(plan, device);
    if (!kernel.ok()) return kernel.status();
    return CompiledKernel{std::move(*kernel), impl.name};
  };
  if (const char* forced = forced_implementation()) {
    for (const Implementation<P, D>& impl : list) {
      if (std::string_view(impl.name) != forced || !impl.declines(plan, device).empty()) continue;
      if (verbose()) log_verbose(cat(device.name(), ": ", impl.name, " chosen (OPENDML_IMPLEMENTATION)"));
      return create(impl);
    }
  }
  std::string reasons;
  for (const Implementation<P, D>& impl : list) {
    std::string why = impl.declines(plan, device);
    if (why.empty() && impl.passes_over != nullptr) why = impl.passes_over(plan, device);
    if (why.empty()) {
      if (verbose()) log_verbose(cat(device.name(), ": ", impl.name, " chosen"));
      return create(impl);
    }
    if (verbose()) log_verbose(cat(device.name(), ": ", impl.name, " declined: ", why));
    reasons += cat(reasons.empty() ? "" : "; ", impl.name, ": ", why);
  }
  return unsupported(device.name(), " has no implementation for this operator (", reasons, ")");
}

// Compiles plan on device with the list that `implementations(const P&, const D&)` (found by
// argument-dependent lookup) gives for the plan's kind. A device that lacks the overload for some
// plan kind fails to compile here, rather than failing at run time.
template <class D>
Result<CompiledKernel> compile_plan(const Plan& plan, const D& device) {
  return std::visit([&](const auto& p) { return choose_implementation(implementations(p, device), p, device); }, plan);
}

}  // namespace opendml::internal
