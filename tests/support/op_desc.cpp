#include "support/op_desc.h"

#include <sstream>
#include <stdexcept>
#include <string>

namespace odml_test {

OpDesc OpDesc::join(std::vector<TensorSpec> inputs, TensorSpec output, uint32_t axis) {
  inputs.push_back(std::move(output));
  return OpDesc(DML_OPERATOR_JOIN, std::move(inputs), axis);
}

OpDesc OpDesc::split(TensorSpec input, std::vector<TensorSpec> outputs, uint32_t axis) {
  outputs.insert(outputs.begin(), std::move(input));
  return OpDesc(DML_OPERATOR_SPLIT, std::move(outputs), axis);
}

OpDesc OpDesc::nonzero(TensorSpec input, TensorSpec count, TensorSpec coordinates) {
  return OpDesc(DML_OPERATOR_NONZERO_COORDINATES, {std::move(input), std::move(count), std::move(coordinates)}, 0);
}

OpDesc::OpDesc(DML_OPERATOR_TYPE type, std::vector<TensorSpec> specs, uint32_t axis)
    : specs_(std::move(specs)), axis_(axis) {
  buffers_.resize(specs_.size());
  tensors_.resize(specs_.size());
  for (size_t i = 0; i < specs_.size(); ++i) {
    const TensorSpec& s = specs_[i];
    buffers_[i] = {s.type,          s.flags,    s.rank(), s.sizes.data(), s.strides ? s.strides->data() : nullptr,
                   s.total_bytes(), s.alignment};
    tensors_[i] = {DML_TENSOR_TYPE_BUFFER, &buffers_[i]};
  }
  const auto n = static_cast<uint32_t>(specs_.size());
  op_.Type = type;
  switch (type) {
    case DML_OPERATOR_JOIN:
      join_ = {n - 1, tensors_.data(), &tensors_[n - 1], axis};
      op_.Desc = &join_;
      break;
    case DML_OPERATOR_SPLIT:
      split_ = {&tensors_[0], n - 1, tensors_.data() + 1, axis};
      op_.Desc = &split_;
      break;
    case DML_OPERATOR_NONZERO_COORDINATES:
      nonzero_ = {&tensors_[0], &tensors_[1], &tensors_[2]};
      op_.Desc = &nonzero_;
      break;
    default:  // only the factories above construct an OpDesc: a new operator needs its own
      throw std::logic_error("OpDesc: no layout for operator type " + std::to_string(type));
  }
}

// JOIN lists its inputs first and its output last; SPLIT and NONZERO_COORDINATES have one input
// followed by their outputs (the constructor knows no other operator).
std::vector<TensorSpec> OpDesc::inputs() const {
  if (op_.Type == DML_OPERATOR_JOIN) return {specs_.begin(), specs_.end() - 1};
  return {specs_.front()};
}

std::vector<TensorSpec> OpDesc::outputs() const {
  if (op_.Type == DML_OPERATOR_JOIN) return {specs_.back()};
  return {specs_.begin() + 1, specs_.end()};
}

std::string OpDesc::to_string() const {
  std::ostringstream out;
  out << (op_.Type == DML_OPERATOR_JOIN ? "JOIN" : op_.Type == DML_OPERATOR_SPLIT ? "SPLIT" : "NONZERO_COORDINATES");
  if (op_.Type != DML_OPERATOR_NONZERO_COORDINATES) out << " axis " << axis_;
  out << " inputs [";
  for (const TensorSpec& t : inputs()) out << " " << t.to_string();
  out << " ] outputs [";
  for (const TensorSpec& t : outputs()) out << " " << t.to_string();
  out << " ]";
  return out.str();
}

}  // namespace odml_test
