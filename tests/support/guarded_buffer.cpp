#include "support/guarded_buffer.h"

#include <cstring>

namespace odml_test {
namespace {

// Not a constant byte, so that a copy that lands shifted does not read back as poison.
uint8_t poison_byte(uint64_t i) { return static_cast<uint8_t>(0xA5 ^ (i * 0x3B) ^ (i >> 8)); }

::testing::AssertionResult compare_zone(const Bytes& actual, const Bytes& expected, uint64_t begin, uint64_t end,
                                        uint64_t region_begin, const std::string& what) {
  for (uint64_t i = begin; i < end; ++i)
    if (actual[i] != expected[i]) {
      const int64_t at = static_cast<int64_t>(i) - static_cast<int64_t>(region_begin);
      return ::testing::AssertionFailure() << what << ": byte " << at << " relative to the region start was written ("
                                           << int{expected[i]} << " -> " << int{actual[i]} << ")";
    }
  return ::testing::AssertionSuccess();
}

}  // namespace

GuardedBuffer::GuardedBuffer(const opendml::Device& device, uint64_t size, uint32_t alignment)
    : device_(device), size_(size) {
  allocated_ = kGuardBytes + 3 * uint64_t{alignment} + size + kGuardBytes;  // room to place it
  base_ = device_.allocate(allocated_);
  const uint64_t base = reinterpret_cast<uintptr_t>(base_);
  const uint64_t two = 2 * uint64_t{alignment};
  offset_ = (base + kGuardBytes + two - 1) / two * two + alignment - base;
  poison();
}

GuardedBuffer::GuardedBuffer(const opendml::Device& device, const TensorSpec& t)
    : GuardedBuffer(device, t.total_bytes(), t.alignment ? t.alignment : 16) {}

GuardedBuffer::~GuardedBuffer() { odml_device_free(device_.get(), base_); }

Bytes GuardedBuffer::pattern() const {
  Bytes p(allocated_);
  for (uint64_t i = 0; i < allocated_; ++i) p[i] = poison_byte(i);
  return p;
}

void GuardedBuffer::poison() {
  const Bytes p = pattern();
  device_.upload(base_, p.data(), p.size());
}

void GuardedBuffer::upload(const Bytes& payload) {
  Bytes all = pattern();
  // An empty payload's data() may be null, which memcpy must not get even for 0 bytes.
  if (!payload.empty()) std::memcpy(all.data() + offset_, payload.data(), std::min<uint64_t>(payload.size(), size_));
  device_.upload(base_, all.data(), all.size());
}

Bytes GuardedBuffer::download_all() const {
  Bytes all(allocated_);
  device_.download(all.data(), base_, allocated_);
  return all;
}

Bytes GuardedBuffer::download() const {
  Bytes region(size_);
  device_.download(region.data(), data(), size_);
  return region;
}

::testing::AssertionResult GuardedBuffer::guards_intact(const std::string& name) const {
  const Bytes all = download_all(), want = pattern();
  const auto before = compare_zone(all, want, 0, offset_, offset_, name + " (guard before the region)");
  if (!before) return before;
  return compare_zone(all, want, offset_ + size_, allocated_, offset_, name + " (guard after the region)");
}

::testing::AssertionResult GuardedBuffer::untouched(const std::string& name) const {
  return compare_zone(download_all(), pattern(), 0, allocated_, offset_, name);
}

}  // namespace odml_test
