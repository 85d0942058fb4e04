// CUDA errors become statuses, never aborts. OPENDML_DEBUG_SYNC=1 also waits for each launch to
// finish, so that an asynchronous fault is reported by the call that caused it (this breaks CUDA
// graph capture: use it for debugging only).
#pragma once

#include <cuda_runtime.h>

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

// After a kernel launch: the launch error, and with OPENDML_DEBUG_SYNC the execution error.
Status check_launch(const char* kernel, cudaStream_t stream);

// Makes `ordinal` the calling thread's current device for the guard's lifetime. Every execute
// makes one: where `ordinal` is current already (the usual case), that costs one cudaGetDevice and
// nothing on the way out.
class DeviceGuard {
 public:
  explicit DeviceGuard(int ordinal) {
    cudaGetDevice(&previous_);
    switched_ = previous_ != ordinal && cudaSetDevice(ordinal) == cudaSuccess;
  }
  ~DeviceGuard() {
    if (switched_) cudaSetDevice(previous_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
  bool switched_ = false;
};

}  // namespace opendml::internal
