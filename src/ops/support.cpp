#include "ops/support.h"

#include <string>

#include "core/feature_level.h"

namespace opendml::internal {
namespace {

// "FLOAT64 needs 4_1" or "no feature level allows FLOAT64": the lowest level whose row accepts.
template <class Accepts>
std::string needs(std::span<const SupportRow> rows, std::string_view what, Accepts accepts) {
  const SupportRow* lowest = nullptr;
  for (const SupportRow& row : rows)
    if (accepts(row)) lowest = &row;  // rows are newest first
  if (lowest == nullptr) return cat("no feature level allows ", what);
  return cat(what, " needs ", feature_level_name(lowest->since));
}

std::string type_list(DataTypeSet types) {
  std::string list;
  for (const DataTypeInfo& info : kDataTypes)
    if (types.contains(info.type)) list += (list.empty() ? "" : ", ") + std::string(info.name);
  return list;
}

}  // namespace

const SupportRow* support_row(std::span<const SupportRow> rows, DML_FEATURE_LEVEL level) {
  for (const SupportRow& row : rows)
    if (level >= row.since) return &row;
  return nullptr;
}

Status check_support(std::span<const SupportRow> rows, DML_FEATURE_LEVEL level, const Tensor& t, std::string_view op,
                     std::string_view where, const ExtensionTypes& extension) {
  const SupportRow& row = *support_row(rows, level);
  const std::string at = feature_level_name(level);
  if (t.rank < row.min_rank || t.rank > row.max_rank) {
    const auto accepts = [&](const SupportRow& r) { return t.rank >= r.min_rank && t.rank <= r.max_rank; };
    return invalid_argument(where, ".DimensionCount is ", t.rank, "; at feature level ", at, " ", op, " allows ",
                            row.min_rank, " to ", row.max_rank, " dimensions here (",
                            needs(rows, cat(t.rank, " dimensions"), accepts), ")");
  }
  const bool extended = extension.types.contains(t.data_type);
  if (!row.types.contains(t.data_type) && !(extended && extension.on)) {
    const auto accepts = [&](const SupportRow& r) { return r.types.contains(t.data_type); };
    const std::string_view name = data_type_name(t.data_type);
    return invalid_argument(where, ".DataType is ", name, "; at feature level ", at, " ", op, " allows ",
                            type_list(row.types), " here (", needs(rows, name, accepts),
                            extended ? cat("; ", extension.allows) : "", ")");
  }
  return {};
}

}  // namespace opendml::internal
