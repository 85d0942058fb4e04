#include "model.h"

#include <string_view>

#include "json_node.h"

namespace opendml::tool {

Model load_model(const std::filesystem::path& path, LoadContext& context) {
  const std::string file = path.string();
  const std::vector<std::byte> bytes = read_file(path, kMaxResourceBytes, file, context.budget, "the model file");
  return load_model_text(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), file,
                         context.input_folder.empty() ? path.parent_path() : context.input_folder, context);
}

Model load_model_text(std::string_view text, const std::string& file, const std::filesystem::path& folder,
                      LoadContext& context) {
  const Json json = parse_json(text, file, context.budget);
  const Node root = Node::root(json, file, context.keys);
  // "$schema" is DxDispatch's pointer to its JSON schema, which DxDispatch never reads: a value of
  // any type is allowed and ignored (tools/README.md, "The supported format").
  root.expect_object({"$schema", "resources", "dispatchables", "commands"});

  Model model;
  for (const auto& [name, node] : root.at("resources").members())
    model.resources.push_back(load_resource(name, node, folder, context));
  for (const auto& [name, node] : root.at("dispatchables").members())
    model.dispatchables.push_back(load_dispatchable(name, node, model));
  for (const Node& node : root.at("commands").elements()) model.commands.push_back(load_command(node, model));
  return model;
}

}  // namespace opendml::tool
