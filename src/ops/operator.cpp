#include "ops/operator.h"

#include "core/feature_level.h"
#include "ops/join_split.h"
#include "ops/nonzero_coordinates.h"

namespace opendml::internal {
namespace {

struct OperatorEntry {
  DML_OPERATOR_TYPE type;
  const char* name;
  Result<OperatorDef> (*validate)(const void* desc, DML_FEATURE_LEVEL level);
};

constexpr OperatorEntry kOperators[] = {
    {DML_OPERATOR_JOIN, "JOIN",
     [](const void* d, DML_FEATURE_LEVEL l) {
       return validate_join(*static_cast<const DML_JOIN_OPERATOR_DESC*>(d), l);
     }},
    {DML_OPERATOR_SPLIT, "SPLIT",
     [](const void* d, DML_FEATURE_LEVEL l) {
       return validate_split(*static_cast<const DML_SPLIT_OPERATOR_DESC*>(d), l);
     }},
    {DML_OPERATOR_NONZERO_COORDINATES, "NONZERO_COORDINATES",
     [](const void* d, DML_FEATURE_LEVEL l) {
       return validate_nonzero_coordinates(*static_cast<const DML_NONZERO_COORDINATES_OPERATOR_DESC*>(d), l);
     }},
};

}  // namespace

Result<OperatorDef> create_operator_def(const DML_OPERATOR_DESC* desc, DML_FEATURE_LEVEL feature_level) {
  if (desc == nullptr) return invalid_argument("the DML_OPERATOR_DESC is null");
  const DML_FEATURE_LEVEL level = feature_level == 0 ? kHighestFeatureLevel : feature_level;
  if (!is_known_feature_level(level))
    return invalid_argument("feature level 0x", std::hex, static_cast<unsigned>(level),
                            " is not a DML_FEATURE_LEVEL (1_0 = 0x1000 to 6_4 = 0x6400)");
  for (const OperatorEntry& entry : kOperators) {
    if (entry.type != desc->Type) continue;
    if (desc->Desc == nullptr) return invalid_argument(entry.name, ": DML_OPERATOR_DESC.Desc is null");
    return entry.validate(desc->Desc, level);
  }
  return unsupported("operator type ", static_cast<int>(desc->Type),
                     " is not implemented; opendml implements JOIN (63), SPLIT (62) and NONZERO_COORDINATES (133)");
}

Plan plan_operator(const OperatorDef& op) {
  if (op.type == DML_OPERATOR_NONZERO_COORDINATES) return plan_nonzero_coordinates(op);
  return plan_join_split(op);
}

}  // namespace opendml::internal
