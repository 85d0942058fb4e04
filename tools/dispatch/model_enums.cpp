#include "model_enums.h"

#include <string>

#include "core/data_type.h"
#include "errors.h"

namespace opendml::tool {

using namespace opendml::internal;  // the enum tables shared with the library

DML_TENSOR_DATA_TYPE read_data_type(const Node& node) {
  const std::string text = node.string();
  if (const std::optional<DML_TENSOR_DATA_TYPE> type = parse_data_type(text)) return *type;
  node.fail("'" + text + "' is not a DML_TENSOR_DATA_TYPE (" +
            comma_list(kDataTypes, [](const DataTypeInfo& info) { return info.name; }) + ")");
}

size_t read_enum(const Node& node, std::string_view prefix, std::span<const std::string_view> names) {
  const std::string text = node.string();
  std::string_view name = text;
  if (name.starts_with(prefix)) name.remove_prefix(prefix.size());
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return i;
  node.fail("'" + text + "' is not one of " +
            comma_list(names, [&](std::string_view n) { return std::string(prefix) + std::string(n); }));
}

}  // namespace opendml::tool
