// opendml_tests [--device=NAME] [gtest flags]: NAME is cpu (the default), cuda or cuda:N. The
// Device* suites run on that device; the others need none. Exit status 77 (ctest's "skipped")
// when the device exists in principle but cannot be opened here: no CUDA in the build, no GPU.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "opendml/opendml.hpp"
#include "support/test_env.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  std::string device = "cpu";
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--device=", 9) == 0) {
      device = argv[i] + 9;
    } else {
      std::fprintf(stderr, "opendml_tests: unknown argument '%s' (expected --device=NAME and gtest flags)\n", argv[i]);
      return 2;
    }
  }
  if (GTEST_FLAG_GET(list_tests)) return RUN_ALL_TESTS();  // test discovery needs no device
  try {
    odml_test::set_test_device(std::make_unique<opendml::Device>(device), device);
  } catch (const opendml::Error& e) {
    std::printf("opendml_tests: cannot open device '%s': %s: %s\n", device.c_str(), odml_status_name(e.status()),
                e.what());
    // A misspelt name is a mistake; a device this build or machine lacks is a skip.
    return e.status() == ODML_STATUS_INVALID_ARGUMENT ? 1 : 77;
  }
  std::printf("opendml_tests: device %s (%s), OPENDML_TEST_SEED=%llu\n", device.c_str(),
              odml_test::test_device().name().c_str(), static_cast<unsigned long long>(odml_test::global_seed()));
  return RUN_ALL_TESTS();
}
