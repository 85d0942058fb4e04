// model_fuzzer: opendml-dispatch's model loader and executor (tools/dispatch) on the CPU device.
// An input is a model file's text. It is loaded with a 64 MiB memory budget (so that no input can
// exhaust memory: the budget is the tool's own guard, tools/README.md) and, when it loads, run with
// every command but prints of more than 2^22 elements (kMaxPrinted) and writeFile of more than
// kMaxWritten bytes. writeFile writes into a scratch folder of the fuzzer's own whatever the input
// names (confined): "out" plus the target's extension, in the folder itself, in a subfolder that
// the tool makes (a target in a folder), or below a file, where opening fails (an absolute
// target). After a run that ends without a ModelError, each file written must be what writeFile
// promises (contract section 6): a raw file the resource's bytes long, a .npy file that the tool's
// reader reads back as the resource's type and bytes.
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
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
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
#include "npy.h"

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

// The scratch folder writeFile writes into: made once per process (each of libFuzzer's jobs has its
// own), emptied after every input that wrote, removed at exit. It holds the file `blocker`, below
// which no file can be opened.
namespace fs = std::filesystem;
const fs::path kBlocker = "blocker";
const fs::path& scratch() {
  static const fs::path* const folder = [] {
    std::string name = (fs::temp_directory_path() / "model_fuzzer.XXXXXX").string();
    if (mkdtemp(name.data()) == nullptr) std::abort();
    std::ofstream(fs::path(name) / kBlocker) << "a file, not a folder";
    return new fs::path(name);  // never destroyed: the exit handler below still needs it
  }();
  static const bool removed_at_exit = std::atexit([] {
                                        std::error_code ignored;
                                        fs::remove_all(*folder, ignored);
                                      }) == 0;
  (void)removed_at_exit;
  return *folder;
}

// Everything the last input wrote.
void empty_scratch() {
  for (const fs::directory_entry& entry : fs::directory_iterator(scratch()))
    if (entry.path().filename() != kBlocker) fs::remove_all(entry.path());
}

// Where a writeFile of `target` writes, relative to scratch(): never outside it.
fs::path confined(const fs::path& target) {
  const fs::path name = "out" + target.extension().string().substr(0, 16);
  if (target.is_absolute()) return kBlocker / name;
  return target.has_parent_path() ? "folder" / name : name;
}

// The files a run wrote, checked against the resources: the last writeFile to each path counts.
void check_written(const opendml::tool::Model& model) {
  using namespace opendml::tool;
  std::map<fs::path, const WriteFileCommand*> last;
  for (const Command& command : model.commands)
    if (const auto* write = std::get_if<WriteFileCommand>(&command.action)) last[write->target] = write;
  for (const auto& [target, write] : last) {
    const Resource& r = model.resources[write->resource];
    std::ifstream file(scratch() / target, std::ios::binary);
    if (!file) {
      std::fprintf(stderr, "model_fuzzer: writeFile of '%s' left no file %s\n", r.name.c_str(), target.c_str());
      std::abort();
    }
    std::vector<std::byte> bytes;
    for (std::istreambuf_iterator<char> it(file), end; it != end; ++it) bytes.push_back(static_cast<std::byte>(*it));
    bool ok = bytes.size() == r.file_bytes;
    if (write->format == FileFormat::kNpy) {
      try {
        const NpyArray array = parse_npy(bytes, target.string(), "model_fuzzer");
        ok = array.type == r.type && array.data.size() == r.file_bytes;
      } catch (const ModelError& e) {
        std::fprintf(stderr, "model_fuzzer: the tool's reader refuses the .npy file it wrote: %s\n", e.what());
        std::abort();
      }
    }
    if (!ok) {
      std::fprintf(stderr, "model_fuzzer: %s holds %zu bytes, not resource '%s' (%llu bytes)\n", target.c_str(),
                   bytes.size(), r.name.c_str(), static_cast<unsigned long long>(r.file_bytes));
      std::abort();
    }
  }
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
  run.output_folder = scratch();
  bool writes = false;
  try {
    // Unknown keys are ignored without a warning (nullptr), as DxDispatch ignores them.
    const uint64_t budget = std::min<uint64_t>(options.max_memory.value_or(UINT64_MAX), uint64_t{64} << 20);
    LoadContext context{
        {budget, true}, {options.strict, nullptr}, {}, options.ieee_values ? Rounding::kIeee : Rounding::kDxDispatch};
    static const std::filesystem::path models = std::filesystem::path(__FILE__).parent_path().parent_path() / "models";
    Model model = load_model_text(text, "fuzz.json", models, context);
    // No print of more than kMaxPrinted elements, whose text takes linear time (60 million UINT8
    // elements printed verbose, within the budget, took 80 s under the sanitizers, past
    // scripts/fuzz.sh's -timeout); no writeFile of more than kMaxWritten bytes, which would write
    // up to the 64 MiB budget to disk each time; the others confined to scratch().
    constexpr uint64_t kMaxPrinted = uint64_t{1} << 22, kMaxWritten = uint64_t{1} << 20;
    std::erase_if(model.commands, [&](const Command& command) {
      const auto* print = std::get_if<PrintCommand>(&command.action);
      const auto* write = std::get_if<WriteFileCommand>(&command.action);
      return (print != nullptr && model.resources[print->resource].initial_count > kMaxPrinted) ||
             (write != nullptr && model.resources[write->resource].file_bytes > kMaxWritten);
    });
    for (Command& command : model.commands)
      if (auto* write = std::get_if<WriteFileCommand>(&command.action)) {
        write->target = confined(write->target);
        writes = true;
      }
    Executor executor(model, device, run, context.budget);
    NullBuffer discard;
    std::ostream out(&discard);
    executor.run(out);
    check_written(model);
  } catch (const ModelError&) {
    // A rejected model: the tool's designed outcome.
  }
  if (writes) empty_scratch();
  return 0;
}
