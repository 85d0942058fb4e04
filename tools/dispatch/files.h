// Reading and writing the files a model names, with errors at the model's place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace opendml::tool {

enum class FileFormat {
  kNpy,  // NumPy's format, which carries its data type and shape
  kRaw,  // .bin or .dat: the bytes alone
};

// The format a path's extension names; any other extension is a ModelError at `place`.
FileFormat file_format(const std::filesystem::path& path, const std::string& place);

// The whole file; a missing, unreadable or larger-than-max_bytes file is a ModelError at `place`.
std::vector<std::byte> read_file(const std::filesystem::path& path, uint64_t max_bytes, const std::string& place);
void write_file(const std::filesystem::path& path, std::span<const std::byte> bytes, const std::string& place);

}  // namespace opendml::tool
