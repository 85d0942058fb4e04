#include "model.h"

#include <fstream>
#include <limits>
#include <string_view>

#include "errors.h"

#include "json_node.h"

namespace opendml::tool {

void MemoryBudget::take(uint64_t bytes, bool device, const std::string& place, const std::string& what) {
  if (device && !device_in_host_) return;
  if (bytes <= limit_ - used_) {
    used_ += bytes;
    return;
  }
  throw ModelError(place, what + " needs " + std::to_string(bytes) + " bytes, but only " +
                              std::to_string(limit_ - used_) + " of the memory budget of " + std::to_string(limit_) +
                              " bytes are left (--max-memory; the default is the machine's available memory)");
}

uint64_t available_memory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  while (meminfo >> key >> kib) {
    if (key == "MemAvailable:") return kib * 1024;
    meminfo.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return std::numeric_limits<uint64_t>::max();
}

Model load_model(const std::filesystem::path& path, MemoryBudget& budget) {
  const std::string file = path.string();
  std::error_code error;  // read_file reports a missing file
  if (const uint64_t size = std::filesystem::file_size(path, error); !error) budget.take(size, false, file, "the model file");
  const std::vector<std::byte> bytes = read_file(path, kMaxResourceBytes, file);
  const Json json = parse_json(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), file);
  const Node root = Node::root(json, file);
  // "$schema" is DxDispatch's pointer to its JSON schema: allowed, and otherwise ignored.
  root.expect_object({"$schema", "resources", "dispatchables", "commands"});
  if (const std::optional<Node> schema = root.find("$schema")) schema->string();

  Model model;
  for (const auto& [name, node] : root.at("resources").members())
    model.resources.push_back(load_resource(name, node, path.parent_path(), budget));
  for (const auto& [name, node] : root.at("dispatchables").members())
    model.dispatchables.push_back(load_dispatchable(name, node));
  for (const Node& node : root.at("commands").elements()) model.commands.push_back(load_command(node, model));
  return model;
}

}  // namespace opendml::tool
