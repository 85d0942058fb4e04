// Unit tests of opendml_dispatch_core's pieces that the model files cannot reach (make_npy of no
// elements) or that are cheaper to prove here than with gigabyte models. A plain executable: each
// CHECK that fails prints its line, and the exit status is the number of failures.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "elements.h"
#include "errors.h"
#include "model_enums.h"
#include "npy.h"
#include "timing.h"

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

// What parse_npy says refusing `file`, or "" where it reads it.
std::string npy_refusal(std::vector<std::byte> file) {
  try {
    parse_npy(std::move(file), "t.npy", "test");
  } catch (const ModelError& e) {
    return e.why();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::vector<std::byte> bytes_of(const std::string& text) {
  const auto* first = reinterpret_cast<const std::byte*>(text.data());
  return {first, first + text.size()};
}

// Issue 9: make_npy copied from the null pointer of an empty span (undefined behaviour, which the
// sanitizer build reports). Its file must still be a valid .npy of shape (0,).
void make_npy_of_no_elements() {
  const std::vector<std::byte> file = make_npy(DML_TENSOR_DATA_TYPE_FLOAT32, std::span<const std::byte>());
  CHECK(file.size() % 64 == 0);
  const std::string text(reinterpret_cast<const char*>(file.data()), file.size());
  CHECK(contains(text, "'shape': (0,)"));
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

// A header's dtype in the one-character codes that NumPy and DxDispatch both read ('<d', 'B'), or
// without a byte order ('f4'), as both read it; a code DxDispatch does not read ('<q') stays refused.
void npy_short_type_codes() {
  // A file of two elements of `type` whose header says `descr` instead: the same length, so that
  // the header stays aligned (np.save's descr is always 5 characters with its quotes, '<f8').
  const auto file_of = [](DML_TENSOR_DATA_TYPE type, const std::string& descr) {
    const std::vector<std::byte> zeros(2 * element_bytes(type));
    std::vector<std::byte> file = make_npy(type, zeros);
    const std::string text(reinterpret_cast<const char*>(file.data()), file.size());
    const size_t at = text.find("'descr': ") + 9;
    const std::string quoted = ("'" + descr + "'" + "     ").substr(0, 5);
    std::memcpy(file.data() + at, quoted.data(), 5);
    return file;
  };
  const struct {
    const char* descr;
    DML_TENSOR_DATA_TYPE type;
  } cases[] = {
      {"<d", DML_TENSOR_DATA_TYPE_FLOAT64},  {"d", DML_TENSOR_DATA_TYPE_FLOAT64},  {"f8", DML_TENSOR_DATA_TYPE_FLOAT64},
      {"=f8", DML_TENSOR_DATA_TYPE_FLOAT64}, {"<f", DML_TENSOR_DATA_TYPE_FLOAT32}, {"<i", DML_TENSOR_DATA_TYPE_INT32},
      {"<h", DML_TENSOR_DATA_TYPE_INT16},    {"<H", DML_TENSOR_DATA_TYPE_UINT16},  {"|B", DML_TENSOR_DATA_TYPE_UINT8},
      {"|b", DML_TENSOR_DATA_TYPE_INT8},     {"|?", DML_TENSOR_DATA_TYPE_UINT8}};
  for (const auto& c : cases) {
    const NpyArray back = parse_npy(file_of(c.type, c.descr), "short.npy", "test");
    CHECK(back.type == c.type);
    CHECK(back.data.size() == 2 * element_bytes(c.type));
  }
  for (const char* refused : {"<q", "<e", "", "<", "x8"})
    CHECK(!npy_refusal(file_of(DML_TENSOR_DATA_TYPE_FLOAT64, refused)).empty());
}

// A .npy file built byte by byte, as tools/tests/make_test_files.py builds broken ones: `header` is
// the dict's text, padded with spaces and a newline so that the data starts at a multiple of 64.
std::vector<std::byte> npy_file(const std::string& header, std::span<const std::byte> data, unsigned major = 1,
                                unsigned minor = 0) {
  const size_t length_bytes = major == 1 ? 2 : 4;
  std::string text = header;
  text.append(63 - (8 + length_bytes + text.size()) % 64, ' ') += '\n';
  std::string file = std::string("\x93NUMPY") + static_cast<char>(major) + static_cast<char>(minor);
  for (size_t i = 0; i < length_bytes; ++i) file += static_cast<char>((text.size() >> (8 * i)) & 0xFF);
  file += text;
  std::vector<std::byte> bytes = bytes_of(file);
  bytes.insert(bytes.end(), data.begin(), data.end());
  return bytes;
}

// The header's grammar is read strictly: a minor version other than 0, a key given twice, text after
// the dict, or a version 2.0 file that ends inside its 4-byte header length are each refused, with
// their own message; the same file without the fault is read.
void npy_malformed_headers() {
  const std::vector<std::byte> four(16);  // four FLOAT32 elements
  const std::string good = "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }";
  CHECK(npy_refusal(npy_file(good, four)).empty());
  CHECK(npy_refusal(npy_file(good, four, 2)).empty());
  CHECK(contains(npy_refusal(npy_file(good, four, 1, 1)), ".npy version 1.1 is not supported"));
  CHECK(contains(npy_refusal(npy_file(good, four, 2, 1)), ".npy version 2.1 is not supported"));
  CHECK(
      contains(npy_refusal(npy_file("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", four)),
               "bad .npy header: the key 'descr' appears twice"));
  CHECK(contains(npy_refusal(npy_file(good + " (4,)", four)), "bad .npy header: unexpected text after the dict"));
  const std::string cut("\x93NUMPY\x02\x00\x40\x00", 10);  // version 2.0's length needs 4 bytes
  CHECK(contains(npy_refusal(bytes_of(cut)), "bad .npy header: the file ends in it"));
}

// A one-byte element has no byte order: '>u1' and '>i1' (and '>b1', NumPy's bool) are read as '|u1'
// and '|i1' are; from two bytes on, big-endian data is refused.
void npy_big_endian_bytes() {
  const std::vector<std::byte> two(2);
  const auto file_of = [&](const std::string& descr, std::span<const std::byte> data) {
    return npy_file("{'descr': '" + descr + "', 'fortran_order': False, 'shape': (2,), }", data);
  };
  const std::pair<const char*, DML_TENSOR_DATA_TYPE> cases[] = {
      {">u1", DML_TENSOR_DATA_TYPE_UINT8}, {">i1", DML_TENSOR_DATA_TYPE_INT8}, {">b1", DML_TENSOR_DATA_TYPE_INT8}};
  for (const auto& [descr, type] : cases) {
    const std::string why = npy_refusal(file_of(descr, two));
    CHECK(why.empty());
    if (why.empty()) CHECK(parse_npy(file_of(descr, two), "t.npy", "test").type == type);
  }
  CHECK(contains(npy_refusal(file_of(">i2", std::vector<std::byte>(4))), "big-endian data ('>i2') is not supported"));
}

// A shape of kMaxNpyDims dimensions is written and read back; one more is refused.
void npy_most_dimensions() {
  const std::vector<std::byte> one(4);
  for (const size_t dims : {kMaxNpyDims, kMaxNpyDims + 1}) {
    const std::vector<uint64_t> shape(dims, 1);
    std::vector<std::byte> file = npy_header(DML_TENSOR_DATA_TYPE_FLOAT32, shape);
    file.insert(file.end(), one.begin(), one.end());
    const std::string why = npy_refusal(file);
    CHECK(dims == kMaxNpyDims ? why.empty() : contains(why, "the shape has more than 64 dimensions"));
  }
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

// DxDispatch's split and statistics, exactly, below the bound: the first `warmup` samples are cold
// but never the last, and the median is the upper middle one.
void timings_split_as_dxdispatch() {
  Timings timings(1);
  for (const double ms : {5.0, 1.0, 3.0, 2.0}) timings.add({ms, 0});
  timings.finish();
  CHECK(timings.count() == 4);
  const Stats cold = timings.cold().stats(&Sample::cpu), hot = timings.hot().stats(&Sample::cpu);
  CHECK(cold.count == 1 && cold.min == 5 && cold.median == 5 && cold.max == 5);
  CHECK(hot.count == 3 && hot.average == 2 && hot.min == 1 && hot.median == 2 && hot.max == 3);
  Timings all_warm(10);
  for (const double ms : {4.0, 6.0, 7.0}) all_warm.add({ms, ms / 2});
  all_warm.finish();
  CHECK(all_warm.cold().count() == 2 && all_warm.hot().count() == 1);
  CHECK(all_warm.hot().stats(&Sample::cpu).median == 7 && all_warm.hot().stats(&Sample::gpu).median == 3.5);
  CHECK(all_warm.cold().stats(&Sample::gpu).median == 3);  // the upper of 2 and 3
}

// Issue: -t kept every sample, growing ~95 MB/s on a fast operator. Past the bound a run keeps an
// evenly spaced subset (every stride-th from the first); count, average, min and max stay exact.
void timings_stay_bounded() {
  SampleRun run;
  const uint64_t n = 3 * SampleRun::kMaxKept + 5;
  for (uint64_t i = 0; i < n; ++i) run.add({static_cast<double>(i), 0});
  CHECK(run.count() == n && run.stride() == 4 && run.kept().size() <= SampleRun::kMaxKept);
  bool spaced = true;
  for (size_t i = 0; i < run.kept().size(); ++i) spaced = spaced && run.kept()[i].cpu == static_cast<double>(i * 4);
  CHECK(spaced);
  CHECK(run.kept().size() == (n + 3) / 4);  // samples 0, 4, ..., n - 1 rounded down to a multiple of 4
  const Stats stats = run.stats(&Sample::cpu);
  CHECK(stats.count == n && stats.min == 0 && stats.max == static_cast<double>(n - 1));
  CHECK(stats.average == static_cast<double>(n - 1) / 2);
  CHECK(std::abs(stats.median - static_cast<double>(n) / 2) <= 4);
}

// equal_ignoring_case (command and dispatchable types) passed each char to std::tolower, which
// takes an unsigned char's value: a byte past 0x7F, as in a UTF-8 type name, was a negative int
// (undefined behaviour). Such bytes compare as themselves, in the C locale.
void equal_ignoring_case_of_bytes_past_ascii() {
  CHECK(equal_ignoring_case("Dispatch", "dISPATCH"));
  CHECK(equal_ignoring_case("\xC3\x89print\xFF", "\xC3\x89PRINT\xFF"));
  CHECK(!equal_ignoring_case("\xC3\x89", "\xC3\xA9"));
  CHECK(!equal_ignoring_case("print\x80", "print"));
}

}  // namespace

// An error line is UTF-8 text whatever its message holds: nlohmann quotes the bytes it read of an
// ill-formed string, which went out raw. Well-formed sequences of every length pass as they are;
// each byte of an ill-formed one (a stray continuation, an overlong form, a surrogate, past
// U+10FFFF, cut short) is written \xNN, and control characters are escaped as in JSON.
void message_line_is_utf8() {
  const auto line = [](const std::string& why) { return message_line("error", "p", why); };
  const std::string prefix = "opendml-dispatch: error: p: ";
  CHECK(line("a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\xF4\x8F\xBF\xBF") ==
        prefix + "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\xF4\x8F\xBF\xBF");
  CHECK(line("A\xFF'") == prefix + "A\\xFF'");
  CHECK(line("\x80\xBF") == prefix + "\\x80\\xBF");
  CHECK(line("\xC0\x80\xC1\xBF") == prefix + "\\xC0\\x80\\xC1\\xBF");  // overlong
  CHECK(line("\xE0\x9F\xBF") == prefix + "\\xE0\\x9F\\xBF");           // overlong
  CHECK(line("\xED\xA0\x80") == prefix + "\\xED\\xA0\\x80");           // a surrogate
  CHECK(line("\xF4\x90\x80\x80") == prefix + "\\xF4\\x90\\x80\\x80");  // past U+10FFFF
  CHECK(line("\xE2\x82") == prefix + "\\xE2\\x82");                    // cut short
  CHECK(line("\xE2\x82x") == prefix + "\\xE2\\x82x");
  CHECK(line(std::string("a\nb\0c\x1F", 6)) == prefix + "a\\nb\\u0000c\\u001f");
}

int main() {
  message_line_is_utf8();
  equal_ignoring_case_of_bytes_past_ascii();
  timings_split_as_dxdispatch();
  timings_stay_bounded();
  half_from_double_rounds_to_nearest_even();
  make_npy_of_no_elements();
  make_npy_round_trip();
  npy_short_type_codes();
  npy_malformed_headers();
  npy_big_endian_bytes();
  npy_most_dimensions();
  if (failures == 0) std::puts("all unit tests passed");
  return failures;
}
