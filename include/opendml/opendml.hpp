// opendml: the C++ API, a header-only layer over the C ABI (opendml.h). Failures throw
// opendml::Error, which carries the odml_status and the message.
//
//   opendml::Device cpu("cpu");
//   opendml::TensorDesc a(DML_TENSOR_DATA_TYPE_FLOAT32, {2, 3}), b(DML_TENSOR_DATA_TYPE_FLOAT32, {2, 4}),
//                       out(DML_TENSOR_DATA_TYPE_FLOAT32, {2, 7});
//   opendml::CompiledOperator join = opendml::Operator(cpu, opendml::JoinDesc({a, b}, out, 1)).compile();
//   join.initialize();
//   join.execute({{a_data, a_bytes}, {b_data, b_bytes}}, {{out_data, out_bytes}});
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "opendml/opendml.h"

namespace opendml {

class Error : public std::runtime_error {
 public:
  Error(odml_status status, const std::string& message) : std::runtime_error(message), status_(status) {}
  odml_status status() const { return status_; }

 private:
  odml_status status_;
};

inline void check(odml_status status) {
  if (status != ODML_STATUS_SUCCESS) throw Error(status, odml_last_error_message());
}

// A buffer tensor description that owns its arrays (as DirectMLX's dml::TensorDesc does).
class TensorDesc {
 public:
  TensorDesc(DML_TENSOR_DATA_TYPE type, std::vector<uint32_t> sizes, std::optional<std::vector<uint32_t>> strides = {},
             DML_TENSOR_FLAGS flags = DML_TENSOR_FLAG_NONE)
      : sizes_(std::move(sizes)), strides_(std::move(strides)) {
    if (strides_ && strides_->size() != sizes_.size())
      throw Error(ODML_STATUS_INVALID_ARGUMENT, "TensorDesc: " + std::to_string(strides_->size()) + " strides for " +
                                                    std::to_string(sizes_.size()) + " sizes; it takes one per size");
    buffer_.DataType = type;
    buffer_.Flags = flags;
    buffer_.DimensionCount = static_cast<uint32_t>(sizes_.size());
    buffer_.TotalTensorSizeInBytes =
        DMLCalcBufferTensorSize(type, buffer_.DimensionCount, sizes_.data(), strides_ ? strides_->data() : nullptr);
    buffer_.GuaranteedBaseOffsetAlignment = 0;
    point();
  }
  TensorDesc(const TensorDesc& other) : buffer_(other.buffer_), sizes_(other.sizes_), strides_(other.strides_) {
    point();
  }
  TensorDesc& operator=(const TensorDesc& other) {
    buffer_ = other.buffer_;
    sizes_ = other.sizes_;
    strides_ = other.strides_;
    point();
    return *this;
  }

  TensorDesc& total_size(uint64_t bytes) {
    buffer_.TotalTensorSizeInBytes = bytes;
    return *this;
  }
  TensorDesc& alignment(uint32_t bytes) {
    buffer_.GuaranteedBaseOffsetAlignment = bytes;
    return *this;
  }

  uint64_t total_size() const { return buffer_.TotalTensorSizeInBytes; }
  const std::vector<uint32_t>& sizes() const { return sizes_; }
  const DML_BUFFER_TENSOR_DESC& buffer() const { return buffer_; }
  DML_TENSOR_DESC desc() const { return {DML_TENSOR_TYPE_BUFFER, &buffer_}; }

 private:
  void point() {
    buffer_.Sizes = sizes_.data();
    buffer_.Strides = strides_ ? strides_->data() : nullptr;
  }
  DML_BUFFER_TENSOR_DESC buffer_{};
  std::vector<uint32_t> sizes_;
  std::optional<std::vector<uint32_t>> strides_;
};

// Operator descriptions that own their tensor arrays; desc() is valid while the object lives.
class OperatorDesc {
 public:
  virtual ~OperatorDesc() = default;
  virtual DML_OPERATOR_DESC desc() const = 0;
};

class JoinDesc : public OperatorDesc {
 public:
  JoinDesc(std::vector<TensorDesc> inputs, TensorDesc output, uint32_t axis)
      : inputs_(std::move(inputs)), output_(std::move(output)) {
    for (const TensorDesc& t : inputs_) input_descs_.push_back(t.desc());
    output_desc_ = output_.desc();
    desc_ = {static_cast<uint32_t>(input_descs_.size()), input_descs_.data(), &output_desc_, axis};
  }
  JoinDesc(const JoinDesc&) = delete;
  DML_OPERATOR_DESC desc() const override { return {DML_OPERATOR_JOIN, &desc_}; }

