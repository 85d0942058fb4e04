#include "cli.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <string_view>

#include "enum_names.h"
#include "errors.h"

namespace opendml::tool {

const char kUsage[] = R"(Usage: opendml-dispatch [OPTION...] MODEL.json

Runs a DxDispatch model (resources, dispatchables, commands) with opendml. The options are
DxDispatch's where they mean something on Linux; a value follows its option (-i 5, -i5,
--dispatch_iterations=5).

  -m, --model PATH           the model (or give it as the last argument)
  -h, --help                 print this help (as does running without arguments)
  -a, --adapter TEXT         the first adapter whose name contains TEXT, any case: cpu, cuda,
                             cuda:1, H100 (default: CUDA device 0 when it opens, else cpu)
  -s, --show_adapters        list the adapters: the CPU and each CUDA device, with their memory
  -S, --show_dependencies    print the versions of opendml and of the CUDA runtime and driver
      --dml_feature_level L  the lowest DML_FEATURE_LEVEL the device must support, as DxDispatch
                             asks it of DirectML (5.0, 5_0 or DML_FEATURE_LEVEL_5_0): opendml
                             supports every level to 6.4; operators are still created at 6.4
      --feature-level L      the DML_FEATURE_LEVEL operators are created at, and validated against
                             (opendml's; default: the highest, 6.4)
      --input_path DIR       read sourcePaths (and a model not found as given) from DIR
                             (default: the model's folder)
      --output_path DIR      write writeFile's relative paths into DIR (default: the working
                             directory)
      --print_commands       print [StartCmd] and [EndCmd] lines around each command
  -i, --dispatch_iterations N  timed iterations of each dispatch (default 1; 0: none)
  -r, --dispatch_repeat N    executes per iteration; a sample is their time divided by N
  -t, --milliseconds_to_run MS  iterate until MS milliseconds have passed (overrides -i)
  -w, --warmup_samples N     samples left out of the statistics as warm-up (default 1, but
                             never the last)
  -v, --timing_verbosity V   0: the median line; 1: cold and hot statistics; 2 (or more):
                             every sample
      --exact-floats         print floats in the shortest form that reads back exactly
                             (default: six significant digits, as DxDispatch prints)
      --ieee-values          make FLOAT16 values and sequences exactly: each element rounded
                             once to the nearest, range-checked (default: as DxDispatch makes
                             them, FLOAT16 truncated, sequences accumulated in the element type)
      --strict               reject a model with a key the tool does not know (default: warn
                             about each on stderr and run it, as DxDispatch ignores them)
      --max-memory BYTES     the most memory the tool takes for the model's values and, on
                             the CPU, its buffers; a K, M or G suffix counts in KiB, MiB or
                             GiB (default: MemAvailable of /proc/meminfo)

Exit status: 0 on success, 1 when the model or a library call fails, 2 for a usage error.
)";

namespace {

uint32_t parse_count(std::string_view text, std::string_view option, uint32_t min) {
  uint32_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < min)
    throw UsageError(std::string(option), "'" + std::string(text) + "' is not a whole number from " +
                                              std::to_string(min) + " to 4294967295");
  return value;
}

uint64_t parse_bytes(std::string_view text, std::string_view option) {
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  const std::string_view suffix(end, text.data() + text.size());
  const int shift = suffix == "" ? 0 : suffix == "K" ? 10 : suffix == "M" ? 20 : suffix == "G" ? 30 : -1;
  if (error != std::errc() || shift < 0 || value > (std::numeric_limits<uint64_t>::max() >> shift))
    throw UsageError(
        std::string(option),
        "'" + std::string(text) + "' is not a byte count (a whole number, optionally followed by K, M or G)");
  return value << shift;
}

// "5.0" as DxDispatch writes it, or "5_0", "DML_FEATURE_LEVEL_5_0".
DML_FEATURE_LEVEL parse_level(std::string_view text, std::string_view option) {
  std::string name(text);
  std::replace(name.begin(), name.end(), '.', '_');
  if (const std::optional<DML_FEATURE_LEVEL> level = parse_feature_level(name)) return *level;
  throw UsageError(std::string(option), "'" + std::string(text) + "' is not a feature level (" +
                                            comma_list(feature_levels(), feature_level_name) + ")");
}

