// The command line, with DxDispatch's option names and short forms where they mean something on
// Linux (tools/README.md lists them).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "executor.h"

namespace opendml::tool {

struct Options {
  std::optional<std::string> adapter;  // -a: part of an adapter's name; none: "cuda" when it opens, else "cpu"
  RunOptions run;                      // feature level, timing, printing, output folder
  std::optional<uint64_t> max_memory;  // --max-memory; none: the machine's available memory
  bool strict = false;                 // --strict: unknown keys are errors, not warnings
  bool ieee_values = false;            // --ieee-values: FLOAT16 and sequences rounded once, exactly
  std::filesystem::path input_folder;  // --input_path: sourcePaths (and a model not found) start here
  std::string model;
  bool help = false;
  bool show_adapters = false;      // -s
  bool show_dependencies = false;  // -S
};

// Throws UsageError (exit status 2) for an unknown option or a bad value. No arguments at all ask
// for the help, as in DxDispatch.
Options parse_command_line(int argc, const char* const* argv);

extern const char kUsage[];

}  // namespace opendml::tool
