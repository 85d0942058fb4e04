#include "backends/cpu/cpu_device.h"

#include <omp.h>

#include <cstdlib>
#include <cstring>

namespace opendml::internal {

class CpuDevice final : public Device {
 public:
  CpuDevice() : name_(cat("cpu (", omp_get_max_threads(), " threads)")) {}

  const std::string& name() const override { return name_; }

  Result<CompiledKernel> compile(const Plan& plan) const override {
    static constexpr Implementation<CopyPlan, CpuDevice> kCopy[] = {
        {"cpu.copy", [](const CopyPlan&, const CpuDevice&) { return std::string(); }, make_cpu_copy_kernel}};
    static constexpr Implementation<NonzeroPlan, CpuDevice> kNonzero[] = {
        {"cpu.nonzero", [](const NonzeroPlan&, const CpuDevice&) { return std::string(); }, make_cpu_nonzero_kernel}};
    if (const auto* copy = std::get_if<CopyPlan>(&plan)) return choose_implementation(kCopy, *copy, *this);
    return choose_implementation(kNonzero, std::get<NonzeroPlan>(plan), *this);
  }

  Result<void*> allocate(uint64_t bytes) const override {
    void* p = std::aligned_alloc(256, (bytes + 255) / 256 * 256 + (bytes == 0 ? 256 : 0));
    if (p == nullptr) return Status(ODML_STATUS_OUT_OF_MEMORY, cat(name_, ": cannot allocate ", bytes, " bytes"));
    return p;
  }
  Status free(void* data) const override {
    std::free(data);
    return {};
  }
  Status upload(void* dst, const void* src, uint64_t bytes) const override { return copy(dst, src, bytes, nullptr); }
  Status download(void* dst, const void* src, uint64_t bytes) const override { return copy(dst, src, bytes, nullptr); }
  Status copy(void* dst, const void* src, uint64_t bytes, void*) const override {
    if (bytes > 0) std::memcpy(dst, src, bytes);
    return {};
  }
  Status synchronize(void*) const override { return {}; }

 private:
  std::string name_;
};

std::shared_ptr<Device> make_cpu_device() { return std::make_shared<CpuDevice>(); }

}  // namespace opendml::internal
