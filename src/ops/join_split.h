// JOIN and SPLIT: one tensor (the "whole") is the concatenation along Axis of the others (the
// "pieces"). JOIN reads the pieces and writes the whole; SPLIT does the reverse. The rules and the
// plan are the same, so one implementation serves both with the field names swapped.
#pragma once

#include "ops/operator.h"

namespace opendml::internal {

Result<OperatorDef> validate_join(const DML_JOIN_OPERATOR_DESC& desc, const CreateOptions& options);
Result<OperatorDef> validate_split(const DML_SPLIT_OPERATOR_DESC& desc, const CreateOptions& options);

// One copy item per piece, coalesced and widened.
CopyPlan plan_join_split(const OperatorDef& op);

}  // namespace opendml::internal
