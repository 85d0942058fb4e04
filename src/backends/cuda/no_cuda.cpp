// Built instead of the CUDA backend when CMake found no CUDA toolkit (OPENDML_WITH_CUDA=OFF).
#include "backends/cuda/cuda_device.h"

namespace opendml::internal {

Result<std::shared_ptr<Device>> make_cuda_device(int) {
  return unsupported("this build of opendml has no CUDA backend (configure with -DOPENDML_WITH_CUDA=ON)");
}

}  // namespace opendml::internal
