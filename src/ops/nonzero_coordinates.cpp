#include "ops/nonzero_coordinates.h"

#include <algorithm>

#include "core/data_type.h"
#include "core/feature_level.h"
#include "ops/support.h"

namespace opendml::internal {
namespace {

constexpr DataTypeSet kUint32 = {DML_TENSOR_DATA_TYPE_UINT32};

// From 4_0 the three tensors have independent dimension counts; at 3_x they share one, 4 or 5.
constexpr SupportRow kInputSupport[] = {{DML_FEATURE_LEVEL_4_0, 1, 8, kEightTypes},
                                        {DML_FEATURE_LEVEL_3_0, 4, 5, kEightTypes}};
constexpr SupportRow kCountSupport[] = {{DML_FEATURE_LEVEL_4_0, 1, 8, kUint32}, {DML_FEATURE_LEVEL_3_0, 4, 5, kUint32}};
constexpr SupportRow kCoordinatesSupport[] = {{DML_FEATURE_LEVEL_4_0, 2, 8, kUint32},
                                              {DML_FEATURE_LEVEL_3_0, 4, 5, kUint32}};

constexpr std::string_view kOp = "NONZERO_COORDINATES";

// The count and coordinates types ODML_EXTENSION_64BIT_INDICES adds (docs/contract.md section 7).
constexpr DataTypeSet kIndex64Types = {DML_TENSOR_DATA_TYPE_INT64, DML_TENSOR_DATA_TYPE_UINT64};

// The DimensionCount without leading dimensions of size 1: {1,2,3,4} -> 3, {1,1,1,1} -> 0.
uint32_t effective_rank(const Tensor& t) {
  uint32_t leading = 0;
  while (leading < t.rank && t.sizes[leading] == 1) ++leading;
  return t.rank - leading;
}

// t's first `rank` dimensions, coalesced (MultiView::coalesce): the input for reading, or the
// coordinates' dimensions before N, which validation requires to coalesce into one row dimension.
MultiView<1> coalesced(const Tensor& t, uint32_t rank) {
  MultiView<1> view;
  view.rank = rank;
  view.sizes = t.sizes;
  view.strides = {t.strides};
  view.coalesce();
  return view;
}

// An extension's values, one per coordinate column (docs/contract.md section 7).
Status check_column_count(const std::vector<uint64_t>& values, std::string_view what, uint32_t n) {
  if (values.size() != n)
    return invalid_argument(kOp, ": ", values.size(), " ", what, "s were given for ", n,
                            " coordinate columns (OutputCoordinatesTensor's N)");
  return {};
}

// ODML_EXTENSION_COORDINATE_OFFSETS: an offset per coordinate column, each keeping the largest
// coordinate of its column within the coordinates' data type.
Status check_coordinate_offsets(const CreateOptions& options, const Tensor& input, DML_TENSOR_DATA_TYPE type,
                                uint32_t n) {
  if (!options.has(ODML_EXTENSION_COORDINATE_OFFSETS)) return {};
  const std::vector<uint64_t>& offsets = options.coordinate_offsets;
  ODML_RETURN_IF_ERROR(check_column_count(offsets, "coordinate offset", n));
  const uint64_t max = type == DML_TENSOR_DATA_TYPE_UINT32  ? kMaxElements
                       : type == DML_TENSOR_DATA_TYPE_INT64 ? uint64_t{INT64_MAX}
                                                            : UINT64_MAX;
  for (uint32_t j = 0; j < n; ++j) {
    const uint64_t largest = input.sizes[input.rank - n + j] - 1;
    if (offsets[j] > max - largest)
      return invalid_argument(kOp, ": coordinate offset ", j, " is ", offsets[j], "; with coordinates up to ", largest,
                              " in that column the largest would pass ", max, ", the most a ", data_type_name(type),
                              " coordinate holds");
  }
  return {};
}

// ODML_EXTENSION_FILL_ROWS: a fill value per coordinate column, the bits of one coordinate (any
// 64-bit pattern for INT64 and UINT64, -1 as INT64 included; below 2^32 for UINT32).
Status check_fill_values(const CreateOptions& options, DML_TENSOR_DATA_TYPE type, uint32_t n) {
  if (!options.has(ODML_EXTENSION_FILL_ROWS)) return {};
  ODML_RETURN_IF_ERROR(check_column_count(options.fill_values, "fill value", n));
  for (uint32_t j = 0; j < n; ++j)
    if (type == DML_TENSOR_DATA_TYPE_UINT32 && options.fill_values[j] > UINT32_MAX)
      return invalid_argument(kOp, ": fill value ", j, " is ", options.fill_values[j],
                              ", more than a UINT32 coordinate holds");
  return {};
}

}  // namespace

Result<OperatorDef> validate_nonzero_coordinates(const DML_NONZERO_COORDINATES_OPERATOR_DESC& desc,
                                                 const CreateOptions& options) {
  const DML_FEATURE_LEVEL level = options.feature_level;
  const std::string op = cat(kOp, ": ");
  if (support_row(kInputSupport, level) == nullptr)
    return invalid_argument(op, "the operator exists from feature level 3_0; it was created at ",
                            feature_level_name(level));

  struct Field {
    std::string_view name;
    const DML_TENSOR_DESC* desc;
    Role role;
    std::span<const SupportRow> support;
  };
  const Field fields[] = {
      {"InputTensor", desc.InputTensor, Role::kInput, kInputSupport},
      {"OutputCountTensor", desc.OutputCountTensor, Role::kOutput, kCountSupport},
      {"OutputCoordinatesTensor", desc.OutputCoordinatesTensor, Role::kOutput, kCoordinatesSupport}};
  const bool wide = options.has(ODML_EXTENSION_64BIT_INDICES);
  const ExtensionTypes indices64{kIndex64Types, wide, "ODML_EXTENSION_64BIT_INDICES allows INT64 and UINT64"};
  Tensor tensors[3];
  OverlapBudget budget;
  for (int i = 0; i < 3; ++i) {
    const std::string where = op + std::string(fields[i].name);
    Result<Tensor> t = read_tensor(fields[i].desc, fields[i].role, where, budget, options.max_elements());
    if (!t.ok()) return t.status();
    // With 64-bit indices the count and coordinates may also be INT64 or UINT64 (contract
    // section 7); their dimension counts follow DirectML's table all the same. Without the
    // extension the refusal names it, as rule 7's does.
    ODML_RETURN_IF_ERROR(check_support(fields[i].support, level, *t, kOp, where, i > 0 ? indices64 : ExtensionTypes{}));
    tensors[i] = *t;
  }
  const Tensor& input = tensors[0];
  const Tensor& count = tensors[1];
  const Tensor& coordinates = tensors[2];

  if (level < DML_FEATURE_LEVEL_4_0) {
    for (int i = 1; i < 3; ++i)
      if (tensors[i].rank != input.rank)
        return invalid_argument(op, fields[i].name, ".DimensionCount is ", tensors[i].rank,
                                " but InputTensor.DimensionCount is ", input.rank, "; at feature level ",
                                feature_level_name(level),
                                " the three tensors must have the same DimensionCount (4_0 lifts this)");
  }
  for (uint32_t d = 0; d < count.rank; ++d)
    if (count.sizes[d] != 1)
      return invalid_argument(op, "OutputCountTensor.Sizes[", d, "] is ", count.sizes[d],
                              "; the count is a scalar, so every size must be 1");
  // M is Sizes[r - 2]; DirectML wants every size before it to be 1. With 64-bit indices M may pass
  // 2^32 - 1 (a UINT size's limit), so the sizes before N may multiply to M, as long as they
  // coalesce into one row dimension (rows evenly spaced).
  const uint32_t r = coordinates.rank;
  const MultiView<1> rows = coalesced(coordinates, r - 1);
  for (uint32_t d = 0; d + 2 < r && !wide; ++d)
    if (coordinates.sizes[d] != 1)
      return invalid_argument(op, "OutputCoordinatesTensor.Sizes[", d, "] is ", coordinates.sizes[d],
                              "; every size but the last two (M, N) must be 1");
  if (rows.rank != 1)
    return invalid_argument(op, "OutputCoordinatesTensor.Sizes ", dims_to_string(coordinates.sizes, r),
                            " with Strides ", dims_to_string(coordinates.strides, r),
                            " do not space the rows evenly; with 64-bit indices the sizes before N must be "
                            "contiguous with each other");
  const uint64_t m = rows.sizes[0], n = coordinates.sizes[r - 1];
  if (m != input.element_count())
    return invalid_argument(op, "OutputCoordinatesTensor.Sizes",
                            wide ? std::string(" before N multiply to ") : cat("[", r - 2, "] (M) is "), m,
                            " but InputTensor has ", input.element_count(),
                            " elements; M must equal the input's element count");
  if (input.element_count() > kMaxElements && !kIndex64Types.contains(count.data_type))
    return invalid_argument(op, "InputTensor has ", input.element_count(),
                            " elements, more than 2^32 - 1, so OutputCountTensor must be INT64 or UINT64");
  const uint32_t min_n = std::max(1u, effective_rank(input));
  if (n < min_n || n > input.rank)
    return invalid_argument(op, "OutputCoordinatesTensor.Sizes[", r - 1, "] (N) is ", n, "; it must be from ", min_n,
                            " (the effective rank of InputTensor.Sizes ", dims_to_string(input.sizes, input.rank),
                            ", at least 1) to ", input.rank, " (InputTensor.DimensionCount)");
  ODML_RETURN_IF_ERROR(check_coordinate_offsets(options, input, coordinates.data_type, static_cast<uint32_t>(n)));
  ODML_RETURN_IF_ERROR(check_fill_values(options, coordinates.data_type, static_cast<uint32_t>(n)));

  OperatorDef def;
  def.type = DML_OPERATOR_NONZERO_COORDINATES;
  def.name = kOp;
  def.options = options;
  def.inputs = {{"InputTensor", input}};
  def.outputs = {{"OutputCountTensor", count}, {"OutputCoordinatesTensor", coordinates}};
  return def;
}

NonzeroPlan plan_nonzero_coordinates(const OperatorDef& op) {
  const Tensor& input = op.inputs[0].tensor;
  const Tensor& count = op.outputs[0].tensor;
  const Tensor& coordinates = op.outputs[1].tensor;
  const DataTypeInfo& type = *data_type_info(input.data_type);

  NonzeroPlan plan;
  plan.element_bytes = type.bits / 8;
  plan.value_mask = static_cast<uint32_t>(value_mask(type));
  plan.element_count = input.element_count();
  plan.input_alignment = input.read_alignment();

  const uint32_t r = coordinates.rank;
  plan.columns = static_cast<uint32_t>(coordinates.sizes[r - 1]);
  const uint32_t dropped = input.rank - plan.columns;  // leading dimensions, all of size 1
  for (uint32_t j = 0; j < plan.columns; ++j) plan.column_sizes[j] = input.sizes[dropped + j];

  const MultiView<1> read = coalesced(input, input.rank);
  plan.read_rank = read.rank;
  plan.read_sizes = read.sizes;
  plan.read_strides = read.strides[0];

  // The row dimensions coalesce into one (validation): its stride is the row stride. A single row
  // has no stride of its own; any value serves.
  const MultiView<1> rows = coalesced(coordinates, r - 1);
  plan.row_stride = rows.sizes[0] == 1 ? coordinates.strides[r - 2] : rows.strides[0][0];
  plan.column_stride = coordinates.strides[r - 1];
  plan.count_bytes = data_type_info(count.data_type)->bits / 8;
  plan.coordinate_bytes = data_type_info(coordinates.data_type)->bits / 8;
  const std::vector<uint64_t>& offsets = op.options.coordinate_offsets;
  std::copy(offsets.begin(), offsets.end(), plan.column_offsets.begin());
  plan.fill_rows = op.options.has(ODML_EXTENSION_FILL_ROWS);
  const std::vector<uint64_t>& fill = op.options.fill_values;
  std::copy(fill.begin(), fill.end(), plan.fill_values.begin());
  return plan;
}

}  // namespace opendml::internal
