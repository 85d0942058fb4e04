// One element of a resource: its C++ type, how a JSON value becomes its bytes, and how it prints.
// Resources hold the byte-sized types; UINT4 and INT4 (two elements a byte) are not supported.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "core/data_type.h"
#include "json_node.h"

namespace opendml::tool {

using namespace opendml::internal;  // the enum tables shared with the library

// A FLOAT16 element's bits.
struct Half {
  uint16_t bits;
};

float half_to_float(uint16_t bits);  // exact

// Calls f(std::type_identity<T>{}) where T is the C++ type of an element of `type`: float,
// Half, double, or a fixed-width integer. Types without one (4-bit, unknown) are a bug here:
// callers check is_element_type first.
template <class F>
decltype(auto) visit_element_type(DML_TENSOR_DATA_TYPE type, F&& f) {
  switch (type) {
    case DML_TENSOR_DATA_TYPE_FLOAT32: return f(std::type_identity<float>{});
    case DML_TENSOR_DATA_TYPE_FLOAT16: return f(std::type_identity<Half>{});
    case DML_TENSOR_DATA_TYPE_FLOAT64: return f(std::type_identity<double>{});
    case DML_TENSOR_DATA_TYPE_UINT8: return f(std::type_identity<uint8_t>{});
    case DML_TENSOR_DATA_TYPE_UINT16: return f(std::type_identity<uint16_t>{});
    case DML_TENSOR_DATA_TYPE_UINT32: return f(std::type_identity<uint32_t>{});
    case DML_TENSOR_DATA_TYPE_UINT64: return f(std::type_identity<uint64_t>{});
    case DML_TENSOR_DATA_TYPE_INT8: return f(std::type_identity<int8_t>{});
    case DML_TENSOR_DATA_TYPE_INT16: return f(std::type_identity<int16_t>{});
    case DML_TENSOR_DATA_TYPE_INT32: return f(std::type_identity<int32_t>{});
    case DML_TENSOR_DATA_TYPE_INT64: return f(std::type_identity<int64_t>{});
    default: throw std::logic_error("no element type for DML_TENSOR_DATA_TYPE " + std::to_string(type));
  }
}

// Whether a resource can hold elements of `type`.
bool is_element_type(DML_TENSOR_DATA_TYPE type);
uint32_t element_bytes(DML_TENSOR_DATA_TYPE type);

// Writes `value` (a JSON number; or "nan", "inf", "-inf" for a float type) as one element of
// `type` at dst. Returns why it cannot (not a number, not a whole number for an integer type, out
// of the type's range), or an empty string on success.
std::string encode_element(const Json& value, DML_TENSOR_DATA_TYPE type, std::byte* dst);

// "v0, v1, ...": integers in decimal; floats without decimals when whole (1, 2, 3), otherwise in
// the shortest form that reads back to the same value (3.5, -5.2), and nan, inf, -inf. FLOAT16
// is converted exactly to float first.
std::string format_elements(DML_TENSOR_DATA_TYPE type, std::span<const std::byte> elements);

}  // namespace opendml::tool
