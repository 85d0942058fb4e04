// NumPy's .npy format (versions 1.0 to 3.0): little-endian, C-order arrays of the element types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "opendml/directml.h"

namespace opendml::tool {

// The most dimensions a .npy file's shape has here: NumPy's own limit (NPY_MAXDIMS since NumPy 2).
inline constexpr size_t kMaxNpyDims = 64;

struct NpyArray {
  DML_TENSOR_DATA_TYPE type;
  std::vector<std::byte> data;  // the shape's product of elements, flat
};

// Reads a whole .npy file. Anything else is a ModelError at `place` that names `file` and the
// fault: bad magic, an unknown version, a header that is not the dict NumPy writes, a shape of more
// than kMaxNpyDims dimensions, big-endian data, an unsupported dtype, fortran_order True, or data
// whose length is not what the shape needs. The array's data is `bytes` less the header, moved.
NpyArray parse_npy(std::vector<std::byte> bytes, const std::string& file, const std::string& place);

// The start of a version 1.0 .npy file of `type` and `shape` (C order, at most kMaxNpyDims
// dimensions, so that the header's length fits its 16 bits): the data follows it.
std::vector<std::byte> npy_header(DML_TENSOR_DATA_TYPE type, std::span<const uint64_t> shape);
// A 1-D .npy file of the elements of `type` in `data`.
std::vector<std::byte> make_npy(DML_TENSOR_DATA_TYPE type, std::span<const std::byte> data);

}  // namespace opendml::tool
