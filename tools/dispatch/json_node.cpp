#include "json_node.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <set>
#include <utility>

#include "errors.h"

namespace opendml::tool {
namespace {

// A JSON value as it appears in a message, cut short when long.
std::string quote(const Json& value) {
  std::string text = value.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

// Follows the parser through the document to find a key that repeats within one object, or a
// value nested deeper than kMaxJsonDepth, and to name its place. The depth check runs before the
// deep value is built: nlohmann copies (recursively) the members of an ordered_json object as it
// grows, so an unbounded depth would overflow the stack, and so would any later recursive walk.
constexpr uint64_t kTreeBytesFactor = 4;

class ParseCheck {
 public:
  // `pending`: bytes of parsed values not yet taken from `budget`, which the caller takes at the end
  // (the parser holds a copy of this object).
  ParseCheck(const std::string& file, MemoryBudget& budget, uint64_t& pending)
      : file_(file), budget_(budget), pending_(pending) {}

  bool operator()(int, nlohmann::detail::parse_event_t event, Json& parsed) {
    using Event = nlohmann::detail::parse_event_t;
    // What the tree nlohmann builds can take for each value or key, from the budget 64 KiB at a time:
    // the value in its array or object (a key: its string in its member) with a string's characters,
    // as much again of the room a container leaves spare as it grows by doubling, and all of that
    // twice while an ordered_json object grows, since it copies its members (with everything they
    // hold) rather than moving them. 10^7 one-byte array values peaked at 63 bytes each.
    const uint64_t own = event == nlohmann::detail::parse_event_t::key ? sizeof(std::string) : sizeof(Json);
    pending_ += kTreeBytesFactor * (own + (parsed.is_string() ? parsed.get_ref<const std::string&>().size() : 0));
    if (pending_ >= 65536) {
      budget_.take(pending_, false, place(), "parsing the model file");
      pending_ = 0;
    }
    switch (event) {
      case Event::object_start:
      case Event::array_start:
        if (frames_.size() == kMaxJsonDepth)
          throw ModelError(place(), "values are nested more than " + std::to_string(kMaxJsonDepth) +
                                        " deep here; a model needs far fewer levels");
        frames_.push_back(Frame{event == Event::object_start, {}, {}});
        break;
      case Event::key: {
        Frame& frame = frames_.back();
        frame.key = parsed.get<std::string>();
        if (frame.keys.size() == kMaxJsonMembers)
          throw ModelError(place(), "an object has more than " + std::to_string(kMaxJsonMembers) +
                                        " members here; a model needs far fewer");
        if (!frame.keys.insert(frame.key).second)
          throw ModelError(place(), "the key '" + frame.key + "' appears twice; keys must be unique");
        break;
      }
      case Event::object_end:
      case Event::array_end:
        frames_.pop_back();
        next_element();
        break;
      case Event::value: next_element(); break;
    }
    return true;
  }

 private:
  struct Frame {
    bool object;
    std::set<std::string> keys;
    std::string key;   // the current member, in an object
    size_t index = 0;  // the current element, in an array
  };

  void next_element() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
  }

  std::string place() const {
    std::string text;
    for (const Frame& frame : frames_) {
      if (frame.object)
        text += (text.empty() ? "" : ".") + frame.key;
      else
        text += "[" + std::to_string(frame.index) + "]";
    }
    return text.empty() ? file_ : text;
  }

  const std::string& file_;
  MemoryBudget& budget_;
  uint64_t& pending_;
  std::vector<Frame> frames_;
};

// DxDispatch's JSON extensions (rapidjson's comment and trailing-comma flags) as spaces, so that
// nlohmann reads standard JSON whose lines and columns, in its messages, are the file's own; and,
// as rapidjson's stop-when-done flag has it, nothing after the root object or array.
std::string blank_comments_and_trailing_commas(std::string_view text, const std::string& file) {
  std::string json(text);
  size_t pending_comma = std::string::npos;  // a comma after a value, not yet followed by another
  char last = 0;                             // the last character outside strings and comments
  size_t depth = 0;                          // objects and arrays open
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (c == '/' && i + 1 < json.size() && (json[i + 1] == '/' || json[i + 1] == '*')) {
      const bool line = json[i + 1] == '/';
      const size_t end = line ? json.find('\n', i) : json.find("*/", i + 2);
      if (!line && end == std::string::npos) throw ModelError(file, "invalid JSON: a /* comment is not closed");
      const size_t stop = end == std::string::npos ? json.size() : line ? end : end + 2;
      for (; i < stop; ++i)
        if (json[i] != '\n') json[i] = ' ';
      --i;
      continue;
    }
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '"') {  // a string: skip to its end, escapes included
      for (++i; i < json.size() && json[i] != '"'; ++i)
        if (json[i] == '\\') ++i;
    } else if ((c == '}' || c == ']') && pending_comma != std::string::npos) {
      json[pending_comma] = ' ';  // only after a value: "[,]" stays invalid, as in rapidjson
    }
    pending_comma =
        c == ',' && last != 0 && last != '[' && last != '{' && last != ',' && last != ':' ? i : std::string::npos;
    last = c;
    if (c == '{' || c == '[') ++depth;
    if ((c == '}' || c == ']') && depth > 0 && --depth == 0) return json.erase(i + 1);
  }
  return json;
}

}  // namespace

