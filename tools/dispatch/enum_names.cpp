#include "enum_names.h"

#include <vector>

namespace opendml::tool {
namespace {

// The values the library names, found by asking it about every value in the enum's range.
template <class Enum, class Name>
std::vector<Enum> named_values(int first, int last, int step, Name name) {
  std::vector<Enum> values;
  for (int v = first; v <= last; v += step)
    if (name(static_cast<Enum>(v)) != nullptr) values.push_back(static_cast<Enum>(v));
  return values;
}

// The value among `values` whose name is `text`, with or without DirectML's `prefix`.
template <class Enum, class Name>
std::optional<Enum> parse_named(std::string_view text, std::string_view prefix, std::span<const Enum> values,
                                Name name) {
  if (text.starts_with(prefix)) text.remove_prefix(prefix.size());
  for (Enum v : values)
    if (name(v) == text) return v;
  return std::nullopt;
}

}  // namespace

std::span<const DML_TENSOR_DATA_TYPE> data_types() {
  static const std::vector<DML_TENSOR_DATA_TYPE> types =
      named_values<DML_TENSOR_DATA_TYPE>(1, 255, 1, odml_data_type_name);
  return types;
}

std::string_view data_type_name(DML_TENSOR_DATA_TYPE type) {
  const char* name = odml_data_type_name(type);
  return name ? name : "UNKNOWN";
}

uint32_t data_type_bits(DML_TENSOR_DATA_TYPE type) { return odml_data_type_bits(type); }

std::optional<DML_TENSOR_DATA_TYPE> parse_data_type(std::string_view text) {
  return parse_named(text, "DML_TENSOR_DATA_TYPE_", data_types(), data_type_name);
}

std::span<const DML_FEATURE_LEVEL> feature_levels() {
  static const std::vector<DML_FEATURE_LEVEL> levels =
      named_values<DML_FEATURE_LEVEL>(0x1000, 0xF000, 0x100, odml_feature_level_name);
  return levels;
}

std::string feature_level_name(DML_FEATURE_LEVEL level) {
  const char* name = odml_feature_level_name(level);
  return name ? name : "?";
}

DML_FEATURE_LEVEL highest_feature_level() { return feature_levels().back(); }

std::optional<DML_FEATURE_LEVEL> parse_feature_level(std::string_view text) {
  return parse_named(text, "DML_FEATURE_LEVEL_", feature_levels(), feature_level_name);
}

}  // namespace opendml::tool
