#include "model_enums.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "enum_names.h"
#include "errors.h"

namespace opendml::tool {

DML_TENSOR_DATA_TYPE read_data_type(const Node& node) {
  const std::string text = node.string();
  if (const std::optional<DML_TENSOR_DATA_TYPE> type = parse_data_type(text)) return *type;
  node.fail("'" + text + "' is not a DML_TENSOR_DATA_TYPE (" + comma_list(data_types(), data_type_name) + ")");
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

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  // std::tolower takes an unsigned char's value (or EOF): a byte past 0x7F (UTF-8 in a model's strings) as a
  // negative char is undefined behaviour.
  return std::ranges::equal(a, b, [](unsigned char x, unsigned char y) { return std::tolower(x) == std::tolower(y); });
}

uint32_t read_flags(const Node& node, std::string_view prefix, std::span<const std::string_view> names) {
  const std::vector<Node> items = node.json().is_array() ? node.elements() : std::vector<Node>{node};
  uint32_t flags = 0;
  for (const Node& item : items) {
    const size_t index = read_enum(item, prefix, names);
    if (names[index] != "NONE") flags |= uint32_t{1} << (index - (names[0] == "NONE" ? 1 : 0));
  }
  return flags;
}

}  // namespace opendml::tool
