#include "ops/operator.h"

#include "core/feature_level.h"
#include "ops/join_split.h"
#include "ops/nonzero_coordinates.h"

namespace opendml::internal {
namespace {

// A row from the operator's typed validation and plan functions.
template <class Desc, Result<OperatorDef> (*Validate)(const Desc&, const CreateOptions&), auto PlanFn>
constexpr OperatorEntry row(DML_OPERATOR_TYPE type, const char* name) {
  return {
      type, name,
      [](const void* desc, const CreateOptions& options) { return Validate(*static_cast<const Desc*>(desc), options); },
      [](const OperatorDef& op) { return Plan(PlanFn(op)); }};
}

// The operators opendml implements: one row each.
constexpr OperatorEntry kOperators[] = {
    row<DML_JOIN_OPERATOR_DESC, validate_join, plan_join_split>(DML_OPERATOR_JOIN, "JOIN"),
    row<DML_SPLIT_OPERATOR_DESC, validate_split, plan_join_split>(DML_OPERATOR_SPLIT, "SPLIT"),
    row<DML_NONZERO_COORDINATES_OPERATOR_DESC, validate_nonzero_coordinates, plan_nonzero_coordinates>(
        DML_OPERATOR_NONZERO_COORDINATES, "NONZERO_COORDINATES"),
};

std::string implemented_operators() {
  std::string list;
  for (const OperatorEntry& entry : kOperators)
    list += cat(list.empty() ? "" : ", ", entry.name, " (", static_cast<int>(entry.type), ")");
  return list;
}

}  // namespace

Result<CreateOptions> read_create_options(DML_FEATURE_LEVEL feature_level, const odml_operator_options* options) {
  CreateOptions create{feature_level, options == nullptr ? 0u : options->extensions, {}};
  if (options == nullptr) return create;
  if ((create.extensions & ~uint32_t{ODML_EXTENSIONS_ALL}) != 0)
    return invalid_argument("extensions 0x", std::hex, create.extensions,
                            " name bits that are not odml_extension values (all: 0x", ODML_EXTENSIONS_ALL, ")");
  const uint32_t n = options->coordinate_offset_count;
  if (!create.has(ODML_EXTENSION_COORDINATE_OFFSETS)) {
    if (n != 0 || options->coordinate_offsets != nullptr)
      return invalid_argument("coordinate offsets were given without ODML_EXTENSION_COORDINATE_OFFSETS");
    return create;
  }
  if (n == 0 || n > kMaxRank || options->coordinate_offsets == nullptr)
    return invalid_argument("ODML_EXTENSION_COORDINATE_OFFSETS needs an offset per coordinate column (1 to ", kMaxRank,
                            "); coordinate_offset_count is ", n,
                            options->coordinate_offsets == nullptr ? " and coordinate_offsets is null" : "");
  create.coordinate_offsets.assign(options->coordinate_offsets, options->coordinate_offsets + n);
  return create;
}

Result<OperatorDef> create_operator_def(const DML_OPERATOR_DESC* desc, CreateOptions options) {
  if (desc == nullptr) return invalid_argument("the DML_OPERATOR_DESC is null");
  if (options.feature_level == 0) options.feature_level = kHighestFeatureLevel;
  if (!is_known_feature_level(options.feature_level))
    return invalid_argument("feature level 0x", std::hex, static_cast<unsigned>(options.feature_level),
                            " is not a DML_FEATURE_LEVEL (1_0 = 0x1000 to 6_4 = 0x6400)");
  if (options.has(ODML_EXTENSION_COORDINATE_OFFSETS) && desc->Type != DML_OPERATOR_NONZERO_COORDINATES)
    return invalid_argument("ODML_EXTENSION_COORDINATE_OFFSETS applies to NONZERO_COORDINATES only");
  for (const OperatorEntry& entry : kOperators) {
    if (entry.type != desc->Type) continue;
    if (desc->Desc == nullptr) return invalid_argument(entry.name, ": DML_OPERATOR_DESC.Desc is null");
    Result<OperatorDef> def = entry.validate(desc->Desc, options);
    if (def.ok()) def->entry = &entry;
    return def;
  }
  return unsupported("operator type ", static_cast<int>(desc->Type), " is not implemented; opendml implements ",
                     implemented_operators());
}

Plan plan_operator(const OperatorDef& op) { return op.entry->plan(op); }

}  // namespace opendml::internal
