// Unit tests of opendml_dispatch_core's pieces that the model files cannot reach (make_npy of no
// elements) or that are cheaper to prove here than with gigabyte models. A plain executable: each
// CHECK that fails prints its line, and the exit status is the number of failures.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "elements.h"
#include "errors.h"
#include "npy.h"

namespace {

int failures = 0;

#define CHECK(condition)                                                                 \
  do {                                                                                   \
    if (!(condition)) {                                                                  \
      std::fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #condition); \
      ++failures;                                                                        \
    }                                                                                    \
  } while (0)

using namespace opendml::tool;

// Issue 9: make_npy copied from the null pointer of an empty span (undefined behaviour, which the
// sanitizer build reports). Its file must still be a valid .npy of shape (0,).
void make_npy_of_no_elements() {
  const std::vector<std::byte> file = make_npy(DML_TENSOR_DATA_TYPE_FLOAT32, std::span<const std::byte>());
  CHECK(file.size() % 64 == 0);
  const std::string text(reinterpret_cast<const char*>(file.data()), file.size());
  CHECK(text.find("'shape': (0,)") != std::string::npos);
  const NpyArray back = parse_npy(file, "empty.npy", "test");
  CHECK(back.type == DML_TENSOR_DATA_TYPE_FLOAT32);
  CHECK(back.data.empty());
}

void make_npy_round_trip() {
  const float values[] = {1.0f, -2.5f, 3.0f};
  const auto bytes = std::as_bytes(std::span(values));
  const NpyArray back = parse_npy(make_npy(DML_TENSOR_DATA_TYPE_FLOAT32, bytes), "values.npy", "test");
  CHECK(back.type == DML_TENSOR_DATA_TYPE_FLOAT32);
  CHECK(back.data.size() == sizeof values && std::memcmp(back.data.data(), values, sizeof values) == 0);
}

// half_from_double works on the bits: every half converts back to itself, a value halfway between
// two neighbours goes to the even one, and anything past it to the other; beyond 65504 rounds to
// infinity from 65520 on.
void half_from_double_rounds_to_nearest_even() {
  for (uint32_t bits = 0; bits < 0x7C00; ++bits) {
    for (const uint16_t sign : {uint16_t{0}, uint16_t{0x8000}}) {
      const auto h = static_cast<uint16_t>(bits | sign);
      const double value = half_to_float(h);
      CHECK(half_from_double(value) == h);
      const double next = half_to_float(static_cast<uint16_t>(h + 1));  // 0x7C00 + sign: infinity
      const double halfway = bits == 0x7BFF ? (sign ? -65520.0 : 65520.0) : (value + next) / 2;
      const uint16_t even = (h & 1) ? static_cast<uint16_t>(h + 1) : h;
      CHECK(half_from_double(halfway) == even);
      CHECK(half_from_double(std::nextafter(halfway, value)) == h);
      CHECK(half_from_double(std::nextafter(halfway, 2 * halfway - value)) == static_cast<uint16_t>(h + 1));
    }
  }
  CHECK(half_from_double(1e300) == 0x7C00);
  CHECK(half_from_double(-INFINITY) == 0xFC00);
  CHECK((half_from_double(NAN) & 0x7E00) == 0x7E00);
  CHECK(half_from_double(1e-300) == 0);
  CHECK(half_from_double(-0.0) == 0x8000);
}

}  // namespace

int main() {
  half_from_double_rounds_to_nearest_even();
  make_npy_of_no_elements();
  make_npy_round_trip();
  if (failures == 0) std::puts("all unit tests passed");
  return failures;
}
