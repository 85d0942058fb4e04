// The CUDA backend's internals, shared by the device (cuda_device.cpp) and the kernels (*.cu).
// Plain C++: cudaStream_t travels as void* and errors as Status.
#pragma once

#include <memory>
#include <string>

#include "backends/device.h"

namespace opendml::internal {

class CudaDevice final : public Device {
 public:
  CudaDevice(int ordinal, std::string name, uint32_t multiprocessors);

  int ordinal() const { return ordinal_; }
  uint32_t multiprocessors() const { return multiprocessors_; }  // SMs, for sizing grids

  const std::string& name() const override { return name_; }
  Result<CompiledKernel> compile(const Plan& plan) const override;
  Result<void*> allocate(uint64_t bytes) const override;
  Status free(void* data) const override;
  Status upload(void* dst, const void* host_src, uint64_t bytes) const override;
  Status download(void* host_dst, const void* src, uint64_t bytes) const override;
  Status copy(void* dst, const void* src, uint64_t bytes, void* stream) const override;
  Status synchronize(void* stream) const override;

 private:
  int ordinal_;
  std::string name_;
  uint32_t multiprocessors_;
};

// The implementations of each plan kind, fastest first (cuda_device.cpp).
std::span<const Implementation<CopyPlan, CudaDevice>> implementations(const CopyPlan&, const CudaDevice&);
std::span<const Implementation<NonzeroPlan, CudaDevice>> implementations(const NonzeroPlan&, const CudaDevice&);

// Each implementation's test and kernel (copy_kernels.cu, nonzero_kernels.cu).
std::string cuda_slices_declines(const CopyPlan& plan, const CudaDevice& device);
Result<std::unique_ptr<Kernel>> make_cuda_slices_kernel(const CopyPlan& plan, const CudaDevice& device);
std::string cuda_copy_declines(const CopyPlan& plan, const CudaDevice& device);
Result<std::unique_ptr<Kernel>> make_cuda_copy_kernel(const CopyPlan& plan, const CudaDevice& device);
std::string cuda_nonzero_declines(const NonzeroPlan& plan, const CudaDevice& device);
Result<std::unique_ptr<Kernel>> make_cuda_nonzero_kernel(const NonzeroPlan& plan, const CudaDevice& device);
std::string cuda_lookback_declines(const NonzeroPlan& plan, const CudaDevice& device);
std::string cuda_lookback_passes_over(const NonzeroPlan& plan, const CudaDevice& device);
Result<std::unique_ptr<Kernel>> make_cuda_lookback_kernel(const NonzeroPlan& plan, const CudaDevice& device);

}  // namespace opendml::internal
