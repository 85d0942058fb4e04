// Shared by the extension's sources: one way to raise errors, integer narrowing that reports
// instead of wrapping, and a scope that keeps the current CUDA device.
#pragma once

#include <nanobind/nanobind.h>

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "opendml/opendml.hpp"

#ifdef OPENDML_WITH_CUDA
#include <cuda_runtime_api.h>

#include "backends/cuda/cuda_status.h"  // the library's DeviceGuard, one for both
#endif

namespace nb = nanobind;

namespace opendml::python {

// Every error leaves C++ as an opendml::Error; module.cpp turns its status into the Python class
// (opendml.Error for INVALID_ARGUMENT, opendml.UnsupportedError for UNSUPPORTED, ...).
[[noreturn]] inline void invalid(const std::string& message) { throw Error(ODML_STATUS_INVALID_ARGUMENT, message); }
[[noreturn]] inline void unsupported(const std::string& message) { throw Error(ODML_STATUS_UNSUPPORTED, message); }

// Whether a Python exception must reach the caller as it was raised rather than be reported as a
// bad argument: KeyboardInterrupt, SystemExit and the other BaseExceptions that are not Exceptions,
// and MemoryError.
inline bool passes_through(const nb::python_error& e) {
  return !e.matches(PyExc_Exception) || e.matches(PyExc_MemoryError);
}

// A Python error as one line for a message, "TypeError: what it said", without the traceback that
// nb::python_error::what() appends.
inline std::string error_line(const nb::python_error& e) {
  const nb::object value = nb::borrow(e.value());
  return std::string(nb::type_name(value.type()).c_str()) + ": " + nb::str(value).c_str();
}

// After a Python call that failed with the error `expected` names (TypeError: not an integer), the
// error is cleared for the caller to report in its own words; any other error is raised as it is.
inline void clear_expected(PyObject* expected) {
  if (!PyErr_ExceptionMatches(expected)) throw nb::python_error();
  PyErr_Clear();
}

// A Python object made on first use and kept for the life of the process (never released: it may
// outlive the interpreter). Not a function-local static's initialiser: making it can run Python
// code that lets another thread take the GIL and then wait forever on that static's guard (a
// deadlock when several threads make their first call at once). Called with the GIL held; threads
// that race each make one, and the first kept wins.
template <class Make>
PyObject* kept_object(PyObject*& slot, Make&& make) {
  if (slot == nullptr) {
    PyObject* made = nb::object(make()).release().ptr();
    if (slot == nullptr) {
      slot = made;
    } else {
      Py_DECREF(made);
    }
  }
  return slot;
}

// DirectML's sizes, strides and axes are 32-bit and unsigned.
[[noreturn]] inline void not_uint32(const std::string& what, const std::string& value) {
  invalid(what + " is " + value + "; DirectML takes an unsigned 32-bit value (0 to 4294967295)");
}
inline uint32_t to_uint32(int64_t value, const std::string& what) {
  if (value < 0 || value > int64_t(UINT32_MAX)) not_uint32(what, std::to_string(value));
  return static_cast<uint32_t>(value);
}

#ifdef OPENDML_WITH_CUDA
// The library's DeviceGuard (src/backends/cuda/cuda_status.h): device `ordinal` current for the
// scope (a negative one: whichever is), and the thread's context as it was afterwards, however the
// scope ends. Raises opendml.Error where `ordinal` cannot be made current.
class DeviceScope {
 public:
  explicit DeviceScope(int ordinal = -1) : guard_(ordinal) {
    if (!guard_.status().ok()) throw Error(guard_.status().code(), guard_.status().message());
  }

