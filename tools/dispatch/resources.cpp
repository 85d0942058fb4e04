// resources.NAME: a device buffer and its initial values (an array, a constant, a sequence, or a
// .npy/.bin/.dat file relative to the model's folder).
#include <cstring>
#include <limits>
#include <optional>

#include "elements.h"
#include "errors.h"
#include "json_node.h"
#include "model.h"
#include "model_enums.h"
#include "npy.h"

namespace opendml::tool {
namespace {

struct InitialValues {
  DML_TENSOR_DATA_TYPE type;
  std::vector<std::byte> bytes;
};

// The type the initial values are written in; only a .npy file can do without one.
DML_TENSOR_DATA_TYPE require_type(const std::optional<DML_TENSOR_DATA_TYPE>& type, const Node& values,
                                  const char* form) {
  if (!type) values.fail(std::string("initialValuesDataType is required for ") + form);
  return *type;
}

// The bytes of `count` elements of `type`, once checked against a resource's limits.
uint64_t checked_bytes(uint64_t count, DML_TENSOR_DATA_TYPE type, const Node& place) {
  if (count == 0) place.fail("there are no initial values; a resource holds at least one element");
  if (count > kMaxResourceBytes / element_bytes(type))
    place.fail(std::to_string(count) + " elements of " + std::string(data_type_name(type)) +
               " exceed the limit of a resource, " + std::to_string(kMaxResourceBytes) + " bytes");
  return count * element_bytes(type);
}

void encode(const Json& value, DML_TENSOR_DATA_TYPE type, std::byte* dst, const Node& place,
            const std::string& what = "") {
  if (std::string why = encode_element(value, type, dst); !why.empty()) place.fail(what + why);
}

InitialValues from_array(const Node& values, DML_TENSOR_DATA_TYPE type) {
  const std::vector<Node> elements = values.elements();
  InitialValues result{type, std::vector<std::byte>(checked_bytes(elements.size(), type, values))};
  for (size_t i = 0; i < elements.size(); ++i)
    encode(elements[i].json(), type, result.bytes.data() + i * element_bytes(type), elements[i]);
  return result;
}

InitialValues from_constant(const Node& values, DML_TENSOR_DATA_TYPE type) {
  values.expect_object({"valueCount", "value"});
  const uint64_t count = values.at("valueCount").uint64();
  InitialValues result{type, std::vector<std::byte>(checked_bytes(count, type, values.at("valueCount")))};
  const size_t size = element_bytes(type);
  encode(values.at("value").json(), type, result.bytes.data(), values.at("value"));
  for (uint64_t i = 1; i < count; ++i) std::memcpy(result.bytes.data() + i * size, result.bytes.data(), size);
  return result;
}

// valueStart + i * valueDelta: in 64-bit integers when both are integers (exact for every integer
// type), otherwise in double, then rounded once to the type.
InitialValues from_sequence(const Node& values, DML_TENSOR_DATA_TYPE type) {
  values.expect_object({"valueCount", "valueStart", "valueDelta"});
  const uint64_t count = values.at("valueCount").uint64();
  const Json& start = values.at("valueStart").json();
  const Json& delta = values.at("valueDelta").json();
  for (const char* key : {"valueStart", "valueDelta"})
    if (!values.at(key).json().is_number()) values.at(key).fail("must be a number");
  InitialValues result{type, std::vector<std::byte>(checked_bytes(count, type, values.at("valueCount")))};
  const auto fits_int64 = [](const Json& v) {
    return v.is_number_integer() &&
           (!v.is_number_unsigned() || v.get<uint64_t>() <= uint64_t{std::numeric_limits<int64_t>::max()});
  };
  const bool integers = fits_int64(start) && fits_int64(delta);
  for (uint64_t i = 0; i < count; ++i) {
    Json value;
    int64_t step, sum;
    if (!integers) {
      value = start.get<double>() + static_cast<double>(i) * delta.get<double>();
    } else if (__builtin_mul_overflow(static_cast<int64_t>(i), delta.get<int64_t>(), &step) ||
               __builtin_add_overflow(start.get<int64_t>(), step, &sum)) {
      values.fail("element " + std::to_string(i) + " of the sequence does not fit 64 bits");
    } else {
      value = sum;
    }
    encode(value, type, result.bytes.data() + i * element_bytes(type), values,
           "element " + std::to_string(i) + " of the sequence: ");
  }
  return result;
}

InitialValues from_file(const Node& values, const std::optional<DML_TENSOR_DATA_TYPE>& type,
                        const std::optional<Node>& type_node, const std::filesystem::path& folder) {
  values.expect_object({"sourcePath"});
  const Node source = values.at("sourcePath");
  const std::filesystem::path path = (folder / source.string()).lexically_normal();
  const FileFormat format = file_format(path, source.place());
  std::vector<std::byte> bytes = read_file(path, kMaxResourceBytes, source.place());
  if (format == FileFormat::kNpy) {
    NpyArray array = parse_npy(bytes, path.string(), source.place());
    if (type && *type != array.type)
      type_node->fail("is " + std::string(data_type_name(*type)) + " but '" + path.string() + "' holds " +
                      std::string(data_type_name(array.type)) + "; leave it out for a .npy file");
    checked_bytes(array.data.size() / element_bytes(array.type), array.type, source);
    return {array.type, std::move(array.data)};
  }
  const DML_TENSOR_DATA_TYPE raw_type = require_type(type, values, "a raw .bin/.dat file");
  const size_t size = element_bytes(raw_type);
  if (bytes.size() % size != 0)
    source.fail("'" + path.string() + "' is " + std::to_string(bytes.size()) + " bytes, not a whole number of " +
                std::string(data_type_name(raw_type)) + " elements (" + std::to_string(size) + " bytes each)");
  checked_bytes(bytes.size() / size, raw_type, source);
  return {raw_type, std::move(bytes)};
}

InitialValues load_initial_values(const Node& values, const std::optional<Node>& type_node,
                                  const std::filesystem::path& folder) {
  std::optional<DML_TENSOR_DATA_TYPE> type;
  if (type_node) {
    type = read_data_type(*type_node);
    if (!is_element_type(*type))
      type_node->fail(std::string(data_type_name(*type)) + " is not supported for resources (4-bit elements)");
  }
  if (values.json().is_array()) return from_array(values, require_type(type, values, "an array"));
  if (!values.json().is_object())
    values.fail(
        "must be an array or an object ({valueCount, value}, {valueCount, valueStart, valueDelta} or "
        "{sourcePath}), not " +
        json_type_name(values.json()));
  if (values.find("sourcePath")) return from_file(values, type, type_node, folder);
  if (values.find("valueStart") || values.find("valueDelta"))
    return from_sequence(values, require_type(type, values, "a sequence"));
  return from_constant(values, require_type(type, values, "a constant"));
}

}  // namespace

Resource load_resource(const std::string& name, const Node& node, const std::filesystem::path& model_folder) {
  node.expect_object({"initialValuesDataType", "initialValues", "sizeInBytes"});
  InitialValues values =
      load_initial_values(node.at("initialValues"), node.find("initialValuesDataType"), model_folder);
  uint64_t size = values.bytes.size();
  if (const std::optional<Node> requested = node.find("sizeInBytes")) {
    const uint64_t bytes = requested->uint64();
    if (bytes < size)
      requested->fail("is " + std::to_string(bytes) + " but the initial values take " + std::to_string(size) +
                      " bytes; it must be at least that");
    if (bytes > kMaxResourceBytes)
      requested->fail("is " + std::to_string(bytes) + "; the limit is " + std::to_string(kMaxResourceBytes));
    size = bytes;
  }
  return {name, values.type, std::move(values.bytes), (size + 3) & ~uint64_t{3}};
}

}  // namespace opendml::tool