 private:
  std::vector<TensorDesc> inputs_;
  TensorDesc output_;
  std::vector<DML_TENSOR_DESC> input_descs_;
  DML_TENSOR_DESC output_desc_{};
  DML_JOIN_OPERATOR_DESC desc_{};
};

class SplitDesc : public OperatorDesc {
 public:
  SplitDesc(TensorDesc input, std::vector<TensorDesc> outputs, uint32_t axis)
      : input_(std::move(input)), outputs_(std::move(outputs)) {
    input_desc_ = input_.desc();
    for (const TensorDesc& t : outputs_) output_descs_.push_back(t.desc());
    desc_ = {&input_desc_, static_cast<uint32_t>(output_descs_.size()), output_descs_.data(), axis};
  }
  SplitDesc(const SplitDesc&) = delete;
  DML_OPERATOR_DESC desc() const override { return {DML_OPERATOR_SPLIT, &desc_}; }

 private:
  TensorDesc input_;
  std::vector<TensorDesc> outputs_;
  DML_TENSOR_DESC input_desc_{};
  std::vector<DML_TENSOR_DESC> output_descs_;
  DML_SPLIT_OPERATOR_DESC desc_{};
};

class NonzeroCoordinatesDesc : public OperatorDesc {
 public:
  NonzeroCoordinatesDesc(TensorDesc input, TensorDesc count, TensorDesc coordinates)
      : tensors_{std::move(input), std::move(count), std::move(coordinates)} {
    for (int i = 0; i < 3; ++i) descs_[i] = tensors_[i].desc();
    desc_ = {&descs_[0], &descs_[1], &descs_[2]};
  }
  NonzeroCoordinatesDesc(const NonzeroCoordinatesDesc&) = delete;
  DML_OPERATOR_DESC desc() const override { return {DML_OPERATOR_NONZERO_COORDINATES, &desc_}; }

 private:
  TensorDesc tensors_[3];
  DML_TENSOR_DESC descs_[3]{};
  DML_NONZERO_COORDINATES_OPERATOR_DESC desc_{};
};

class Device {
 public:
  explicit Device(const std::string& name = "cpu") {
    // The C ABI takes a C string, which would end at a NUL and name another device.
    if (name.find('\0') != std::string::npos)
      throw Error(ODML_STATUS_INVALID_ARGUMENT, "device name '" + name.substr(0, name.find('\0')) +
                                                    "\\0...' holds a NUL character; no device is named so");
    odml_device d = nullptr;
    check(odml_device_create(name.c_str(), &d));
    handle_ = std::shared_ptr<odml_device_s>(d, Deleter());
  }
  odml_device get() const { return handle_.get(); }
  std::string name() const { return odml_device_name(handle_.get()); }

  void* allocate(uint64_t bytes) const {
    void* p = nullptr;
    check(odml_device_allocate(get(), bytes, &p));
    return p;
  }
  void free(void* p) const { check(odml_device_free(get(), p)); }
  void upload(void* dst, const void* src, uint64_t bytes) const { check(odml_device_upload(get(), dst, src, bytes)); }
  void download(void* dst, const void* src, uint64_t bytes) const {
    check(odml_device_download(get(), dst, src, bytes));
  }
  void synchronize(void* stream = nullptr) const { check(odml_device_synchronize(get(), stream)); }

 private:
  struct Deleter {
    void operator()(odml_device d) const { odml_device_destroy(d); }
  };
  std::shared_ptr<odml_device_s> handle_;
};

// Device memory that frees itself.
class Buffer {
 public:
  Buffer(const Device& device, uint64_t bytes) : device_(device), data_(device.allocate(bytes)), size_(bytes) {}
  ~Buffer() { odml_device_free(device_.get(), data_); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return data_; }
  uint64_t size() const { return size_; }
  odml_buffer_binding binding() const { return {data_, size_}; }

 private:
  Device device_;
  void* data_;
  uint64_t size_;
};

class CompiledOperator {
 public:
  CompiledOperator(odml_compiled_operator handle, Device device) : handle_(handle), device_(std::move(device)) {}
  odml_compiled_operator get() const { return handle_.get(); }

  odml_binding_properties binding_properties() const {
    odml_binding_properties p{};
    check(odml_compiled_operator_get_binding_properties(get(), &p));
    return p;
  }
  std::string implementation() const { return odml_compiled_operator_implementation(get()); }

