// npy_fuzzer: opendml-dispatch's .npy reader (tools/dispatch/npy.cpp). An input is a file's bytes.
// A file it accepts must survive a round trip: written again with make_npy and read back, it
// holds the same type and the same bytes; and its values must print.
// The fuzzer fails on a crash, a sanitizer report, a failed round trip (abort), or any exception
// but the reader's ModelError.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "elements.h"
#include "errors.h"
#include "npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace opendml::tool;
  NpyArray array;
  try {
    const auto bytes = std::as_bytes(std::span(data, size));
    array = parse_npy({bytes.begin(), bytes.end()}, "fuzz.npy", "fuzz");
  } catch (const ModelError&) {
    return 0;  // rejected with a message, as designed
  }
  const NpyArray again = parse_npy(make_npy(array.type, array.data), "again.npy", "fuzz");
  if (again.type != array.type || again.data != array.data) std::abort();
  std::string text;
  format_elements(text, array.type, array.data, ElementFormat{});
  format_elements(text, array.type, array.data, ElementFormat{true, true, 0, array.data.size()});
  return 0;
}
