// The tool's memory budget (--max-memory).
#pragma once

#include <cstdint>
#include <string>

namespace opendml::tool {

// The memory the tool may use (--max-memory): every resource's held bytes, and its device buffer
// where the device's memory is the host's, are taken from it before they are allocated, so that
// a model too large for the machine fails with a message naming the resource, not the OOM killer.
class MemoryBudget {
 public:
  MemoryBudget(uint64_t limit, bool device_in_host_memory) : limit_(limit), device_in_host_(device_in_host_memory) {}
  // Takes `bytes` held by the tool (or, with `device`, a device buffer) for `what` at `place`.
  void take(uint64_t bytes, bool device, const std::string& place, const std::string& what);
  uint64_t limit() const { return limit_; }

 private:
  uint64_t limit_, used_ = 0;
  bool device_in_host_;
};

// The default budget: MemAvailable in /proc/meminfo, or no limit where that cannot be read.
uint64_t available_memory();

}  // namespace opendml::tool
