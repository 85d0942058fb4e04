// DirectML's enum names as the tool reads and prints them, built on the library's public API
// (odml_data_type_name, odml_data_type_bits, odml_feature_level_name): the tool keeps no table of
// its own.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "opendml/opendml.h"

namespace opendml::tool {

// Every DML_TENSOR_DATA_TYPE other than UNKNOWN, in DirectML's order.
std::span<const DML_TENSOR_DATA_TYPE> data_types();
// "FLOAT32"; "UNKNOWN" for a value that is no data type.
std::string_view data_type_name(DML_TENSOR_DATA_TYPE type);
// Bits per element; 0 for a value that is no data type.
uint32_t data_type_bits(DML_TENSOR_DATA_TYPE type);
// "FLOAT32" or "DML_TENSOR_DATA_TYPE_FLOAT32".
std::optional<DML_TENSOR_DATA_TYPE> parse_data_type(std::string_view text);

// Every DML_FEATURE_LEVEL, lowest first.
std::span<const DML_FEATURE_LEVEL> feature_levels();
std::string feature_level_name(DML_FEATURE_LEVEL level);  // "6_4"
DML_FEATURE_LEVEL highest_feature_level();
// "6_4" or "DML_FEATURE_LEVEL_6_4".
std::optional<DML_FEATURE_LEVEL> parse_feature_level(std::string_view text);

}  // namespace opendml::tool
