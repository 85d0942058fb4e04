// Runs a loaded model on a device, following DirectML's lifecycle (SPEC.md section 5): operators
// are created (at the chosen feature level) and compiled, and their temporary and persistent
// regions allocated, before any command runs; each is initialized at its first dispatch; every
// resource lives in device memory.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
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
  // Calls f with each chunk of staging_, which holds `bytes` bytes in all, from offset 0.
  void for_each_chunk(uint64_t bytes, const std::function<void(uint64_t offset, std::span<std::byte>)>& f);
  // Calls f with the resource's initial-value-sized prefix, a chunk at a time.
  void download(size_t resource, const std::function<void(std::span<const std::byte>)>& f);
  odml_buffer_binding binding(const Region& region) const;

  const Model& model_;
  opendml::Device device_;
  std::optional<uint32_t> timed_iterations_;
  std::vector<Operator> operators_;                        // one per dispatchable
  std::vector<std::unique_ptr<opendml::Buffer>> buffers_;  // one per resource
  // Uploads, prints and writes go through it, so that the tool's own memory stays bounded.
  static constexpr size_t kStagingBytes = size_t{16} << 20;  // a multiple of every element size
  std::vector<std::byte> staging_;
};

}  // namespace opendml::tool
