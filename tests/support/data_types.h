// The tests' own table of DML_TENSOR_DATA_TYPE facts, written from docs/contract.md sections 1 and
// 2 and kept apart from the library's (src/core/data_type.h), so that a wrong entry there shows up
// as a failing test instead of being agreed with.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "opendml/directml.h"

namespace odml_test {

// 0 for UNKNOWN and for values that name no type.
uint32_t element_bits(DML_TENSOR_DATA_TYPE type);
// Whole bytes per element (UINT4/INT4: 1, as they are never executed).
uint32_t element_bytes(DML_TENSOR_DATA_TYPE type);
bool is_float(DML_TENSOR_DATA_TYPE type);
std::string type_name(DML_TENSOR_DATA_TYPE type);

// The data type sets of docs/contract.md section 3.
extern const std::vector<DML_TENSOR_DATA_TYPE> kAllTypes;     // the 13 known types
extern const std::vector<DML_TENSOR_DATA_TYPE> kElevenTypes;  // JOIN/SPLIT at 4_1 and above
extern const std::vector<DML_TENSOR_DATA_TYPE> kEightTypes;   // the 8/16/32-bit types
extern const std::vector<DML_TENSOR_DATA_TYPE> kSixTypes;     // JOIN/SPLIT at 1_0

bool contains(const std::vector<DML_TENSOR_DATA_TYPE>& types, DML_TENSOR_DATA_TYPE type);

}  // namespace odml_test
