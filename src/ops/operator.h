// A validated operator: what create returns and compile plans. Each operator's rules live in its
// own file (join_split.cpp, nonzero_coordinates.cpp); this is the one place that dispatches on the
// operator type.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "opendml/directml.h"
#include "ops/plan.h"

namespace opendml::internal {

struct NamedTensor {
  std::string name;  // the descriptor field, as messages print it: "InputTensors[2]"
  Tensor tensor;
};

struct OperatorDef {
  DML_OPERATOR_TYPE type = DML_OPERATOR_INVALID;
  std::string_view name;  // "JOIN"
  DML_FEATURE_LEVEL feature_level = DML_FEATURE_LEVEL_1_0;
  std::vector<NamedTensor> inputs;   // in binding order
  std::vector<NamedTensor> outputs;  // in binding order
  uint32_t axis = 0;                 // JOIN and SPLIT
};

// Validates desc at feature_level (0: the highest). Every rule of SPEC.md sections 2 and 3.
Result<OperatorDef> create_operator_def(const DML_OPERATOR_DESC* desc, DML_FEATURE_LEVEL feature_level);

// Plans a validated operator for any backend.
Plan plan_operator(const OperatorDef& op);

}  // namespace opendml::internal
