#include "files.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <utility>

#include "budget.h"
#include "errors.h"

namespace opendml::tool {
namespace {

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

std::string quoted(const std::filesystem::path& path) { return "'" + path.string() + "'"; }

}  // namespace

FileFormat file_format(const std::filesystem::path& path, const std::string& place) {
  // The system's file calls take C strings, which would end at the NUL and name another file.
  if (path.native().find('\0') != std::string::npos)
    throw ModelError(place, quoted(path) + " contains a NUL character, which no file name can hold");
  // As DxDispatch decides it: by the extension in any case, .npy for NumPy, .jpg and .png (no other
  // image extension, .jpeg included) for Windows Imaging Component, anything else raw bytes.
  std::string extension = path.extension().string();
  for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (extension == ".npy") return FileFormat::kNpy;
  if (extension == ".jpg" || extension == ".png")
    throw ModelError(place, quoted(path) +
                                " is an image; DxDispatch reads and writes images with Windows Imaging Component, "
                                "which has no Linux counterpart here: use .npy");
  return FileFormat::kRaw;
}

std::vector<std::byte> read_file(const std::filesystem::path& path, uint64_t max_bytes, const std::string& place,
                                 MemoryBudget& budget, const std::string& what) {
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (error) throw ModelError(place, "cannot read " + quoted(path) + ": " + error.message());
  if (!std::filesystem::is_regular_file(status)) throw ModelError(place, quoted(path) + " is not a regular file");
  const uint64_t size = std::filesystem::file_size(path, error);
  if (error) throw ModelError(place, "cannot read " + quoted(path) + ": " + error.message());
  if (size > max_bytes)
    throw ModelError(
        place, quoted(path) + " is " + std::to_string(size) + " bytes; the limit is " + std::to_string(max_bytes));
  budget.take(size, false, place, what);

  File file(std::fopen(path.c_str(), "rb"));
  if (!file) throw ModelError(place, "cannot open " + quoted(path) + ": " + std::strerror(errno));
  std::vector<std::byte> bytes(size);
  if (std::fread(bytes.data(), 1, size, file.get()) != size || std::fgetc(file.get()) != EOF)
    throw ModelError(place, "cannot read " + quoted(path) + ": it changed size while being read");
  return bytes;
}

OutputFile::OutputFile(const std::filesystem::path& path, std::string place) : path_(path), place_(std::move(place)) {
  // As DxDispatch does, the folders on the way are made; where that fails, fopen says why.
  std::error_code ignored;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ignored);
  file_ = std::fopen(path.c_str(), "wb");
  if (!file_) fail();
}

OutputFile::~OutputFile() {
  if (file_) std::fclose(file_);
}

void OutputFile::fail() const {
  throw ModelError(place_, "cannot write " + quoted(path_) + ": " + std::strerror(errno));
}

void OutputFile::write(std::span<const std::byte> bytes) {
  if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) fail();
}

void OutputFile::close() {
  std::FILE* file = std::exchange(file_, nullptr);
  if (std::fclose(file) != 0) fail();
}

}  // namespace opendml::tool
