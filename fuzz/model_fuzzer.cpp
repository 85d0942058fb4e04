// model_fuzzer: opendml-dispatch's model loader and executor (tools/dispatch) on the CPU device.
// An input is a model file's text. It is loaded with a 64 MiB memory budget (so that no input can
// exhaust memory: the budget is the tool's own guard, tools/README.md) and, when it loads, run with
// every command but writeFile, which would write files wherever the input names, and prints of
// more than 2^22 elements (kMaxPrinted).
//
// The input's first line may give command-line options, in a comment that the tool itself reads as
// blank: "// opendml-dispatch --ieee-values --strict --feature-level 3_0 --exact-floats -v 2 -i 3"
// (parse_command_line reads them, so that --ieee-values' sequences and FLOAT16 rounding, strict keys,
// the lower feature levels and the printing options are fuzzed too). Timing options are capped
// (iterations and repeats at 4, milliseconds_to_run at 1) and --max-memory at the 64 MiB budget;
// the paths and the adapter are ignored. Options the command line refuses make the input uninteresting.
//
// The fuzzer fails (libFuzzer saves the input) on a crash, a sanitizer report, a hang, or any
// exception but the tool's ModelError: main() reports anything else as an internal error.
// sourcePaths are relative to models/, so that the seeds from there find their data files.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <ostream>
#include <sstream>
#include <streambuf>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "cli.h"
#include "errors.h"
#include "executor.h"
#include "model.h"

namespace {

// Discards what print writes, after formatting it.
class NullBuffer : public std::streambuf {
 protected:
  int overflow(int c) override { return c; }
  std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
};

constexpr std::string_view kOptionsLine = "// opendml-dispatch";

// The options of the input's first line, when it gives any; throws UsageError for bad ones.
opendml::tool::Options options_of(std::string_view text) {
  std::vector<std::string> words{"opendml-dispatch"};
  if (text.starts_with(kOptionsLine)) {
    std::istringstream line(std::string(text.substr(kOptionsLine.size(), text.find('\n') - kOptionsLine.size())));
    for (std::string word; line >> word;) words.push_back(word);
  }
  words.push_back("fuzz.json");
  std::vector<const char*> argv;
  for (const std::string& word : words) argv.push_back(word.c_str());
  return opendml::tool::parse_command_line(static_cast<int>(argv.size()), argv.data());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace opendml::tool;
  static const opendml::Device device("cpu");
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Options options;
  try {
    options = options_of(text);
  } catch (const UsageError&) {
    return 0;  // the command line refuses them
  }
  RunOptions run = options.run;
  run.iterations = std::min<uint32_t>(run.iterations, 4);
  run.repeat = std::min<uint32_t>(run.repeat, 4);
  if (run.milliseconds_to_run) run.milliseconds_to_run = std::min<uint32_t>(*run.milliseconds_to_run, 1);
  run.output_folder.clear();
  try {
    // Unknown keys are ignored without a warning (nullptr), as DxDispatch ignores them.
    const uint64_t budget = std::min<uint64_t>(options.max_memory.value_or(UINT64_MAX), uint64_t{64} << 20);
    LoadContext context{
        {budget, true}, {options.strict, nullptr}, {}, options.ieee_values ? Rounding::kIeee : Rounding::kDxDispatch};
    static const std::filesystem::path models = std::filesystem::path(__FILE__).parent_path().parent_path() / "models";
    Model model = load_model_text(text, "fuzz.json", models, context);
    // No writeFile; and no print of more than kMaxPrinted elements, whose text takes linear time (60
    // million UINT8 elements printed verbose, within the budget, took 80 s under the sanitizers, past
    // scripts/fuzz.sh's -timeout).
    constexpr uint64_t kMaxPrinted = uint64_t{1} << 22;
    std::erase_if(model.commands, [&](const Command& command) {
      const auto* print = std::get_if<PrintCommand>(&command.action);
      return std::holds_alternative<WriteFileCommand>(command.action) ||
             (print != nullptr && model.resources[print->resource].initial_count > kMaxPrinted);
    });
    Executor executor(model, device, run, context.budget);
    NullBuffer discard;
    std::ostream out(&discard);
    executor.run(out);
  } catch (const ModelError&) {
    // A rejected model: the tool's designed outcome.
  }
  return 0;
}
