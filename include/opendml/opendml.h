/* opendml: the C ABI.
 *
 * DirectML's lifecycle without Direct3D (docs/contract.md section 5):
 *
 *   odml_device_create("cpu" | "cuda" | "cuda:N")
 *   odml_operator_create(device, &DML_OPERATOR_DESC, feature level)   validates the descriptor
 *   odml_operator_compile(op)                                         plans once; sizes the regions
 *   odml_compiled_operator_initialize(compiled, bindings, stream)     once, before executing
 *   odml_compiled_operator_execute(compiled, bindings, stream)        any number of times
 *
 * Every function returns an odml_status; when it is not ODML_STATUS_SUCCESS,
 * odml_last_error_message() tells why, on the calling thread. A failed call changes nothing: no
 * handle is returned and no output is written.
 *
 * Buffers are plain addresses: host memory for the CPU device, device memory (cudaMalloc, or
 * odml_device_allocate) for a CUDA device. Streams are cudaStream_t values passed as void*; the CPU
 * device runs synchronously and ignores them. */
#ifndef OPENDML_OPENDML_H
#define OPENDML_OPENDML_H

#include <stddef.h>
#include <stdint.h>

#include "opendml/directml.h"
#include "opendml/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum odml_status OPENDML_ENUM_BASE {
  ODML_STATUS_SUCCESS = 0,
  /* The caller broke a rule: a descriptor, a binding or an argument is invalid (DirectML's
   * E_INVALIDARG). */
  ODML_STATUS_INVALID_ARGUMENT = 1,
  /* A valid request that this build or this device cannot carry out. */
  ODML_STATUS_UNSUPPORTED = 2,
  ODML_STATUS_OUT_OF_MEMORY = 3,
  /* The device or its driver failed (a CUDA error). */
  ODML_STATUS_DEVICE_FAILURE = 4
} odml_status;

/* "SUCCESS", "INVALID_ARGUMENT", ...; "UNKNOWN_STATUS" for a value that is none of these. */
OPENDML_API const char* odml_status_name(odml_status status);

/* The message of the most recent opendml call on this thread: empty when it succeeded. Valid until
 * the thread's next opendml call. */
OPENDML_API const char* odml_last_error_message(void);

/* ---- DirectML's enums by name ---------------------------------------------------------------- */

/* A data type's name as DirectML.h spells it without the DML_TENSOR_DATA_TYPE_ prefix ("FLOAT32"),
 * or null for a value that is no data type (DML_TENSOR_DATA_TYPE_UNKNOWN included). */
OPENDML_API const char* odml_data_type_name(DML_TENSOR_DATA_TYPE type);
/* Bits per element (4 for UINT4 and INT4), or 0 for a value that is no data type. */
OPENDML_API uint32_t odml_data_type_bits(DML_TENSOR_DATA_TYPE type);
/* A feature level's name without the DML_FEATURE_LEVEL_ prefix ("6_4"), or null for a value that
 * is no DML_FEATURE_LEVEL. */
OPENDML_API const char* odml_feature_level_name(DML_FEATURE_LEVEL level);

/* ---- Devices ---------------------------------------------------------------------------------- */

typedef struct odml_device_s* odml_device;

/* name: "cpu", "cuda" (the current CUDA device) or "cuda:N". */
OPENDML_API odml_status odml_device_create(const char* name, odml_device* device);
/* Operators keep their device alive: destroying the handle early is safe. Null is ignored. */
OPENDML_API void odml_device_destroy(odml_device device);
/* A printable name, such as "cpu (2 threads)" or "cuda:0 (NVIDIA H100 80GB HBM3)". */
OPENDML_API const char* odml_device_name(odml_device device);

/* Memory on the device, for callers that don't manage it themselves. Allocations are aligned to
 * 256 bytes. The copies are synchronous with the host. */
OPENDML_API odml_status odml_device_allocate(odml_device device, uint64_t size_in_bytes, void** data);
OPENDML_API odml_status odml_device_free(odml_device device, void* data);
OPENDML_API odml_status odml_device_upload(odml_device device, void* device_dst, const void* host_src,
                                           uint64_t size_in_bytes);
OPENDML_API odml_status odml_device_download(odml_device device, void* host_dst, const void* device_src,
                                             uint64_t size_in_bytes);
/* Waits for the work queued on stream (null: the default stream) to finish. */
OPENDML_API odml_status odml_device_synchronize(odml_device device, void* stream);

/* ---- Operators -------------------------------------------------------------------------------- */

typedef struct odml_operator_s* odml_operator;
typedef struct odml_compiled_operator_s* odml_compiled_operator;

/* Validates desc against feature_level (0 means the highest, DML_FEATURE_LEVEL_6_4). The
 * descriptor is copied: it may be freed once the call returns. */
OPENDML_API odml_status odml_operator_create(odml_device device, const DML_OPERATOR_DESC* desc,
                                             DML_FEATURE_LEVEL feature_level, odml_operator* op);

/* Extensions to DirectML's rules that a caller opts into at creation (docs/contract.md section 7).
 * Without them, validation is exactly DirectML's. */
