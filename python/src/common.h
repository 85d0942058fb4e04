// Shared by the extension's sources: one way to raise errors, and integer narrowing that reports
// instead of wrapping.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <string>

#include "opendml/opendml.hpp"

namespace nb = nanobind;

namespace opendml::python {

// Every error leaves C++ as an opendml::Error; module.cpp turns its status into the Python class
// (opendml.Error for INVALID_ARGUMENT, opendml.UnsupportedError for UNSUPPORTED, ...).
[[noreturn]] inline void invalid(const std::string& message) { throw Error(ODML_STATUS_INVALID_ARGUMENT, message); }
[[noreturn]] inline void unsupported(const std::string& message) { throw Error(ODML_STATUS_UNSUPPORTED, message); }

// DirectML's sizes, strides and axes are 32-bit and unsigned.
inline uint32_t to_uint32(int64_t value, const std::string& what) {
  if (value < 0 || value > int64_t(UINT32_MAX))
    invalid(what + " is " + std::to_string(value) + "; DirectML takes an unsigned 32-bit value (0 to 4294967295)");
  return static_cast<uint32_t>(value);
}

void bind_descriptors(nb::module_& m);
void bind_arrays(nb::module_& m);

}  // namespace opendml::python
