#include "support/data_types.h"

#include <algorithm>

namespace odml_test {

using T = DML_TENSOR_DATA_TYPE;

const std::vector<T> kAllTypes = {
    DML_TENSOR_DATA_TYPE_FLOAT32, DML_TENSOR_DATA_TYPE_FLOAT16, DML_TENSOR_DATA_TYPE_UINT32,
    DML_TENSOR_DATA_TYPE_UINT16,  DML_TENSOR_DATA_TYPE_UINT8,   DML_TENSOR_DATA_TYPE_INT32,
    DML_TENSOR_DATA_TYPE_INT16,   DML_TENSOR_DATA_TYPE_INT8,    DML_TENSOR_DATA_TYPE_FLOAT64,
    DML_TENSOR_DATA_TYPE_UINT64,  DML_TENSOR_DATA_TYPE_INT64,   DML_TENSOR_DATA_TYPE_UINT4,
    DML_TENSOR_DATA_TYPE_INT4};
const std::vector<T> kElevenTypes = {
    DML_TENSOR_DATA_TYPE_FLOAT64, DML_TENSOR_DATA_TYPE_FLOAT32, DML_TENSOR_DATA_TYPE_FLOAT16,
    DML_TENSOR_DATA_TYPE_INT64,   DML_TENSOR_DATA_TYPE_INT32,   DML_TENSOR_DATA_TYPE_INT16,
    DML_TENSOR_DATA_TYPE_INT8,    DML_TENSOR_DATA_TYPE_UINT64,  DML_TENSOR_DATA_TYPE_UINT32,
    DML_TENSOR_DATA_TYPE_UINT16,  DML_TENSOR_DATA_TYPE_UINT8};
const std::vector<T> kEightTypes = {DML_TENSOR_DATA_TYPE_FLOAT32, DML_TENSOR_DATA_TYPE_FLOAT16,
                                    DML_TENSOR_DATA_TYPE_INT32,   DML_TENSOR_DATA_TYPE_INT16,
                                    DML_TENSOR_DATA_TYPE_INT8,    DML_TENSOR_DATA_TYPE_UINT32,
                                    DML_TENSOR_DATA_TYPE_UINT16,  DML_TENSOR_DATA_TYPE_UINT8};
const std::vector<T> kSixTypes = {DML_TENSOR_DATA_TYPE_FLOAT32, DML_TENSOR_DATA_TYPE_FLOAT16,
                                  DML_TENSOR_DATA_TYPE_INT32,   DML_TENSOR_DATA_TYPE_INT16,
                                  DML_TENSOR_DATA_TYPE_UINT32,  DML_TENSOR_DATA_TYPE_UINT16};

uint32_t element_bits(T type) {
  switch (type) {
    case DML_TENSOR_DATA_TYPE_FLOAT64:
    case DML_TENSOR_DATA_TYPE_UINT64:
    case DML_TENSOR_DATA_TYPE_INT64: return 64;
    case DML_TENSOR_DATA_TYPE_FLOAT32:
    case DML_TENSOR_DATA_TYPE_UINT32:
    case DML_TENSOR_DATA_TYPE_INT32: return 32;
    case DML_TENSOR_DATA_TYPE_FLOAT16:
    case DML_TENSOR_DATA_TYPE_UINT16:
    case DML_TENSOR_DATA_TYPE_INT16: return 16;
    case DML_TENSOR_DATA_TYPE_UINT8:
    case DML_TENSOR_DATA_TYPE_INT8: return 8;
    case DML_TENSOR_DATA_TYPE_UINT4:
    case DML_TENSOR_DATA_TYPE_INT4: return 4;
    default: return 0;
  }
}

uint32_t element_bytes(T type) { return std::max<uint32_t>(1, element_bits(type) / 8); }

bool is_float(T type) {
  return type == DML_TENSOR_DATA_TYPE_FLOAT64 || type == DML_TENSOR_DATA_TYPE_FLOAT32 ||
         type == DML_TENSOR_DATA_TYPE_FLOAT16;
}

std::string type_name(T type) {
  switch (type) {
    case DML_TENSOR_DATA_TYPE_FLOAT32: return "FLOAT32";
    case DML_TENSOR_DATA_TYPE_FLOAT16: return "FLOAT16";
    case DML_TENSOR_DATA_TYPE_UINT32: return "UINT32";
    case DML_TENSOR_DATA_TYPE_UINT16: return "UINT16";
    case DML_TENSOR_DATA_TYPE_UINT8: return "UINT8";
    case DML_TENSOR_DATA_TYPE_INT32: return "INT32";
    case DML_TENSOR_DATA_TYPE_INT16: return "INT16";
    case DML_TENSOR_DATA_TYPE_INT8: return "INT8";
    case DML_TENSOR_DATA_TYPE_FLOAT64: return "FLOAT64";
    case DML_TENSOR_DATA_TYPE_UINT64: return "UINT64";
    case DML_TENSOR_DATA_TYPE_INT64: return "INT64";
    case DML_TENSOR_DATA_TYPE_UINT4: return "UINT4";
    case DML_TENSOR_DATA_TYPE_INT4: return "INT4";
    default: return "type " + std::to_string(static_cast<int>(type));
  }
}

bool contains(const std::vector<T>& types, T type) {
  return std::find(types.begin(), types.end(), type) != types.end();
}

}  // namespace odml_test
