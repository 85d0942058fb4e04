#include "cli.h"

#include <charconv>
#include <string_view>

#include "core/feature_level.h"
#include "errors.h"

namespace opendml::tool {

using namespace opendml::internal;  // the enum tables shared with the library

const char kUsage[] = R"(Usage: opendml-dispatch [OPTION...] MODEL.json

Runs a DxDispatch-style JSON model (resources, dispatchables, commands) with opendml.

  -h, --help               print this help
  -a, --adapter NAME       cpu, cuda or cuda:N (default: cuda when it opens, else cpu)
      --feature-level L    the DML_FEATURE_LEVEL operators are created at, as 4_1 or
                           DML_FEATURE_LEVEL_4_1 (default: the highest, 6_4)
  -i, --dispatch_iterations N
                           run each dispatch N times and print its median time per
                           iteration, execute plus synchronize (default: once, untimed)

Exit status: 0 on success, 1 when the model or a library call fails, 2 for a usage error.
)";

namespace {

std::string_view option_value(int argc, const char* const* argv, int& i, std::string_view option,
                              std::string_view inline_value, bool has_inline) {
  if (has_inline) return inline_value;
  if (i + 1 >= argc) throw UsageError(std::string(option), "needs a value");
  return argv[++i];
}

uint32_t parse_iterations(std::string_view text, std::string_view option) {
  uint32_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value == 0)
    throw UsageError(std::string(option), "'" + std::string(text) + "' is not a whole number from 1 to 4294967295");
  return value;
}

DML_FEATURE_LEVEL parse_level(std::string_view text, std::string_view option) {
  if (const std::optional<DML_FEATURE_LEVEL> level = parse_feature_level(text)) return *level;
  throw UsageError(std::string(option), "'" + std::string(text) + "' is not a feature level (" +
                                            comma_list(kFeatureLevels, feature_level_name) + ")");
}

}  // namespace

Options parse_command_line(int argc, const char* const* argv) {
  Options options;
  options.feature_level = kHighestFeatureLevel;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.empty() || arg[0] != '-' || arg == "-") {
      if (!options.model.empty())
        throw UsageError("command line",
                         "more than one model given ('" + options.model + "' and '" + std::string(arg) + "')");
      options.model = arg;
      continue;
    }
    // --option=value or --option value
    const size_t equals = arg.starts_with("--") ? arg.find('=') : std::string_view::npos;
    const std::string_view option = arg.substr(0, equals);
    const std::string_view inline_value = equals == std::string_view::npos ? "" : arg.substr(equals + 1);
    const bool has_inline = equals != std::string_view::npos;
    if (option == "-h" || option == "--help") {
      options.help = true;
    } else if (option == "-a" || option == "--adapter") {
      options.adapter = option_value(argc, argv, i, option, inline_value, has_inline);
    } else if (option == "--feature-level") {
      options.feature_level = parse_level(option_value(argc, argv, i, option, inline_value, has_inline), option);
    } else if (option == "-i" || option == "--dispatch_iterations") {
      options.iterations = parse_iterations(option_value(argc, argv, i, option, inline_value, has_inline), option);
    } else {
      throw UsageError(std::string(option), "unknown option (see --help)");
    }
  }
  if (options.model.empty() && !options.help)
    throw UsageError("command line", "no model given; usage: opendml-dispatch [OPTION...] MODEL.json (see --help)");
  return options;
}

}  // namespace opendml::tool
