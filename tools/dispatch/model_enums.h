// Enum-valued fields of a model. DirectML's enum values may drop their prefix ("FLOAT32" or
// "DML_TENSOR_DATA_TYPE_FLOAT32"); the data type names come from core/data_type.h.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <utility>

#include "json_node.h"
#include "opendml/directml.h"

namespace opendml::tool {

// A DML_TENSOR_DATA_TYPE other than UNKNOWN.
DML_TENSOR_DATA_TYPE read_data_type(const Node& node);

// The value of one of `values` (names without `prefix`), e.g. read_enum(node, "DML_TENSOR_FLAG_",
// {{"NONE", 0}, {"OWNED_BY_DML", 1}}).
uint32_t read_enum(const Node& node, std::string_view prefix,
                   std::initializer_list<std::pair<std::string_view, uint32_t>> values);

}  // namespace opendml::tool
