// Runs a loaded model on a device, following DirectML's lifecycle (docs/contract.md section 5): operators
// are created (at the chosen feature level) and compiled, and their temporary and persistent
// regions allocated, before any command runs; each is initialized before the first command, as in
// DxDispatch, or at its first dispatch where that dispatch binds its OWNED_BY_DML inputs; every
// resource lives in device memory.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <vector>

#include "model.h"

namespace opendml::tool {

// How commands run and print (the command line's options, tools/README.md).
struct RunOptions {
  DML_FEATURE_LEVEL feature_level = DML_FEATURE_LEVEL_6_4;
  // DxDispatch's timing loop: `iterations` samples (or as many as fit in milliseconds_to_run), each
  // `repeat` executes and a synchronize, divided by `repeat`; the first `warmup` samples (while at
  // least one is left) are "cold" and kept out of the median.
  uint32_t iterations = 1;
  std::optional<uint32_t> milliseconds_to_run;
  uint32_t repeat = 1;
  uint32_t warmup = 1;
  uint32_t verbosity = 0;  // 0: the median line; 1: cold and hot statistics; 2: and every sample
  bool exact_floats = false;
  bool print_commands = false;          // DxDispatch's [StartCmd]/[EndCmd] lines around each command
  std::filesystem::path output_folder;  // writeFile's relative paths start here (empty: working directory)
};

class Executor {
 public:
  // Each operator's temporary and persistent regions are taken from `budget` before they are allocated.
  Executor(const Model& model, const opendml::Device& device, const RunOptions& options, MemoryBudget& budget);

  // Runs the commands in order, printing to `out`; throws ModelError at the failing command.
  void run(std::ostream& out);

 private:
  struct Operator {
    opendml::CompiledOperator compiled;
    std::unique_ptr<opendml::Buffer> temporary, persistent;  // null when compile asked for none
    bool initialized = false;
  };

  // Binds the OWNED_BY_DML inputs (`owned`, in binding order; the others unbound) and initializes.
  void initialize(Operator& op, const Dispatchable& d, std::span<const odml_buffer_binding> owned);
  void dispatch(const Command& command, const DispatchCommand& dispatch, std::ostream& out);
  void print(const Command& command, const PrintCommand& print, std::ostream& out);
  void write(const Command& command, const WriteFileCommand& write, std::ostream& out);
  // Calls f with each chunk of staging_, which holds `bytes` bytes in all, from offset 0.
  void for_each_chunk(uint64_t bytes, const std::function<void(uint64_t offset, std::span<std::byte>)>& f);
  // Calls f with the first `bytes` bytes of the resource's buffer, a chunk at a time.
  void download(size_t resource, uint64_t bytes, const std::function<void(std::span<const std::byte>)>& f);
  odml_buffer_binding binding(const Region& region) const;

  const Model& model_;
  opendml::Device device_;
  RunOptions options_;
  std::vector<Operator> operators_;                        // one per dispatchable
  std::vector<std::unique_ptr<opendml::Buffer>> buffers_;  // one per resource
  // Uploads, prints and writes go through it, so that the tool's own memory stays bounded.
  static constexpr size_t kStagingBytes = size_t{16} << 20;  // a multiple of every element size
  // The elements print formats at a time: at most ~1.6 MB of text (verbose lines are ~25 bytes).
  static constexpr size_t kPrintElements = size_t{1} << 16;
  std::vector<std::byte> staging_;
};

}  // namespace opendml::tool
