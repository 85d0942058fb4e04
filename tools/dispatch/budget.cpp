#include "budget.h"

#include <fstream>
#include <limits>

#include "errors.h"

namespace opendml::tool {

void MemoryBudget::take(uint64_t bytes, bool device, const std::string& place, const std::string& what) {
  if (device && !device_in_host_) return;
  if (bytes <= limit_ - used_) {
    used_ += bytes;
    return;
  }
  throw ModelError(place, what + " needs " + std::to_string(bytes) + " bytes, but only " +
                              std::to_string(limit_ - used_) + " of the memory budget of " + std::to_string(limit_) +
                              " bytes are left (--max-memory; the default is the machine's available memory)");
}

uint64_t available_memory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  while (meminfo >> key >> kib) {
    if (key == "MemAvailable:") return kib * 1024;
    meminfo.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return std::numeric_limits<uint64_t>::max();
}

}  // namespace opendml::tool
