// DML_FEATURE_LEVEL names and parsing ("4_1", "DML_FEATURE_LEVEL_4_1").
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "opendml/directml.h"

namespace opendml::internal {

inline constexpr DML_FEATURE_LEVEL kFeatureLevels[] = {
    DML_FEATURE_LEVEL_1_0, DML_FEATURE_LEVEL_2_0, DML_FEATURE_LEVEL_2_1, DML_FEATURE_LEVEL_3_0, DML_FEATURE_LEVEL_3_1,
    DML_FEATURE_LEVEL_4_0, DML_FEATURE_LEVEL_4_1, DML_FEATURE_LEVEL_5_0, DML_FEATURE_LEVEL_5_1, DML_FEATURE_LEVEL_5_2,
    DML_FEATURE_LEVEL_6_0, DML_FEATURE_LEVEL_6_1, DML_FEATURE_LEVEL_6_2, DML_FEATURE_LEVEL_6_3, DML_FEATURE_LEVEL_6_4,
};
inline constexpr DML_FEATURE_LEVEL kHighestFeatureLevel = DML_FEATURE_LEVEL_6_4;

constexpr bool is_known_feature_level(DML_FEATURE_LEVEL level) {
  for (DML_FEATURE_LEVEL known : kFeatureLevels)
    if (known == level) return true;
  return false;
}

// 0x4100 -> "4_1".
inline std::string feature_level_name(DML_FEATURE_LEVEL level) {
  const unsigned v = static_cast<unsigned>(level);
  return std::to_string(v >> 12) + "_" + std::to_string((v >> 8) & 0xF);
}

inline std::optional<DML_FEATURE_LEVEL> parse_feature_level(std::string_view text) {
  constexpr std::string_view prefix = "DML_FEATURE_LEVEL_";
  if (text.starts_with(prefix)) text.remove_prefix(prefix.size());
  for (DML_FEATURE_LEVEL level : kFeatureLevels)
    if (feature_level_name(level) == text) return level;
  return std::nullopt;
}

}  // namespace opendml::internal
