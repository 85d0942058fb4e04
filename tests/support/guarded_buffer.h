// Device memory with guard zones: the bound region sits between two poisoned zones so that a
// write outside TotalTensorSizeInBytes is caught, and the whole allocation is poisoned before a
// run so that a missing write is caught too (ggml's sentinels).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "opendml/opendml.hpp"
#include "support/tensor_spec.h"

namespace odml_test {

class GuardedBuffer {
 public:
  static constexpr uint64_t kGuardBytes = 256;

  // The region's address is a multiple of `alignment` but not of 2 * alignment, so that code
  // that assumes more alignment than the binding guarantees is caught.
  GuardedBuffer(const opendml::Device& device, uint64_t size, uint32_t alignment);
  // A region for tensor t: TotalTensorSizeInBytes long, at GuaranteedBaseOffsetAlignment (16 when
  // that is 0).
  GuardedBuffer(const opendml::Device& device, const TensorSpec& t);
  ~GuardedBuffer();
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;

  void* data() const { return static_cast<uint8_t*>(base_) + offset_; }
  uint64_t size() const { return size_; }
  odml_buffer_binding binding() const { return {data(), size_}; }

  // Every byte of the allocation, guards included, to the poison pattern.
  void poison();
  // The region to `payload` (size() bytes) and the guards to the poison pattern.
  void upload(const Bytes& payload);
  Bytes download() const;  // the region

  // Nothing was written outside the region.
  ::testing::AssertionResult guards_intact(const std::string& name) const;
  // Nothing was written at all: the region and its guards still hold the poison.
  ::testing::AssertionResult untouched(const std::string& name) const;

 private:
  Bytes pattern() const;  // the poisoned allocation
  Bytes download_all() const;

  const opendml::Device& device_;
  void* base_ = nullptr;
  uint64_t offset_ = 0;
  uint64_t size_ = 0;
  uint64_t allocated_ = 0;
};

}  // namespace odml_test
