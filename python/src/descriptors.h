// The descriptor layer's Python objects that the array layer shares.
#pragma once

#include <memory>

#include "dlpack.h"

namespace opendml::python {

// The extensions an operator can ask for at creation (opendml's own, outside DirectML).
constexpr uint32_t kExtension64BitIndices = 1;

// Operator creation with opendml extensions; rejects what this build cannot do.
Operator create_operator(const Device& device, const OperatorDesc& desc, uint32_t feature_level, uint32_t extensions);

}  // namespace opendml::python