Json parse_json(std::string_view text, const std::string& file, MemoryBudget& budget) {
  try {
    budget.take(2 * text.size(), false, file, "parsing the model file");  // the text, and the copy parsed
    uint64_t pending = 0;
    Json json = Json::parse(blank_comments_and_trailing_commas(text, file), ParseCheck(file, budget, pending));
    budget.take(pending, false, file, "parsing the model file");
    return json;
  } catch (const nlohmann::json::exception& e) {
    // nlohmann's messages start with "[json.exception.parse_error.101] ".
    std::string why = e.what();
    if (const size_t end = why.find("] "); why.starts_with("[json.exception.") && end != std::string::npos)
      why.erase(0, end + 2);
    throw ModelError(file, "invalid JSON: " + why);
  }
}

std::string json_type_name(const Json& value) {
  switch (value.type()) {
    case Json::value_t::object: return "an object";
    case Json::value_t::array: return "an array";
    case Json::value_t::string: return "a string";
    case Json::value_t::boolean: return "a boolean";
    case Json::value_t::null: return "null";
    default: return "a number";
  }
}

namespace {

// A double as rapidjson's dtoa writes it: its digits d1 d2 ... dn (Grisu2, as nlohmann finds them
// too) with the value d1.d2...dn * 10^(point - 1), laid out by where the decimal point falls.
void append_dxdispatch_double(std::string& out, double value) {
  if (std::signbit(value)) out += '-';
  if (value == 0) {
    out += "0.0";
    return;
  }
  char digits[32];
  int length = 0, exponent = 0;  // value = digits * 10^exponent
  nlohmann::detail::dtoa_impl::grisu2(digits, length, exponent, std::fabs(value));
  const std::string_view text(digits, static_cast<size_t>(length));
  const int point = length + exponent;  // 10^(point - 1) <= |value| < 10^point
  if (exponent >= 0 && point <= 21) {   // a whole number: 1234e7 is 12340000000.0
    out.append(text).append(static_cast<size_t>(exponent), '0') += ".0";
  } else if (point > 0 && point <= 21) {  // 1234e-2 is 12.34
    out.append(text.substr(0, static_cast<size_t>(point))).append(".").append(text.substr(static_cast<size_t>(point)));
  } else if (point > -6 && point <= 0) {  // 1234e-6 is 0.001234
    out.append("0.").append(static_cast<size_t>(-point), '0').append(text);
  } else {  // 1e30, 1.234e33, 2.5e-7: no '+' and no leading zero in the exponent
    out += text[0];
    if (length > 1) out.append(".").append(text.substr(1));
    out += 'e' + std::to_string(point - 1);
  }
}

void append_dxdispatch_string(std::string& out, const std::string& text) {
  // The control characters with a short escape; the others are written "\u00XX".
  static constexpr std::pair<char, char> kShort[] = {{'\b', 'b'}, {'\t', 't'}, {'\n', 'n'}, {'\f', 'f'}, {'\r', 'r'}};
  out += '"';
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    const auto named = std::find_if(std::begin(kShort), std::end(kShort), [&](const auto& e) { return e.first == c; });
    if (c == '"' || c == '\\') {
      out.append(1, '\\') += c;
    } else if (byte >= 0x20) {
      out += c;
    } else if (named != std::end(kShort)) {
      out.append(1, '\\') += named->second;
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04X", static_cast<unsigned>(byte));
      out += escaped;
    }
  }
  out += '"';
}

