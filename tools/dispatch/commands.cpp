// commands[i]: dispatch (with its bindings), print, writeFile; and the bindings a dispatchable
// gives its OWNED_BY_DML inputs, which are read the same way.
#include <algorithm>

#include "elements.h"
#include "json_node.h"
#include "model.h"
#include "model_enums.h"
#include "npy.h"

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

// DxDispatch's binding keys for HLSL and ONNX dispatchables: a view's DXGI format, a counter buffer,
// a tensor shape. A DirectML operator's tensor desc says all of that, so they are read and ignored.
constexpr std::string_view kBindingFields[] = {"name",   "elementOffset", "elementCount",       "elementSizeInBytes",
                                               "format", "counter",       "counterOffsetBytes", "shape"};

// A resource name (its whole buffer), or { "name", "elementOffset"?, "elementCount"?,
// "elementSizeInBytes"? } counted in elements of elementSizeInBytes bytes, by default the size of an
// element of the resource's initial data type (as in DxDispatch; a mixed list has none, so there
// the default is 0 bytes and an elementOffset alone binds from byte 0). As DxDispatch binds a DirectML
// operator's buffer, the region runs from the offset to the end of DxDispatch's buffer (file_bytes:
// a sizeInBytes as given, not rounded up to 4 as the device buffer is): elementCount is read and
// otherwise left alone (DxDispatch uses it for HLSL views and serialized graphs only).
Region load_region(const Node& node, const Model& model) {
  if (node.json().is_string()) {
    const size_t resource = find_named(node, model.resources, "resources");
    return {resource, 0, model.resources[resource].file_bytes};
  }
  if (!node.json().is_object())
    node.fail("must be a resource name or { \"name\", \"elementOffset\", \"elementCount\" }, not " +
              json_type_name(node.json()));
  node.expect_object(kBindingFields);
  for (const char* ignored : {"format", "counter"})
    if (const std::optional<Node> field = node.find(ignored)) field->string();
  if (const std::optional<Node> field = node.find("counterOffsetBytes")) field->uint64();
  if (const std::optional<Node> field = node.find("shape")) field->elements();
  const Resource& resource = model.resources[find_named(node.at("name"), model.resources, "resources")];
  const std::optional<Node> size_node = node.find("elementSizeInBytes");
  const uint64_t given_size = size_node ? size_node->uint64() : 0;  // a UINT64, as DxDispatch reads it
  const uint64_t size = given_size != 0 ? given_size : resource.mixed_list ? 0 : element_bytes(resource.type);
  uint64_t offset = 0;  // in bytes
  if (const std::optional<Node> offset_node = node.find("elementOffset")) {
    // DxDispatch binds from byte elementOffset * elementSizeInBytes to the end of the buffer, so that
    // byte must lie inside it; the buffer need not hold a whole number of such elements.
    const uint64_t elements = offset_node->uint64();
    if (size == 0 && elements != 0)
      offset_node->warn("has no effect: resource '" + resource.name +
                        "' is a mixed list, which has no element size, so the binding starts at byte 0 as in "
                        "DxDispatch; give elementSizeInBytes to count the offset in");
    const bool overflow = __builtin_mul_overflow(elements, size, &offset);
    if (overflow || offset >= resource.file_bytes) {
      // Appended piece by piece: GCC 12's -Wrestrict misfires on "..." + std::string here.
      std::string why = "is " + std::to_string(elements);
      if (given_size != 0)
        why.append(" elements of ").append(std::to_string(size)).append(" bytes, ");
      else
        why.append(" ").append(data_type_name(resource.type)).append(" elements, ");
      why.append(overflow ? "past byte 2^64" : "byte " + std::to_string(offset));
      offset_node->fail(why + ", but resource '" + resource.name + "' is " + std::to_string(resource.file_bytes) +
                        " bytes; a binding starts inside its buffer");
    }
  }
  if (const std::optional<Node> count_node = node.find("elementCount")) count_node->uint64();
  return {static_cast<size_t>(&resource - model.resources.data()), offset, resource.file_bytes - offset};
}

// The regions one bind point's value gives: a binding, or an array of as many as it has tensors.
std::vector<Region> load_bind_point(const Node& value, const BindPoint& point, const Model& model) {
  const std::vector<Node> items = value.json().is_array() ? value.elements() : std::vector<Node>{value};
  if (items.size() != point.count)
    value.fail("binds " + std::to_string(items.size()) + " resources but " + point.name + " has " +
               std::to_string(point.count) + " tensors");
  std::vector<Region> regions;
  for (const Node& item : items) regions.push_back(load_region(item, model));
  return regions;
}

std::vector<std::string_view> bind_point_names(const Dispatchable& op) {
  std::vector<std::string_view> names;
  for (const BindPoint& point : op.bind_points) names.push_back(point.name);
  return names;
}

