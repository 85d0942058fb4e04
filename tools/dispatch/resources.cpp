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
  bool mixed_list = false;  // DxDispatch's list of {type, value}: no initial data type
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

// What reading initial values needs from the model's context.
struct Reader {
  MemoryBudget& budget;
  Rounding rounding;
  std::filesystem::path folder;  // of sourcePaths
};

void encode(const Json& value, DML_TENSOR_DATA_TYPE type, std::byte* dst, const Node& place, Rounding rounding,
            const std::string& what = "") {
  if (std::string why = encode_element(value, type, dst, rounding); !why.empty()) place.fail(what + why);
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

InitialValues from_array(const Node& values, DML_TENSOR_DATA_TYPE type, const Reader& reader) {
  const size_t count = values.size();
  std::vector<std::byte> bytes = allocate_held(checked_bytes(count, type, values), reader.budget, values);
  for (size_t i = 0; i < count; ++i) {
    const Node element = values.element(i);
    encode(element.json(), type, bytes.data() + i * element_bytes(type), element, reader.rounding);
  }
  return held(type, std::move(bytes));
}

// DxDispatch's list without initialValuesDataType (or with UNKNOWN): [{"type": "UINT32", "value": 42}, ...], each
// element in its own type, packed. The resource's elements are then its bytes (UINT8), which is
// how print shows them and bindings count them. DxDispatch has no FLOAT16 here; opendml allows it.
InitialValues from_mixed_list(const Node& values, const Reader& reader) {
  if (!values.json().empty() && !values.json()[0].is_object())
    values.fail(
        "initialValuesDataType is required for an array of values (without it, each element is an object "
        "{\"type\", \"value\"}: DxDispatch's mixed list)");
  std::vector<std::byte> bytes;
  const size_t count = values.size();
  for (size_t i = 0; i < count; ++i) {
    const Node element = values.element(i);
    element.expect_object({"name", "type", "value"});  // a name documents the value
    if (const std::optional<Node> label = element.find("name")) label->string();
    const DML_TENSOR_DATA_TYPE type = read_data_type(element.at("type"));
    if (!is_element_type(type)) element.at("type").fail(std::string(data_type_name(type)) + " is not supported here");
    std::array<std::byte, 8> scratch;
    encode(element.at("value").json(), type, scratch.data(), element.at("value"), reader.rounding);
    bytes.insert(bytes.end(), scratch.begin(), scratch.begin() + element_bytes(type));
  }
  checked_bytes(bytes.size(), DML_TENSOR_DATA_TYPE_UINT8, values);
  reader.budget.take(bytes.size(), false, values.place(), "holding the initial values");
  InitialValues result = held(DML_TENSOR_DATA_TYPE_UINT8, std::move(bytes));
  result.mixed_list = true;
  return result;
}

// Repeats one element's bytes over `out` by doubling what is written, at memory speed.
void repeat_element(const std::byte* element, size_t size, std::span<std::byte> out) {
  if (out.empty()) return;
  std::memcpy(out.data(), element, size);
  for (size_t done = size; done < out.size(); done *= 2)
    std::memcpy(out.data() + done, out.data(), std::min(done, out.size() - done));
}

InitialValues from_constant(const Node& values, DML_TENSOR_DATA_TYPE type, Rounding rounding) {
  values.expect_object({"valueCount", "value"});
  const uint64_t count = values.at("valueCount").uint64();
  checked_bytes(count, type, values.at("valueCount"));
  std::array<std::byte, 8> element{};
  encode(values.at("value").json(), type, element.data(), values.at("value"), rounding);
  return {type, count, [element, size = element_bytes(type)](uint64_t, std::span<std::byte> out) {
            repeat_element(element.data(), size, out);
          }};
}

// Integers of the sequences below: every value of INT64 and UINT64 and their differences, exactly.
using Wide = __int128;
constexpr Wide kLowest = std::numeric_limits<int64_t>::min();
constexpr Wide kHighest = std::numeric_limits<uint64_t>::max();

// Element i of a sequence is valueStart + i * valueDelta, rounded once to the type (--ieee-values):
// computed in 128-bit integers (Wide) when both are whole numbers of 64 bits (exact for every integer
// type), otherwise in double. The sequence is monotonic, so its first and last elements (and the
// second, which is the first to show a fractional delta) are the ones that can be out of the type's
// range or not whole.
struct ExactSequence {
  bool integers;
  Wide start, delta;  // when integers
  double start_d, delta_d;

  Wide integer(uint64_t i) const { return start + static_cast<Wide>(i) * delta; }  // in 64 bits: checked at load
  Json value(uint64_t i) const {
    if (!integers) return start_d + static_cast<double>(i) * delta_d;
    const Wide v = integer(i);
    return v < 0 ? Json(static_cast<int64_t>(v)) : Json(static_cast<uint64_t>(v));
  }

  template <class T>
  void fill(uint64_t first, std::span<std::byte> out) const {
    T* elements = reinterpret_cast<T*>(out.data());
    const size_t n = out.size() / sizeof(T);
    for (size_t k = 0; k < n; ++k) {
      const uint64_t i = first + k;
      if constexpr (std::is_same_v<T, Half>) {
        elements[k].bits =
            half_from_double(integers ? static_cast<double>(integer(i)) : start_d + static_cast<double>(i) * delta_d);
      } else if (integers) {
        elements[k] = static_cast<T>(integer(i));
      } else {
        elements[k] = static_cast<T>(start_d + static_cast<double>(i) * delta_d);
      }
    }
  }
};

// A JSON number as an integer when it is a whole number of 64 bits, signed or not ("3" or "3.0").
std::optional<Wide> whole_integer(const Json& v) {
  if (v.is_number_unsigned()) return static_cast<Wide>(v.get<uint64_t>());
  if (v.is_number_integer()) return static_cast<Wide>(v.get<int64_t>());
  const double d = v.get<double>();
  if (std::trunc(d) != d || !(d >= -0x1p63 && d < 0x1p64)) return std::nullopt;
  return static_cast<Wide>(d);
}

bool is_float_type(DML_TENSOR_DATA_TYPE type) {
  return type == DML_TENSOR_DATA_TYPE_FLOAT16 || type == DML_TENSOR_DATA_TYPE_FLOAT32 ||
         type == DML_TENSOR_DATA_TYPE_FLOAT64;
}

FillElements exact_sequence(const Node& values, DML_TENSOR_DATA_TYPE type, uint64_t count) {
  const Json& start = values.at("valueStart").json();
  const Json& delta = values.at("valueDelta").json();
  // JSON integers stay exact in 64 bits; for an integer type, whole doubles (3.0) are integers too.
  const auto as_int = [&](const Json& v) {
    return v.is_number_integer() || !is_float_type(type) ? whole_integer(v) : std::nullopt;
  };
  ExactSequence sequence{false, 0, 0, start.get<double>(), delta.get<double>()};
  if (const auto s = as_int(start), d = as_int(delta); s && d) sequence = {true, *s, *d, 0, 0};
  Wide last = 0;  // the sequence runs from start to last, so both in 64 bits make every element so
  if (sequence.integers && (__builtin_mul_overflow(static_cast<Wide>(count - 1), sequence.delta, &last) ||
                            __builtin_add_overflow(sequence.start, last, &last) || last < kLowest || last > kHighest))
    values.fail("element " + std::to_string(count - 1) + " of the sequence does not fit 64 bits");
  std::array<std::byte, 8> scratch;
  for (const uint64_t i : {uint64_t{0}, std::min<uint64_t>(1, count - 1), count - 1})
    encode(sequence.value(i), type, scratch.data(), values, Rounding::kIeee,
           "element " + std::to_string(i) + " of the sequence: ");
  return [sequence, type](uint64_t first, std::span<std::byte> out) {
    visit_element_type(type, [&]<class T>(std::type_identity<T>) { sequence.fill<T>(first, out); });
  };
}

// DxDispatch's sequence: valueStart and valueDelta each converted to the element type, then
// value += valueDelta in that type for every element: integers wrap around (so the closed form
// start + i * delta, modulo 2^bits, gives element i), floats accumulate their rounding, and FLOAT16
// adds in float and truncates back (half.hpp). The float kinds are generated in order, continuing
// from where the previous call stopped, as uploads ask for them.
template <class T>
FillElements dxdispatch_sequence(const std::array<std::byte, 8>& start_bytes,
                                 const std::array<std::byte, 8>& delta_bytes) {
  T start, delta;
  std::memcpy(&start, start_bytes.data(), sizeof(T));
  std::memcpy(&delta, delta_bytes.data(), sizeof(T));
  struct State {
    uint64_t next = 0;
    T value;
  };
  auto state = std::make_shared<State>(State{0, start});
  return [start, delta, state](uint64_t first, std::span<std::byte> out) {
    T* elements = reinterpret_cast<T*>(out.data());
    const size_t n = out.size() / sizeof(T);
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      for (size_t k = 0; k < n; ++k)
        elements[k] =
            static_cast<T>(static_cast<U>(static_cast<uint64_t>(start) + (first + k) * static_cast<uint64_t>(delta)));
    } else {
      if (first != state->next) *state = State{0, start};
      const auto step = [&](T v) {
        if constexpr (std::is_same_v<T, Half>)
          return Half{half_from_float_truncating(half_to_float(v.bits) + half_to_float(delta.bits))};
        else
          return static_cast<T>(v + delta);
      };
      for (; state->next < first; ++state->next) state->value = step(state->value);
      for (size_t k = 0; k < n; ++k, ++state->next) {
        elements[k] = state->value;
        state->value = step(state->value);
      }
    }
  };
}

