// Enum-valued fields of a model. DirectML's enum values may drop their prefix ("FLOAT32" or
// "DML_TENSOR_DATA_TYPE_FLOAT32"); the data type names come from the library (enum_names.h).
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

#include "json_node.h"
#include "opendml/directml.h"

namespace opendml::tool {

// A DML_TENSOR_DATA_TYPE other than UNKNOWN.
DML_TENSOR_DATA_TYPE read_data_type(const Node& node);

// The position in `names` (spelled without `prefix`) of the name the node holds, e.g.
// read_enum(node, "DML_TENSOR_FLAG_", {"NONE", "OWNED_BY_DML"}) for "DML_TENSOR_FLAG_OWNED_BY_DML" is 1.
size_t read_enum(const Node& node, std::string_view prefix, std::span<const std::string_view> names);

// Whether two names are equal but for case: DxDispatch compares command and dispatchable types so.
bool equal_ignoring_case(std::string_view a, std::string_view b);

// Flags: one name or, as DxDispatch allows, an array of names, OR'ed; names[i] is the bit 1 << i,
// except a name "NONE", which is 0.
uint32_t read_flags(const Node& node, std::string_view prefix, std::span<const std::string_view> names);

}  // namespace opendml::tool
