#include "npy.h"

#include <cstring>
#include <string_view>
#include <utility>

#include "elements.h"
#include "errors.h"

namespace opendml::tool {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";

// "f4", "i2", "u1": NumPy's kind and size of an element of `type`, without the byte order.
std::string dtype_code(DML_TENSOR_DATA_TYPE type) {
  const char kind = visit_element_type(type, []<class T>(std::type_identity<T>) {
    if constexpr (std::is_same_v<T, Half> || std::is_floating_point_v<T>)
      return 'f';
    else
      return std::is_signed_v<T> ? 'i' : 'u';
  });
  return kind + std::to_string(element_bytes(type));
}

struct Header {
  std::string descr;
  bool fortran_order = false;
  std::vector<uint64_t> shape;
};

// The header is the text of a Python dict, as NumPy writes it:
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// followed by spaces and a newline. This reads exactly that grammar and nothing more.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& file, const std::string& place)
      : text_(text), file_(file), place_(place) {}

  Header parse() {
    Header header;
    bool seen[3] = {};
    expect('{');
    while (!peek('}')) {
      const std::string key = string();
      expect(':');
      const int index = key == "descr" ? 0 : key == "fortran_order" ? 1 : key == "shape" ? 2 : -1;
      if (index < 0) fail("unknown key '" + key + "'");
      if (seen[index]) fail("the key '" + key + "' appears twice");
      seen[index] = true;
      if (index == 0) header.descr = string();
      if (index == 1) header.fortran_order = boolean();
      if (index == 2) header.shape = tuple();
      if (!consume(',')) break;
    }
    expect('}');
    skip_spaces();
    if (pos_ != text_.size()) fail("unexpected text after the dict");
    for (int i = 0; i < 3; ++i)
      if (!seen[i]) fail(std::string("missing key '") + (i == 0 ? "descr" : i == 1 ? "fortran_order" : "shape") + "'");
    return header;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw ModelError(place_, file_ + ": bad .npy header: " + why + " (at character " + std::to_string(pos_) + ")");
  }
  void skip_spaces() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\t')) ++pos_;
  }
  bool peek(char c) {
    skip_spaces();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  bool consume(char c) {
    if (!peek(c)) return false;
    ++pos_;
    return true;
  }
  void expect(char c) {
    if (!consume(c)) fail(std::string("expected '") + c + "'");
  }
  std::string string() {
    skip_spaces();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) fail("expected a quoted string");
    const char quote = text_[pos_++];
    const size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) fail("unterminated string");
    std::string value(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return value;
  }
  bool boolean() {
    skip_spaces();
    for (const bool value : {true, false}) {
      const std::string_view word = value ? "True" : "False";
      if (text_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return value;
      }
    }
    fail("expected True or False");
  }
  std::vector<uint64_t> tuple() {
    std::vector<uint64_t> values;
    expect('(');
    while (!peek(')')) {
      if (values.size() == kMaxNpyDims) fail("the shape has more than " + std::to_string(kMaxNpyDims) + " dimensions");
      values.push_back(integer());
      if (!consume(',')) break;
    }
    expect(')');
    return values;
  }
  uint64_t integer() {
    skip_spaces();
    const size_t start = pos_;
    uint64_t value = 0;
    for (; pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9'; ++pos_)
      if (__builtin_mul_overflow(value, 10, &value) || __builtin_add_overflow(value, text_[pos_] - '0', &value))
        fail("a dimension is too large");
    if (pos_ == start) fail("expected a dimension");
    if (pos_ < text_.size() && text_[pos_] == 'L') ++pos_;  // Python 2's long suffix
    return value;
  }

  std::string_view text_;
  size_t pos_ = 0;
  const std::string& file_;
  const std::string& place_;
};

uint64_t read_le(std::span<const std::byte> bytes, size_t offset, size_t count) {
  uint64_t value = 0;
  for (size_t i = 0; i < count; ++i) value |= static_cast<uint64_t>(bytes[offset + i]) << (8 * i);
  return value;
}