// The options that take a value, by long name, and their short forms.
struct ValueOption {
  std::string_view long_name;
  char short_name;
};
constexpr ValueOption kValueOptions[] = {
    {"--model", 'm'},
    {"--adapter", 'a'},
    {"--dispatch_iterations", 'i'},
    {"--dispatch_repeat", 'r'},
    {"--milliseconds_to_run", 't'},
    {"--warmup_samples", 'w'},
    {"--timing_verbosity", 'v'},
    {"--dml_feature_level", 0},
    {"--feature-level", 0},
    {"--input_path", 0},
    {"--output_path", 0},
    {"--max-memory", 0},
};

}  // namespace

Options parse_command_line(int argc, const char* const* argv) {
  Options options;
  options.run.feature_level = highest_feature_level();
  options.help = argc <= 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.empty() || arg[0] != '-' || arg == "-") {
      if (!options.model.empty())
        throw UsageError("command line",
                         "more than one model given ('" + options.model + "' and '" + std::string(arg) + "')");
      options.model = arg;
      continue;
    }
    // The option's long name, and its value: --option=value, --option value, -o value or -ovalue.
    std::string_view option = arg, value;
    bool has_value = false;
    if (arg.starts_with("--")) {
      if (const size_t equals = arg.find('='); equals != std::string_view::npos) {
        option = arg.substr(0, equals);
        value = arg.substr(equals + 1);
        has_value = true;
      }
    } else {
      for (const ValueOption& o : kValueOptions)
        if (o.short_name != 0 && arg[1] == o.short_name) option = o.long_name;
      if (option != arg && arg.size() > 2) {
        value = arg.substr(2);
        has_value = true;
      }
    }
    const bool takes_value = std::any_of(std::begin(kValueOptions), std::end(kValueOptions),
                                         [&](const ValueOption& o) { return o.long_name == option; });
    if (takes_value && !has_value) {
      if (i + 1 >= argc) throw UsageError(std::string(arg), "needs a value");
      value = argv[++i];
    } else if (!takes_value && has_value) {
      throw UsageError(std::string(option), "takes no value");
    }
    const std::string place(arg.starts_with("--") ? option : arg.substr(0, 2));
    if (option == "-h" || option == "--help") {
      options.help = true;
    } else if (option == "-s" || option == "--show_adapters") {
      options.show_adapters = true;
    } else if (option == "-S" || option == "--show_dependencies") {
      options.show_dependencies = true;
    } else if (option == "--print_commands") {
      options.run.print_commands = true;
    } else if (option == "--exact-floats") {
      options.run.exact_floats = true;
    } else if (option == "--ieee-values") {
      options.ieee_values = true;
    } else if (option == "--strict") {
      options.strict = true;
    } else if (option == "--model") {
      if (!options.model.empty())
        throw UsageError(place, "more than one model given ('" + options.model + "' and '" + std::string(value) + "')");
      options.model = value;
    } else if (option == "--adapter") {
      options.adapter = value;
    } else if (option == "--dml_feature_level") {
      parse_level(value, place);  // every level opendml knows is one its devices support
    } else if (option == "--feature-level") {
      options.run.feature_level = parse_level(value, place);
    } else if (option == "--dispatch_iterations") {
      options.run.iterations = parse_count(value, place, 0);  // 0: no dispatch at all, as in DxDispatch
    } else if (option == "--dispatch_repeat") {
      options.run.repeat = parse_count(value, place, 1);
    } else if (option == "--milliseconds_to_run") {
      options.run.milliseconds_to_run = parse_count(value, place, 0);
    } else if (option == "--warmup_samples") {
      options.run.warmup = parse_count(value, place, 0);
    } else if (option == "--timing_verbosity") {
      // DxDispatch takes any count and prints every sample from 2 on.
      options.run.verbosity = std::min<uint32_t>(parse_count(value, place, 0), 2);
    } else if (option == "--input_path") {
      options.input_folder = value;
    } else if (option == "--output_path") {
      options.run.output_folder = value;
    } else if (option == "--max-memory") {
      options.max_memory = parse_bytes(value, place);
    } else {
      throw UsageError(std::string(option), "unknown option (see --help)");
    }
  }
  if (options.model.empty() && !options.help && !options.show_adapters && !options.show_dependencies)
    throw UsageError("command line", "no model given; usage: opendml-dispatch [OPTION...] MODEL.json (see --help)");
  return options;
}

}  // namespace opendml::tool
