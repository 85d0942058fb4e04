// An operator descriptor built from TensorSpecs that owns every array DirectML's structs point
// to. The raw structs stay reachable so that a validation test can break exactly one field.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "opendml/directml.h"
#include "support/tensor_spec.h"

namespace odml_test {

// Stores `value` in an enum field the way C code can: any 32-bit value, an enumerator or not. (In
// C++, static_cast of a value outside an enum's range is undefined, so the bytes are copied.)
template <class Enum>
void store_raw(Enum& field, int64_t value) {
  static_assert(sizeof(Enum) == sizeof(uint32_t));
  const auto bits = static_cast<uint32_t>(value);
  std::memcpy(&field, &bits, sizeof bits);
}

class OpDesc {
 public:
  static OpDesc join(std::vector<TensorSpec> inputs, TensorSpec output, uint32_t axis);
  static OpDesc split(TensorSpec input, std::vector<TensorSpec> outputs, uint32_t axis);
  static OpDesc nonzero(TensorSpec input, TensorSpec count, TensorSpec coordinates);

  // The pointers inside point into this object: it is neither copied nor moved.
  OpDesc(const OpDesc&) = delete;
  OpDesc& operator=(const OpDesc&) = delete;

  const DML_OPERATOR_DESC& get() const { return op_; }
  DML_OPERATOR_TYPE type() const { return op_.Type; }

  // In binding order (docs/contract.md section 1).
  std::vector<TensorSpec> inputs() const;
  std::vector<TensorSpec> outputs() const;

  // The tensors in the order of the struct's fields: JOIN InputTensors..., OutputTensor; SPLIT
  // InputTensor, OutputTensors...; NONZERO_COORDINATES InputTensor, OutputCountTensor,
  // OutputCoordinatesTensor.
  size_t tensor_count() const { return specs_.size(); }
  DML_BUFFER_TENSOR_DESC& buffer(size_t i) { return buffers_[i]; }
  DML_TENSOR_DESC& tensor(size_t i) { return tensors_[i]; }
  DML_OPERATOR_DESC& op() { return op_; }
  DML_JOIN_OPERATOR_DESC& join_desc() { return join_; }
  DML_SPLIT_OPERATOR_DESC& split_desc() { return split_; }
  DML_NONZERO_COORDINATES_OPERATOR_DESC& nonzero_desc() { return nonzero_; }

  std::string to_string() const;

 private:
  OpDesc(DML_OPERATOR_TYPE type, std::vector<TensorSpec> specs, uint32_t axis);

  std::vector<TensorSpec> specs_;  // field order
  std::vector<DML_BUFFER_TENSOR_DESC> buffers_;
  std::vector<DML_TENSOR_DESC> tensors_;
  uint32_t axis_ = 0;
  DML_JOIN_OPERATOR_DESC join_{};
  DML_SPLIT_OPERATOR_DESC split_{};
  DML_NONZERO_COORDINATES_OPERATOR_DESC nonzero_{};
  DML_OPERATOR_DESC op_{};
};

}  // namespace odml_test
