// Reading JSON with its place in the model, so that every error can say where it is
// ("dispatchables.join.desc.InputTensors[1].Sizes: must be an array, not a string").
#pragma once

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "budget.h"

namespace opendml::tool {

// Keeps the file's order of members, so that the first problem in the file is the one reported.
using Json = nlohmann::ordered_json;

// The deepest nesting of arrays and objects a model file may have. DxDispatch's deepest value is a
// tensor desc's Sizes, 7 levels down; nothing in the tool recurses deeper than this.
inline constexpr size_t kMaxJsonDepth = 64;

// The most members one object may have. nlohmann's ordered_json finds a key by looking at every
// member before it, so an object of n members takes n^2 / 2 comparisons to read: 160,000 resources
// (a 10 MB file) took 45 s. A model has a few dozen.
inline constexpr size_t kMaxJsonMembers = 16384;

// Parses a whole model file as DxDispatch reads it: `//` and `/* */` comments and trailing commas
// are allowed. Invalid JSON and a key repeated within one object are ModelErrors: nlohmann would
// silently keep the last of two equal keys. The copy of the text it parses and every value of the
// tree come from `budget`, as they are made.
Json parse_json(std::string_view text, const std::string& file, MemoryBudget& budget);

// What to do with a key the tool does not know. DxDispatch ignores it; opendml-dispatch warns about
// each one on `warnings` (so that a typo is still seen) and runs the model, or, when strict
// (--strict), rejects the model.
struct KeyPolicy {
  bool strict = false;
  std::ostream* warnings = nullptr;  // null: the warnings go nowhere
};

// "a string", "an object", ...: for messages.
std::string json_type_name(const Json& value);

// `value` as compact JSON text the way DxDispatch writes a command for --print_commands (rapidjson's
// Writer): numbers written as integers stay integers; a double keeps Grisu2's shortest digits, as
// plain decimals from 1e-6 up to below 1e21 ("100000000000000000000.0", "0.00001") and otherwise
// as "1e30", "2.5e-7"; in strings only '"', '\\' and control characters are escaped, those without
// a short escape as upper-case "\u001F".
std::string dxdispatch_json_text(const Json& value);

// A JSON value and its place. Nodes refer to the Json they were made from, which must outlive them.
class Node {
 public:
  // The model's root: its children's places start with their key ("resources"), and its own place
  // is the file name.
  static Node root(const Json& value, std::string file, const KeyPolicy& policy) {
    return Node(value, std::move(file), true, &policy);
  }

  const Json& json() const { return *value_; }
  const std::string& place() const { return place_; }
  [[noreturn]] void fail(const std::string& why) const;
  // A warning line about this value on the policy's stream (KeyPolicy), for a value read as
  // DxDispatch reads it where that may not be what the model means; --strict leaves it a warning.
  void warn(const std::string& why) const;

  // Requires an object; a key not in `known` is warned about or, when strict, an error (KeyPolicy).
  void expect_object(std::span<const std::string_view> known) const;
  void expect_object(std::initializer_list<std::string_view> known) const {
    expect_object(std::span(known.begin(), known.size()));
  }
  std::optional<Node> find(std::string_view key) const;
  Node at(std::string_view key) const;  // a required member
  std::vector<std::pair<std::string, Node>> members() const;
  // Require an array. For long arrays (initial values), element by element rather than all at once.
  size_t size() const;
  Node element(size_t i) const;
  std::vector<Node> elements() const;

  std::string string() const;
  uint64_t uint64() const;
  uint32_t uint32() const;
  std::vector<uint32_t> uint32_array() const;

 private:
  Node(const Json& value, std::string place, bool root, const KeyPolicy* policy)
      : value_(&value), place_(std::move(place)), root_(root), policy_(policy) {}
  std::string child_place(std::string_view key) const;
  void expect(bool ok, const char* what) const;

  const Json* value_;
  std::string place_;
  bool root_;
  const KeyPolicy* policy_;
};

}  // namespace opendml::tool
