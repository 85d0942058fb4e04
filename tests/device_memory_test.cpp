// DeviceMemory: the device memory functions of the C API on the test device.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "support/expect.h"
#include "support/test_env.h"
#include "support/testers.h"

namespace odml_test {
namespace {

TEST(DeviceMemory, AllocationsAreAlignedTo256Bytes) {
  for (uint64_t size : {1, 3, 255, 256, 4097}) {
    opendml::Buffer b(test_device(), size);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % 256, 0u) << size << " bytes";
  }
}

TEST(DeviceMemory, UploadDownloadRoundTrip) {
  Rng rng(next_seed());
  const Bytes data = random_bytes(rng, 1000);
  opendml::Buffer b(test_device(), data.size());
  test_device().upload(b.data(), data.data(), data.size());
  Bytes back(data.size());
  test_device().download(back.data(), b.data(), back.size());
  EXPECT_EQ(back, data);
}

// Regression: sizes near 2^64 were rounded up to a multiple of 256 with a wrap, and the CPU device
// returned SUCCESS with a tiny buffer.
TEST(DeviceMemory, SizesThatCannotExistAreOutOfMemory) {
  for (uint64_t size : {~uint64_t{0}, ~uint64_t{0} - 200, ~uint64_t{0} - 254}) {
    void* p = reinterpret_cast<void*>(uintptr_t{1});
    EXPECT_TRUE(status_is(odml_device_allocate(test_device().get(), size, &p), ODML_STATUS_OUT_OF_MEMORY)) << size;
    EXPECT_EQ(p, reinterpret_cast<void*>(uintptr_t{1})) << "a failed call returns nothing";
  }
}

// On the CPU device, device memory is host memory (docs/contract.md section 5), so an upload or a
// download may copy between two ranges of one allocation, overlapping ones included. Regression:
// the CPU device copied with memcpy, whose result is undefined there (AddressSanitizer aborts with
// memcpy-param-overlap; a forward copy repeats the first bytes).
TEST(DeviceMemory, CpuCopiesBetweenOverlappingRangesOfOneAllocation) {
  if (test_device_name().rfind("cpu", 0) != 0) GTEST_SKIP() << "device memory is host memory on the CPU only";
  opendml::Buffer b(test_device(), 256);
  auto* p = static_cast<uint8_t*>(b.data());
  std::vector<uint8_t> want(256);
  const auto reset = [&] {
    for (int i = 0; i < 256; ++i) p[i] = want[i] = static_cast<uint8_t>(i);
  };
  reset();
  test_device().upload(p + 8, p, 200);  // the destination after the source
  std::copy_backward(want.begin(), want.begin() + 200, want.begin() + 208);
  EXPECT_EQ(std::vector<uint8_t>(p, p + 256), want);
  reset();
  test_device().download(p, p + 8, 200);  // before it
  std::copy(want.begin() + 8, want.begin() + 208, want.begin());
  EXPECT_EQ(std::vector<uint8_t>(p, p + 256), want);
}

TEST(DeviceMemory, NullArgumentsRejected) {
  const odml_device d = test_device().get();
  EXPECT_TRUE(status_is(odml_device_allocate(d, 16, nullptr), ODML_STATUS_INVALID_ARGUMENT, {"data is null"}));
  uint8_t host[4] = {};
  EXPECT_TRUE(status_is(odml_device_upload(d, nullptr, host, 4), ODML_STATUS_INVALID_ARGUMENT, {"null"}));
  EXPECT_TRUE(status_is(odml_device_download(d, host, nullptr, 4), ODML_STATUS_INVALID_ARGUMENT, {"null"}));
  EXPECT_TRUE(status_is(odml_device_free(d, nullptr), ODML_STATUS_SUCCESS));
  EXPECT_TRUE(status_is(odml_device_synchronize(d, nullptr), ODML_STATUS_SUCCESS));
}

}  // namespace
}  // namespace odml_test
