// A compiled operator: the plan's kernel plus the persistent-region layout that DirectML's
// OWNED_BY_DML inputs need. Initialize copies each owned input into the persistent region; execute
// reads it from there, so the flag changes when data is bound, never what is computed.
//
// Persistent region: [kernel's own bytes][owned input 0][owned input 1]..., each part 256-aligned.
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "api/bindings.h"
#include "backends/device.h"
#include "ops/operator.h"

namespace opendml::internal {

class CompiledOperator {
 public:
  static Result<std::unique_ptr<CompiledOperator>> compile(std::shared_ptr<const Device> device, const OperatorDef& op);

  odml_binding_properties properties() const;
  Status initialize(const odml_bindings* bindings, void* stream);
  Status execute(const odml_bindings* bindings, void* stream) const;
  const char* implementation() const { return kernel_.implementation; }

 private:
  CompiledOperator(std::shared_ptr<const Device> device, const OperatorDef& op, CompiledKernel kernel);

  std::shared_ptr<const Device> device_;
  OperatorDef op_;
  CompiledKernel kernel_;
  std::vector<uint64_t> owned_offsets_;  // per input: its copy's offset in the persistent region
  RegionSizes sizes_;
  std::atomic<bool> initialized_{false};
};

}  // namespace opendml::internal