InitialValues from_sequence(const Node& values, DML_TENSOR_DATA_TYPE type, Rounding rounding) {
  values.expect_object({"valueCount", "valueStart", "valueDelta"});
  const uint64_t count = values.at("valueCount").uint64();
  // DxDispatch takes "nan", "inf" and "-inf" here too for float types (encode checks them); the exact
  // sequence of --ieee-values is computed from numbers.
  for (const char* key : {"valueStart", "valueDelta"})
    if (!values.at(key).json().is_number() && (rounding == Rounding::kIeee || !values.at(key).json().is_string()))
      values.at(key).fail(rounding == Rounding::kIeee ? "must be a number with --ieee-values"
                                                      : "must be a number, or \"nan\", \"inf\" or \"-inf\"");
  checked_bytes(count, type, values.at("valueCount"));
  if (rounding == Rounding::kIeee) return {type, count, exact_sequence(values, type, count)};
  std::array<std::byte, 8> start{}, delta{};
  encode(values.at("valueStart").json(), type, start.data(), values.at("valueStart"), rounding);
  encode(values.at("valueDelta").json(), type, delta.data(), values.at("valueDelta"), rounding);
  return {type, count, visit_element_type(type, [&]<class T>(std::type_identity<T>) {
            return dxdispatch_sequence<T>(start, delta);
          })};
}

