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

// The extensions that come with a value per coordinate column (docs/contract.md section 7), all of
// them NONZERO_COORDINATES': where odml_operator_options holds their values and CreateOptions keeps them.
struct ColumnExtension {
  odml_extension bit;
  std::string_view name, what;
  uint32_t odml_operator_options::*count;
  const uint64_t* odml_operator_options::*values;
  std::vector<uint64_t> CreateOptions::*kept;
};
constexpr ColumnExtension kColumnExtensions[] = {
    {ODML_EXTENSION_COORDINATE_OFFSETS, "ODML_EXTENSION_COORDINATE_OFFSETS", "coordinate offset",
     &odml_operator_options::coordinate_offset_count, &odml_operator_options::coordinate_offsets,
     &CreateOptions::coordinate_offsets},
    {ODML_EXTENSION_FILL_ROWS, "ODML_EXTENSION_FILL_ROWS", "fill value", &odml_operator_options::fill_value_count,
     &odml_operator_options::fill_values, &CreateOptions::fill_values},
};

// One extension's values: none without its bit, 1 to kMaxRank of them with it.
Status read_column_values(const ColumnExtension& e, const odml_operator_options& options, CreateOptions& create) {
  const uint32_t n = options.*e.count;
  const uint64_t* values = options.*e.values;
  if (!create.has(e.bit)) {
    if (n != 0 || values != nullptr) return invalid_argument(e.what, "s were given without ", e.name);
    return {};
  }
  if (n == 0 || n > kMaxRank || values == nullptr)
    return invalid_argument(e.name, " needs one ", e.what, " per coordinate column (1 to ", kMaxRank,
                            "); the count is ", n, values == nullptr ? " and the array is null" : "");
  (create.*e.kept).assign(values, values + n);
  return {};
}

}  // namespace

Result<OperatorDef> create_operator_def(const DML_OPERATOR_DESC* desc, DML_FEATURE_LEVEL feature_level,
                                        const odml_operator_options* options) {
  if (desc == nullptr) return invalid_argument("the DML_OPERATOR_DESC is null");
  CreateOptions create{
      feature_level == 0 ? kHighestFeatureLevel : feature_level, options == nullptr ? 0u : options->extensions, {}, {}};
  if (!is_known_feature_level(create.feature_level))
    return invalid_argument("feature level 0x", std::hex, static_cast<unsigned>(create.feature_level),
                            " is not a DML_FEATURE_LEVEL (1_0 = 0x1000 to 6_4 = 0x6400)");
  if ((create.extensions & ~uint32_t{ODML_EXTENSIONS_ALL}) != 0)
    return invalid_argument("extensions 0x", std::hex, create.extensions,
                            " name bits that are not odml_extension values (all: 0x", ODML_EXTENSIONS_ALL, ")");
  // DML_OPERATOR_INVALID names no operator: the caller's mistake, as in DirectML (E_INVALIDARG), not an
  // operator opendml lacks (docs/contract.md section 4).
  if (desc->Type == DML_OPERATOR_INVALID)
    return invalid_argument("operator type 0 is DML_OPERATOR_INVALID, which names no operator; opendml implements ",
                            implemented_operators());
  const OperatorEntry* entry = nullptr;
  for (const OperatorEntry& e : kOperators)
    if (e.type == desc->Type) entry = &e;
  if (entry == nullptr)
    return unsupported("operator type ", static_cast<int>(desc->Type), " is not implemented; opendml implements ",
                       implemented_operators());
  for (const ColumnExtension& e : kColumnExtensions)
    if (create.has(e.bit) && entry->type != DML_OPERATOR_NONZERO_COORDINATES)
      return invalid_argument(e.name, " applies to NONZERO_COORDINATES only");
  if (options != nullptr)
    for (const ColumnExtension& e : kColumnExtensions) ODML_RETURN_IF_ERROR(read_column_values(e, *options, create));
  if (desc->Desc == nullptr) return invalid_argument(entry->name, ": DML_OPERATOR_DESC.Desc is null");
  Result<OperatorDef> def = entry->validate(desc->Desc, create);
  if (def.ok()) def->entry = entry;
  return def;
}

Plan plan_operator(const OperatorDef& op) { return op.entry->plan(op); }

}  // namespace opendml::internal
