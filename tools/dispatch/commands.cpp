// commands[i]: dispatch (with its bindings), print, writeFile.
#include <algorithm>

#include "elements.h"
#include "json_node.h"
#include "model.h"

namespace opendml::tool {
namespace {

// The position of the resource or dispatchable that `node` names in `items`.
template <class Named>
size_t find_named(const Node& node, const std::vector<Named>& items, const char* section) {
  const std::string name = node.string();
  const auto it = std::find_if(items.begin(), items.end(), [&](const Named& item) { return item.name == name; });
  if (it == items.end()) node.fail("'" + name + "' is not defined in " + section);
  return static_cast<size_t>(it - items.begin());
}

// A resource name (its whole buffer), or { "name", "elementOffset"?, "elementCount"? } counted in
// elements of the resource's initial data type.
Region load_region(const Node& node, const Model& model) {
  if (node.json().is_string()) {
    const size_t resource = find_named(node, model.resources, "resources");
    return {resource, 0, model.resources[resource].size_in_bytes};
  }
  if (!node.json().is_object())
    node.fail("must be a resource name or { \"name\", \"elementOffset\", \"elementCount\" }, not " +
              json_type_name(node.json()));
  node.expect_object({"name", "elementOffset", "elementCount"});
  const Resource& resource = model.resources[find_named(node.at("name"), model.resources, "resources")];
  const uint64_t size = element_bytes(resource.type);
  const uint64_t capacity = resource.size_in_bytes / size;
  const std::string room = "resource '" + resource.name + "' has room for " + std::to_string(capacity) + " " +
                           std::string(data_type_name(resource.type)) + " elements";
  const std::optional<Node> offset_node = node.find("elementOffset");
  const uint64_t offset = offset_node ? offset_node->uint64() : 0;
  if (offset >= capacity) offset_node->fail("is " + std::to_string(offset) + " but " + room);
  uint64_t bytes = resource.size_in_bytes - offset * size;
  if (const std::optional<Node> count_node = node.find("elementCount")) {
    const uint64_t count = count_node->uint64();
    if (count > capacity - offset)
      count_node->fail("is " + std::to_string(count) + " from elementOffset " + std::to_string(offset) + " but " +
                       room);
    bytes = count * size;
  }
  return {static_cast<size_t>(&resource - model.resources.data()), offset * size, bytes};
}

DispatchCommand load_dispatch(const Node& node, const Model& model) {
  const size_t index = find_named(node.at("dispatchable"), model.dispatchables, "dispatchables");
  const Dispatchable& op = model.dispatchables[index];
  const Node bindings = node.at("bindings");
  std::vector<std::string_view> names;
  for (const BindPoint& point : op.bind_points) names.push_back(point.name);
  bindings.expect_object(names);

  DispatchCommand dispatch{index, {}, {}};
  for (const BindPoint& point : op.bind_points) {
    const Node value = bindings.at(point.name);
    const std::vector<Node> items = value.json().is_array() ? value.elements() : std::vector<Node>{value};
    if (items.size() != point.count)
      value.fail("binds " + std::to_string(items.size()) + " resources but " + point.name + " has " +
                 std::to_string(point.count) + " tensors");
    std::vector<Region>& regions = point.output ? dispatch.outputs : dispatch.inputs;
    regions.resize(std::max<size_t>(regions.size(), point.first + point.count));
    for (uint32_t i = 0; i < point.count; ++i) regions[point.first + i] = load_region(items[i], model);
  }
  return dispatch;
}

}  // namespace

Command load_command(const Node& node, const Model& model) {
  const Node type = node.at("type");
  const std::string kind = type.string();
  if (kind == "dispatch") {
    node.expect_object({"type", "dispatchable", "bindings"});
    return {node.place(), load_dispatch(node, model)};
  }
  if (kind == "print") {
    node.expect_object({"type", "resource"});
    return {node.place(), PrintCommand{find_named(node.at("resource"), model.resources, "resources")}};
  }
  if (kind == "writeFile") {
    node.expect_object({"type", "resource", "targetPath"});
    const Node target = node.at("targetPath");
    const std::filesystem::path path = target.string();
    return {node.place(), WriteFileCommand{find_named(node.at("resource"), model.resources, "resources"), path,
                                           file_format(path, target.place())}};
  }
  type.fail("'" + kind + "' is not a command type (dispatch, print, writeFile)");
}

}  // namespace opendml::tool
