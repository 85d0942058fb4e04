// CUDA errors become statuses, never aborts. OPENDML_DEBUG_SYNC=1 also waits for each launch to
// finish, so that an asynchronous fault is reported by the call that caused it (this breaks CUDA
// graph capture: use it for debugging only).
#pragma once

#include <cuda_runtime.h>

#include <type_traits>

#include "core/status.h"

namespace opendml::internal {

inline Status cuda_status(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return {};
  // The error is reported here: clear the thread's last error (when it is not sticky), so that a
  // later launch's check does not report it again (a failed cudaMalloc once failed the next
  // kernel launch this way).
  cudaGetLastError();
  const odml_status code = error == cudaErrorMemoryAllocation ? ODML_STATUS_OUT_OF_MEMORY : ODML_STATUS_DEVICE_FAILURE;
  return Status(code, cat(what, ": ", cudaGetErrorName(error), ": ", cudaGetErrorString(error)));
}

// Launches kernel<<<blocks, threads, 0, stream>>>(args...) and returns the launch's own error. After
// <<<>>> only cudaGetLastError tells, and it also reports an earlier call of the thread that failed
// unchecked (a caller's cudaMalloc that ran out of memory, checked by its return value only): execute
// then failed with the caller's error although its kernel was queued and wrote the outputs. The
// arguments are the kernel's parameter types exactly, and are copied at the launch.
template <class... Params>
cudaError_t launch_kernel(void (*kernel)(Params...), uint32_t blocks, uint32_t threads, cudaStream_t stream,
                          const std::type_identity_t<Params>&... args) {
  void* params[] = {const_cast<void*>(static_cast<const void*>(&args))...};
  return cudaLaunchKernel(reinterpret_cast<const void*>(kernel), dim3(blocks), dim3(threads), params, 0, stream);
}

// After a kernel launch that returned `launched`: its error, and with OPENDML_DEBUG_SYNC the
// execution error.
Status check_launch(cudaError_t launched, const char* kernel, cudaStream_t stream);

// Makes device `ordinal` current on the calling thread for the guard's lifetime, then puts back the
// thread's CUDA context as the guard found it, no context included: restoring "device 0" on a
// thread that had none would create a context on GPU 0 in every process that only uses another GPU.
// Where `ordinal` is current already (the usual case, every execute makes a guard), that costs two
// driver queries and nothing on the way out. A negative ordinal switches nothing and makes the
// runtime's current device (cudaGetDevice, 0 where none was chosen) current again at the end: for
// code that others switch (the Python package around XLA's start, which leaves its last GPU current).
class DeviceGuard {
 public:
  explicit DeviceGuard(int ordinal);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;
  // Why `ordinal` could not be made current: the calls that follow would run on another device.
  const Status& status() const { return status_; }

 private:
  void* previous_ = nullptr;  // the thread's CUcontext, null where it had none (by_context_)
  int previous_device_ = -1;  // otherwise cudaGetDevice's, where it answered
  bool by_context_ = false;   // the driver's context calls are to be had, and ordinal >= 0
  Status status_;
};

}  // namespace opendml::internal