typedef enum odml_extension OPENDML_ENUM_BASE {
  ODML_EXTENSION_NONE = 0,
  /* 64-bit indices: NONZERO_COORDINATES may write INT64 or UINT64 counts and coordinates, and
   * tensors of every operator may hold up to 2^62 - 1 elements (and span as many) instead of
   * 2^32 - 1. */
  ODML_EXTENSION_64BIT_INDICES = 1,
  /* Coordinate offsets: NONZERO_COORDINATES adds a constant to every coordinate of column j it
   * writes (the coordinates of a shard of a larger tensor in that tensor). The offsets come with
   * odml_operator_create_with_options. */
  ODML_EXTENSION_COORDINATE_OFFSETS = 2,
  /* Fill rows: NONZERO_COORDINATES writes every row past the count, each coordinate j as fill value
   * j (as torch.nonzero_static and jnp.argwhere(size=, fill_value=) do), in the same pass as the
   * rows it finds. The values come with odml_operator_create_with_options. */
  ODML_EXTENSION_FILL_ROWS = 4,
  ODML_EXTENSIONS_ALL = 7
} odml_extension;

/* odml_operator_create with extensions: a bitwise OR of odml_extension values. */
OPENDML_API odml_status odml_operator_create_ex(odml_device device, const DML_OPERATOR_DESC* desc,
                                                DML_FEATURE_LEVEL feature_level, uint32_t extensions,
                                                odml_operator* op);

/* The extensions and the values some of them need (docs/contract.md section 7). */
typedef struct odml_operator_options {
  uint32_t extensions;                /* a bitwise OR of odml_extension values */
  uint32_t coordinate_offset_count;   /* with ODML_EXTENSION_COORDINATE_OFFSETS: N, else 0 */
  const uint64_t* coordinate_offsets; /* offset of coordinate column j; copied by the call */
  uint32_t fill_value_count;          /* with ODML_EXTENSION_FILL_ROWS: N, else 0 */
  const uint64_t* fill_values;        /* bits of coordinate j in rows past the count; copied */
} odml_operator_options;

/* odml_operator_create with options (null: none, as odml_operator_create). */
OPENDML_API odml_status odml_operator_create_with_options(odml_device device, const DML_OPERATOR_DESC* desc,
                                                          DML_FEATURE_LEVEL feature_level,
                                                          const odml_operator_options* options, odml_operator* op);
OPENDML_API void odml_operator_destroy(odml_operator op);

/* Plans the operator for its device. The compiled operator is independent of op. */
OPENDML_API odml_status odml_operator_compile(odml_operator op, odml_compiled_operator* compiled);
OPENDML_API void odml_compiled_operator_destroy(odml_compiled_operator compiled);

typedef struct odml_binding_properties {
  uint32_t input_count; /* tensors in binding order (docs/contract.md section 1) */
  uint32_t output_count;
  uint64_t temporary_size_in_bytes;  /* bind at least this much at initialize and execute */
  uint64_t persistent_size_in_bytes; /* bind the same region at initialize and every execute */
} odml_binding_properties;

OPENDML_API odml_status odml_compiled_operator_get_binding_properties(odml_compiled_operator compiled,
                                                                      odml_binding_properties* properties);

/* A region of a buffer: data null means "not bound". */
typedef struct odml_buffer_binding {
  void* data;
  uint64_t size_in_bytes;
} odml_buffer_binding;

/* The regions a call binds. At execute: every input not flagged DML_TENSOR_FLAG_OWNED_BY_DML, every
 * output, and the temporary and persistent regions when their sizes are not zero. At initialize:
 * exactly the inputs flagged DML_TENSOR_FLAG_OWNED_BY_DML (input_count 0 when there are none), no
 * outputs, and the persistent region; initialize uses no temporary region. */
typedef struct odml_bindings {
  const odml_buffer_binding* inputs;
  uint32_t input_count;
  const odml_buffer_binding* outputs;
  uint32_t output_count;
  odml_buffer_binding temporary;
  odml_buffer_binding persistent;
} odml_bindings;

/* Prepares the persistent region; call it once before the first execute, and again to prepare
 * another persistent region. Stream-ordered on a CUDA device. */
OPENDML_API odml_status odml_compiled_operator_initialize(odml_compiled_operator compiled,
                                                          const odml_bindings* bindings, void* stream);

/* Runs the operator. On a CUDA device it is asynchronous on stream: no allocation, no host
 * synchronisation, and it can be captured in a CUDA graph. A compiled operator may be executed
 * from several threads at once, each with its own temporary region. */
OPENDML_API odml_status odml_compiled_operator_execute(odml_compiled_operator compiled, const odml_bindings* bindings,
                                                       void* stream);

/* The implementation that compile chose: "cpu.copy" or "cpu.nonzero" on the CPU, "cuda.slices",
 * "cuda.copy" or "cuda.nonzero" on a CUDA device. */
OPENDML_API const char* odml_compiled_operator_implementation(odml_compiled_operator compiled);

#ifdef __cplusplus
}
#endif

#endif /* OPENDML_OPENDML_H */
