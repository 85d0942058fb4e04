// What the tool can say about the machine: its adapters (-a, -s) and the versions it runs with (-S).
// The CUDA parts are built where the tool is built with CUDA (OPENDML_TOOL_CUDA).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "opendml/opendml.hpp"

namespace opendml::tool {

// The adapters that open, "cpu" first, then "cuda:0", "cuda:1", ... (odml_device_create's names).
std::vector<std::string> adapter_ids();

// One line about an opened adapter: its name and memory, e.g. "cuda:0 (NVIDIA H100 80GB HBM3), 79.1 GiB".
std::string adapter_line(const std::string& id, const opendml::Device& device);

// The first adapter whose id or name contains `text`, ignoring case; none when no adapter matches.
std::optional<std::string> match_adapter(const std::string& text);

// "opendml 0.1.0", then the CUDA runtime and driver versions, one per line.
std::string dependency_versions();

// The GPU time of work queued on the CUDA default stream (where the tool executes), measured with
// a pair of events: the GPU column of DxDispatch's timing line. Inactive (no column) on the CPU and
// in a build without CUDA.
class GpuTimer {
 public:
  // Active on a CUDA device, whose name starts "cuda:N": the events are made on device N.
  explicit GpuTimer(const std::string& device_name);
  ~GpuTimer();
  GpuTimer(const GpuTimer&) = delete;
  GpuTimer& operator=(const GpuTimer&) = delete;
  bool active() const { return active_; }
  void start();         // records the first event, before the work
  void stop();          // records the second, after it
  double elapsed_ms();  // waits for the second event: the milliseconds between them

 private:
  bool active_;
  void* events_[2] = {nullptr, nullptr};
};

// An NVTX range, shown by Nsight Systems (the Linux counterpart of DxDispatch's PIX markers); a
// no-op without CUDA.
class NvtxRange {
 public:
  explicit NvtxRange(const std::string& name);
  ~NvtxRange();
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

}  // namespace opendml::tool
