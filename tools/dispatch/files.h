// Reading and writing the files a model names, with errors at the model's place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace opendml::tool {

class MemoryBudget;

enum class FileFormat {
  kNpy,  // NumPy's format, which carries its data type and shape
  kRaw,  // .bin or .dat: the bytes alone
};

// The format a path's extension names; any other extension is a ModelError at `place`.
FileFormat file_format(const std::filesystem::path& path, const std::string& place);

// The whole file, its size taken from `budget` for `what` first; a missing, unreadable or
// larger-than-max_bytes file is a ModelError at `place`.
std::vector<std::byte> read_file(const std::filesystem::path& path, uint64_t max_bytes, const std::string& place,
                                 MemoryBudget& budget, const std::string& what);
// A file written a piece at a time (writeFile streams a resource); failures are ModelErrors at `place`.
class OutputFile {
 public:
  OutputFile(const std::filesystem::path& path, std::string place);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  void write(std::span<const std::byte> bytes);
  void close();  // reports a failure to flush; the destructor closes silently

 private:
  [[noreturn]] void fail() const;
  std::filesystem::path path_;
  std::string place_;
  std::FILE* file_;
};

}  // namespace opendml::tool
