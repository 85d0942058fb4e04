// Feature-level support tables: which dimension counts and data types a tensor of an operator may
// have at each DML_FEATURE_LEVEL (the "Tensor support" sections of DirectML's operator pages).
#pragma once

#include <span>
#include <string_view>

#include "core/data_type.h"
#include "core/status.h"
#include "core/tensor.h"

namespace opendml::internal {

// From `since` up to the next newer row, a tensor may have min_rank..max_rank dimensions and any
// of `types`. Tables list their rows newest first.
struct SupportRow {
  DML_FEATURE_LEVEL since;
  uint32_t min_rank, max_rank;
  DataTypeSet types;
};

inline constexpr DataTypeSet kSixTypes = {DML_TENSOR_DATA_TYPE_FLOAT32, DML_TENSOR_DATA_TYPE_FLOAT16,
                                          DML_TENSOR_DATA_TYPE_INT32,   DML_TENSOR_DATA_TYPE_INT16,
                                          DML_TENSOR_DATA_TYPE_UINT32,  DML_TENSOR_DATA_TYPE_UINT16};
inline constexpr DataTypeSet kEightTypes = {DML_TENSOR_DATA_TYPE_FLOAT32, DML_TENSOR_DATA_TYPE_FLOAT16,
                                            DML_TENSOR_DATA_TYPE_INT32,   DML_TENSOR_DATA_TYPE_INT16,
                                            DML_TENSOR_DATA_TYPE_INT8,    DML_TENSOR_DATA_TYPE_UINT32,
                                            DML_TENSOR_DATA_TYPE_UINT16,  DML_TENSOR_DATA_TYPE_UINT8};
inline constexpr DataTypeSet kElevenTypes = {
    DML_TENSOR_DATA_TYPE_FLOAT64, DML_TENSOR_DATA_TYPE_FLOAT32, DML_TENSOR_DATA_TYPE_FLOAT16,
    DML_TENSOR_DATA_TYPE_INT64,   DML_TENSOR_DATA_TYPE_INT32,   DML_TENSOR_DATA_TYPE_INT16,
    DML_TENSOR_DATA_TYPE_INT8,    DML_TENSOR_DATA_TYPE_UINT64,  DML_TENSOR_DATA_TYPE_UINT32,
    DML_TENSOR_DATA_TYPE_UINT16,  DML_TENSOR_DATA_TYPE_UINT8};

// Types an extension adds to every row of a table (docs/contract.md section 7): allowed where the
// extension is on; where it is off, the refusal of one of them adds `allows`, which names it.
struct ExtensionTypes {
  DataTypeSet types{};
  bool on = false;
  std::string_view allows;  // "ODML_EXTENSION_64BIT_INDICES allows INT64 and UINT64"
};

// Checks t's DimensionCount and DataType against the row of `rows` that covers `level`, and the
// types `extension` adds. Pre: some row covers level. `where` is "JOIN: OutputTensor".
Status check_support(std::span<const SupportRow> rows, DML_FEATURE_LEVEL level, const Tensor& t, std::string_view op,
                     std::string_view where, const ExtensionTypes& extension = {});

// The row that covers level, or null when the operator does not exist at level.
const SupportRow* support_row(std::span<const SupportRow> rows, DML_FEATURE_LEVEL level);

}  // namespace opendml::internal
