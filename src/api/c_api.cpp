// The C ABI: handles around the C++ objects, and Status -> odml_status plus the thread's message.
#include <array>
#include <iterator>
#include <memory>
#include <new>
#include <string>

#include "api/compiled_operator.h"
#include "backends/device.h"
#include "core/data_type.h"
#include "core/feature_level.h"
#include "opendml/opendml.h"

using opendml::internal::Status;

struct odml_device_s {
  std::shared_ptr<opendml::internal::Device> device;
};
struct odml_operator_s {
  std::shared_ptr<opendml::internal::Device> device;
  opendml::internal::OperatorDef def;
};
struct odml_compiled_operator_s {
  std::unique_ptr<opendml::internal::CompiledOperator> compiled;
};

namespace {

thread_local std::string last_error;

// Runs body, records its outcome as the thread's last error, and returns its status. Nothing
// inside throws on purpose; an allocation failure still becomes a status rather than an abort.
template <class Body>
odml_status record(Body&& body) {
  Status status;
  try {
    status = body();
  } catch (const std::bad_alloc&) {
    status = Status(ODML_STATUS_OUT_OF_MEMORY, "opendml: out of host memory");
  } catch (const std::exception& e) {
    // No exception may cross the C boundary; one that reaches here is opendml's own defect.
    status = Status(ODML_STATUS_DEVICE_FAILURE, std::string("opendml: internal error: ") + e.what());
  } catch (...) {
    status = Status(ODML_STATUS_DEVICE_FAILURE, "opendml: internal error: an unknown exception");
  }
  last_error = status.message();
  return status.code();
}

Status null_argument(const char* function, const char* name) {
  return opendml::internal::invalid_argument(function, ": ", name, " is null");
}

}  // namespace

