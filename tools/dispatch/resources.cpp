// resources.NAME: a device buffer and its initial values (an array, a constant, a sequence, or a
// .npy/.bin/.dat file relative to the model's folder).
#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
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
  uint64_t count;
  FillElements fill;
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

// Values held by the tool (an array, a file): taken from the budget, then copied out as uploaded.
InitialValues held(DML_TENSOR_DATA_TYPE type, std::vector<std::byte> bytes) {
  auto data = std::make_shared<const std::vector<std::byte>>(std::move(bytes));
  const uint64_t count = data->size() / element_bytes(type);
  return {type, count, [data, size = element_bytes(type)](uint64_t first, std::span<std::byte> out) {
            std::memcpy(out.data(), data->data() + first * size, out.size());
          }};
}

std::vector<std::byte> allocate_held(uint64_t bytes, MemoryBudget& budget, const Node& place) {
  budget.take(bytes, false, place.place(), "holding the initial values");
  return std::vector<std::byte>(bytes);
}

InitialValues from_array(const Node& values, DML_TENSOR_DATA_TYPE type, MemoryBudget& budget) {
  const std::vector<Node> elements = values.elements();
  std::vector<std::byte> bytes = allocate_held(checked_bytes(elements.size(), type, values), budget, values);
  for (size_t i = 0; i < elements.size(); ++i)
    encode(elements[i].json(), type, bytes.data() + i * element_bytes(type), elements[i]);
  return held(type, std::move(bytes));
}

// Repeats one element's bytes over `out` by doubling what is written, at memory speed.
void repeat_element(const std::byte* element, size_t size, std::span<std::byte> out) {
  if (out.empty()) return;
  std::memcpy(out.data(), element, size);
  for (size_t done = size; done < out.size(); done *= 2)
    std::memcpy(out.data() + done, out.data(), std::min(done, out.size() - done));
}

InitialValues from_constant(const Node& values, DML_TENSOR_DATA_TYPE type) {
  values.expect_object({"valueCount", "value"});
  const uint64_t count = values.at("valueCount").uint64();
  checked_bytes(count, type, values.at("valueCount"));
  std::array<std::byte, 8> element{};
  encode(values.at("value").json(), type, element.data(), values.at("value"));
  return {type, count, [element, size = element_bytes(type)](uint64_t, std::span<std::byte> out) {
            repeat_element(element.data(), size, out);
          }};
}

// Element i of a sequence is valueStart + i * valueDelta, rounded once to the type: computed in
// 64-bit integers when both are whole numbers (exact for every integer type), otherwise in double.
// The sequence is monotonic, so its first and last elements (and the second, which is the first
// to show a fractional delta) are the ones that can be out of the type's range or not whole.
struct Sequence {
  bool integers;
  int64_t start, delta;  // when integers
  double start_d, delta_d;

  Json value(uint64_t i) const {
    if (integers) return start + static_cast<int64_t>(i) * delta;  // checked against overflow at load
    return start_d + static_cast<double>(i) * delta_d;
  }

  template <class T>
  void fill(uint64_t first, std::span<std::byte> out) const {
    T* elements = reinterpret_cast<T*>(out.data());
    const size_t n = out.size() / sizeof(T);
    for (size_t k = 0; k < n; ++k) {
      const uint64_t i = first + k;
      if constexpr (std::is_same_v<T, Half>) {
        elements[k].bits = half_from_double(integers ? static_cast<double>(start + static_cast<int64_t>(i) * delta)
                                                     : start_d + static_cast<double>(i) * delta_d);
      } else if (integers) {
        elements[k] = static_cast<T>(start + static_cast<int64_t>(i) * delta);
      } else {
        elements[k] = static_cast<T>(start_d + static_cast<double>(i) * delta_d);
      }
    }
  }
};

// A JSON number as an int64 when it is a whole number in range ("3" or "3.0").
std::optional<int64_t> whole_int64(const Json& v) {
  if (v.is_number_unsigned()) {
    if (v.get<uint64_t>() > uint64_t{std::numeric_limits<int64_t>::max()}) return std::nullopt;
    return static_cast<int64_t>(v.get<uint64_t>());
  }
  if (v.is_number_integer()) return v.get<int64_t>();
  const double d = v.get<double>();
  if (std::trunc(d) != d || !(std::fabs(d) < 0x1p63)) return std::nullopt;
  return static_cast<int64_t>(d);
}

