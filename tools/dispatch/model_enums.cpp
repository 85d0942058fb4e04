#include "model_enums.h"

#include <string>

#include "core/data_type.h"

namespace opendml::tool {

DML_TENSOR_DATA_TYPE read_data_type(const Node& node) {
  const std::string text = node.string();
  if (const std::optional<DML_TENSOR_DATA_TYPE> type = parse_data_type(text)) return *type;
  std::string known;
  for (const DataTypeInfo& info : kDataTypes) known += (known.empty() ? "" : ", ") + std::string(info.name);
  node.fail("'" + text + "' is not a DML_TENSOR_DATA_TYPE (" + known + ")");
}

uint32_t read_enum(const Node& node, std::string_view prefix,
                   std::initializer_list<std::pair<std::string_view, uint32_t>> values) {
  const std::string full = node.string();
  std::string_view text = full;
  if (text.starts_with(prefix)) text.remove_prefix(prefix.size());
  std::string known;
  for (const auto& [name, value] : values) {
    if (name == text) return value;
    known += (known.empty() ? "" : ", ") + std::string(prefix) + std::string(name);
  }
  node.fail("'" + full + "' is not one of " + known);
}

}  // namespace opendml::tool
