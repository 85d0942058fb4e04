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

// `opendml-dispatch: <kind>: <place>: <why>` as one line, whatever the message holds: a JSON key
// or a file name may contain a newline or a NUL, which are escaped as in JSON (\n, \u0000) so that
// nothing is hidden or cut.
inline std::string message_line(std::string_view kind, const std::string& place, const std::string& why) {
  std::string line = "opendml-dispatch: " + std::string(kind) + ": ";
  for (const char c : (place.empty() ? "" : place + ": ") + why) {
    if (c == '\n') {
      line += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
      line += escaped;
    } else {
      line += c;
    }
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
