#include "backends/cuda/cuda_device.h"

#include <cuda.h>

#include <algorithm>
#include <type_traits>

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_status.h"

namespace opendml::internal {

namespace {

// The driver's calls for the thread's current context, reached through the runtime (the library
// links no libcuda of its own); null where the driver does not offer them.
struct ContextCalls {
  CUresult (*get_current)(CUcontext*) = nullptr;
  CUresult (*set_current)(CUcontext) = nullptr;
  CUresult (*get_device)(CUdevice*) = nullptr;
};

const ContextCalls& context_calls() {
  static const ContextCalls calls = [] {
    ContextCalls c;
    bool all = true;
    const auto load = [&all](const char* name, auto& fn) {
      void* p = nullptr;
      cudaDriverEntryPointQueryResult found{};
      if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &found) == cudaSuccess &&
          found == cudaDriverEntryPointSuccess && p != nullptr) {
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
      } else {
        cudaGetLastError();
        all = false;
      }
    };
    load("cuCtxGetCurrent", c.get_current);
    load("cuCtxSetCurrent", c.set_current);
    load("cuCtxGetDevice", c.get_device);
    return all ? c : ContextCalls{};
  }();
  return calls;
}

}  // namespace

DeviceGuard::DeviceGuard(int ordinal) {
  const ContextCalls& calls = context_calls();
  if (ordinal >= 0 && calls.get_current != nullptr) {
    CUcontext current = nullptr;
    if (calls.get_current(&current) != CUDA_SUCCESS) current = nullptr;
    CUdevice device = -1;
    if (current != nullptr && calls.get_device(&device) == CUDA_SUCCESS && device == ordinal) return;
    previous_ = current;
    by_context_ = true;
  } else {
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess) {
      cudaGetLastError();
      device = -1;
    }
    if (ordinal >= 0 && device == ordinal) return;
    previous_device_ = device;
  }
  if (ordinal >= 0) status_ = cuda_status(cudaSetDevice(ordinal), "making the device current");
}

DeviceGuard::~DeviceGuard() {  // nothing where the constructor returned early: the device was current
  if (by_context_) {
    context_calls().set_current(static_cast<CUcontext>(previous_));
  } else if (previous_device_ >= 0 && cudaSetDevice(previous_device_) != cudaSuccess) {
    cudaGetLastError();
  }
}

Status check_launch(cudaError_t launched, const char* kernel, cudaStream_t stream) {
  static const bool debug_sync = env_flag("OPENDML_DEBUG_SYNC");
  ODML_RETURN_IF_ERROR(cuda_status(launched, kernel));
  if (debug_sync) return cuda_status(cudaStreamSynchronize(stream), kernel);
  return {};
}

CudaDevice::CudaDevice(int ordinal, std::string name, uint32_t multiprocessors)
    : ordinal_(ordinal), name_(std::move(name)), multiprocessors_(multiprocessors) {}

std::span<const Implementation<CopyPlan, CudaDevice>> implementations(const CopyPlan&, const CudaDevice&) {
  static constexpr Implementation<CopyPlan, CudaDevice> kList[] = {
      {"cuda.slices", cuda_slices_declines, make_cuda_slices_kernel},
      {"cuda.copy", cuda_copy_declines, make_cuda_copy_kernel},
  };
  return kList;
}

std::span<const Implementation<NonzeroPlan, CudaDevice>> implementations(const NonzeroPlan&, const CudaDevice&) {
  static constexpr Implementation<NonzeroPlan, CudaDevice> kList[] = {
      {"cuda.lookback", cuda_lookback_declines, make_cuda_lookback_kernel, cuda_lookback_passes_over},
      {"cuda.nonzero", cuda_nonzero_declines, make_cuda_nonzero_kernel},
  };
  return kList;
}

Result<CompiledKernel> CudaDevice::compile(const Plan& plan) const { return compile_plan(plan, *this); }

Result<void*> CudaDevice::allocate(uint64_t bytes) const {
  DeviceGuard guard(ordinal_);
  ODML_RETURN_IF_ERROR(guard.status());
  void* p = nullptr;
  ODML_RETURN_IF_ERROR(cuda_status(cudaMalloc(&p, bytes == 0 ? 1 : bytes), "cudaMalloc"));
  return p;
}

Status CudaDevice::free(void* data) const {
  DeviceGuard guard(ordinal_);
  ODML_RETURN_IF_ERROR(guard.status());
  return cuda_status(cudaFree(data), "cudaFree");
}

Status CudaDevice::upload(void* dst, const void* src, uint64_t bytes) const {
  DeviceGuard guard(ordinal_);
  ODML_RETURN_IF_ERROR(guard.status());
  // Synchronous with the host (docs/contract.md section 5): from pageable memory cudaMemcpy returns
  // once the bytes are staged, before their DMA ends, and work on a non-blocking stream would not
  // wait for it. On the legacy default stream, so that the copy stays ordered after the work
  // queued there (and on blocking streams) as cudaMemcpy's is, and waited for there.
  ODML_RETURN_IF_ERROR(cuda_status(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, cudaStreamLegacy),
                                   "cudaMemcpyAsync to the device"));
  return cuda_status(cudaStreamSynchronize(cudaStreamLegacy), "cudaStreamSynchronize after the upload");
}

Status CudaDevice::download(void* dst, const void* src, uint64_t bytes) const {
  DeviceGuard guard(ordinal_);
  ODML_RETURN_IF_ERROR(guard.status());
  return cuda_status(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy to the host");
}

Status CudaDevice::copy(void* dst, const void* src, uint64_t bytes, void* stream) const {
  DeviceGuard guard(ordinal_);
  ODML_RETURN_IF_ERROR(guard.status());
  return cuda_status(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(stream)),
                     "cudaMemcpyAsync");
}

Status CudaDevice::synchronize(void* stream) const {
  DeviceGuard guard(ordinal_);
  ODML_RETURN_IF_ERROR(guard.status());
  return cuda_status(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)), "cudaStreamSynchronize");
}

Result<std::shared_ptr<Device>> make_cuda_device(int ordinal) {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  // The error is reported here (as UNSUPPORTED): cleared, as cuda_status does, so that the thread's
  // next CUDA call that checks the last error does not report it again.
  if (error != cudaSuccess) cudaGetLastError();
  if (error != cudaSuccess || count == 0)
    return unsupported("no CUDA device is available (", error == cudaSuccess ? "none found" : cudaGetErrorString(error),
                       ")");
  if (ordinal < 0) ODML_RETURN_IF_ERROR(cuda_status(cudaGetDevice(&ordinal), "cudaGetDevice"));
  if (ordinal >= count)
    return unsupported("cuda:", ordinal, " does not exist; this machine has ", count, " CUDA device",
                       count == 1 ? "" : "s");
  cudaDeviceProp props{};
  ODML_RETURN_IF_ERROR(cuda_status(cudaGetDeviceProperties(&props, ordinal), "cudaGetDeviceProperties"));
  return std::shared_ptr<Device>(
      std::make_shared<CudaDevice>(ordinal, cat("cuda:", ordinal, " (", props.name, ")"),
                                   static_cast<uint32_t>(std::max(props.multiProcessorCount, 1))));
}

}  // namespace opendml::internal
