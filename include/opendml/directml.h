/* opendml: DirectML's descriptor types, binary compatible with DirectML.h.
 *
 * Code written against DirectML fills these structs and passes them to opendml unchanged. Only the
 * parts of DirectML.h that concern the operators opendml implements are declared: the tensor
 * descriptors, the feature levels, and the JOIN, SPLIT and NONZERO_COORDINATES descriptors. Every
 * enum value and field order equals DirectML.h's (docs/contract.md section 1). */
#ifndef OPENDML_DIRECTML_H
#define OPENDML_DIRECTML_H

#include <stdint.h>

#include "opendml/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The Windows integer names DirectML's structs are written with. Define OPENDML_NO_WINDOWS_TYPES
 * when another header (a Windows compatibility layer) already provides them. */
#ifndef OPENDML_NO_WINDOWS_TYPES
typedef uint32_t UINT;
typedef uint64_t UINT64;
typedef int32_t INT;
#endif

/* In C++ the enums get a fixed underlying type (int, the size C gives them), so that a descriptor
 * holding a value outside the enumerators, which opendml must reject, is not undefined behaviour. */
#ifdef __cplusplus
#define OPENDML_ENUM_BASE : int
#else
#define OPENDML_ENUM_BASE
#endif

typedef enum DML_TENSOR_DATA_TYPE OPENDML_ENUM_BASE {
  DML_TENSOR_DATA_TYPE_UNKNOWN = 0,
  DML_TENSOR_DATA_TYPE_FLOAT32 = 1,
  DML_TENSOR_DATA_TYPE_FLOAT16 = 2,
  DML_TENSOR_DATA_TYPE_UINT32 = 3,
  DML_TENSOR_DATA_TYPE_UINT16 = 4,
  DML_TENSOR_DATA_TYPE_UINT8 = 5,
  DML_TENSOR_DATA_TYPE_INT32 = 6,
  DML_TENSOR_DATA_TYPE_INT16 = 7,
  DML_TENSOR_DATA_TYPE_INT8 = 8,
  DML_TENSOR_DATA_TYPE_FLOAT64 = 9,
  DML_TENSOR_DATA_TYPE_UINT64 = 10,
  DML_TENSOR_DATA_TYPE_INT64 = 11,
  DML_TENSOR_DATA_TYPE_UINT4 = 12,
  DML_TENSOR_DATA_TYPE_INT4 = 13
} DML_TENSOR_DATA_TYPE;

typedef enum DML_TENSOR_TYPE OPENDML_ENUM_BASE {
  DML_TENSOR_TYPE_INVALID = 0,
  DML_TENSOR_TYPE_BUFFER = 1
} DML_TENSOR_TYPE;

typedef enum DML_TENSOR_FLAGS OPENDML_ENUM_BASE {
  DML_TENSOR_FLAG_NONE = 0x0,
  DML_TENSOR_FLAG_OWNED_BY_DML = 0x1
} DML_TENSOR_FLAGS;

typedef enum DML_OPERATOR_TYPE OPENDML_ENUM_BASE {
  DML_OPERATOR_INVALID = 0,
  DML_OPERATOR_SPLIT = 62,
  DML_OPERATOR_JOIN = 63,
  DML_OPERATOR_NONZERO_COORDINATES = 133
} DML_OPERATOR_TYPE;

typedef enum DML_FEATURE_LEVEL OPENDML_ENUM_BASE {
  DML_FEATURE_LEVEL_1_0 = 0x1000,
  DML_FEATURE_LEVEL_2_0 = 0x2000,
  DML_FEATURE_LEVEL_2_1 = 0x2100,
  DML_FEATURE_LEVEL_3_0 = 0x3000,
  DML_FEATURE_LEVEL_3_1 = 0x3100,
  DML_FEATURE_LEVEL_4_0 = 0x4000,
  DML_FEATURE_LEVEL_4_1 = 0x4100,
  DML_FEATURE_LEVEL_5_0 = 0x5000,
  DML_FEATURE_LEVEL_5_1 = 0x5100,
  DML_FEATURE_LEVEL_5_2 = 0x5200,
  DML_FEATURE_LEVEL_6_0 = 0x6000,
  DML_FEATURE_LEVEL_6_1 = 0x6100,
  DML_FEATURE_LEVEL_6_2 = 0x6200,
  DML_FEATURE_LEVEL_6_3 = 0x6300,
  DML_FEATURE_LEVEL_6_4 = 0x6400
} DML_FEATURE_LEVEL;

/* Buffer tensors and operators alike are at most this many dimensions. */
#define DML_TENSOR_DIMENSION_COUNT_MAX1 8
/* DirectML's earlier limit, which DirectML.h still declares and code written for it still uses. */
#define DML_TENSOR_DIMENSION_COUNT_MAX 5
/* A bound buffer region's address is a multiple of this unless GuaranteedBaseOffsetAlignment says
 * otherwise. */
