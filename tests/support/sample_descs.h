// Small valid descriptors that validation tests break one field at a time.
#pragma once

#include "support/data_types.h"
#include "support/op_desc.h"
#include "support/test_env.h"

namespace odml_test {

inline constexpr auto kF32 = DML_TENSOR_DATA_TYPE_FLOAT32;
inline constexpr auto kU32 = DML_TENSOR_DATA_TYPE_UINT32;

// JOIN {2,3} + {2,5} -> {2,8} along axis 1.
OpDesc sample_join(DML_TENSOR_DATA_TYPE type = kF32);
// SPLIT {2,8} -> {2,3} + {2,5} along axis 1.
OpDesc sample_split(DML_TENSOR_DATA_TYPE type = kF32);
// NONZERO_COORDINATES of a {2,3} input: count {1}, coordinates {6,2}.
OpDesc sample_nonzero(DML_TENSOR_DATA_TYPE type = kF32);

// `rank` dimensions of size 2, joined (split) along the last: {2,..,1} + {2,..,2} <-> {2,..,3}.
OpDesc join_of_rank(DML_TENSOR_DATA_TYPE type, uint32_t rank);
OpDesc split_of_rank(DML_TENSOR_DATA_TYPE type, uint32_t rank);
// An input of `input_rank` dimensions of size 2; count {1,..,1}; coordinates {1,..,1,M,N} with
// N = input_rank.
OpDesc nonzero_of_ranks(DML_TENSOR_DATA_TYPE type, uint32_t input_rank, uint32_t count_rank, uint32_t coordinates_rank);
// The three of one rank (coordinates at least 2).
OpDesc nonzero_of_rank(DML_TENSOR_DATA_TYPE type, uint32_t rank);

}  // namespace odml_test

namespace odml_test {

// "4_1" for DML_FEATURE_LEVEL_4_1.
std::string level_name(DML_FEATURE_LEVEL level);

}  // namespace odml_test
