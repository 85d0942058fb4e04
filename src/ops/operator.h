// A validated operator: what create returns and compile plans. Each operator is one row of the
// table in operator.cpp (its type, name, validation and plan); its rules live in its own file
// (join_split.cpp, nonzero_coordinates.cpp). docs/adding-an-operator.md lists what a new operator
// needs.
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

// What operator creation was asked for (docs/contract.md section 5): the feature level to validate
// against (0 means the highest; a validated OperatorDef holds the resolved level) and the opendml
// extensions the caller opted into (section 7).
struct CreateOptions {
  DML_FEATURE_LEVEL feature_level = DML_FEATURE_LEVEL(0);
  uint32_t extensions = 0;                   // odml_extension bits
  std::vector<uint64_t> coordinate_offsets;  // ODML_EXTENSION_COORDINATE_OFFSETS' values
  std::vector<uint64_t> fill_values;         // ODML_EXTENSION_FILL_ROWS' values

  bool has(odml_extension extension) const { return (extensions & extension) != 0; }
  uint64_t max_elements() const { return has(ODML_EXTENSION_64BIT_INDICES) ? kMaxElements64 : kMaxElements; }
};

struct OperatorEntry;

struct OperatorDef {
  const OperatorEntry* entry = nullptr;  // the operator's row; set by create_operator_def
  DML_OPERATOR_TYPE type = DML_OPERATOR_INVALID;
  std::string_view name;  // "JOIN"
  CreateOptions options;
  std::vector<NamedTensor> inputs;   // in binding order
  std::vector<NamedTensor> outputs;  // in binding order
  uint32_t axis = 0;                 // JOIN and SPLIT
};

// One row of the operator table.
struct OperatorEntry {
  DML_OPERATOR_TYPE type;
  const char* name;  // DirectML's name without the prefix: "JOIN"
  // Validates the operator's DML_*_OPERATOR_DESC (never null): every rule of docs/contract.md
  // sections 2 and 3 that concerns it.
  Result<OperatorDef> (*validate)(const void* desc, const CreateOptions& options);
  Plan (*plan)(const OperatorDef& op);
};

// Validates desc with the C ABI's options (null: none; a feature level of 0 means the highest): the
// checks every operator shares (docs/contract.md section 4: the desc, the feature level, extension
// bits, the operator type, which extensions apply to it and their per-column values), then the
// operator's row.
Result<OperatorDef> create_operator_def(const DML_OPERATOR_DESC* desc, DML_FEATURE_LEVEL feature_level = {},
                                        const odml_operator_options* options = nullptr);

// Plans a validated operator for any backend.
Plan plan_operator(const OperatorDef& op);

}  // namespace opendml::internal