InitialValues from_sequence(const Node& values, DML_TENSOR_DATA_TYPE type) {
  values.expect_object({"valueCount", "valueStart", "valueDelta"});
  const uint64_t count = values.at("valueCount").uint64();
  for (const char* key : {"valueStart", "valueDelta"})
    if (!values.at(key).json().is_number()) values.at(key).fail("must be a number");
  const Json& start = values.at("valueStart").json();
  const Json& delta = values.at("valueDelta").json();
  checked_bytes(count, type, values.at("valueCount"));

  const bool float_type = type == DML_TENSOR_DATA_TYPE_FLOAT16 || type == DML_TENSOR_DATA_TYPE_FLOAT32 ||
                          type == DML_TENSOR_DATA_TYPE_FLOAT64;
  // JSON integers stay exact in 64 bits; for an integer type, whole doubles (3.0) are integers too.
  const auto as_int = [&](const Json& v) {
    return v.is_number_integer() || !float_type ? whole_int64(v) : std::nullopt;
  };
  Sequence sequence{false, 0, 0, start.get<double>(), delta.get<double>()};
  if (const auto s = as_int(start), d = as_int(delta); s && d) sequence = {true, *s, *d, 0, 0};
  int64_t last = 0;
  if (sequence.integers && (__builtin_mul_overflow(static_cast<int64_t>(count - 1), sequence.delta, &last) ||
                            __builtin_add_overflow(sequence.start, last, &last)))
    values.fail("element " + std::to_string(count - 1) + " of the sequence does not fit 64 bits");
  std::array<std::byte, 8> scratch;
  for (const uint64_t i : {uint64_t{0}, std::min<uint64_t>(1, count - 1), count - 1})
    encode(sequence.value(i), type, scratch.data(), values, "element " + std::to_string(i) + " of the sequence: ");

  return {type, count, [sequence, type](uint64_t first, std::span<std::byte> out) {
            visit_element_type(type, [&]<class T>(std::type_identity<T>) { sequence.fill<T>(first, out); });
          }};
}

InitialValues from_file(const Node& values, const std::optional<DML_TENSOR_DATA_TYPE>& type,
                        const std::optional<Node>& type_node, const std::filesystem::path& folder,
                        MemoryBudget& budget) {
  values.expect_object({"sourcePath"});
  const Node source = values.at("sourcePath");
  const std::filesystem::path path = (folder / source.string()).lexically_normal();
  const FileFormat format = file_format(path, source.place());
  std::vector<std::byte> bytes =
      read_file(path, kMaxResourceBytes, source.place(), budget, "reading '" + path.string() + "'");
  if (format == FileFormat::kNpy) {
    NpyArray array = parse_npy(bytes, path.string(), source.place());
    if (type && *type != array.type)
      type_node->fail("is " + std::string(data_type_name(*type)) + " but '" + path.string() + "' holds " +
                      std::string(data_type_name(array.type)) + "; leave it out for a .npy file");
    checked_bytes(array.data.size() / element_bytes(array.type), array.type, source);
    return held(array.type, std::move(array.data));
  }
  const DML_TENSOR_DATA_TYPE raw_type = require_type(type, values, "a raw .bin/.dat file");
  const size_t size = element_bytes(raw_type);
  if (bytes.size() % size != 0)
    source.fail("'" + path.string() + "' is " + std::to_string(bytes.size()) + " bytes, not a whole number of " +
                std::string(data_type_name(raw_type)) + " elements (" + std::to_string(size) + " bytes each)");
  checked_bytes(bytes.size() / size, raw_type, source);
  return held(raw_type, std::move(bytes));
}

InitialValues load_initial_values(const Node& values, const std::optional<Node>& type_node,
                                  const std::filesystem::path& folder, MemoryBudget& budget) {
  std::optional<DML_TENSOR_DATA_TYPE> type;
  if (type_node) {
    type = read_data_type(*type_node);
    if (!is_element_type(*type))
      type_node->fail(std::string(data_type_name(*type)) + " is not supported for resources (4-bit elements)");
  }
  if (values.json().is_array()) return from_array(values, require_type(type, values, "an array"), budget);
  if (!values.json().is_object())
    values.fail(
        "must be an array or an object ({valueCount, value}, {valueCount, valueStart, valueDelta} or "
        "{sourcePath}), not " +
        json_type_name(values.json()));
  if (values.find("sourcePath")) return from_file(values, type, type_node, folder, budget);
  if (values.find("valueStart") || values.find("valueDelta"))
    return from_sequence(values, require_type(type, values, "a sequence"));
  return from_constant(values, require_type(type, values, "a constant"));
}

}  // namespace

Resource load_resource(const std::string& name, const Node& node, const std::filesystem::path& model_folder,
                       LoadContext& context) {
  MemoryBudget& budget = context.budget;
  node.expect_object({"initialValuesDataType", "initialValues", "sizeInBytes"});
  try {
    InitialValues values =
        load_initial_values(node.at("initialValues"), node.find("initialValuesDataType"), model_folder, budget);
    uint64_t size = values.count * element_bytes(values.type);
    if (const std::optional<Node> requested = node.find("sizeInBytes")) {
      const uint64_t bytes = requested->uint64();
      if (bytes < size)
        requested->fail("is " + std::to_string(bytes) + " but the initial values take " + std::to_string(size) +
                        " bytes; it must be at least that");
      if (bytes > kMaxResourceBytes)
        requested->fail("is " + std::to_string(bytes) + "; the limit is " + std::to_string(kMaxResourceBytes));
      size = bytes;
    }
    size = (size + 3) & ~uint64_t{3};
    budget.take(size, true, node.place(), "its device buffer");
    return {name, values.type, values.count, size, std::move(values.fill)};
  } catch (const std::bad_alloc&) {
    node.fail("out of memory while reading its initial values");
  }
}

}  // namespace opendml::tool
