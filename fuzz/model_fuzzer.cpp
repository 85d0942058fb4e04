// model_fuzzer: opendml-dispatch's model loader and executor (tools/dispatch) on the CPU device.
// An input is a model file's text. It is loaded with a 64 MiB memory budget (so that no input can
// exhaust memory: the budget is the tool's own guard, tools/README.md) and, when it loads, run with
// every command but writeFile, which would write files wherever the input names.
//
// The fuzzer fails (libFuzzer saves the input) on a crash, a sanitizer report, a hang, or any
// exception but the tool's ModelError: main() reports anything else as an internal error.
// sourcePaths are relative to models/, so that the seeds from there find their data files.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <ostream>
#include <streambuf>
#include <string_view>
#include <variant>

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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace opendml::tool;
  static const opendml::Device device("cpu");
  try {
    // Unknown keys are ignored without a warning (nullptr), as DxDispatch ignores them.
    LoadContext context{{uint64_t{64} << 20, true}, {false, nullptr}};
    static const std::filesystem::path models = std::filesystem::path(__FILE__).parent_path().parent_path() / "models";
    Model model =
        load_model_text(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json", models, context);
    std::erase_if(model.commands,
                  [](const Command& command) { return std::holds_alternative<WriteFileCommand>(command.action); });
    Executor executor(model, device, RunOptions{}, context.budget);
    NullBuffer discard;
    std::ostream out(&discard);
    executor.run(out);
  } catch (const ModelError&) {
    // A rejected model: the tool's designed outcome.
  }
  return 0;
}
