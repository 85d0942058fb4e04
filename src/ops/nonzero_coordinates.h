// NONZERO_COORDINATES: the coordinates of every non-zero input element, in ascending element
// order, and their count.
#pragma once

#include "ops/operator.h"

namespace opendml::internal {

Result<OperatorDef> validate_nonzero_coordinates(const DML_NONZERO_COORDINATES_OPERATOR_DESC& desc,
                                                 const CreateOptions& options);

NonzeroPlan plan_nonzero_coordinates(const OperatorDef& op);

}  // namespace opendml::internal
