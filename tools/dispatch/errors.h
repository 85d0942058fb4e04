// The two kinds of failure the tool reports, each as one line on stderr (main.cpp):
// `opendml-dispatch: error: <place>: <why>`.
#pragma once

#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "opendml/opendml.hpp"

namespace opendml::tool {

// A problem with the model, its files, or a call the library refused. `place` says where in the
// model it is, e.g. "dispatchables.join.desc.InputTensors[1].Sizes" or "commands[2]". Exit status 1.
// why() is the whole message: what() is a C string, which would end at a NUL that a JSON string
// (a key, a file name) may hold.
class ModelError : public std::runtime_error {
 public:
  ModelError(std::string place, const std::string& why)
      : std::runtime_error(why), place_(std::move(place)), why_(why) {}
  const std::string& place() const { return place_; }
  const std::string& why() const { return why_; }

 private:
  std::string place_;
  std::string why_;
};

// A problem with the command line; `place` is the option, e.g. "--feature-level". Exit status 2.
class UsageError : public ModelError {
 public:
  using ModelError::ModelError;
};

// The length of the well-formed UTF-8 sequence at text[i] (RFC 3629: no overlong forms, no
// surrogates, nothing past U+10FFFF), or 0 where the bytes there are not one.
inline size_t utf8_sequence_length(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0u; };
  const unsigned lead = byte(0);
  if (lead < 0x80) return 1;
  // The sequence's length, and the range of its second byte (the others are 0x80 to 0xBF).
  const size_t length = lead >= 0xC2 && lead <= 0xDF   ? 2
                        : lead >= 0xE0 && lead <= 0xEF ? 3
                        : lead >= 0xF0 && lead <= 0xF4 ? 4
                                                       : 0;
  const unsigned low = lead == 0xE0 ? 0xA0 : lead == 0xF0 ? 0x90 : 0x80;
  const unsigned high = lead == 0xED ? 0x9F : lead == 0xF4 ? 0x8F : 0xBF;
  if (length == 0 || byte(1) < low || byte(1) > high) return 0;
  for (size_t k = 2; k < length; ++k)
    if (byte(k) < 0x80 || byte(k) > 0xBF) return 0;
  return length;
}

// `opendml-dispatch: <kind>: <place>: <why>` as one line of UTF-8 text, whatever the message holds:
// a JSON key or a file name may contain a newline or a NUL, which are escaped as in JSON (\n,
// \u0000) so that nothing is hidden or cut, and a byte that is not UTF-8 (the JSON parser quotes
// what it read of an ill-formed string) is written \xFF.
inline std::string message_line(std::string_view kind, const std::string& place, const std::string& why) {
  std::string line = "opendml-dispatch: " + std::string(kind) + ": ";
  const std::string text = (place.empty() ? "" : place + ": ") + why;
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    const size_t length = utf8_sequence_length(text, i);
    char escaped[8];
    if (c == '\n') {
      line += "\\n";
    } else if (length == 0) {
      std::snprintf(escaped, sizeof escaped, "\\x%02X", static_cast<unsigned>(static_cast<unsigned char>(c)));
      line += escaped;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
      line += escaped;
    } else {
      line.append(text, i, length);
    }
    i += length == 0 ? 1 : length;
  }
  return line;
}

// "a, b, c": the allowed values, for a message. `name` turns an item into its text.
template <class Items, class Name>
std::string comma_list(const Items& items, Name name) {
  std::string text;
  for (const auto& item : items) text += (text.empty() ? "" : ", ") + std::string(name(item));
  return text;
}

// Runs a call into opendml and reports its failure (the library's message names the operator,
// the field, the value and the rule) at `place` in the model.
template <class Call>
decltype(auto) at_place(const std::string& place, Call&& call) {
  try {
    return call();
  } catch (const opendml::Error& e) {
    throw ModelError(place, e.what());
  }
}

}  // namespace opendml::tool
