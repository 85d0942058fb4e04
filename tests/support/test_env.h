// What every test shares: the device the Device* suites run on (chosen with --device=NAME), the
// CPU device the device-independent suites use, and the random seeds.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "opendml/opendml.hpp"

namespace odml_test {

// Set once by main() before the tests run.
void set_test_device(std::unique_ptr<opendml::Device> device, std::string name);
// The device of the Device* suites.
const opendml::Device& test_device();
// Its name as given on the command line ("cpu", "cuda", "cuda:1").
const std::string& test_device_name();
// A CPU device for the suites that only validate, whatever --device says.
const opendml::Device& cpu_device();

// OPENDML_TEST_SEED, or a fixed default so that CI runs are reproducible.
uint64_t global_seed();
// A seed for the current test: a function of the global seed, the test's full name and how many
// seeds the test has drawn, so that one test replays alone exactly as in a full run.
uint64_t next_seed();
// "seed S (replay: OPENDML_TEST_SEED=G ./opendml_tests --gtest_filter=Suite.Name)", for messages.
std::string seed_note(uint64_t seed);

using Rng = std::mt19937_64;

// Sets an environment variable (value null: unsets it) for the object's lifetime, then puts back
// what was there. For the library's switches read at each call (OPENDML_IMPLEMENTATION,
// OPENDML_CPU_STREAM_BYTES).
class ScopedEnv {
 public:
  ScopedEnv(std::string name, const char* value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> saved_;
};

}  // namespace odml_test
