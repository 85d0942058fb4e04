#include "elements.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>

namespace opendml::tool {
namespace {

std::string out_of_range(const Json& value, DML_TENSOR_DATA_TYPE type, const std::string& range) {
  return value.dump() + " is out of range for " + std::string(data_type_name(type)) + " (" + range + ")";
}

// nan, inf, -inf; otherwise six significant digits as DxDispatch prints (iostream's default, %g),
// or with `exact` the shortest form that reads back to the same value.
template <class T>
void append_float(std::string& out, T value, bool exact = true) {
  char text[64];
  if (std::isnan(value)) {
    out += "nan";
  } else if (std::isinf(value)) {
    out += value < 0 ? "-inf" : "inf";
  } else if (exact) {
    out.append(text, std::to_chars(text, text + sizeof text, value).ptr);
  } else {
    out.append(text, std::to_chars(text, text + sizeof text, value, std::chars_format::general, 6).ptr);
  }
}

// A float element's value: a number, or one of the strings "nan", "inf", "-inf".
std::string read_float(const Json& value, double& result) {
  if (value.is_number()) {
    result = value.get<double>();
    return {};
  }
  if (value.is_string()) {  // in any case, as DxDispatch compares them
    std::string text = value.get<std::string>();
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
    if (text == "nan") result = std::numeric_limits<double>::quiet_NaN();
    if (text == "inf" || text == "-inf") result = text == "inf" ? INFINITY : -INFINITY;
    if (text == "nan" || text == "inf" || text == "-inf") return {};
    return value.dump() + " is not a number (the only strings allowed are \"nan\", \"inf\" and \"-inf\")";
  }
  return "must be a number, not " + json_type_name(value);
}

template <class T>
std::string encode_float(const Json& value, DML_TENSOR_DATA_TYPE type, std::byte* dst, Rounding rounding) {
  double number;
  if (std::string why = read_float(value, number); !why.empty()) return why;
  T element;
  if constexpr (std::is_same_v<T, Half>) {
    element.bits =
        rounding == Rounding::kIeee ? half_from_double(number) : half_from_float_truncating(static_cast<float>(number));
    if (std::isfinite(number) && (element.bits & 0x7FFF) == 0x7C00)
      return out_of_range(value, type, "at most 65504 in magnitude");
  } else {
    element = static_cast<T>(number);
    if (std::isfinite(number) && std::isinf(element)) {
      std::string max;
      append_float(max, std::numeric_limits<T>::max());
      return out_of_range(value, type, "at most " + max + " in magnitude");
    }
  }
  std::memcpy(dst, &element, sizeof(T));
  return {};
}

template <class T>
std::string encode_integer(const Json& value, DML_TENSOR_DATA_TYPE type, std::byte* dst) {
  const std::string name(data_type_name(type));
  if (value.is_string())
    return value.dump() + " is not a number" +
           (value == "nan" || value == "inf" || value == "-inf" ? "; nan and inf exist only in float types, not " + name
                                                                : "");
  if (!value.is_number()) return "must be a number, not " + json_type_name(value);
  // The value as a sign and a magnitude that both fit 64 bits, or past them (out of every type's range,
  // UINT64's too: its largest is 2^64 - 1).
  bool negative = false, past_64_bits = false;
  uint64_t magnitude = 0;
  if (value.is_number_unsigned()) {
    magnitude = value.get<uint64_t>();
  } else if (value.is_number_integer()) {
    const int64_t v = value.get<int64_t>();
    negative = v < 0;
    magnitude = negative ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  } else {
    const double v = value.get<double>();
    if (!std::isfinite(v) || std::trunc(v) != v) return value.dump() + " is not a whole number, as " + name + " needs";
    negative = v < 0;
    past_64_bits = std::fabs(v) >= 0x1p64;
    magnitude = past_64_bits ? 0 : static_cast<uint64_t>(std::fabs(v));
  }
  using Limits = std::numeric_limits<T>;
  const uint64_t max_negative = std::is_signed_v<T> ? uint64_t{0} - static_cast<uint64_t>(Limits::min()) : 0;
  if (past_64_bits || (negative ? magnitude > max_negative : magnitude > static_cast<uint64_t>(Limits::max())))
    return out_of_range(value, type, std::to_string(Limits::min()) + " to " + std::to_string(Limits::max()));
  const T element = negative ? static_cast<T>(uint64_t{0} - magnitude) : static_cast<T>(magnitude);
  std::memcpy(dst, &element, sizeof(T));
  return {};
}

template <class T>
void append_element(std::string& out, const std::byte* src, bool exact) {
  T element;
  std::memcpy(&element, src, sizeof(T));
  if constexpr (std::is_same_v<T, Half>) {
    append_float(out, half_to_float(element.bits), exact);
  } else if constexpr (std::is_floating_point_v<T>) {
    append_float(out, element, exact);
  } else {
    char text[32];
    out.append(text, std::to_chars(text, text + sizeof text, element).ptr);
  }
}

}  // namespace

// On the bits, so that a sequence of 2^31 halves is generated at memory speed: the mantissa's 52
// bits are cut to FLOAT16's 10 (fewer for subnormals), rounding once to nearest, ties to even; a
// carry out of the mantissa moves to the next exponent, and past the largest finite half to inf.
uint16_t half_from_double(double value) {
  const uint64_t bits = std::bit_cast<uint64_t>(value);
  const auto sign = static_cast<uint16_t>((bits >> 48) & 0x8000);
  const uint64_t magnitude = bits & ~(uint64_t{1} << 63);
  if (magnitude >= 0x7FF0000000000000) return sign | (magnitude > 0x7FF0000000000000 ? 0x7E00 : 0x7C00);
  const int exponent = static_cast<int>(magnitude >> 52) - 1023;
  if (exponent > 15) return sign | 0x7C00;
  const uint64_t mantissa = (magnitude & ((uint64_t{1} << 52) - 1)) | (uint64_t{1} << 52);  // 53 bits
  // Normal halves keep 10 fraction bits above the implicit one; subnormals count units of 2^-24.
  const int shift = exponent >= -14 ? 42 : 28 - exponent;
  if (shift > 54) return sign;  // below half the smallest subnormal
  uint64_t half = mantissa >> shift;
  if (exponent >= -14) half = (uint64_t(exponent + 15) << 10) | (half & 0x3FF);
  const uint64_t rest = mantissa & ((uint64_t{1} << shift) - 1), halfway = uint64_t{1} << (shift - 1);
  if (rest > halfway || (rest == halfway && (half & 1))) ++half;
  return static_cast<uint16_t>(sign | std::min<uint64_t>(half, 0x7C00));
}

// half.hpp's float-to-half conversion as DxDispatch builds it (HALF_ROUND_STYLE -1): the bits
// past FLOAT16's precision are cut off, rounding toward zero, but a magnitude of 2^16 or more
// becomes infinity; a NaN keeps the top 10 bits of its payload.
uint16_t half_from_float_truncating(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const auto sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  const uint32_t exponent = (bits >> 23) & 0xFF, mantissa = bits & 0x7FFFFF;
  if (exponent == 0xFF) return sign | 0x7C00 | static_cast<uint16_t>(mantissa >> 13);
  if (exponent > 142) return sign | 0x7C00;                                                           // 2^16 and above
  if (exponent >= 113) return sign | static_cast<uint16_t>((exponent - 112) << 10 | mantissa >> 13);  // normal
  if (exponent >= 103) return sign | static_cast<uint16_t>((mantissa | 0x800000) >> (126 - exponent));  // subnormal
  return sign;
}

float half_to_float(uint16_t bits) {
  const bool negative = bits & 0x8000;
  const int exponent = (bits >> 10) & 0x1F;
  const int mantissa = bits & 0x3FF;
  float magnitude;
  if (exponent == 0x1F)
    magnitude = mantissa ? std::numeric_limits<float>::quiet_NaN() : INFINITY;
  else if (exponent == 0)
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);
  else
    magnitude = std::ldexp(static_cast<float>(mantissa | 0x400), exponent - 25);
  return negative ? -magnitude : magnitude;
}

