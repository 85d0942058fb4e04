// Runs an operator on the test device through the public C++ API, the whole lifecycle of
// docs/contract.md section 5, with every region in a GuardedBuffer.
#pragma once

#include <vector>

#include "opendml/opendml.hpp"
#include "support/op_desc.h"
#include "support/tensor_spec.h"

namespace odml_test {

struct RunOptions {
  DML_FEATURE_LEVEL feature_level = DML_FEATURE_LEVEL(0);
  uint32_t extensions = ODML_EXTENSION_NONE;  // odml_extension bits
  std::vector<uint64_t> coordinate_offsets;   // with ODML_EXTENSION_COORDINATE_OFFSETS
  std::vector<uint64_t> fill_values;          // with ODML_EXTENSION_FILL_ROWS
  // Threads executing the one compiled operator at once, each with its own outputs and
  // temporary region.
  int threads = 1;
  // Executions per thread; the outputs are poisoned before each one.
  int executions = 1;
};

// The output regions (TotalTensorSizeInBytes each) that each thread read back: [thread][output].
using RunOutputs = std::vector<std::vector<Bytes>>;

// Creates, compiles and initializes desc, then executes it with `inputs` (one region per input,
// TotalTensorSizeInBytes long). Inputs flagged OWNED_BY_DML are bound at initialize only, and
// their buffers are overwritten before the first execute. Records a test failure, and returns
// nothing, when a call fails, a guard zone was written, an input changed, or a temporary or
// persistent region was written outside its size.
RunOutputs run_operator(const OpDesc& desc, const std::vector<Bytes>& inputs, const RunOptions& options = {});

}  // namespace odml_test
