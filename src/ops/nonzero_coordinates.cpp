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

// The DimensionCount without leading dimensions of size 1: {1,2,3,4} -> 3, {1,1,1,1} -> 0.
uint32_t effective_rank(const Tensor& t) {
  uint32_t leading = 0;
  while (leading < t.rank && t.sizes[leading] == 1) ++leading;
  return t.rank - leading;
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
  Tensor tensors[3];
  for (int i = 0; i < 3; ++i) {
    const std::string where = op + std::string(fields[i].name);
    Result<Tensor> t = read_tensor(fields[i].desc, fields[i].role, where);
    if (!t.ok()) return t.status();
    ODML_RETURN_IF_ERROR(check_support(fields[i].support, level, *t, kOp, where));
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
  const uint32_t r = coordinates.rank;
  for (uint32_t d = 0; d + 2 < r; ++d)
    if (coordinates.sizes[d] != 1)
      return invalid_argument(op, "OutputCoordinatesTensor.Sizes[", d, "] is ", coordinates.sizes[d],
                              "; every size but the last two (M, N) must be 1");
  const uint64_t m = coordinates.sizes[r - 2], n = coordinates.sizes[r - 1];
  if (m != input.element_count())
    return invalid_argument(op, "OutputCoordinatesTensor.Sizes[", r - 2, "] (M) is ", m, " but InputTensor has ",
                            input.element_count(), " elements; M must equal the input's element count");
  const uint32_t min_n = std::max(1u, effective_rank(input));
  if (n < min_n || n > input.rank)
    return invalid_argument(op, "OutputCoordinatesTensor.Sizes[", r - 1, "] (N) is ", n, "; it must be from ", min_n,
                            " (the effective rank of InputTensor.Sizes ", dims_to_string(input.sizes, input.rank),
                            ", at least 1) to ", input.rank, " (InputTensor.DimensionCount)");

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
  const Tensor& coordinates = op.outputs[1].tensor;
  const DataTypeInfo& type = *data_type_info(input.data_type);

  NonzeroPlan plan;
  plan.element_bytes = type.bits / 8;
  plan.value_mask = static_cast<uint32_t>(nonzero_mask(type));
  plan.element_count = input.element_count();
  plan.input_alignment = input.base_alignment;

  const uint32_t r = coordinates.rank;
  plan.rank = static_cast<uint32_t>(coordinates.sizes[r - 1]);
  const uint32_t dropped = input.rank - plan.rank;  // leading dimensions, all of size 1
  for (uint32_t j = 0; j < plan.rank; ++j) {
    plan.sizes[j] = input.sizes[dropped + j];
    plan.strides[j] = input.strides[dropped + j];
  }

  MultiView<1> read;
  read.rank = input.rank;
  read.sizes = input.sizes;
  read.strides = {input.strides};
  read.coalesce();
  plan.read_rank = read.rank;
  plan.read_sizes = read.sizes;
  plan.read_strides = read.strides[0];

  plan.row_stride = coordinates.strides[r - 2];
  plan.column_stride = coordinates.strides[r - 1];
  return plan;
}

}  // namespace opendml::internal
