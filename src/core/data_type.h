// DML_TENSOR_DATA_TYPE facts: names, sizes, and which values count as zero. Header-only, so the
// command-line tool and the backends read the same table.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>

#include "opendml/directml.h"

namespace opendml::internal {

struct DataTypeInfo {
  DML_TENSOR_DATA_TYPE type;
  std::string_view name;  // DirectML's spelling without the DML_TENSOR_DATA_TYPE_ prefix
  uint32_t bits;
  bool is_float;
};

inline constexpr DataTypeInfo kDataTypes[] = {
    {DML_TENSOR_DATA_TYPE_FLOAT32, "FLOAT32", 32, true}, {DML_TENSOR_DATA_TYPE_FLOAT16, "FLOAT16", 16, true},
    {DML_TENSOR_DATA_TYPE_UINT32, "UINT32", 32, false},  {DML_TENSOR_DATA_TYPE_UINT16, "UINT16", 16, false},
    {DML_TENSOR_DATA_TYPE_UINT8, "UINT8", 8, false},     {DML_TENSOR_DATA_TYPE_INT32, "INT32", 32, false},
    {DML_TENSOR_DATA_TYPE_INT16, "INT16", 16, false},    {DML_TENSOR_DATA_TYPE_INT8, "INT8", 8, false},
    {DML_TENSOR_DATA_TYPE_FLOAT64, "FLOAT64", 64, true}, {DML_TENSOR_DATA_TYPE_UINT64, "UINT64", 64, false},
    {DML_TENSOR_DATA_TYPE_INT64, "INT64", 64, false},    {DML_TENSOR_DATA_TYPE_UINT4, "UINT4", 4, false},
    {DML_TENSOR_DATA_TYPE_INT4, "INT4", 4, false},
};

// The known types other than UNKNOWN; null for any other value.
constexpr const DataTypeInfo* data_type_info(DML_TENSOR_DATA_TYPE type) {
  for (const DataTypeInfo& info : kDataTypes)
    if (info.type == type) return &info;
  return nullptr;
}

inline std::string_view data_type_name(DML_TENSOR_DATA_TYPE type) {
  const DataTypeInfo* info = data_type_info(type);
  return info ? info->name : std::string_view("UNKNOWN");
}

// Accepts "FLOAT32" and "DML_TENSOR_DATA_TYPE_FLOAT32".
inline std::optional<DML_TENSOR_DATA_TYPE> parse_data_type(std::string_view text) {
  constexpr std::string_view prefix = "DML_TENSOR_DATA_TYPE_";
  if (text.starts_with(prefix)) text.remove_prefix(prefix.size());
  for (const DataTypeInfo& info : kDataTypes)
    if (info.name == text) return info.type;
  return std::nullopt;
}

// The bits of an element that decide whether it is non-zero: all of them for integers, all but
// the sign bit for floats, so that -0.0 counts as zero and NaN and denormals do not
// (docs/contract.md section 3.3).
constexpr uint64_t value_mask(const DataTypeInfo& info) {
  const uint64_t all = info.bits == 64 ? ~uint64_t{0} : (uint64_t{1} << info.bits) - 1;
  return info.is_float ? all >> 1 : all;
}

// A set of data types, for the feature-level support tables.
class DataTypeSet {
 public:
  constexpr DataTypeSet(std::initializer_list<DML_TENSOR_DATA_TYPE> types) {
    for (DML_TENSOR_DATA_TYPE t : types) bits_ |= 1u << t;
  }
  constexpr bool contains(DML_TENSOR_DATA_TYPE t) const { return static_cast<uint32_t>(t) < 32 && (bits_ >> t) & 1; }

 private:
  uint32_t bits_ = 0;
};

}  // namespace opendml::internal
