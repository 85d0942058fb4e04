// A model file (docs/contract.md section 6, DxDispatch's format), loaded and checked but not yet run:
// everything that can be known without a device is checked here, so that a malformed model fails
// before any command runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "budget.h"
#include "elements.h"
#include "files.h"
#include "json_node.h"
#include "opendml/opendml.hpp"

namespace opendml::tool {

// Resources are capped so that a typo in a count fails with a message rather than exhausting memory.
inline constexpr uint64_t kMaxResourceBytes = uint64_t{1} << 32;

// Writes the initial values from element `first` on into `out` (a whole number of elements).
using FillElements = std::function<void(uint64_t first, std::span<std::byte> out)>;

struct Resource {
  std::string name;
  DML_TENSOR_DATA_TYPE type;  // of the initial values: print, writeFile and element offsets use it
  // DxDispatch's mixed list, which has no one data type (`type` is then UINT8, its bytes): a binding's
  // elementOffset counts in its elementSizeInBytes alone, and binds from byte 0 without one.
  bool mixed_list;
  uint64_t initial_count;  // elements of initial values: print shows as many, from byte 0
  uint64_t file_bytes;     // DxDispatch's whole buffer: what writeFile writes and a binding ends at
  uint64_t size_in_bytes;  // of the device buffer: the initial bytes or sizeInBytes, rounded up to 4
  // An array's or a file's bytes are held once; a constant or a sequence is generated as it is
  // uploaded, so that the tool never holds a second copy of a large resource.
  FillElements fill;
};

// A byte range of a resource's device buffer.
struct Region {
  size_t resource;
  uint64_t offset;
  uint64_t size;
};

// A tensor field of an operator desc, which a dispatch binds by name ("InputTensors").
struct BindPoint {
  std::string name;
  bool output;
  bool array;      // a DML_TENSOR_DESC array: bound to an array of resources
  uint32_t first;  // its tensors' first position among the operator's inputs or outputs
  uint32_t count;
  bool bound_at_initialize = false;  // by the dispatchable's "bindings" (OWNED_BY_DML inputs)
};

struct Dispatchable {
  std::string name;
  std::string place;  // "dispatchables.join"
  std::unique_ptr<opendml::OperatorDesc> desc;
  std::vector<BindPoint> bind_points;
  std::vector<bool> owned_inputs;  // inputs flagged OWNED_BY_DML, in binding order
  // Per input: the region the dispatchable's "bindings" give it for initialize (DxDispatch's way to
  // bind OWNED_BY_DML inputs); where none, the first dispatch's binding serves.
  std::vector<std::optional<Region>> initialize_inputs;
};

struct DispatchCommand {
  size_t dispatchable;
  std::vector<Region> inputs;  // in binding order (docs/contract.md section 1)
  std::vector<Region> outputs;
};
struct PrintCommand {
  size_t resource;
  bool verbose;  // one line per element: index, value and bits in hex
};
struct WriteFileCommand {
  size_t resource;
  std::filesystem::path target;  // relative to the working directory
  FileFormat format;
  std::vector<uint64_t> shape;  // of a .npy file: "dimensions", or the initial values' count
};

struct Command {
  std::string place;  // "commands[2]"
  std::string json;   // the command as written, compact: --print_commands shows it
  std::variant<DispatchCommand, PrintCommand, WriteFileCommand> action;
};

struct Model {
  std::vector<Resource> resources;
  std::vector<Dispatchable> dispatchables;
  std::vector<Command> commands;
};

// What loading a model needs besides its text: the options that say how to read it.
struct LoadContext {
  MemoryBudget budget;
  KeyPolicy keys;
  std::filesystem::path input_folder;         // sourcePaths start here; empty: the model's folder
  Rounding rounding = Rounding::kDxDispatch;  // of FLOAT16 values and sequences (--ieee-values)
};

// Reads, parses and checks a model; throws ModelError at the first problem.
Model load_model(const std::filesystem::path& path, LoadContext& context);
// The same for a model's text; `file` names it in messages, and sourcePaths are relative to `folder`.
Model load_model_text(std::string_view text, const std::string& file, const std::filesystem::path& folder,
                      LoadContext& context);

// The parts, each from its member of the model (resources.cpp, dispatchables.cpp, commands.cpp).
Resource load_resource(const std::string& name, const Node& node, const std::filesystem::path& model_folder,
                       LoadContext& context);
Dispatchable load_dispatchable(const std::string& name, const Node& node, const Model& model);
// The dispatchable's "bindings": OWNED_BY_DML inputs bound at initialize.
void load_initialize_bindings(const Node& bindings, Dispatchable& dispatchable, const Model& model);
Command load_command(const Node& node, const Model& model);

}  // namespace opendml::tool
