// Assertions on failures: the status and the parts of odml_last_error_message() that a rule's
// message must name (operator, tensor, field, value, rule; docs/contract.md section 4).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "opendml/opendml.h"
#include "support/op_desc.h"

namespace odml_test {

// `got` is the status of the C call just made on this thread; it must be `want`, and the thread's
// message must contain every one of `parts` (or be empty when want is SUCCESS).
::testing::AssertionResult status_is(odml_status got, odml_status want, const std::vector<std::string>& parts = {});

// odml_operator_create on the CPU device: fails with `want` and a message containing `parts`,
// and returns no handle.
::testing::AssertionResult create_fails(const DML_OPERATOR_DESC* desc, odml_status want,
                                        const std::vector<std::string>& parts,
                                        DML_FEATURE_LEVEL level = DML_FEATURE_LEVEL(0), uint32_t extensions = 0);
inline ::testing::AssertionResult create_fails(const OpDesc& desc, odml_status want,
                                               const std::vector<std::string>& parts,
                                               DML_FEATURE_LEVEL level = DML_FEATURE_LEVEL(0),
                                               uint32_t extensions = 0) {
  return create_fails(&desc.get(), want, parts, level, extensions);
}
// The same operator is created (and compiled) without error.
::testing::AssertionResult create_succeeds(const OpDesc& desc, DML_FEATURE_LEVEL level = DML_FEATURE_LEVEL(0),
                                           uint32_t extensions = 0);

}  // namespace odml_test
