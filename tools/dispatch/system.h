// What the tool can say about the machine: its adapters (-a, -s) and the versions it runs with (-S).
// The CUDA parts are built where the tool is built with CUDA (OPENDML_TOOL_CUDA).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "opendml/opendml.hpp"

namespace opendml::tool {

// The adapters that open, "cpu" first, then "cuda:0", "cuda:1", ... (odml_device_create's names).
std::vector<std::string> adapter_ids();

// One line about an opened adapter: its name and memory, e.g. "cuda:0 (NVIDIA H100 80GB HBM3), 79.1 GiB".
std::string adapter_line(const std::string& id, const opendml::Device& device);

// The first adapter whose id or name contains `text`, ignoring case; none when no adapter matches.
std::optional<std::string> match_adapter(const std::string& text);

// "opendml 0.1.0", then the CUDA runtime and driver versions, one per line.
std::string dependency_versions();

}  // namespace opendml::tool
