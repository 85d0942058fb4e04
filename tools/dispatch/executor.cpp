#include "executor.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>

#include "elements.h"
#include "errors.h"
#include "npy.h"

namespace opendml::tool {
namespace {

std::unique_ptr<opendml::Buffer> allocate(const opendml::Device& device, uint64_t bytes) {
  return bytes == 0 ? nullptr : std::make_unique<opendml::Buffer>(device, bytes);
}

odml_buffer_binding whole(const std::unique_ptr<opendml::Buffer>& buffer) {
  return buffer ? buffer->binding() : odml_buffer_binding{};
}

double median(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  const size_t middle = samples.size() / 2;
  return samples.size() % 2 ? samples[middle] : (samples[middle - 1] + samples[middle]) / 2;
}

}  // namespace

Executor::Executor(const Model& model, const opendml::Device& device, DML_FEATURE_LEVEL feature_level,
                   std::optional<uint32_t> timed_iterations)
    : model_(model), device_(device), timed_iterations_(timed_iterations) {
  for (const Dispatchable& d : model.dispatchables) {
    at_place(d.place, [&] {
      opendml::CompiledOperator compiled = opendml::Operator(device_, *d.desc, feature_level).compile();
      const odml_binding_properties properties = compiled.binding_properties();
      operators_.push_back({std::move(compiled), allocate(device_, properties.temporary_size_in_bytes),
                            allocate(device_, properties.persistent_size_in_bytes)});
    });
  }
  for (const Resource& r : model.resources) {
    at_place("resources." + r.name, [&] {
      buffers_.push_back(allocate(device_, r.size_in_bytes));
      // Through a bounded staging buffer: the initial values, then zeros to the end, as DxDispatch pads.
      const uint64_t initial_bytes = r.initial_count * element_bytes(r.type);
      for_each_chunk(r.size_in_bytes, [&](uint64_t offset, std::span<std::byte> chunk) {
        const uint64_t initial = offset < initial_bytes ? std::min<uint64_t>(chunk.size(), initial_bytes - offset) : 0;
        r.fill(offset / element_bytes(r.type), chunk.first(initial));
        std::fill(chunk.begin() + initial, chunk.end(), std::byte{0});
        device_.upload(static_cast<std::byte*>(buffers_.back()->data()) + offset, chunk.data(), chunk.size());
      });
    });
  }
}

void Executor::for_each_chunk(uint64_t bytes, const std::function<void(uint64_t, std::span<std::byte>)>& f) {
  if (staging_.empty()) staging_.resize(kStagingBytes);
  for (uint64_t offset = 0; offset < bytes; offset += kStagingBytes)
    f(offset, std::span(staging_).first(std::min<uint64_t>(kStagingBytes, bytes - offset)));
}

void Executor::download(size_t resource, const std::function<void(std::span<const std::byte>)>& f) {
  const Resource& r = model_.resources[resource];
  for_each_chunk(r.initial_count * element_bytes(r.type), [&](uint64_t offset, std::span<std::byte> chunk) {
    device_.download(chunk.data(), static_cast<const std::byte*>(buffers_[resource]->data()) + offset, chunk.size());
    f(chunk);
  });
}

odml_buffer_binding Executor::binding(const Region& region) const {
  return {static_cast<std::byte*>(buffers_[region.resource]->data()) + region.offset, region.size};
}

void Executor::dispatch(const Command& command, const DispatchCommand& dispatch, std::ostream& out) {
  const Dispatchable& d = model_.dispatchables[dispatch.dispatchable];
  Operator& op = operators_[dispatch.dispatchable];
  // Inputs flagged OWNED_BY_DML are bound at initialize only, from the first dispatch's bindings.
  std::vector<odml_buffer_binding> owned(dispatch.inputs.size()), inputs(dispatch.inputs.size()), outputs;
  for (size_t i = 0; i < dispatch.inputs.size(); ++i)
    (d.owned_inputs[i] ? owned[i] : inputs[i]) = binding(dispatch.inputs[i]);
  for (const Region& region : dispatch.outputs) outputs.push_back(binding(region));
  const bool any_owned = std::find(d.owned_inputs.begin(), d.owned_inputs.end(), true) != d.owned_inputs.end();

  const uint32_t iterations = timed_iterations_.value_or(1);
  std::vector<double> milliseconds;
  at_place(command.place, [&] {
    if (!op.initialized) {
      op.compiled.initialize({owned.data(), any_owned ? static_cast<uint32_t>(owned.size()) : 0, nullptr, 0,
                              whole(op.temporary), whole(op.persistent)});
      op.initialized = true;
    }
    const odml_bindings bindings{inputs.data(),       static_cast<uint32_t>(inputs.size()),
                                 outputs.data(),      static_cast<uint32_t>(outputs.size()),
                                 whole(op.temporary), whole(op.persistent)};
    for (uint32_t i = 0; i < iterations; ++i) {
      const auto start = std::chrono::steady_clock::now();
      op.compiled.execute(bindings);
      device_.synchronize();
      milliseconds.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
  });
  if (timed_iterations_) {
    char line[64];
    std::snprintf(line, sizeof line, "%.4f", median(milliseconds));
    out << "Dispatch '" << d.name << "': " << iterations << " iterations, " << line << " ms median (CPU)\n";
  }
}

void Executor::run(std::ostream& out) {
  for (const Command& command : model_.commands) {
    if (const auto* d = std::get_if<DispatchCommand>(&command.action)) {
      dispatch(command, *d, out);
    } else if (const auto* print = std::get_if<PrintCommand>(&command.action)) {
      // Streamed a chunk at a time: a 1 GiB resource prints without a 3 GB string.
      const Resource& r = model_.resources[print->resource];
      out << "Resource '" << r.name << "': ";
      bool first = true;
      at_place(command.place, [&] {
        download(print->resource, [&](std::span<const std::byte> chunk) {
          out << (first ? "" : ", ") << format_elements(r.type, chunk);
          first = false;
        });
      });
      out << "\n";
    } else {
      const auto& write = std::get<WriteFileCommand>(command.action);
      const Resource& r = model_.resources[write.resource];
      const std::string place = command.place + ".targetPath";
      OutputFile file(write.target, place);
      if (write.format == FileFormat::kNpy) file.write(npy_header(r.type, r.initial_count));
      at_place(command.place, [&] { download(write.resource, [&](std::span<const std::byte> c) { file.write(c); }); });
      file.close();
    }
  }
}

}  // namespace opendml::tool
