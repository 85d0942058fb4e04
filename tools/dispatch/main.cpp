// opendml-dispatch: runs a DxDispatch-style JSON model with opendml (tools/README.md).
// Every failure ends in exactly one line on stderr, `opendml-dispatch: error: <place>: <why>`.
#include <cstdio>
#include <iostream>
#include <new>
#include <string>

#include "cli.h"
#include "errors.h"
#include "executor.h"
#include "model.h"

namespace {

using opendml::tool::ModelError;
using opendml::tool::UsageError;

// One line, whatever the message holds: a JSON key or a file name may contain a newline or a NUL,
// which print escaped as in JSON (\n, \u0000) so that nothing is hidden or cut.
int report(const std::string& place, const std::string& why, int status) {
  std::string line = "opendml-dispatch: error: ";
  for (const char c : (place.empty() ? "" : place + ": ") + why) {
    if (c == '\n') {
      line += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
      line += escaped;
    } else {
      line += c;
    }
  }
  std::cout.flush();
  std::cerr << line << std::endl;
  return status;
}

// The adapter asked for, or "cuda" when it opens and "cpu" when it does not. A name the library
// does not know is a usage error; one it knows but cannot open (no such GPU) is not.
opendml::Device open_adapter(const std::optional<std::string>& adapter) {
  if (!adapter) {
    try {
      return opendml::Device("cuda");
    } catch (const opendml::Error&) {
      return opendml::tool::at_place("--adapter", [] { return opendml::Device("cpu"); });
    }
  }
  try {
    return opendml::Device(*adapter);
  } catch (const opendml::Error& e) {
    const std::string why = "cannot open '" + *adapter + "': " + e.what();
    if (e.status() == ODML_STATUS_INVALID_ARGUMENT) throw UsageError("--adapter", why);
    throw ModelError("--adapter", why);
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const opendml::tool::Options options = opendml::tool::parse_command_line(argc, argv);
    if (options.help) {
      std::cout << opendml::tool::kUsage;
      return 0;
    }
    // The device first, so that the memory budget knows whether its buffers take host memory;
    // its line follows the model's checks, which print nothing but an error.
    const opendml::Device device = open_adapter(options.adapter);
    opendml::tool::MemoryBudget budget(options.max_memory.value_or(opendml::tool::available_memory()),
                                       device.name().starts_with("cpu"));
    const opendml::tool::Model model = opendml::tool::load_model(options.model, budget);
    std::cout << "Running on '" << device.name() << "'\n";
    opendml::tool::Executor executor(model, device, options.feature_level, options.iterations);
    executor.run(std::cout);
    std::cout.flush();
    return 0;
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
