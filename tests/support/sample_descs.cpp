#include "support/sample_descs.h"

#include <algorithm>

namespace odml_test {
namespace {

// {2,..,2,last}
Shape twos(uint32_t rank, uint32_t last) {
  Shape s(rank, 2);
  s[rank - 1] = last;
  return s;
}

}  // namespace

OpDesc sample_join(DML_TENSOR_DATA_TYPE type) {
  return OpDesc::join({spec(type, {2, 3}), spec(type, {2, 5})}, spec(type, {2, 8}), 1);
}

OpDesc sample_split(DML_TENSOR_DATA_TYPE type) {
  return OpDesc::split(spec(type, {2, 8}), {spec(type, {2, 3}), spec(type, {2, 5})}, 1);
}

OpDesc sample_nonzero(DML_TENSOR_DATA_TYPE type) {
  return OpDesc::nonzero(spec(type, {2, 3}), spec(kU32, {1}), spec(kU32, {6, 2}));
}

OpDesc join_of_rank(DML_TENSOR_DATA_TYPE type, uint32_t rank) {
  return OpDesc::join({spec(type, twos(rank, 1)), spec(type, twos(rank, 2))}, spec(type, twos(rank, 3)), rank - 1);
}

OpDesc split_of_rank(DML_TENSOR_DATA_TYPE type, uint32_t rank) {
  return OpDesc::split(spec(type, twos(rank, 3)), {spec(type, twos(rank, 1)), spec(type, twos(rank, 2))}, rank - 1);
}

OpDesc nonzero_of_ranks(DML_TENSOR_DATA_TYPE type, uint32_t input_rank, uint32_t count_rank,
                        uint32_t coordinates_rank) {
  Shape coordinates(coordinates_rank, 1);
  coordinates[coordinates_rank - 2] = 1u << input_rank;
  coordinates[coordinates_rank - 1] = input_rank;
  return OpDesc::nonzero(spec(type, Shape(input_rank, 2)), spec(kU32, Shape(count_rank, 1)), spec(kU32, coordinates));
}

OpDesc nonzero_of_rank(DML_TENSOR_DATA_TYPE type, uint32_t rank) {
  return nonzero_of_ranks(type, rank, rank, std::max(2u, rank));
}

}  // namespace odml_test

namespace odml_test {

std::string level_name(DML_FEATURE_LEVEL level) {
  const unsigned v = static_cast<unsigned>(level);
  return std::to_string(v >> 12) + "_" + std::to_string((v >> 8) & 0xF);
}

}  // namespace odml_test