extern "C" {

const char* odml_status_name(odml_status status) {
  switch (status) {
    case ODML_STATUS_SUCCESS: return "SUCCESS";
    case ODML_STATUS_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case ODML_STATUS_UNSUPPORTED: return "UNSUPPORTED";
    case ODML_STATUS_OUT_OF_MEMORY: return "OUT_OF_MEMORY";
    case ODML_STATUS_DEVICE_FAILURE: return "DEVICE_FAILURE";
  }
  return "UNKNOWN_STATUS";
}

const char* odml_last_error_message(void) { return last_error.c_str(); }

const char* odml_data_type_name(DML_TENSOR_DATA_TYPE type) {
  const auto* info = opendml::internal::data_type_info(type);
  return info ? info->name.data() : nullptr;  // the table's names are literals: terminated
}

uint32_t odml_data_type_bits(DML_TENSOR_DATA_TYPE type) {
  const auto* info = opendml::internal::data_type_info(type);
  return info ? info->bits : 0;
}

const char* odml_feature_level_name(DML_FEATURE_LEVEL level) {
  using opendml::internal::kFeatureLevels;
  static const auto names = [] {
    std::array<std::string, std::size(kFeatureLevels)> n;
    for (size_t i = 0; i < n.size(); ++i) n[i] = opendml::internal::feature_level_name(kFeatureLevels[i]);
    return n;
  }();
  for (size_t i = 0; i < names.size(); ++i)
    if (kFeatureLevels[i] == level) return names[i].c_str();
  return nullptr;
}

odml_status odml_device_create(const char* name, odml_device* device) {
  return record([&]() -> Status {
    if (device == nullptr) return null_argument("odml_device_create", "device");
    if (name == nullptr) return null_argument("odml_device_create", "name");
    auto opened = opendml::internal::open_device(name);
    if (!opened.ok()) return opened.status();
    *device = new odml_device_s{std::move(*opened)};
    return {};
  });
}

void odml_device_destroy(odml_device device) { delete device; }

const char* odml_device_name(odml_device device) { return device ? device->device->name().c_str() : ""; }

odml_status odml_device_allocate(odml_device device, uint64_t size_in_bytes, void** data) {
  return record([&]() -> Status {
    if (device == nullptr) return null_argument("odml_device_allocate", "device");
    if (data == nullptr) return null_argument("odml_device_allocate", "data");
    auto allocated = device->device->allocate(size_in_bytes);
    if (!allocated.ok()) return allocated.status();
    *data = *allocated;
    return {};
  });
}

odml_status odml_device_free(odml_device device, void* data) {
  return record([&]() -> Status {
    if (device == nullptr) return null_argument("odml_device_free", "device");
    return data ? device->device->free(data) : Status();
  });
}

odml_status odml_device_upload(odml_device device, void* device_dst, const void* host_src, uint64_t size_in_bytes) {
  return record([&]() -> Status {
    if (device == nullptr) return null_argument("odml_device_upload", "device");
    if (size_in_bytes > 0 && (device_dst == nullptr || host_src == nullptr))
      return null_argument("odml_device_upload", "a buffer");
    return device->device->upload(device_dst, host_src, size_in_bytes);
  });
}

odml_status odml_device_download(odml_device device, void* host_dst, const void* device_src, uint64_t size_in_bytes) {
  return record([&]() -> Status {
    if (device == nullptr) return null_argument("odml_device_download", "device");
    if (size_in_bytes > 0 && (host_dst == nullptr || device_src == nullptr))
      return null_argument("odml_device_download", "a buffer");
    return device->device->download(host_dst, device_src, size_in_bytes);
  });
}

odml_status odml_device_synchronize(odml_device device, void* stream) {
  return record([&]() -> Status {
    if (device == nullptr) return null_argument("odml_device_synchronize", "device");
    return device->device->synchronize(stream);
  });
}

odml_status odml_operator_create(odml_device device, const DML_OPERATOR_DESC* desc, DML_FEATURE_LEVEL feature_level,
                                 odml_operator* op) {
  return odml_operator_create_ex(device, desc, feature_level, ODML_EXTENSION_NONE, op);
}

odml_status odml_operator_create_ex(odml_device device, const DML_OPERATOR_DESC* desc, DML_FEATURE_LEVEL feature_level,
                                    uint32_t extensions, odml_operator* op) {
  const odml_operator_options options{extensions, 0, nullptr, 0, nullptr};
  return odml_operator_create_with_options(device, desc, feature_level, &options, op);
}

odml_status odml_operator_create_with_options(odml_device device, const DML_OPERATOR_DESC* desc,
                                              DML_FEATURE_LEVEL feature_level, const odml_operator_options* options,
                                              odml_operator* op) {
  return record([&]() -> Status {
    if (device == nullptr) return null_argument("odml_operator_create", "device");
    if (op == nullptr) return null_argument("odml_operator_create", "op");
    auto def = opendml::internal::create_operator_def(desc, feature_level, options);
    if (!def.ok()) return def.status();
    *op = new odml_operator_s{device->device, std::move(*def)};
    return {};
  });
}

void odml_operator_destroy(odml_operator op) { delete op; }

odml_status odml_operator_compile(odml_operator op, odml_compiled_operator* compiled) {
  return record([&]() -> Status {
    if (op == nullptr) return null_argument("odml_operator_compile", "op");
    if (compiled == nullptr) return null_argument("odml_operator_compile", "compiled");
    auto result = opendml::internal::CompiledOperator::compile(op->device, op->def);
    if (!result.ok()) return result.status();
    *compiled = new odml_compiled_operator_s{std::move(*result)};
    return {};
  });
}

void odml_compiled_operator_destroy(odml_compiled_operator compiled) { delete compiled; }

odml_status odml_compiled_operator_get_binding_properties(odml_compiled_operator compiled,
                                                          odml_binding_properties* properties) {
  return record([&]() -> Status {
    if (compiled == nullptr) return null_argument("odml_compiled_operator_get_binding_properties", "compiled");
    if (properties == nullptr) return null_argument("odml_compiled_operator_get_binding_properties", "properties");
    *properties = compiled->compiled->properties();
    return {};
  });
}

odml_status odml_compiled_operator_initialize(odml_compiled_operator compiled, const odml_bindings* bindings,
                                              void* stream) {
  return record([&]() -> Status {
    if (compiled == nullptr) return null_argument("odml_compiled_operator_initialize", "compiled");
    return compiled->compiled->initialize(bindings, stream);
  });
}

odml_status odml_compiled_operator_execute(odml_compiled_operator compiled, const odml_bindings* bindings,
                                           void* stream) {
  return record([&]() -> Status {
    if (compiled == nullptr) return null_argument("odml_compiled_operator_execute", "compiled");
    return compiled->compiled->execute(bindings, stream);
  });
}

const char* odml_compiled_operator_implementation(odml_compiled_operator compiled) {
  return compiled ? compiled->compiled->implementation() : "";
}

}  // extern "C"
