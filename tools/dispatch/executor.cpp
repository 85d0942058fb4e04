#include "executor.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

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
      // Zeros past the initial values, as DxDispatch pads.
      std::vector<std::byte> contents(r.initial_bytes);
      contents.resize(r.size_in_bytes);
      device_.upload(buffers_.back()->data(), contents.data(), contents.size());
    });
  }
}

odml_buffer_binding Executor::binding(const Region& region) const {
  return {static_cast<std::byte*>(buffers_[region.resource]->data()) + region.offset, region.size};
}

std::vector<std::byte> Executor::download(size_t resource) const {
  std::vector<std::byte> bytes(model_.resources[resource].initial_bytes.size());
  device_.download(bytes.data(), buffers_[resource]->data(), bytes.size());
  return bytes;
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
      const Resource& r = model_.resources[print->resource];
      const std::vector<std::byte> bytes = at_place(command.place, [&] { return download(print->resource); });
      out << "Resource '" << r.name << "': " << format_elements(r.type, bytes) << "\n";
    } else {
      const auto& write = std::get<WriteFileCommand>(command.action);
      const Resource& r = model_.resources[write.resource];
      const std::vector<std::byte> bytes = at_place(command.place, [&] { return download(write.resource); });
      write_file(write.target, write.format == FileFormat::kNpy ? make_npy(r.type, bytes) : bytes,
                 command.place + ".targetPath");
    }
  }
}

}  // namespace opendml::tool