bool is_element_type(DML_TENSOR_DATA_TYPE type) { return data_type_bits(type) >= 8; }

uint32_t element_bytes(DML_TENSOR_DATA_TYPE type) { return data_type_bits(type) / 8; }

std::string encode_element(const Json& value, DML_TENSOR_DATA_TYPE type, std::byte* dst, Rounding rounding) {
  return visit_element_type(type, [&]<class T>(std::type_identity<T>) {
    if constexpr (std::is_same_v<T, Half> || std::is_floating_point_v<T>)
      return encode_float<T>(value, type, dst, rounding);
    else
      return encode_integer<T>(value, type, dst);
  });
}

void format_elements(std::string& out, DML_TENSOR_DATA_TYPE type, std::span<const std::byte> elements,
                     const ElementFormat& format) {
  const size_t width = std::to_string(format.count).size();  // of a verbose line's index
  visit_element_type(type, [&]<class T>(std::type_identity<T>) {
    uint64_t index = format.first_index;
    for (size_t offset = 0; offset + sizeof(T) <= elements.size(); offset += sizeof(T), ++index) {
      if (!format.verbose) {
        if (index > 0) out += ", ";
        append_element<T>(out, elements.data() + offset, format.exact);
        continue;
      }
      // DxDispatch's verbose line: "[index] value (0xBITS)", the index right-aligned to the width of
      // the largest, the bits in upper-case hex right-aligned to two characters per byte.
      const std::string number = std::to_string(index);
      out += "[" + std::string(width > number.size() ? width - number.size() : 0, ' ') + number + "] ";
      append_element<T>(out, elements.data() + offset, format.exact);
      uint64_t bits = 0;
      std::memcpy(&bits, elements.data() + offset, sizeof(T));
      char hex[24];
      std::snprintf(hex, sizeof hex, " (0x%*llX)\n", static_cast<int>(2 * sizeof(T)),
                    static_cast<unsigned long long>(bits));
      out += hex;
    }
  });
}

}  // namespace opendml::tool
