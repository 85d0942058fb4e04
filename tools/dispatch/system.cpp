#include "system.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#ifdef OPENDML_TOOL_CUDA
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
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
  // In adapter_ids()'s order, opening each only when the ones before it do not match.
  const std::string wanted = lower(text);
  for (int i = -1; i < kMaxCudaDevices; ++i) {
    const std::string id = i < 0 ? "cpu" : "cuda:" + std::to_string(i);
    std::string name;
    try {
      name = opendml::Device(id).name();
    } catch (const opendml::Error&) {
      break;  // past the last CUDA device
    }
    if (lower(id).find(wanted) != std::string::npos || lower(name).find(wanted) != std::string::npos) return id;
  }
  return std::nullopt;
}

std::string dependency_versions() {
  std::string text = "opendml " OPENDML_TOOL_VERSION "\n";
#ifdef OPENDML_TOOL_CUDA
  int runtime = 0, driver = 0;
  const auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
  text += "CUDA runtime " + (cudaRuntimeGetVersion(&runtime) == cudaSuccess ? version(runtime) : "unknown") + "\n";
  text +=
      "CUDA driver " + (cudaDriverGetVersion(&driver) == cudaSuccess && driver != 0 ? version(driver) : "none") + "\n";
#else
  text += "CUDA: not in this build\n";
#endif
  return text;
}

#ifdef OPENDML_TOOL_CUDA
GpuTimer::GpuTimer(const std::string& device_name) : active_(device_name.starts_with("cuda:")) {
  if (active_ && cudaSetDevice(std::atoi(device_name.c_str() + 5)) != cudaSuccess) active_ = false;
  for (void*& event : events_) {
    cudaEvent_t e = nullptr;
    if (active_ && cudaEventCreate(&e) != cudaSuccess) active_ = false;
    event = e;
  }
}
GpuTimer::~GpuTimer() {
  for (void* event : events_)
    if (event) cudaEventDestroy(static_cast<cudaEvent_t>(event));
}
void GpuTimer::start() {
  if (active_) cudaEventRecord(static_cast<cudaEvent_t>(events_[0]), nullptr);
}
void GpuTimer::stop() {
  if (active_) cudaEventRecord(static_cast<cudaEvent_t>(events_[1]), nullptr);
}
double GpuTimer::elapsed_ms() {
  float ms = 0;
  if (!active_) return 0;
  cudaEventSynchronize(static_cast<cudaEvent_t>(events_[1]));
  cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(events_[0]), static_cast<cudaEvent_t>(events_[1]));
  return ms;
}
NvtxRange::NvtxRange(const std::string& name) { nvtxRangePushA(name.c_str()); }
NvtxRange::~NvtxRange() { nvtxRangePop(); }
#else
GpuTimer::GpuTimer(const std::string&) : active_(false) {}
GpuTimer::~GpuTimer() = default;
void GpuTimer::start() {}
void GpuTimer::stop() {}
double GpuTimer::elapsed_ms() { return 0; }
NvtxRange::NvtxRange(const std::string&) {}
NvtxRange::~NvtxRange() = default;
#endif

}  // namespace opendml::tool
