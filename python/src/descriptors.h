// The descriptor layer's Python objects that the array layer shares.
#pragma once

#include <memory>

#include "dlpack.h"

namespace opendml::python {

// The extensions an operator can ask for at creation (opendml's own, outside DirectML).
constexpr uint32_t kExtension64BitIndices = 1;

// Whether the library has opendml's 64-bit indices extension yet (odml_operator_create_ex).
constexpr bool kHave64BitIndices = false;

// Raises UnsupportedError, saying what needs them, where `extensions` asks for more than this build
// has; opendml.Error for an unknown extension.
void check_extensions(uint32_t extensions, const std::string& what);

// Operator creation with opendml extensions.
Operator create_operator(const Device& device, const OperatorDesc& desc, uint32_t feature_level, uint32_t extensions);

}  // namespace opendml::python
