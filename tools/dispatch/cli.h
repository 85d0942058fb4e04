// The command line: opendml-dispatch [--adapter cpu|cuda|cuda:N] [--feature-level 4_1] [-i N] MODEL.json
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "opendml/directml.h"

namespace opendml::tool {

struct Options {
  std::optional<std::string> adapter;  // none: "cuda" when it opens, else "cpu"
  DML_FEATURE_LEVEL feature_level;
  std::optional<uint32_t> iterations;  // -i N: each dispatch runs N times and prints its timing
  std::optional<uint64_t> max_memory;  // --max-memory; none: the machine's available memory
  std::string model;
  bool help = false;
};

// Throws UsageError (exit status 2) for an unknown option or a bad value.
Options parse_command_line(int argc, const char* const* argv);

extern const char kUsage[];

}  // namespace opendml::tool
