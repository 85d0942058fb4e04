#include "backends/device.h"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "backends/cpu/cpu_device.h"
#include "backends/cuda/cuda_device.h"

namespace opendml::internal {

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
}

bool verbose() {
  static const bool on = env_flag("OPENDML_VERBOSE");
  return on;
}

const char* forced_implementation() {
  const char* name = std::getenv("OPENDML_IMPLEMENTATION");
  return name != nullptr && *name != '\0' ? name : nullptr;
}

void log_verbose(const std::string& line) { std::fprintf(stderr, "opendml: %s\n", line.c_str()); }

Result<std::shared_ptr<Device>> open_device(std::string_view name) {
  if (name == "cpu") return make_cpu_device();
  if (name == "cuda") return make_cuda_device(-1);
  if (name.starts_with("cuda:")) {
    const std::string_view digits = name.substr(5);
    int ordinal = -1;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), ordinal);
    // Digits only: from_chars also reads a sign, and "-0" is 0.
    if (!digits.empty() && digits[0] >= '0' && digits[0] <= '9' && error == std::errc() &&
        end == digits.data() + digits.size())
      return make_cuda_device(ordinal);
  }
  return invalid_argument("device name '", name, "' is not one of cpu, cuda, cuda:N");
}

}  // namespace opendml::internal
