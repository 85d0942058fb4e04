#include "support/test_env.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <mutex>

namespace odml_test {
namespace {

std::unique_ptr<opendml::Device> g_device;
std::string g_device_name;

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

std::string current_test_name() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return info ? std::string(info->test_suite_name()) + "." + info->name() : std::string("(no test)");
}

}  // namespace

void set_test_device(std::unique_ptr<opendml::Device> device, std::string name) {
  g_device = std::move(device);
  g_device_name = std::move(name);
}

const opendml::Device& test_device() {
  if (!g_device) throw std::logic_error("the test device was not opened (main() did not run)");
  return *g_device;
}

const std::string& test_device_name() { return g_device_name; }

const opendml::Device& cpu_device() {
  static const opendml::Device device("cpu");
  return device;
}

uint64_t global_seed() {
  static const uint64_t seed = [] {
    const char* text = std::getenv("OPENDML_TEST_SEED");
    return text && *text ? std::strtoull(text, nullptr, 0) : uint64_t{20240611};
  }();
  return seed;
}

uint64_t next_seed() {
  static std::mutex mutex;
  static std::map<std::string, uint64_t> drawn;
  const std::string name = current_test_name();
  std::lock_guard<std::mutex> lock(mutex);
  uint64_t h = 1469598103934665603ull;  // FNV-1a of the test name
  for (char c : name) h = (h ^ static_cast<uint8_t>(c)) * 1099511628211ull;
  return splitmix64(global_seed() ^ splitmix64(h + drawn[name]++));
}

ScopedEnv::ScopedEnv(std::string name, const char* value) : name_(std::move(name)) {
  if (const char* old = std::getenv(name_.c_str())) saved_ = old;
  if (value != nullptr) {
    setenv(name_.c_str(), value, 1);
  } else {
    unsetenv(name_.c_str());
  }
}

ScopedEnv::~ScopedEnv() {
  if (saved_) {
    setenv(name_.c_str(), saved_->c_str(), 1);
  } else {
    unsetenv(name_.c_str());
  }
}

std::string seed_note(uint64_t seed) {
  return "seed " + std::to_string(seed) + " (replay: OPENDML_TEST_SEED=" + std::to_string(global_seed()) +
         " opendml_tests --device=" + g_device_name + " --gtest_filter=" + current_test_name() + ")";
}

}  // namespace odml_test
