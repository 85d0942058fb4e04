#include "system.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>

#ifdef OPENDML_TOOL_CUDA
#include <cuda_runtime_api.h>
#endif

namespace opendml::tool {
namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

std::string gib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
  return text;
}

// The most CUDA devices looked for; odml_device_create refuses an ordinal past the last.
constexpr int kMaxCudaDevices = 64;

}  // namespace

std::vector<std::string> adapter_ids() {
  std::vector<std::string> ids{"cpu"};
  for (int i = 0; i < kMaxCudaDevices; ++i) {
    try {
      opendml::Device("cuda:" + std::to_string(i));
    } catch (const opendml::Error&) {
      break;
    }
    ids.push_back("cuda:" + std::to_string(i));
  }
  return ids;
}

std::string adapter_line(const std::string& id, const opendml::Device& device) {
  std::string line = device.name();
  if (id == "cpu") {
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    double kib = 0;
    if (meminfo >> key >> kib && key == "MemTotal:") line += ", " + gib(kib * 1024) + " memory";
  }
#ifdef OPENDML_TOOL_CUDA
  if (id.starts_with("cuda:")) {
    cudaDeviceProp properties{};
    if (cudaGetDeviceProperties(&properties, std::stoi(id.substr(5))) == cudaSuccess)
      line += ", " + gib(static_cast<double>(properties.totalGlobalMem)) + " memory";
  }
#endif
  return line;
}

std::optional<std::string> match_adapter(const std::string& text) {
  const std::string wanted = lower(text);
  for (const std::string& id : adapter_ids()) {
    if (lower(id).find(wanted) != std::string::npos) return id;
    if (lower(opendml::Device(id).name()).find(wanted) != std::string::npos) return id;
  }
  return std::nullopt;
}

std::string dependency_versions() {
  std::string text = "opendml " OPENDML_TOOL_VERSION "\n";
#ifdef OPENDML_TOOL_CUDA
  int runtime = 0, driver = 0;
  const auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
  text += "CUDA runtime " + (cudaRuntimeGetVersion(&runtime) == cudaSuccess ? version(runtime) : "unknown") + "\n";
  text += "CUDA driver " + (cudaDriverGetVersion(&driver) == cudaSuccess && driver != 0 ? version(driver) : "none") + "\n";
#else
  text += "CUDA: not in this build\n";
#endif
  return text;
}

}  // namespace opendml::tool
