#include "ops/join_split.h"

#include <algorithm>

#include "core/data_type.h"
#include "ops/support.h"

namespace opendml::internal {
namespace {

constexpr SupportRow kJoinSupport[] = {
    {DML_FEATURE_LEVEL_4_1, 1, 8, kElevenTypes},
    {DML_FEATURE_LEVEL_3_1, 4, 8, kEightTypes},  // the 3_1 release raised JOIN to 8 dimensions
    {DML_FEATURE_LEVEL_3_0, 4, 5, kEightTypes},
    {DML_FEATURE_LEVEL_2_1, 4, 4, kEightTypes},
    {DML_FEATURE_LEVEL_1_0, 4, 4, kSixTypes},
};

constexpr SupportRow kSplitSupport[] = {
    {DML_FEATURE_LEVEL_4_1, 1, 8, kElevenTypes},
    {DML_FEATURE_LEVEL_3_0, 1, 8, kEightTypes},
    {DML_FEATURE_LEVEL_2_1, 4, 4, kEightTypes},
    {DML_FEATURE_LEVEL_1_0, 4, 4, kSixTypes},
};

// How one of the two operators names the roles.
struct Fields {
  DML_OPERATOR_TYPE type;
  std::string_view op;      // "JOIN"
  std::string_view count;   // "InputCount"
  std::string_view pieces;  // "InputTensors"
  std::string_view whole;   // "OutputTensor"
  Role piece_role;
  std::span<const SupportRow> support;
};

constexpr Fields kJoin = {DML_OPERATOR_JOIN, "JOIN",       "InputCount", "InputTensors",
                          "OutputTensor",    Role::kInput, kJoinSupport};
constexpr Fields kSplit = {DML_OPERATOR_SPLIT, "SPLIT",       "OutputCount", "OutputTensors",
                           "InputTensor",      Role::kOutput, kSplitSupport};

Result<OperatorDef> validate(const Fields& f, UINT count, const DML_TENSOR_DESC* pieces, const DML_TENSOR_DESC* whole,
                             UINT axis, const CreateOptions& options) {
  const DML_FEATURE_LEVEL level = options.feature_level;
  const std::string op = cat(f.op, ": ");
  if (count == 0) return invalid_argument(op, f.count, " is 0; it must be at least 1");
  if (pieces == nullptr) return invalid_argument(op, f.pieces, " is null but ", f.count, " is ", count);

  const Role whole_role = f.piece_role == Role::kInput ? Role::kOutput : Role::kInput;
  OverlapBudget budget;
  Result<Tensor> w = read_tensor(whole, whole_role, op + std::string(f.whole), budget, options.max_elements());
  if (!w.ok()) return w.status();
  ODML_RETURN_IF_ERROR(check_support(f.support, level, *w, f.op, op + std::string(f.whole)));
  if (axis >= w->rank)
    return invalid_argument(op, "Axis is ", axis, "; it must be less than ", f.whole, ".DimensionCount (", w->rank,
                            ")");

  std::vector<NamedTensor> parts;
  uint64_t axis_sum = 0;
  for (UINT i = 0; i < count; ++i) {
    const std::string name = cat(f.pieces, "[", i, "]");
    Result<Tensor> p = read_tensor(&pieces[i], f.piece_role, op + name, budget, options.max_elements());
    if (!p.ok()) return p.status();
    ODML_RETURN_IF_ERROR(check_support(f.support, level, *p, f.op, op + name));
    if (p->data_type != w->data_type)
      return invalid_argument(op, name, ".DataType is ", data_type_name(p->data_type), " but ", f.whole,
                              ".DataType is ", data_type_name(w->data_type),
                              "; every tensor must have the same DataType");
    if (p->rank != w->rank)
      return invalid_argument(op, name, ".DimensionCount is ", p->rank, " but ", f.whole, ".DimensionCount is ",
                              w->rank, "; every tensor must have the same DimensionCount");
    for (uint32_t d = 0; d < w->rank; ++d)
      if (d != axis && p->sizes[d] != w->sizes[d])
        return invalid_argument(op, name, ".Sizes[", d, "] is ", p->sizes[d], " but ", f.whole, ".Sizes[", d, "] is ",
                                w->sizes[d], "; every dimension other than Axis (", axis, ") must match");
    axis_sum += p->sizes[axis];
    parts.push_back({name, *p});
  }
  if (axis_sum != w->sizes[axis])
    return invalid_argument(op, "the ", f.pieces, "' Sizes[", axis, "] add up to ", axis_sum, " but ", f.whole,
                            ".Sizes[", axis, "] is ", w->sizes[axis], "; along Axis the ", f.whole,
                            " must be exactly as long as all ", f.pieces, " together");

  OperatorDef def;
  def.type = f.type;
  def.name = f.op;
  def.options = options;
  def.axis = axis;
  std::vector<NamedTensor> wholes = {{std::string(f.whole), *w}};
  def.inputs = f.piece_role == Role::kInput ? std::move(parts) : std::move(wholes);
  def.outputs = f.piece_role == Role::kInput ? std::move(wholes) : std::move(parts);
  return def;
}

// Drops size-1 dimensions and merges those contiguous on both sides (MultiView::coalesce).
void coalesce(CopyItem& item) {
  MultiView<2> view;
  view.rank = item.rank;
  view.sizes = item.sizes;
  view.strides = {item.src_strides, item.dst_strides};
  view.coalesce();
  item.rank = view.rank;
  item.sizes = view.sizes;
  item.src_strides = view.strides[0];
  item.dst_strides = view.strides[1];
}

// Moves `width`-byte vectors instead of elements where the innermost dimension is contiguous on
// both sides and every size, stride, offset and base alignment is a multiple of the vector.
void widen(CopyItem& item, uint32_t element_bytes, uint32_t alignment) {
  const uint32_t last = item.rank - 1;
  uint32_t width = element_bytes;
  while (width < 16 && 2 * width <= alignment && item.inner_contiguous()) {
    const uint64_t k = 2 * width / element_bytes;  // elements per candidate vector
    bool fits = item.sizes[last] % k == 0 && item.src_offset % k == 0 && item.dst_offset % k == 0;
    for (uint32_t d = 0; d < last && fits; ++d) fits = item.src_strides[d] % k == 0 && item.dst_strides[d] % k == 0;
    if (!fits) break;
    width *= 2;
  }
  const uint64_t k = width / element_bytes;
  item.width = width;
  if (k == 1) return;
  item.sizes[last] /= k;
  item.src_offset /= k;
  item.dst_offset /= k;
  for (uint32_t d = 0; d < last; ++d) {
    item.src_strides[d] /= k;
    item.dst_strides[d] /= k;
  }
  // A row that became one vector leaves a dimension of size 1: coalesce again, so that narrow
  // slices are a single strided dimension of vectors.
  coalesce(item);
}

}  // namespace

Result<OperatorDef> validate_join(const DML_JOIN_OPERATOR_DESC& desc, const CreateOptions& options) {
  return validate(kJoin, desc.InputCount, desc.InputTensors, desc.OutputTensor, desc.Axis, options);
}

Result<OperatorDef> validate_split(const DML_SPLIT_OPERATOR_DESC& desc, const CreateOptions& options) {
  return validate(kSplit, desc.OutputCount, desc.OutputTensors, desc.InputTensor, desc.Axis, options);
}

CopyPlan plan_join_split(const OperatorDef& op) {
  const bool join = op.type == DML_OPERATOR_JOIN;
  const Tensor& whole = join ? op.outputs[0].tensor : op.inputs[0].tensor;
  const std::vector<NamedTensor>& pieces = join ? op.inputs : op.outputs;

  CopyPlan plan;
  plan.element_bytes = data_type_info(whole.data_type)->bits / 8;
  uint64_t axis_offset = 0;  // where the current piece starts along Axis in the whole
  for (uint32_t i = 0; i < pieces.size(); ++i) {
    const Tensor& piece = pieces[i].tensor;
    CopyItem item;
    item.input = join ? i : 0;
    item.output = join ? 0 : i;
    item.rank = piece.rank;
    item.sizes = piece.sizes;
    item.src_strides = join ? piece.strides : whole.strides;
    item.dst_strides = join ? whole.strides : piece.strides;
    const uint64_t whole_offset = axis_offset * whole.strides[op.axis];
    item.src_offset = join ? 0 : whole_offset;
    item.dst_offset = join ? whole_offset : 0;
    item.src_alignment = join ? piece.read_alignment() : whole.read_alignment();
    item.dst_alignment = join ? whole.base_alignment : piece.base_alignment;
    coalesce(item);
    widen(item, plan.element_bytes, std::min(item.src_alignment, item.dst_alignment));
    plan.items.push_back(item);
    axis_offset += piece.sizes[op.axis];
  }
  return plan;
}

}  // namespace opendml::internal