DML_TENSOR_DATA_TYPE data_type_of(const std::string& descr, const std::string& place, const std::string& file) {
  // A byte order first, or none ('f4' is NumPy's native order, as DxDispatch reads it too).
  const bool ordered = !descr.empty() && std::string_view("<>|=").find(descr[0]) != std::string_view::npos;
  const char order = ordered ? descr[0] : '=';
  std::string code = ordered ? descr.substr(1) : descr;
  // Codes read as DxDispatch reads them, where NumPy reads them too: NumPy's bool ('b1', a byte of 0
  // or 1) is INT8, as DxDispatch reads the 'b' as a signed byte, and the one-character codes ('?',
  // NumPy's bool again, is UINT8 to DxDispatch). np.save writes no one-character code, but a header
  // written by hand may.
  static constexpr std::pair<std::string_view, DML_TENSOR_DATA_TYPE> kAliases[] = {
      {"b1", DML_TENSOR_DATA_TYPE_INT8}, {"?", DML_TENSOR_DATA_TYPE_UINT8},   {"b", DML_TENSOR_DATA_TYPE_INT8},
      {"B", DML_TENSOR_DATA_TYPE_UINT8}, {"h", DML_TENSOR_DATA_TYPE_INT16},   {"H", DML_TENSOR_DATA_TYPE_UINT16},
      {"i", DML_TENSOR_DATA_TYPE_INT32}, {"f", DML_TENSOR_DATA_TYPE_FLOAT32}, {"d", DML_TENSOR_DATA_TYPE_FLOAT64}};
  for (const auto& [alias, type] : kAliases)
    if (code == alias) code = dtype_code(type);
  std::string supported;
  for (DML_TENSOR_DATA_TYPE type : data_types()) {
    if (!is_element_type(type)) continue;
    supported += (supported.empty() ? "" : ", ") + dtype_code(type);
    if (dtype_code(type) != code) continue;
    if (order == '>' && data_type_bits(type) > 8)
      throw ModelError(place, file + ": big-endian data ('" + descr + "') is not supported; save it little-endian");
    return type;
  }
  throw ModelError(place, file + ": the dtype '" + descr + "' is not supported (supported: " + supported + ")");
}

std::string shape_text(const std::vector<uint64_t>& shape) {
  std::string text = "(";
  for (uint64_t size : shape) text += std::to_string(size) + ", ";
  if (!shape.empty()) text.erase(text.size() - (shape.size() == 1 ? 1 : 2));
  return text + ")";
}

}  // namespace

NpyArray parse_npy(std::vector<std::byte> bytes, const std::string& file_name, const std::string& place) {
  const std::string file = "'" + file_name + "'";
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic.data(), kMagic.size()) != 0)
    throw ModelError(place, file + " is not a .npy file: it does not start with \"\\x93NUMPY\"");
  const auto major = static_cast<unsigned>(bytes[6]), minor = static_cast<unsigned>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    throw ModelError(place, file + ": .npy version " + std::to_string(major) + "." + std::to_string(minor) +
                                " is not supported (1.0, 2.0 and 3.0 are)");
  const size_t length_bytes = major == 1 ? 2 : 4;
  if (bytes.size() < 8 + length_bytes) throw ModelError(place, file + ": bad .npy header: the file ends in it");
  const uint64_t header_length = read_le(bytes, 8, length_bytes);
  const uint64_t data_start = 8 + length_bytes + header_length;
  if (data_start > bytes.size())
    throw ModelError(place, file + ": bad .npy header: its length, " + std::to_string(header_length) +
                                " bytes, runs past the end of the file");
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()) + 8 + length_bytes, header_length);
  const Header header = HeaderParser(text, file, place).parse();

  const DML_TENSOR_DATA_TYPE type = data_type_of(header.descr, place, file);
  if (header.fortran_order)
    throw ModelError(place, file + ": fortran_order is True; only C-order (row-major) arrays are supported");
  uint64_t count = 1, needed = 0;
  for (uint64_t size : header.shape)
    if (__builtin_mul_overflow(count, size, &count)) throw ModelError(place, file + ": the shape is too large");
  if (__builtin_mul_overflow(count, element_bytes(type), &needed))
    throw ModelError(place, file + ": the shape is too large");
  const uint64_t data_bytes = bytes.size() - data_start;
  if (data_bytes != needed)
    throw ModelError(place, file + ": the data is " + std::to_string(data_bytes) + " bytes but the shape " +
                                shape_text(header.shape) + " of '" + header.descr + "' needs " +
                                std::to_string(needed));
  // The header dropped in place: the file's bytes become the array's, never held twice.
  bytes.erase(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(data_start));
  return {type, std::move(bytes)};
}

std::vector<std::byte> npy_header(DML_TENSOR_DATA_TYPE type, std::span<const uint64_t> shape) {
  const char order = element_bytes(type) == 1 ? '|' : '<';
  std::string header = std::string("{'descr': '") + order + dtype_code(type) +
                       "', 'fortran_order': False, 'shape': " + shape_text({shape.begin(), shape.end()}) + ", }";
  // NumPy pads the header with spaces so that the data starts at a multiple of 64, then a newline.
  header.append(63 - (10 + header.size()) % 64, ' ');
  header += '\n';
  std::vector<std::byte> file(10 + header.size());
  std::memcpy(file.data(), kMagic.data(), kMagic.size());
  file[6] = std::byte{1};
  file[7] = std::byte{0};
  file[8] = static_cast<std::byte>(header.size() & 0xFF);
  file[9] = static_cast<std::byte>(header.size() >> 8);
  std::memcpy(file.data() + 10, header.data(), header.size());
  return file;
}

std::vector<std::byte> make_npy(DML_TENSOR_DATA_TYPE type, std::span<const std::byte> data) {
  const uint64_t count = data.size() / element_bytes(type);
  std::vector<std::byte> file = npy_header(type, std::span(&count, 1));
  // insert, not memcpy: an empty span may hold a null pointer, which memcpy must not get even for 0 bytes.
  file.insert(file.end(), data.begin(), data.end());
  return file;
}

}  // namespace opendml::tool
