// One element of a resource: its C++ type, how a JSON value becomes its bytes, and how it prints.
// Resources hold the byte-sized types; UINT4 and INT4 (two elements a byte) are not supported.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "enum_names.h"
#include "json_node.h"

namespace opendml::tool {

// A FLOAT16 element's bits.
struct Half {
  uint16_t bits;
};

float half_to_float(uint16_t bits);  // exact
// The nearest FLOAT16 (ties to even); a finite value beyond 65504 after rounding becomes infinity.
uint16_t half_from_double(double value);
// DxDispatch's conversion (half.hpp's default): toward zero; 2^16 and above become infinity.
uint16_t half_from_float_truncating(float value);

// How a JSON number becomes a FLOAT16: as DxDispatch converts it (to float, rounding to nearest,
// then to FLOAT16 toward zero), the default so that a model's bytes are DxDispatch's; or, with
// --ieee-values, rounded once to the nearest FLOAT16. Other types are the same either way.
enum class Rounding { kDxDispatch, kIeee };

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

// Writes `value` (a JSON number; or "nan", "inf", "-inf" in any case for a float type) as one
// element of `type` at dst. Returns why it cannot (not a number, not a whole number for an integer
// type, out of the type's range), or an empty string on success.
std::string encode_element(const Json& value, DML_TENSOR_DATA_TYPE type, std::byte* dst,
                           Rounding rounding = Rounding::kIeee);

// How print writes elements. Integers print in decimal; floats with six significant digits as
// DxDispatch prints them, or `exact`ly in the shortest form that reads back to the same value
// (3.5, -5.2, 0.099975586), and nan, inf, -inf. FLOAT16 is converted exactly to float first.
struct ElementFormat {
  bool exact = false;
  bool verbose = false;      // DxDispatch's "[index] value (0xBITS)" lines instead of "v0, v1, ..."
  uint64_t first_index = 0;  // of the first element given: chunks of one resource follow each other
  uint64_t count = 0;        // elements in the whole resource: the width of a verbose index
};

// Appends the elements' text to `out`: "v0, v1, ..." (", " first when first_index > 0), or one
// verbose line each. The caller owns `out`, so that printing a large resource a piece at a time
// reuses one buffer.
void format_elements(std::string& out, DML_TENSOR_DATA_TYPE type, std::span<const std::byte> elements,
                     const ElementFormat& format);

}  // namespace opendml::tool
