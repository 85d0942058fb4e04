// Runs a loaded model on a device, following DirectML's lifecycle (SPEC.md section 5): operators
// are created (at the chosen feature level) and compiled, and their temporary and persistent
// regions allocated, before any command runs; each is initialized at its first dispatch; every
// resource lives in device memory.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <vector>

#include "model.h"

namespace opendml::tool {

class Executor {
 public:
  // timed_iterations: when set, each dispatch runs that many times and prints its median time.
  Executor(const Model& model, const opendml::Device& device, DML_FEATURE_LEVEL feature_level,
           std::optional<uint32_t> timed_iterations);

  // Runs the commands in order, printing to `out`; throws ModelError at the failing command.
  void run(std::ostream& out);

 private:
  struct Operator {
    opendml::CompiledOperator compiled;
    std::unique_ptr<opendml::Buffer> temporary, persistent;  // null when compile asked for none
    bool initialized = false;
  };

  void dispatch(const Command& command, const DispatchCommand& dispatch, std::ostream& out);
  std::vector<std::byte> download(size_t resource) const;  // its initial-value-sized prefix
  odml_buffer_binding binding(const Region& region) const;

  const Model& model_;
  opendml::Device device_;
  std::optional<uint32_t> timed_iterations_;
  std::vector<Operator> operators_;                        // one per dispatchable
  std::vector<std::unique_ptr<opendml::Buffer>> buffers_;  // one per resource
};

}  // namespace opendml::tool
