#include "executor.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>

#include "elements.h"
#include "errors.h"
#include "npy.h"
#include "system.h"
#include "timing.h"

namespace opendml::tool {
namespace {

std::unique_ptr<opendml::Buffer> allocate(const opendml::Device& device, uint64_t bytes) {
  return bytes == 0 ? nullptr : std::make_unique<opendml::Buffer>(device, bytes);
}

odml_buffer_binding whole(const std::unique_ptr<opendml::Buffer>& buffer) {
  return buffer ? buffer->binding() : odml_buffer_binding{};
}

std::string fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

std::string stats_line(const char* what, const Stats& s) {
  return std::string(what) + " : " + std::to_string(s.count) + " samples, " + fixed(s.average, 4) + " ms average, " +
         fixed(s.min, 4) + " ms min, " + fixed(s.median, 4) + " ms median, " + fixed(s.max, 4) + " ms max\n";
}

}  // namespace

Executor::Executor(const Model& model, const opendml::Device& device, const RunOptions& options, MemoryBudget& budget)
    : model_(model), device_(device), options_(options) {
  for (const Dispatchable& d : model.dispatchables) {
    at_place(d.place, [&] {
      opendml::CompiledOperator compiled = opendml::Operator(device_, *d.desc, options.feature_level).compile();
      const odml_binding_properties properties = compiled.binding_properties();
      budget.take(properties.temporary_size_in_bytes, true, d.place, "its temporary region");
      budget.take(properties.persistent_size_in_bytes, true, d.place, "its persistent region");
      operators_.push_back({std::move(compiled), allocate(device_, properties.temporary_size_in_bytes),
                            allocate(device_, properties.persistent_size_in_bytes)});
    });
  }
  for (const Resource& r : model.resources) {
    at_place("resources." + r.name, [&] {
      buffers_.push_back(allocate(device_, r.size_in_bytes));
      // Through a bounded staging buffer: the initial values from byte 0, then zeros, as DxDispatch
      // pads. The values end at a multiple of the element size, as the chunks do.
      const uint64_t end = r.initial_count * element_bytes(r.type);
      for_each_chunk(r.size_in_bytes, [&](uint64_t offset, std::span<std::byte> chunk) {
        std::fill(chunk.begin(), chunk.end(), std::byte{0});
        if (offset < end)
          r.fill(offset / element_bytes(r.type), chunk.first(std::min<uint64_t>(end - offset, chunk.size())));
        device_.upload(static_cast<std::byte*>(buffers_.back()->data()) + offset, chunk.data(), chunk.size());
      });
    });
  }
  // As DxDispatch does, every dispatchable is initialized before the first command, its OWNED_BY_DML
  // inputs from its own `bindings`; one that leaves some to its first dispatch waits for it.
  for (size_t i = 0; i < model.dispatchables.size(); ++i) {
    const Dispatchable& d = model.dispatchables[i];
    std::vector<odml_buffer_binding> owned(d.owned_inputs.size());
    bool all_given = true;
    for (size_t k = 0; k < owned.size(); ++k) {
      const bool given = k < d.initialize_inputs.size() && d.initialize_inputs[k];
      if (d.owned_inputs[k]) all_given = all_given && given;
      if (d.owned_inputs[k] && given) owned[k] = binding(*d.initialize_inputs[k]);
    }
    if (all_given) at_place(d.place, [&] { initialize(operators_[i], d, owned); });
  }
}

void Executor::initialize(Operator& op, const Dispatchable& d, std::span<const odml_buffer_binding> owned) {
  const bool any_owned = std::find(d.owned_inputs.begin(), d.owned_inputs.end(), true) != d.owned_inputs.end();
  op.compiled.initialize({owned.data(), any_owned ? static_cast<uint32_t>(owned.size()) : 0, nullptr, 0,
                          whole(op.temporary), whole(op.persistent)});
  op.initialized = true;
}

void Executor::for_each_chunk(uint64_t bytes, const std::function<void(uint64_t, std::span<std::byte>)>& f) {
  if (staging_.empty()) staging_.resize(kStagingBytes);
  for (uint64_t offset = 0; offset < bytes; offset += kStagingBytes)
    f(offset, std::span(staging_).first(std::min<uint64_t>(kStagingBytes, bytes - offset)));
}

void Executor::download(size_t resource, uint64_t bytes, const std::function<void(std::span<const std::byte>)>& f) {
  for_each_chunk(bytes, [&](uint64_t offset, std::span<std::byte> chunk) {
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
  // Inputs flagged OWNED_BY_DML are bound at initialize only: from the dispatchable's "bindings"
  // (initialized before the first command), or else from the first dispatch's.
  std::vector<odml_buffer_binding> owned(dispatch.inputs.size()), inputs(dispatch.inputs.size()), outputs;
  for (size_t i = 0; i < dispatch.inputs.size(); ++i) {
    const bool given = i < d.initialize_inputs.size() && d.initialize_inputs[i];
    (d.owned_inputs[i] ? owned[i] : inputs[i]) = binding(given ? *d.initialize_inputs[i] : dispatch.inputs[i]);
  }
  for (const Region& region : dispatch.outputs) outputs.push_back(binding(region));

  const NvtxRange range("Dispatch: " + d.name);
  GpuTimer gpu(device_.name());
  Timings timings(options_.warmup);
  at_place(command.place, [&] {
    if (!op.initialized) initialize(op, d, owned);
    const odml_bindings bindings{inputs.data(),       static_cast<uint32_t>(inputs.size()),
                                 outputs.data(),      static_cast<uint32_t>(outputs.size()),
                                 whole(op.temporary), whole(op.persistent)};
    using Clock = std::chrono::steady_clock;
    const auto since = [](Clock::time_point start) {
      return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    };
    const Clock::time_point loop = Clock::now();
    const uint32_t iterations = options_.milliseconds_to_run ? UINT32_MAX : options_.iterations;
    for (uint32_t i = 0; i < iterations; ++i) {
      const Clock::time_point start = Clock::now();
      gpu.start();
      for (uint32_t r = 0; r < options_.repeat; ++r) op.compiled.execute(bindings);
      gpu.stop();
      device_.synchronize();
      timings.add({since(start) / options_.repeat, gpu.elapsed_ms() / options_.repeat});
      if (options_.milliseconds_to_run && since(loop) > *options_.milliseconds_to_run) break;
    }
  });

  // No iterations (-i 0): DxDispatch neither dispatches nor prints a line.
  if (timings.count() == 0) return;
  timings.finish();

  // DxDispatch's lines: the first samples are warm-up ("cold"), at least one is left "hot"; on CUDA
  // a GPU column (events on the stream) beside the CPU's.
  const Stats cpu_cold = timings.cold().stats(&Sample::cpu), cpu_hot = timings.hot().stats(&Sample::cpu);
  const Stats gpu_cold = gpu.active() ? timings.cold().stats(&Sample::gpu) : Stats{};
  const Stats gpu_hot = gpu.active() ? timings.hot().stats(&Sample::gpu) : Stats{};
  const std::string head = "Dispatch '" + d.name + "': " + std::to_string(timings.count()) + " iterations";
  if (options_.verbosity == 0) {
    out << head << ", " << fixed(cpu_hot.median, 4) << " ms median (CPU)";
    if (gpu.active()) out << ", " << fixed(gpu_hot.median, 6) << " ms median (GPU)";
    out << "\n";
  } else {
    out << head << "\n";
    if (cpu_cold.count > 0) out << stats_line("CPU Timings (Cold)", cpu_cold);
    if (gpu_cold.count > 0) out << stats_line("GPU Timings (Cold)", gpu_cold);
    out << stats_line("CPU Timings (Hot) ", cpu_hot);
    if (gpu_hot.count > 0) out << stats_line("GPU Timings (Hot) ", gpu_hot);
  }
  if (options_.verbosity >= 2) {
    out << "The timings of each iteration: \n";
    uint64_t first = 0;  // the run's first iteration
    for (const SampleRun* run : {&timings.cold(), &timings.hot()}) {
      // Past the bound, only the kept samples are there to list; a line says which they are.
      if (run->stride() > 1)
        out << "Iterations " << first << " to " << first + run->count() - 1 << ": one in " << run->stride()
            << " is kept (at most " << SampleRun::kMaxKept << " a run)\n";
      for (size_t i = 0; i < run->kept().size(); ++i) {
        out << "iteration " << first + i * run->stride() << ": " << fixed(run->kept()[i].cpu, 4) << " ms (CPU)";
        if (gpu.active()) out << ", " << fixed(run->kept()[i].gpu, 4) << " ms (GPU)";
        out << "\n";
      }
      first += run->count();
    }
  }
}

void Executor::print(const Command& command, const PrintCommand& print, std::ostream& out) {
  const NvtxRange range("Print: " + model_.resources[print.resource].name);
  // Streamed a chunk at a time: a 1 GiB resource prints without a 3 GB string.
  const Resource& r = model_.resources[print.resource];
  out << "Resource '" << r.name << "':" << (print.verbose ? "\n" : " ");
  ElementFormat format{options_.exact_floats, print.verbose, 0, r.initial_count};
  const size_t piece = kPrintElements * element_bytes(r.type);
  std::string text;  // one buffer for every piece's text
  at_place(command.place, [&] {
    // Whole elements in every chunk: the staging buffer is a multiple of every element size. Its text
    // is made a piece at a time, in one buffer: a whole chunk of 16 MiB INT8 elements, verbose, was
    // 400 MB of text, and a new string a piece kept ~300 MB in AddressSanitizer's quarantine.
    download(print.resource, r.initial_count * element_bytes(r.type), [&](std::span<const std::byte> chunk) {
      for (size_t at = 0; at < chunk.size(); at += piece) {
        const std::span<const std::byte> part = chunk.subspan(at, std::min(piece, chunk.size() - at));
        text.clear();
        format_elements(text, r.type, part, format);
        out << text;
        format.first_index += part.size() / element_bytes(r.type);
      }
    });
  });
  out << "\n";  // after verbose lines, a blank line, as DxDispatch's logger ends its message
}

void Executor::write(const Command& command, const WriteFileCommand& write, std::ostream& out) {
  const NvtxRange range("WriteFile: " + model_.resources[write.resource].name);
  const Resource& r = model_.resources[write.resource];
  const std::filesystem::path target = options_.output_folder / write.target;
  OutputFile file(target, command.place + ".targetPath");
  if (write.format == FileFormat::kNpy) file.write(npy_header(r.type, write.shape));
  // The whole buffer, as DxDispatch writes it (print shows only the initial values' count).
  at_place(command.place,
           [&] { download(write.resource, r.file_bytes, [&](std::span<const std::byte> c) { file.write(c); }); });
  file.close();
  out << "Resource '" << r.name << "' written to '" << target.string() << "'\n";  // as DxDispatch reports it
}

void Executor::run(std::ostream& out) {
  for (size_t i = 0; i < model_.commands.size(); ++i) {
    const Command& command = model_.commands[i];
    // DxDispatch's --print_commands lines: the index right-aligned in 4, the command's JSON.
    char index[24];
    std::snprintf(index, sizeof index, "%4zu", i);
    if (options_.print_commands) out << "[StartCmd][" << index << "]\t: " << command.json << "\n";
    if (const auto* d = std::get_if<DispatchCommand>(&command.action))
      dispatch(command, *d, out);
    else if (const auto* p = std::get_if<PrintCommand>(&command.action))
      print(command, *p, out);
    else
      write(command, std::get<WriteFileCommand>(command.action), out);
    if (options_.print_commands) out << "[EndCmd][" << index << "]\t: hr=0x0        \n\n";
  }
}

}  // namespace opendml::tool