 private:
  internal::DeviceGuard guard_;
};
#endif

// The name of an argument in messages ("concat: arrays[2]"), built only when a message needs it.
struct Name {
  const char* prefix = "";  // "concat: "
  const char* base = "";    // "arrays"
  int index = -1;           // base[index], or base alone when negative
  std::string str() const {
    std::string s = std::string(prefix) + base;
    return index < 0 ? s : s + "[" + std::to_string(index) + "]";
  }
};
inline std::string operator+(const Name& name, const std::string& text) { return name.str() + text; }
inline std::string operator+(const Name& name, const char* text) { return name.str() + text; }

// "a str", "an int": the article and the name of value's type, for messages.
inline std::string a_type(nb::handle value) {
  const std::string name = nb::type_name(value.type()).c_str();
  return (name.find_first_of("aeioAEIO") == 0 ? "an " : "a ") + name;  // "a uint8", "a str"
}

// value.__index__() as a Python int, or opendml.Error naming `what` (a Name or a string) where it
// has none, or is a Python bool (whose __index__ made True axis 1, as NumPy's bools, which refuse
// theirs, are not); any other error its __index__ raises goes through as raised.
template <class What>
nb::object python_index(nb::handle value, const What& what) {
  if (PyBool_Check(value.ptr())) invalid(what + " is a bool; it must be an integer");
  PyObject* index = PyNumber_Index(value.ptr());
  if (index == nullptr) {
    clear_expected(PyExc_TypeError);
    invalid(what + " is " + a_type(value) + "; it must be an integer");
  }
  return nb::steal(index);
}

// An integer argument (anything with __index__), or opendml.Error naming it.
inline int64_t integer(nb::handle value, const Name& what) {
  const nb::object index = python_index(value, what);
  const long long v = PyLong_AsLongLong(index.ptr());
  if (v == -1 && PyErr_Occurred()) {
    clear_expected(PyExc_OverflowError);
    invalid(what + " does not fit in 64 bits");
  }
  return v;
}

// An unsigned 64-bit integer argument (an address, a byte count), or opendml.Error naming it.
inline uint64_t unsigned_integer(nb::handle value, const std::string& what) {
  const nb::object index = python_index(value, what);
  const unsigned long long v = PyLong_AsUnsignedLongLong(index.ptr());
  if (v == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
    clear_expected(PyExc_OverflowError);
    invalid(what + " is " + nb::str(index).c_str() + "; it must be 0 to 2^64 - 1");
  }
  return v;
}

// An integer argument that DirectML takes as a UINT (anything with __index__, of any size), or
// opendml.Error naming it.
inline uint32_t uint32_argument(nb::handle value, const std::string& what) {
  const nb::object index = python_index(value, what);
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow != 0 || v < 0 || v > static_cast<long long>(UINT32_MAX)) not_uint32(what, nb::str(index).c_str());
  return static_cast<uint32_t>(v);
}

// A list, tuple or other sequence argument, or opendml.Error naming it.
inline nb::sequence sequence(nb::handle value, const Name& what) {
  if (!PySequence_Check(value.ptr()) || PyUnicode_Check(value.ptr()) || PyBytes_Check(value.ptr()))
    invalid(what + " is " + a_type(value) + "; it must be a sequence (a list or tuple)");
  return nb::borrow<nb::sequence>(value);
}

// `count` elements of one call's own: up to N (most calls) in place, more on the heap. A heap
// allocation per call costs a good part of a small call's host time, and a Borrowed or a Spec is
// large (room for 32 dimensions).
template <class T, size_t N>
class Few {
 public:
  explicit Few(size_t count) : count_(count) {
    if (count > N) heap_.resize(count);
  }
  T& operator[](size_t i) { return data()[i]; }
  T* data() { return count_ > N ? heap_.data() : local_.data(); }
  const T* data() const { return count_ > N ? heap_.data() : local_.data(); }
  size_t size() const { return count_; }
  std::span<const T> all() const { return {data(), count_}; }
  std::span<const T> first(size_t n) const { return all().first(n); }

 private:
  size_t count_;
  std::array<T, N> local_;
  std::vector<T> heap_;
};

void bind_descriptors(nb::module_& m);
void bind_arrays(nb::module_& m);
void bind_jax(nb::module_& m);  // jax_ffi.cpp, where the build found the XLA FFI headers

// NONZERO's values per coordinate column (docs/contract.md section 7): coordinate offsets
// (ODML_EXTENSION_COORDINATE_OFFSETS) and the fill of the rows past the count
// (ODML_EXTENSION_FILL_ROWS), each extension asked for when it has values.
struct ColumnValues {
  std::span<const uint64_t> offsets, fill;
};

// The C ABI's options: the extension bits as given, and the values (none where a span is empty).
inline odml_operator_options operator_options(uint32_t extensions, ColumnValues columns) {
  const auto& [offsets, fill] = columns;
  return {extensions, static_cast<uint32_t>(offsets.size()), offsets.empty() ? nullptr : offsets.data(),
          static_cast<uint32_t>(fill.size()), fill.empty() ? nullptr : fill.data()};
}

// `p` rounded up to DirectML's 256-byte region alignment (the region was asked for 256 bytes longer).
inline void* align_256(void* p) {
  return reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(p) + 255) & ~uintptr_t{255});
}

}  // namespace opendml::python
