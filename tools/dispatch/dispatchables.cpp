// dispatchables.NAME: { "type": "DML_OPERATOR_JOIN", "desc": { fields named as the C struct's } },
// built into the C++ API's owning descriptor classes (opendml.hpp).
#include <algorithm>
#include <map>
#include <span>

#include "errors.h"
#include "json_node.h"
#include "model.h"
#include "model_enums.h"

namespace opendml::tool {
namespace {

enum class FieldKind {
  kTensor,       // const DML_TENSOR_DESC*
  kTensorArray,  // const DML_TENSOR_DESC* with a count field
  kCount,        // the count of the operator's tensor array; may be left out
  kUint,
};

struct FieldSpec {
  std::string_view name;
  FieldKind kind;
  bool output = false;  // for tensors
};

// A desc's fields as read: the tensors of each tensor field, and the UINT fields.
struct DescFields {
  std::map<std::string_view, std::vector<opendml::TensorDesc>> tensors;
  std::map<std::string_view, uint32_t> uints;
  const opendml::TensorDesc& tensor(std::string_view name) const { return tensors.at(name)[0]; }
};

struct OperatorSpec {
  std::string_view name;              // without the DML_OPERATOR_ prefix
  std::span<const FieldSpec> fields;  // in the C struct's order, which is also the binding order
  std::unique_ptr<opendml::OperatorDesc> (*make)(const DescFields&);
};

constexpr FieldSpec kJoinFields[] = {{"InputCount", FieldKind::kCount},
                                     {"InputTensors", FieldKind::kTensorArray},
                                     {"OutputTensor", FieldKind::kTensor, true},
                                     {"Axis", FieldKind::kUint}};
constexpr FieldSpec kSplitFields[] = {{"InputTensor", FieldKind::kTensor},
                                      {"OutputCount", FieldKind::kCount},
                                      {"OutputTensors", FieldKind::kTensorArray, true},
                                      {"Axis", FieldKind::kUint}};
constexpr FieldSpec kNonzeroFields[] = {{"InputTensor", FieldKind::kTensor},
                                        {"OutputCountTensor", FieldKind::kTensor, true},
                                        {"OutputCoordinatesTensor", FieldKind::kTensor, true}};

const OperatorSpec kOperators[] = {
    {"JOIN", kJoinFields,
     [](const DescFields& f) -> std::unique_ptr<opendml::OperatorDesc> {
       return std::make_unique<opendml::JoinDesc>(f.tensors.at("InputTensors"), f.tensor("OutputTensor"),
                                                  f.uints.at("Axis"));
     }},
    {"SPLIT", kSplitFields,
     [](const DescFields& f) -> std::unique_ptr<opendml::OperatorDesc> {
       return std::make_unique<opendml::SplitDesc>(f.tensor("InputTensor"), f.tensors.at("OutputTensors"),
                                                   f.uints.at("Axis"));
     }},
    {"NONZERO_COORDINATES", kNonzeroFields,
     [](const DescFields& f) -> std::unique_ptr<opendml::OperatorDesc> {
       return std::make_unique<opendml::NonzeroCoordinatesDesc>(f.tensor("InputTensor"), f.tensor("OutputCountTensor"),
                                                                f.tensor("OutputCoordinatesTensor"));
     }},
};

// DxDispatch's dispatchables that are not DirectML operators: each needs Direct3D 12 or ONNX Runtime.
constexpr std::pair<std::string_view, std::string_view> kOtherKinds[] = {
    {"hlsl", "an HLSL compute shader, compiled by DXC for Direct3D 12"},
    {"onnx", "an ONNX model, run by ONNX Runtime's DirectML provider"},
    {"dmlSerializedGraph", "a serialized DirectML graph, which needs DirectML itself"},
};

const OperatorSpec& read_operator_type(const Node& node) {
  const std::string type = node.string();
  for (const auto& [kind, what] : kOtherKinds)
    if (equal_ignoring_case(type, kind))
      node.fail("'" + type + "' dispatchables (" + std::string(what) +
                ") do not run with opendml, which runs DirectML operators only");
  std::vector<std::string_view> names;
  for (const OperatorSpec& op : kOperators) names.push_back(op.name);
  const std::string_view name = std::string_view(type).substr(type.starts_with("DML_OPERATOR_") ? 13 : 0);
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return kOperators[i];
  node.fail("'" + type + "' is not an operator opendml implements (" +
            comma_list(names, [](std::string_view n) { return "DML_OPERATOR_" + std::string(n); }) + ")");
}

// DML_EXECUTION_FLAGS, bits 1, 2, 4. None changes what these operators compute (they copy exactly,
// so half precision cannot apply), and opendml binds afresh at every execute (so descriptors are
// always volatile): each is accepted and has no effect.
constexpr std::string_view kExecutionFlagNames[] = {"NONE", "ALLOW_HALF_PRECISION_COMPUTATION", "DISABLE_META_COMMANDS",
                                                    "DESCRIPTORS_VOLATILE"};
// DxDispatch compiles one operator alone or as a graph of one node; both are the same operator here.
constexpr std::string_view kCompileTypeNames[] = {"DmlCompileOp", "DmlCompileGraph"};

// DML_BUFFER_TENSOR_DESC's fields, then DML_TENSOR_DESC's Type, which the short form allows.
constexpr std::string_view kBufferFields[] = {"DataType",
                                              "Flags",
                                              "DimensionCount",
                                              "Sizes",
                                              "Strides",
                                              "TotalTensorSizeInBytes",
                                              "GuaranteedBaseOffsetAlignment",
                                              "Type"};

constexpr std::string_view kFlagNames[] = {"NONE", "OWNED_BY_DML"};  // DML_TENSOR_FLAGS 0 and 1
constexpr std::string_view kTensorTypeNames[] = {"BUFFER"};          // INVALID is no tensor

opendml::TensorDesc read_buffer_desc(const Node& node, bool short_form) {
  node.expect_object(std::span(kBufferFields).first(std::size(kBufferFields) - (short_form ? 0 : 1)));
  const DML_TENSOR_DATA_TYPE type = read_data_type(node.at("DataType"));
  const Node sizes_node = node.at("Sizes");
  std::vector<uint32_t> sizes = sizes_node.uint32_array();
  // The C struct has one count for both arrays; JSON arrays carry their own, which must agree.
  if (const std::optional<Node> count = node.find("DimensionCount"); count && count->uint32() != sizes.size())
    count->fail("is " + std::to_string(count->uint32()) + " but Sizes has " + std::to_string(sizes.size()) +
                " entries");
  std::optional<std::vector<uint32_t>> strides;
  if (const std::optional<Node> strides_node = node.find("Strides")) {
    strides = strides_node->uint32_array();
    // An empty list is no strides (packed), as DxDispatch passes a null Strides for it.
    if (strides->empty())
      strides.reset();
    else if (strides->size() != sizes.size())
      strides_node->fail("has " + std::to_string(strides->size()) + " entries but Sizes has " +
                         std::to_string(sizes.size()) + "; there must be one stride per dimension");
  }
  DML_TENSOR_FLAGS flags = DML_TENSOR_FLAG_NONE;
  if (const std::optional<Node> f = node.find("Flags"))
    flags = static_cast<DML_TENSOR_FLAGS>(read_flags(*f, "DML_TENSOR_FLAG_", kFlagNames));
  opendml::TensorDesc desc(type, std::move(sizes), std::move(strides), flags);
  // 0, as in DxDispatch, asks for the computed size (DMLCalcBufferTensorSize), as leaving it out does.
  if (const std::optional<Node> total = node.find("TotalTensorSizeInBytes"); total && total->uint64() != 0)
    desc.total_size(total->uint64());
  if (const std::optional<Node> alignment = node.find("GuaranteedBaseOffsetAlignment"))
    desc.alignment(alignment->uint32());
  return desc;
}

// A DML_TENSOR_DESC: the short form (the buffer desc's fields, Type optional) or the long form
// { "Type": ..., "Desc": { ... } }.
opendml::TensorDesc read_tensor_desc(const Node& node) {
  if (node.json().is_object() && node.find("Type")) read_enum(*node.find("Type"), "DML_TENSOR_TYPE_", kTensorTypeNames);
  if (!node.json().is_object() || !node.find("Desc")) return read_buffer_desc(node, true);
  node.expect_object({"Type", "Desc"});
  return read_buffer_desc(node.at("Desc"), false);
}

// The desc's fields, from `desc`; `extra` are the dispatchable's own keys where the fields are
// written inline, beside them.
DescFields read_desc(const Node& desc, const OperatorSpec& op, std::span<const std::string_view> extra) {
  std::vector<std::string_view> names(extra.begin(), extra.end());
  for (const FieldSpec& field : op.fields) names.push_back(field.name);
  desc.expect_object(names);

  DescFields fields;
  std::optional<Node> count;
  for (const FieldSpec& field : op.fields) {
    switch (field.kind) {
      case FieldKind::kTensor: fields.tensors[field.name].push_back(read_tensor_desc(desc.at(field.name))); break;
      case FieldKind::kTensorArray: {
        auto& tensors = fields.tensors[field.name];
        for (const Node& element : desc.at(field.name).elements()) tensors.push_back(read_tensor_desc(element));
        if (count && count->uint32() != tensors.size())
          count->fail("is " + std::to_string(count->uint32()) + " but " + std::string(field.name) + " has " +
                      std::to_string(tensors.size()) + " entries");
        break;
      }
      case FieldKind::kCount: count = desc.find(field.name); break;  // comes before its array
      case FieldKind::kUint: fields.uints[field.name] = desc.at(field.name).uint32(); break;
    }
  }
  return fields;
}

// A key DxDispatch reads in either case ("type" or "Type", as DirectML's structs spell it).
std::optional<Node> find_either(const Node& node, std::string_view lower, std::string_view upper) {
  const std::optional<Node> a = node.find(lower), b = node.find(upper);
  if (a && b) b->fail("is given beside '" + std::string(lower) + "'; give one of them");
  return a ? a : b;
}

constexpr std::string_view kDispatchableFields[] = {"type",           "Type",           "desc",    "Desc",
                                                    "executionFlags", "dmlCompileType", "bindings"};

}  // namespace

Dispatchable load_dispatchable(const std::string& name, const Node& node, const Model& model) {
  const std::optional<Node> type = find_either(node, "type", "Type");
  if (!type) node.fail("missing required field 'type'");
  const OperatorSpec& op = read_operator_type(*type);
  if (const std::optional<Node> flags = node.find("executionFlags"))
    read_flags(*flags, "DML_EXECUTION_FLAG_", kExecutionFlagNames);
  if (const std::optional<Node> compile = node.find("dmlCompileType")) read_enum(*compile, "", kCompileTypeNames);
  // The desc's fields in "desc" (or "Desc"), or, as DxDispatch also reads them, inline.
  const std::optional<Node> desc = find_either(node, "desc", "Desc");
  if (desc) node.expect_object(kDispatchableFields);
  const DescFields fields = desc ? read_desc(*desc, op, {}) : read_desc(node, op, kDispatchableFields);

  Dispatchable result{name, node.place(), op.make(fields), {}, {}, {}};
  uint32_t positions[2] = {0, 0};  // inputs, outputs
  for (const FieldSpec& field : op.fields) {
    if (field.kind != FieldKind::kTensor && field.kind != FieldKind::kTensorArray) continue;
    const std::vector<opendml::TensorDesc>& tensors = fields.tensors.at(field.name);
    const auto count = static_cast<uint32_t>(tensors.size());
    result.bind_points.push_back(
        {std::string(field.name), field.output, field.kind == FieldKind::kTensorArray, positions[field.output], count});
    positions[field.output] += count;
    for (const opendml::TensorDesc& tensor : tensors)
      if (!field.output) result.owned_inputs.push_back(tensor.buffer().Flags & DML_TENSOR_FLAG_OWNED_BY_DML);
  }
  if (const std::optional<Node> bindings = node.find("bindings")) load_initialize_bindings(*bindings, result, model);
  return result;
}

}  // namespace opendml::tool