DispatchCommand load_dispatch(const Node& node, const Model& model) {
  const size_t index = find_named(node.at("dispatchable"), model.dispatchables, "dispatchables");
  const Dispatchable& op = model.dispatchables[index];
  // DxDispatch's thread-group count of an HLSL dispatch: DirectML operators choose their own.
  if (const std::optional<Node> groups = node.find("threadGroupCount")) {
    const std::vector<uint32_t> counts = groups->uint32_array();
    if (counts.size() != 3) groups->fail("must be an array of 3 counts, as in DxDispatch");
  }
  const Node bindings = node.at("bindings");
  bindings.expect_object(bind_point_names(op));

  DispatchCommand dispatch{index, {}, {}};
  for (const BindPoint& point : op.bind_points) {
    std::vector<Region>& regions = point.output ? dispatch.outputs : dispatch.inputs;
    regions.resize(std::max<size_t>(regions.size(), point.first + point.count));
    const std::optional<Node> value = bindings.find(point.name);
    if (!value && point.bound_at_initialize) {
      for (uint32_t i = 0; i < point.count; ++i) regions[point.first + i] = *op.initialize_inputs[point.first + i];
      continue;
    }
    if (!value) bindings.fail("missing required field '" + point.name + "'");
    const std::vector<Region> given = load_bind_point(*value, point, model);
    std::copy(given.begin(), given.end(), regions.begin() + point.first);
  }
  return dispatch;
}

// writeFile writes the resource's buffer as DxDispatch does: every byte of it, whole elements or not.
WriteFileCommand load_write_file(const Node& node, const Model& model) {
  const Node target = node.at("targetPath");
  const std::filesystem::path path = target.string();
  const FileFormat format = file_format(path, target.place());
  const size_t index = find_named(node.at("resource"), model.resources, "resources");
  const Resource& resource = model.resources[index];
  const uint64_t element = element_bytes(resource.type);
  std::optional<Node> dimensions = node.find("dimensions");
  const std::vector<uint32_t> sizes = dimensions ? dimensions->uint32_array() : std::vector<uint32_t>{};
  if (sizes.empty()) dimensions.reset();  // as DxDispatch reads an empty list: no shape, a 1-D file
  // A shape counts whole elements. DxDispatch writes a .npy file's last bytes past its shape's end,
  // where no reader looks (and which this tool's reader refuses), so such a buffer has no .npy file.
  if (const uint64_t part = resource.file_bytes % element; part != 0 && (format == FileFormat::kNpy || dimensions))
    (format == FileFormat::kNpy ? target : *dimensions)
        .fail("resource '" + resource.name + "' is " + std::to_string(resource.file_bytes) +
              " bytes (sizeInBytes), not a whole number of " + std::string(data_type_name(resource.type)) +
              " elements (" + std::to_string(element) + " bytes), so no " +
              (format == FileFormat::kNpy ? ".npy shape fits it (DxDispatch writes the last " + std::to_string(part) +
                                                " bytes past its end); a raw file takes every byte"
                                          : "shape fits it; leave dimensions out of a raw file"));
  std::vector<uint64_t> shape{resource.file_bytes / element};
  // A .npy file's shape; its elements must be as many as the file holds.
  if (dimensions) {
    if (sizes.size() > kMaxNpyDims)
      dimensions->fail("has " + std::to_string(sizes.size()) + " sizes; a .npy file's shape has at most " +
                       std::to_string(kMaxNpyDims));
    shape.assign(sizes.begin(), sizes.end());
    uint64_t count = 1;
    for (const uint32_t size : sizes)
      if (__builtin_mul_overflow(count, size, &count)) count = UINT64_MAX;
    if (count != resource.file_bytes / element)
      dimensions->fail("hold " + std::to_string(count) + " elements but resource '" + resource.name + "' writes " +
                       std::to_string(resource.file_bytes / element) + " (its buffer's)");
  }
  return {index, path, format, std::move(shape)};
}

}  // namespace

void load_initialize_bindings(const Node& bindings, Dispatchable& dispatchable, const Model& model) {
  bindings.expect_object(bind_point_names(dispatchable));
  dispatchable.initialize_inputs.resize(dispatchable.owned_inputs.size());
  for (BindPoint& point : dispatchable.bind_points) {
    const std::optional<Node> value = bindings.find(point.name);
    if (!value) continue;
    const auto owned = dispatchable.owned_inputs.begin() + point.first;
    if (point.output || !std::all_of(owned, owned + point.count, std::identity()))
      value->fail("is bound at initialize, which only inputs flagged OWNED_BY_DML are; bind it in each dispatch");
    const std::vector<Region> regions = load_bind_point(*value, point, model);
    std::copy(regions.begin(), regions.end(), dispatchable.initialize_inputs.begin() + point.first);
    point.bound_at_initialize = true;
  }
}

Command load_command(const Node& node, const Model& model) {
  const Node type = node.at("type");
  const std::string kind = type.string();  // in any case, as DxDispatch compares them
  if (equal_ignoring_case(kind, "dispatch")) {
    node.expect_object({"type", "dispatchable", "bindings", "threadGroupCount"});
    return {node.place(), dxdispatch_json_text(node.json()), load_dispatch(node, model)};
  }
  if (equal_ignoring_case(kind, "print")) {
    node.expect_object({"type", "resource", "verbose"});
    const std::optional<Node> verbose = node.find("verbose");
    if (verbose && !verbose->json().is_boolean()) verbose->fail("must be true or false");
    return {node.place(), dxdispatch_json_text(node.json()),
            PrintCommand{find_named(node.at("resource"), model.resources, "resources"),
                         verbose && verbose->json().get<bool>()}};
  }
  if (equal_ignoring_case(kind, "writeFile")) {
    node.expect_object({"type", "resource", "targetPath", "dimensions"});
    return {node.place(), dxdispatch_json_text(node.json()), load_write_file(node, model)};
  }
  type.fail("'" + kind + "' is not a command type (dispatch, print, writeFile)");
}

}  // namespace opendml::tool