InitialValues from_file(const Node& values, const std::optional<DML_TENSOR_DATA_TYPE>& type,
                        const std::optional<Node>& type_node, const Reader& reader) {
  values.expect_object({"sourcePath"});
  const Node source = values.at("sourcePath");
  const std::filesystem::path path = (reader.folder / source.string()).lexically_normal();
  const FileFormat format = file_format(path, source.place());
  std::vector<std::byte> bytes =
      read_file(path, kMaxResourceBytes, source.place(), reader.budget, "reading '" + path.string() + "'");
  if (format == FileFormat::kNpy) {
    NpyArray array = parse_npy(std::move(bytes), path.string(), source.place());
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

InitialValues load_initial_values(const Node& values, const std::optional<Node>& type_node, const Reader& reader) {
  std::optional<DML_TENSOR_DATA_TYPE> type;
  // DxDispatch's models write UNKNOWN for the mixed list's resource: the same as leaving it out.
  const bool unknown = type_node && type_node->json().is_string() &&
                       (type_node->json() == "UNKNOWN" || type_node->json() == "DML_TENSOR_DATA_TYPE_UNKNOWN");
  if (type_node && !unknown) {
    type = read_data_type(*type_node);
    if (!is_element_type(*type))
      type_node->fail(std::string(data_type_name(*type)) + " is not supported for resources (4-bit elements)");
  }
  if (values.json().is_array()) return type ? from_array(values, *type, reader) : from_mixed_list(values, reader);
  if (values.json().is_string() && values.json() == "deferred")
    values.fail("\"deferred\" resources are bound by DxDispatch's ONNX dispatchables, which opendml does not run");
  if (!values.json().is_object())
    values.fail(
        "must be an array or an object ({valueCount, value}, {valueCount, valueStart, valueDelta} or "
        "{sourcePath}), not " +
        json_type_name(values.json()));
  // As DxDispatch reads them: a "value" makes a constant (a valueDelta beside it is ignored, with a
  // warning) and stands beside no valueStart or sourcePath; a valueStart makes a sequence, whatever
  // else is there; then a sourcePath names a file.
  if (values.find("value")) {
    if (values.find("valueStart") || values.find("sourcePath"))
      values.fail("holds a value beside a " + std::string(values.find("valueStart") ? "valueStart" : "sourcePath") +
                  "; a constant, a sequence and a file are mutually exclusive (as in DxDispatch)");
    return from_constant(values, require_type(type, values, "a constant"), reader.rounding);
  }
  if (values.find("valueStart"))
    return from_sequence(values, require_type(type, values, "a sequence"), reader.rounding);
  if (values.find("sourcePath")) return from_file(values, type, type_node, reader);
  if (values.find("valueDelta"))
    return from_sequence(values, require_type(type, values, "a sequence"), reader.rounding);
  return from_constant(values, require_type(type, values, "a constant"), reader.rounding);
}

}  // namespace

Resource load_resource(const std::string& name, const Node& node, const std::filesystem::path& model_folder,
                       LoadContext& context) {
  node.expect_object({"initialValuesDataType", "initialValues", "sizeInBytes", "initialValuesOffsetInBytes"});
  try {
    const Reader reader{context.budget, context.rounding, model_folder};
    InitialValues values = load_initial_values(node.at("initialValues"), node.find("initialValuesDataType"), reader);
    const uint64_t element = element_bytes(values.type);
    uint64_t size = values.count * element;
    if (const std::optional<Node> requested = node.find("sizeInBytes")) {
      const uint64_t bytes = requested->uint64();
      if (bytes < size)
        requested->fail("is " + std::to_string(bytes) + " but the initial values take " + std::to_string(size) +
                        " bytes; it must be at least that");
      if (bytes > kMaxResourceBytes)
        requested->fail("is " + std::to_string(bytes) + "; the limit is " + std::to_string(kMaxResourceBytes));
      size = bytes;
    }
    if (size > kMaxResourceBytes)
      node.fail("needs " + std::to_string(size) + " bytes; the limit of a resource is " +
                std::to_string(kMaxResourceBytes));
    // DxDispatch's buffer: sizeInBytes as given, else the values' size rounded up to 4 (the device
    // buffer is always rounded up to 4). writeFile writes it whole.
    const uint64_t dxdispatch_bytes = node.find("sizeInBytes") ? size : (size + 3) & ~uint64_t{3};
    // DxDispatch's initialValuesOffsetInBytes is checked as DxDispatch checks it, the values at that
    // offset within its buffer, and otherwise unused: DxDispatch writes the values at the start of
    // the buffer whatever it says.
    if (const std::optional<Node> offset_node = node.find("initialValuesOffsetInBytes")) {
      const uint64_t offset = offset_node->uint64();
      if (offset > dxdispatch_bytes - values.count * element)
        offset_node->fail("is " + std::to_string(offset) + "; the buffer (" + std::to_string(dxdispatch_bytes) +
                          " bytes) is too small for the initial values (" + std::to_string(values.count * element) +
                          " bytes) at that offset");
    }
    size = (size + 3) & ~uint64_t{3};
    context.budget.take(size, true, node.place(), "its device buffer");
    return {name, values.type, values.mixed_list, values.count, dxdispatch_bytes, size, std::move(values.fill)};
  } catch (const std::bad_alloc&) {
    node.fail("out of memory while reading its initial values");
  }
}

}  // namespace opendml::tool