  void initialize(const odml_bindings& bindings, void* stream = nullptr) const {
    check(odml_compiled_operator_initialize(get(), &bindings, stream));
  }
  // Initializes with regions the wrapper allocates on the operator's device and keeps: the
  // persistent region compile asked for, and a temporary region for the execute overload below.
  // (For operators without OWNED_BY_DML inputs.) The kept temporary region serves one execution
  // at a time: executions that may overlap, on several threads or streams, bind their own.
  // The regions are kept once initialize succeeds: a failed one leaves those of the last that
  // succeeded (none at first), never a region it did not fill.
  void initialize(void* stream = nullptr) {
    const odml_binding_properties p = binding_properties();
    auto persistent =
        p.persistent_size_in_bytes ? std::make_shared<Buffer>(device_, p.persistent_size_in_bytes) : nullptr;
    auto temporary = p.temporary_size_in_bytes ? std::make_shared<Buffer>(device_, p.temporary_size_in_bytes) : nullptr;
    initialize(odml_bindings{nullptr, 0, nullptr, 0, {}, kept(persistent)}, stream);
    persistent_ = std::move(persistent);
    temporary_ = std::move(temporary);
  }

  // An unbound temporary or persistent region (null data) is the one initialize() kept, if any.
  void execute(odml_bindings bindings, void* stream = nullptr) const {
    if (bindings.temporary.data == nullptr) bindings.temporary = kept(temporary_);
    if (bindings.persistent.data == nullptr) bindings.persistent = kept(persistent_);
    check(odml_compiled_operator_execute(get(), &bindings, stream));
  }
  // The same, with the bindings listed in place.
  void execute(std::initializer_list<odml_buffer_binding> inputs, std::initializer_list<odml_buffer_binding> outputs,
               odml_buffer_binding temporary = {}, odml_buffer_binding persistent = {}, void* stream = nullptr) const {
    execute(odml_bindings{inputs.begin(), static_cast<uint32_t>(inputs.size()), outputs.begin(),
                          static_cast<uint32_t>(outputs.size()), temporary, persistent},
            stream);
  }

 private:
  static odml_buffer_binding kept(const std::shared_ptr<Buffer>& buffer) {
    return buffer ? buffer->binding() : odml_buffer_binding{};
  }
  struct Deleter {
    void operator()(odml_compiled_operator c) const { odml_compiled_operator_destroy(c); }
  };
  std::unique_ptr<odml_compiled_operator_s, Deleter> handle_;
  Device device_;
  std::shared_ptr<Buffer> persistent_, temporary_;
};

class Operator {
 public:
  // extensions: odml_extension bits the caller opts into (ODML_EXTENSION_64BIT_INDICES).
  Operator(const Device& device, const OperatorDesc& desc, DML_FEATURE_LEVEL level = DML_FEATURE_LEVEL(0),
           uint32_t extensions = ODML_EXTENSION_NONE)
      : Operator(device, desc.desc(), level, extensions) {}
  Operator(const Device& device, const DML_OPERATOR_DESC& desc, DML_FEATURE_LEVEL level = DML_FEATURE_LEVEL(0),
           uint32_t extensions = ODML_EXTENSION_NONE)
      : Operator(device, desc, level, odml_operator_options{extensions, 0, nullptr, 0, nullptr}) {}
  // options: extensions with the values they need (coordinate offsets, fill values).
  Operator(const Device& device, const OperatorDesc& desc, DML_FEATURE_LEVEL level,
           const odml_operator_options& options)
      : Operator(device, desc.desc(), level, options) {}
  Operator(const Device& device, const DML_OPERATOR_DESC& desc, DML_FEATURE_LEVEL level,
           const odml_operator_options& options)
      : device_(device) {
    odml_operator op = nullptr;
    check(odml_operator_create_with_options(device.get(), &desc, level, &options, &op));
    handle_.reset(op);
  }
  odml_operator get() const { return handle_.get(); }

  CompiledOperator compile() const {
    odml_compiled_operator c = nullptr;
    check(odml_operator_compile(get(), &c));
    return CompiledOperator(c, device_);
  }

 private:
  struct Deleter {
    void operator()(odml_operator o) const { odml_operator_destroy(o); }
  };
  Device device_;
  std::unique_ptr<odml_operator_s, Deleter> handle_;
};

}  // namespace opendml