void append_dxdispatch_json(std::string& out, const Json& value) {
  switch (value.type()) {
    case Json::value_t::object: {
      out += '{';
      bool first = true;
      for (const auto& [key, member] : value.items()) {
        if (!std::exchange(first, false)) out += ',';
        append_dxdispatch_string(out, key);
        out += ':';
        append_dxdispatch_json(out, member);
      }
      out += '}';
      break;
    }
    case Json::value_t::array:
      out += '[';
      for (size_t i = 0; i < value.size(); ++i) {
        if (i > 0) out += ',';
        append_dxdispatch_json(out, value[i]);
      }
      out += ']';
      break;
    case Json::value_t::string: append_dxdispatch_string(out, value.get_ref<const std::string&>()); break;
    case Json::value_t::number_float: append_dxdispatch_double(out, value.get<double>()); break;
    default: out += value.dump();  // integers, booleans and null are written alike
  }
}

}  // namespace

std::string dxdispatch_json_text(const Json& value) {
  std::string text;
  append_dxdispatch_json(text, value);
  return text;
}

void Node::fail(const std::string& why) const { throw ModelError(place_, why); }

void Node::warn(const std::string& why) const {
  if (policy_->warnings) *policy_->warnings << message_line("warning", place_, why) << std::endl;
}

void Node::expect(bool ok, const char* what) const {
  if (!ok) fail(std::string("must be ") + what + ", not " + json_type_name(json()));
}

std::string Node::child_place(std::string_view key) const {
  return root_ ? std::string(key) : place_ + "." + std::string(key);
}

void Node::expect_object(std::span<const std::string_view> known) const {
  expect(json().is_object(), "an object");
  for (const auto& [key, value] : json().items()) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    const std::string why = "unknown field '" + key + "' (known fields: " + comma_list(known, std::identity()) + ")";
    if (policy_->strict) fail(why);
    warn(why + "; it is ignored");
  }
}

std::optional<Node> Node::find(std::string_view key) const {
  expect(json().is_object(), "an object");
  const auto it = json().find(key);
  if (it == json().end()) return std::nullopt;
  return Node(*it, child_place(key), false, policy_);
}

Node Node::at(std::string_view key) const {
  std::optional<Node> member = find(key);
  if (!member) fail("missing required field '" + std::string(key) + "'");
  return *member;
}

std::vector<std::pair<std::string, Node>> Node::members() const {
  expect(json().is_object(), "an object");
  std::vector<std::pair<std::string, Node>> result;
  for (const auto& [key, value] : json().items())
    result.emplace_back(key, Node(value, child_place(key), false, policy_));
  return result;
}

size_t Node::size() const {
  expect(json().is_array(), "an array");
  return json().size();
}

Node Node::element(size_t i) const {
  expect(json().is_array(), "an array");
  return Node(json()[i], place_ + "[" + std::to_string(i) + "]", false, policy_);
}

std::vector<Node> Node::elements() const {
  std::vector<Node> result;
  for (size_t i = 0; i < size(); ++i) result.push_back(element(i));
  return result;
}

std::string Node::string() const {
  expect(json().is_string(), "a string");
  return json().get<std::string>();
}

uint64_t Node::uint64() const {
  const bool ok = json().is_number_unsigned() || (json().is_number_integer() && json().get<int64_t>() >= 0);
  if (!ok) fail("must be a non-negative integer, not " + quote(json()));
  return json().get<uint64_t>();
}

uint32_t Node::uint32() const {
  const uint64_t value = uint64();
  if (value > std::numeric_limits<uint32_t>::max())
    fail("is " + std::to_string(value) + "; it must fit in a UINT (at most 4294967295)");
  return static_cast<uint32_t>(value);
}

std::vector<uint32_t> Node::uint32_array() const {
  std::vector<uint32_t> result;
  for (const Node& element : elements()) result.push_back(element.uint32());
  return result;
}

}  // namespace opendml::tool
