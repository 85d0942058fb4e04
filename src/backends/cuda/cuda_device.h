// The CUDA backend's entry point. Plain C++: no CUDA header reaches the rest of the library.
#pragma once

#include <memory>

#include "backends/device.h"

namespace opendml::internal {

// ordinal -1: the current device. Without CUDA in the build, an UNSUPPORTED status.
Result<std::shared_ptr<Device>> make_cuda_device(int ordinal);

}  // namespace opendml::internal