#define DML_MINIMUM_BUFFER_TENSOR_ALIGNMENT 16
/* Temporary and persistent regions start at a multiple of these. */
#define DML_TEMPORARY_BUFFER_ALIGNMENT 256
#define DML_PERSISTENT_BUFFER_ALIGNMENT 256

typedef struct DML_BUFFER_TENSOR_DESC {
  DML_TENSOR_DATA_TYPE DataType;
  DML_TENSOR_FLAGS Flags;
  UINT DimensionCount;
  const UINT* Sizes;
  const UINT* Strides; /* null, or DimensionCount element strides */
  UINT64 TotalTensorSizeInBytes;
  UINT GuaranteedBaseOffsetAlignment;
} DML_BUFFER_TENSOR_DESC;

typedef struct DML_TENSOR_DESC {
  DML_TENSOR_TYPE Type;
  const void* Desc; /* a DML_BUFFER_TENSOR_DESC when Type is DML_TENSOR_TYPE_BUFFER */
} DML_TENSOR_DESC;

typedef struct DML_OPERATOR_DESC {
  DML_OPERATOR_TYPE Type;
  const void* Desc; /* the DML_*_OPERATOR_DESC that Type names */
} DML_OPERATOR_DESC;

typedef struct DML_JOIN_OPERATOR_DESC {
  UINT InputCount;
  const DML_TENSOR_DESC* InputTensors;
  const DML_TENSOR_DESC* OutputTensor;
  UINT Axis;
} DML_JOIN_OPERATOR_DESC;

typedef struct DML_SPLIT_OPERATOR_DESC {
  const DML_TENSOR_DESC* InputTensor;
  UINT OutputCount;
  const DML_TENSOR_DESC* OutputTensors;
  UINT Axis;
} DML_SPLIT_OPERATOR_DESC;

typedef struct DML_NONZERO_COORDINATES_OPERATOR_DESC {
  const DML_TENSOR_DESC* InputTensor;
  const DML_TENSOR_DESC* OutputCountTensor;
  const DML_TENSOR_DESC* OutputCoordinatesTensor;
} DML_NONZERO_COORDINATES_OPERATOR_DESC;

/* The bytes a buffer tensor spans (docs/contract.md section 2): with null strides the packed size,
 * else (sum((size_i - 1) * stride_i) + 1) elements; then rounded up to a multiple of 4. Unlike
 * DirectML's published helper, the arithmetic is 64-bit and never wraps. An unknown type, null
 * sizes (with or without dimensions), more than 8 dimensions or a size of 0 give 0; no dimensions
 * with non-null sizes give one element's size, rounded up (the empty product; DirectML's helper
 * reads sizes[0] there). */
OPENDML_API UINT64 DMLCalcBufferTensorSize(DML_TENSOR_DATA_TYPE dataType, UINT dimensionCount, const UINT* sizes,
                                           const UINT* strides);

#ifdef __cplusplus
}

/* As DirectML.h's DEFINE_ENUM_FLAG_OPERATORS: flags combine with |, &, ^ and ~ (and their
 * assignments) and stay DML_TENSOR_FLAGS, so `Flags = DML_TENSOR_FLAG_NONE | ...` compiles in C++. */
constexpr DML_TENSOR_FLAGS operator|(DML_TENSOR_FLAGS a, DML_TENSOR_FLAGS b) {
  return static_cast<DML_TENSOR_FLAGS>(static_cast<int>(a) | static_cast<int>(b));
}
constexpr DML_TENSOR_FLAGS operator&(DML_TENSOR_FLAGS a, DML_TENSOR_FLAGS b) {
  return static_cast<DML_TENSOR_FLAGS>(static_cast<int>(a) & static_cast<int>(b));
}
constexpr DML_TENSOR_FLAGS operator^(DML_TENSOR_FLAGS a, DML_TENSOR_FLAGS b) {
  return static_cast<DML_TENSOR_FLAGS>(static_cast<int>(a) ^ static_cast<int>(b));
}
constexpr DML_TENSOR_FLAGS operator~(DML_TENSOR_FLAGS a) { return static_cast<DML_TENSOR_FLAGS>(~static_cast<int>(a)); }
inline DML_TENSOR_FLAGS& operator|=(DML_TENSOR_FLAGS& a, DML_TENSOR_FLAGS b) { return a = a | b; }
inline DML_TENSOR_FLAGS& operator&=(DML_TENSOR_FLAGS& a, DML_TENSOR_FLAGS b) { return a = a & b; }
inline DML_TENSOR_FLAGS& operator^=(DML_TENSOR_FLAGS& a, DML_TENSOR_FLAGS b) { return a = a ^ b; }
#endif

#endif /* OPENDML_DIRECTML_H */
