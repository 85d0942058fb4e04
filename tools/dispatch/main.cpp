// opendml-dispatch: runs a DxDispatch model with opendml (tools/README.md).
// Every failure ends in exactly one line on stderr, `opendml-dispatch: error: <place>: <why>`.
#include <iostream>
#include <new>
#include <string>

#include "cli.h"
#include "errors.h"
#include "executor.h"
#include "model.h"
#include "system.h"

namespace {

using opendml::tool::ModelError;
using opendml::tool::UsageError;

int report(const std::string& place, const std::string& why, int status) {
  const std::string line = opendml::tool::message_line("error", place, why);
  std::cout.flush();
  std::cerr << line << std::endl;
  return status;
}

// The adapter asked for (-a: the first whose name contains the text), or "cuda" when it opens and
// "cpu" when it does not. Text that matches no adapter goes to the library as a name: one it does
// not know is a usage error; one it knows but cannot open (no such GPU) is not.
opendml::Device open_adapter(const std::optional<std::string>& adapter) {
  if (!adapter) {
    try {
      return opendml::Device("cuda");
    } catch (const opendml::Error&) {
      return opendml::tool::at_place("--adapter", [] { return opendml::Device("cpu"); });
    }
  }
  const std::string name = opendml::tool::match_adapter(*adapter).value_or(*adapter);
  try {
    return opendml::Device(name);
  } catch (const opendml::Error& e) {
    const std::string why = "cannot open '" + *adapter + "': " + e.what();
    if (e.status() == ODML_STATUS_INVALID_ARGUMENT) throw UsageError("--adapter", why);
    throw ModelError("--adapter", why);
  }
}

// The model as given, or under --input_path when it is not found as given (as DxDispatch looks).
std::filesystem::path find_model(const opendml::tool::Options& options) {
  std::filesystem::path path = options.model;
  std::error_code unreadable;  // a name too long, a loop of links: not found as given; reading says why
  if (!options.input_folder.empty() && !std::filesystem::exists(path, unreadable) && !path.is_absolute())
    path = options.input_folder / path;
  if (path.extension() == ".onnx")
    throw ModelError(path.string(),
                     "ONNX models run in DxDispatch through ONNX Runtime, which opendml does not "
                     "have; opendml-dispatch runs JSON models of DirectML operators");
  return path;
}

}  // namespace

// 0 where everything printed reached standard output; a failed write (a full disk, a closed
// stdout) is an error, since the results went nowhere.
int printed() {
  std::cout.flush();
  return std::cout ? 0 : report("", "writing the results to standard output failed", 1);
}

int main(int argc, char** argv) {
  try {
    const opendml::tool::Options options = opendml::tool::parse_command_line(argc, argv);
    if (options.help) {
      std::cout << opendml::tool::kUsage;
      return printed();
    }
    if (options.show_dependencies) std::cout << opendml::tool::dependency_versions();
    if (options.show_adapters)
      for (const std::string& id : opendml::tool::adapter_ids())
        std::cout << opendml::tool::adapter_line(id, opendml::Device(id)) << "\n";
    if (options.model.empty()) return printed();

    const std::filesystem::path model_path = find_model(options);
    // The device first, so that the memory budget knows whether its buffers take host memory;
    // its line follows the model's checks, which print nothing but an error.
    const opendml::Device device = open_adapter(options.adapter);
    opendml::tool::LoadContext context{
        {options.max_memory.value_or(opendml::tool::available_memory()), device.name().starts_with("cpu")},
        {options.strict, &std::cerr},
        options.input_folder,
        options.ieee_values ? opendml::tool::Rounding::kIeee : opendml::tool::Rounding::kDxDispatch};
    const opendml::tool::Model model = opendml::tool::load_model(model_path, context);
    std::cout << "Running on '" << device.name() << "'\n";
    opendml::tool::Executor executor(model, device, options.run, context.budget);
    executor.run(std::cout);
    return printed();
  } catch (const UsageError& e) {
    return report(e.place(), e.why(), 2);
  } catch (const ModelError& e) {
    return report(e.place(), e.why(), 1);
  } catch (const std::bad_alloc&) {
    return report("", "out of memory", 1);
  } catch (const std::exception& e) {
    return report("", std::string("internal error: ") + e.what(), 1);
  }
}
