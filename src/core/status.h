// Status and Result: how every internal function reports failure. Kernels never throw; the C ABI
// turns a Status into an odml_status plus the thread's last error message.
#pragma once

#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "opendml/opendml.h"

namespace opendml::internal {

class Status {
 public:
  Status() = default;  // success
  Status(odml_status code, std::string message) : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == ODML_STATUS_SUCCESS; }
  odml_status code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  odml_status code_ = ODML_STATUS_SUCCESS;
  std::string message_;
};

// Concatenates anything that streams, for messages: cat("Sizes[", i, "] is ", v).
template <class... Args>
std::string cat(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}

template <class... Args>
Status invalid_argument(const Args&... args) {
  return Status(ODML_STATUS_INVALID_ARGUMENT, cat(args...));
}

template <class... Args>
Status unsupported(const Args&... args) {
  return Status(ODML_STATUS_UNSUPPORTED, cat(args...));
}

// A value or the Status that explains why there is none.
template <class T>
class Result {
 public:
  Result(T value) : state_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : state_(std::move(status)) {}  // NOLINT: implicit by design
  // Anything T is made from (a std::unique_ptr<Derived> for a Result<std::unique_ptr<Base>>).
  template <class U>
  requires(std::is_constructible_v<T, U&&> && !std::is_same_v<std::remove_cvref_t<U>, T> &&
           !std::is_same_v<std::remove_cvref_t<U>, Status>) Result(U&& value)
      : state_(std::in_place_type<T>, std::forward<U>(value)) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(state_); }
  const Status& status() const { return std::get<Status>(state_); }
  T& value() { return std::get<T>(state_); }
  const T& value() const { return std::get<T>(state_); }
  T& operator*() { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> state_;
};

}  // namespace opendml::internal

// Returns from the calling function when `expr` (a Status) is not ok.
#define ODML_RETURN_IF_ERROR(expr)                     \
  do {                                                 \
    ::opendml::internal::Status odml_status_ = (expr); \
    if (!odml_status_.ok()) return odml_status_;       \
  } while (0)
