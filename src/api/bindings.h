// Validation of what initialize and execute bind (docs/contract.md section 2, "Binding"): nothing
// runs unless every region is present, large enough, aligned, and no written region overlaps
// another.
#pragma once

#include "core/status.h"
#include "ops/operator.h"

namespace opendml::internal {

enum class Phase { kInitialize, kExecute };

// Region sizes a compiled operator requires.
struct RegionSizes {
  uint64_t temporary = 0;
  uint64_t persistent = 0;
};

Status check_bindings(const OperatorDef& op, const odml_bindings* bindings, Phase phase, RegionSizes sizes);

}  // namespace opendml::internal
