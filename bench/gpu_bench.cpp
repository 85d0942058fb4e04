// The CUDA backend against the roofline: for each case, the device time of one execute (a CUDA
// graph of it replayed between events, median of many after warm-up), the host time of the
// execute call, the bytes a perfect kernel must move (inputs read once,
// outputs written once), and that figure as a fraction of a device-to-device copy of the same
// bytes measured in the same run. Every case is first checked bit for bit against the CPU backend.
// Creation, compilation and initialization stay outside the timed loop; inputs are rotated so that
// no case runs out of the L2 cache.
//
//   opendml_gpu_bench [--quick] [--runs N] [--filter SUBSTRING]
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <opendml/opendml.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bench_util.h"
#include "cuda_check.h"

namespace {

using opendml::TensorDesc;

constexpr uint64_t kRotationBytes = uint64_t{256} << 20;  // inputs rotate over at least this much

struct Options {
  bool quick = false;
  int runs = 30;
  std::string filter;
};

class Gpu {
 public:
  Gpu() {
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreate(&start_));
    CUDA_CHECK(cudaEventCreate(&stop_));
  }
  // Median device time in microseconds of fn(i), i counting the runs.
  double time_us(const std::function<void(int)>& fn, int runs) {
    for (int i = 0; i < std::min(runs, 5); ++i) fn(i);  // warm-up
    std::vector<double> times;
    for (int i = 0; i < runs; ++i) {
      CUDA_CHECK(cudaEventRecord(start_, stream));
      fn(i);
      CUDA_CHECK(cudaEventRecord(stop_, stream));
      CUDA_CHECK(cudaEventSynchronize(stop_));
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
      times.push_back(ms * 1000.0);
    }
    return bench::median(times);
  }
  cudaStream_t stream{};

 private:
  cudaEvent_t start_{}, stop_{};
};

struct DeviceBuffer {
  explicit DeviceBuffer(uint64_t bytes) : size(bytes) { CUDA_CHECK(cudaMalloc(&data, bytes ? bytes : 1)); }
  ~DeviceBuffer() { cudaFree(data); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  void* data = nullptr;
  uint64_t size;
  odml_buffer_binding binding() const { return {data, size}; }
};

struct Runner {
  Gpu gpu;
  opendml::Device cuda{"cuda"};
  opendml::Device cpu{"cpu"};
  double copy_gbps = 0;  // device-to-device copy, bytes read plus written per second / 1e9
  Options options;
  int failures = 0;

  void measure_copy() {
    const uint64_t bytes = uint64_t{1} << 30;
    DeviceBuffer a(bytes), b(bytes);
    CUDA_CHECK(cudaMemset(a.data, 1, bytes));
    const double us = gpu.time_us(
        [&](int) { CUDA_CHECK(cudaMemcpyAsync(b.data, a.data, bytes, cudaMemcpyDeviceToDevice, gpu.stream)); }, 20);
    copy_gbps = 2.0 * bytes / (us * 1e3);
    std::printf("device-to-device copy of %s bytes: %.1f us, %.0f GB/s (read + written)\n", bench::pow2(bytes).c_str(),
                us, copy_gbps);
    // The least any case can measure: one graph node (a 4-byte memset) replayed between events.
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CUDA_CHECK(cudaStreamBeginCapture(gpu.stream, cudaStreamCaptureModeThreadLocal));
    CUDA_CHECK(cudaMemsetAsync(b.data, 0, 4, gpu.stream));
    CUDA_CHECK(cudaStreamEndCapture(gpu.stream, &graph));
    CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    const double floor_us = gpu.time_us([&](int) { CUDA_CHECK(cudaGraphLaunch(exec, gpu.stream)); }, 50);
    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(graph));
    std::printf("floor: a graph of one 4-byte memset, timed as every case is: %.2f us\n\n", floor_us);
    std::printf("%-9s %-46s %12s %10s %9s %8s %8s  %s\n", "operator", "case", "bytes", "time_us", "GB/s", "of_copy",
                "host_us", "implementation");
  }

  void report(const char* op, const std::string& name, uint64_t bytes, double us, double host_us,
              const std::string& impl) {
    const double gbps = bytes / (us * 1e3);
    std::printf("%-9s %-46s %12llu %10.2f %9.0f %8.3f %8.1f  %s\n", op, name.c_str(),
                static_cast<unsigned long long>(bytes), us, gbps, gbps / copy_gbps, host_us, impl.c_str());
    std::fflush(stdout);
  }

  bool selected(const std::string& name) const {
    return options.filter.empty() || name.find(options.filter) != std::string::npos;
  }

  // Compiles desc on both devices, runs it on the same inputs, compares, then times the CUDA one.
  // outputs_to_compare(i) is how many leading bytes of output i are defined after a run.
  void run_case(const char* op, const std::string& name, const opendml::OperatorDesc& desc,
                const std::vector<std::vector<uint8_t>>& inputs, const std::vector<uint64_t>& output_sizes,
                const std::function<uint64_t(size_t, const std::vector<std::vector<uint8_t>>&)>& defined_bytes,
                uint64_t bytes_moved, int runs, const odml_operator_options& operator_options = {}) {
    if (!selected(std::string(op) + " " + name)) return;
    // CPU reference.
    opendml::CompiledOperator cpu_op = opendml::Operator(cpu, desc, DML_FEATURE_LEVEL(0), operator_options).compile();
    cpu_op.initialize();
    std::vector<std::vector<uint8_t>> expected;
    for (uint64_t size : output_sizes) expected.emplace_back(size, 0xCD);
    {
      std::vector<odml_buffer_binding> in, out;
      for (const auto& v : inputs) in.push_back({const_cast<uint8_t*>(v.data()), v.size()});
      for (auto& v : expected) out.push_back({v.data(), v.size()});
      cpu_op.execute(odml_bindings{in.data(), (uint32_t)in.size(), out.data(), (uint32_t)out.size(), {}, {}});
    }

    // CUDA.
    opendml::CompiledOperator op_gpu = opendml::Operator(cuda, desc, DML_FEATURE_LEVEL(0), operator_options).compile();
    const odml_binding_properties props = op_gpu.binding_properties();
    DeviceBuffer temporary(props.temporary_size_in_bytes), persistent(props.persistent_size_in_bytes);
    const odml_buffer_binding temp_binding =
        props.temporary_size_in_bytes ? temporary.binding() : odml_buffer_binding{};
    const odml_buffer_binding persistent_binding =
        props.persistent_size_in_bytes ? persistent.binding() : odml_buffer_binding{};
    op_gpu.initialize(odml_bindings{nullptr, 0, nullptr, 0, temp_binding, persistent_binding}, gpu.stream);

    std::vector<std::vector<std::unique_ptr<DeviceBuffer>>> input_copies;  // [input][rotation]
    size_t rotations = 1;
    uint64_t input_bytes = 0;
    for (const auto& v : inputs) input_bytes += v.size();
    for (const auto& v : inputs) {
      std::vector<std::unique_ptr<DeviceBuffer>> copies;
      const uint64_t n = std::clamp<uint64_t>(kRotationBytes / std::max<uint64_t>(input_bytes, 1) + 1, 1, 64);
      for (uint64_t i = 0; i < n; ++i) {
        copies.push_back(std::make_unique<DeviceBuffer>(v.size()));
        CUDA_CHECK(cudaMemcpy(copies.back()->data, v.data(), v.size(), cudaMemcpyHostToDevice));
      }
      rotations = n;
      input_copies.push_back(std::move(copies));
    }
    std::vector<std::unique_ptr<DeviceBuffer>> outputs;
    for (uint64_t size : output_sizes) {
      outputs.push_back(std::make_unique<DeviceBuffer>(size));
      CUDA_CHECK(cudaMemset(outputs.back()->data, 0xAB, size));
    }
    // The memsets ran on the legacy stream, which gpu.stream (non-blocking) does not wait for.
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<odml_buffer_binding> in(inputs.size()), out;
    for (const auto& o : outputs) out.push_back(o->binding());
    const auto execute = [&](int i) {
      for (size_t k = 0; k < inputs.size(); ++k) in[k] = input_copies[k][i % rotations]->binding();
      op_gpu.execute(odml_bindings{in.data(), (uint32_t)in.size(), out.data(), (uint32_t)out.size(), temp_binding,
                                   persistent_binding},
                     gpu.stream);
    };
    execute(0);
    CUDA_CHECK(cudaStreamSynchronize(gpu.stream));
    bool same = true;
    for (size_t k = 0; k < outputs.size() && same; ++k) {
      const uint64_t n = defined_bytes(k, expected);
      std::vector<uint8_t> got(n);
      CUDA_CHECK(cudaMemcpy(got.data(), outputs[k]->data, n, cudaMemcpyDeviceToHost));
      same = std::memcmp(got.data(), expected[k].data(), n) == 0;
    }
    if (!same) {
      ++failures;
      std::printf("%-9s %-46s MISMATCH against the CPU backend\n", op, name.c_str());
      return;
    }
    // Device time: each execute captured once in a CUDA graph (one per input rotation), replays
    // timed with events, so that no launch gap or host overhead is counted.
    std::vector<cudaGraphExec_t> graphs(rotations);
    for (size_t r = 0; r < rotations; ++r) {
      cudaGraph_t graph;
      CUDA_CHECK(cudaStreamBeginCapture(gpu.stream, cudaStreamCaptureModeThreadLocal));
      execute(static_cast<int>(r));
      CUDA_CHECK(cudaStreamEndCapture(gpu.stream, &graph));
      CUDA_CHECK(cudaGraphInstantiate(&graphs[r], graph, 0));
      CUDA_CHECK(cudaGraphDestroy(graph));
    }
    const double device_us =
        gpu.time_us([&](int i) { CUDA_CHECK(cudaGraphLaunch(graphs[i % rotations], gpu.stream)); }, runs);
    for (cudaGraphExec_t g : graphs) CUDA_CHECK(cudaGraphExecDestroy(g));
    // Host time of one execute call (validation, launch), the GPU kept busy meanwhile.
    std::vector<double> host;
    for (int i = 0; i < 20; ++i) {
      const auto start = std::chrono::steady_clock::now();
      execute(i);
      host.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
    }
    CUDA_CHECK(cudaStreamSynchronize(gpu.stream));
    report(op, name, bytes_moved, device_us, bench::median(host), op_gpu.implementation());
  }

  // A case's input, made the first time a selected case asks for it: making every input of the list
  // took 45-50 s a run on the GPU machine, however few cases --filter picked.
  class Inputs {
   public:
    explicit Inputs(std::function<std::vector<uint8_t>()> make) : make_(std::move(make)) {}
    const std::vector<uint8_t>& get() {
      if (!data_) data_ = make_();
      return *data_;
    }

   private:
    std::function<std::vector<uint8_t>()> make_;
    std::optional<std::vector<uint8_t>> data_;
  };

  void nonzero_cases() {
    const DML_TENSOR_DATA_TYPE types[] = {DML_TENSOR_DATA_TYPE_FLOAT32, DML_TENSOR_DATA_TYPE_FLOAT16,
                                          DML_TENSOR_DATA_TYPE_UINT8};
    const char* type_names[] = {"f32", "f16", "u8"};
    const uint32_t type_bytes[] = {4, 2, 1};
    const double densities[] = {0.0, 0.01, 0.5, 0.99, 1.0};
    std::vector<uint64_t> sizes = {uint64_t{1} << 20, uint64_t{1} << 24};
    std::vector<uint32_t> ranks = {1, 2, 4, 8};
    // Inputs of one to a few dozen tiles, where launch, barrier and latency are most of the time.
    std::vector<int> small_log2 = {10, 12, 13, 14, 15, 16, 17};
    if (options.quick) sizes = {uint64_t{1} << 20}, ranks = {1, 4}, small_log2.clear();
    for (const int log2 : small_log2) {
      const uint64_t n = uint64_t{1} << log2;
      Inputs data([n] { return bench::random_elements(n, 4, 0.5, n); });
      nonzero_case(types[0], type_names[0], type_bytes[0], n, 2, 0.5, data, 4);
    }
    for (int t = 0; t < 3; ++t)
      for (uint64_t n : sizes)
        for (double density : densities) {
          Inputs data([&] { return bench::random_elements(n, type_bytes[t], density, n + t); });
          for (uint32_t rank : ranks)
            for (uint32_t coordinate_bytes : {4u, 8u}) {
              // int64 coordinates (the 64-bit indices extension), as torch.nonzero writes them:
              // float32 inputs of rank 1 only.
              if (coordinate_bytes == 8 && (t != 0 || rank != 1)) continue;
              nonzero_case(types[t], type_names[t], type_bytes[t], n, rank, density, data, coordinate_bytes);
            }
        }
    if (options.quick) return;
    // Every row past the count filled (ODML_EXTENSION_FILL_ROWS), as opendml.jax.argwhere(x, size=n)
    // and torch.nonzero_static write them.
    for (const int log2 : {14, 20, 22, 24}) {
      const uint64_t n = uint64_t{1} << log2;
      Inputs data([n] { return bench::random_elements(n, 4, 0.5, n); });
      nonzero_case(types[0], type_names[0], type_bytes[0], n, 2, 0.5, data, 4, "", {7, 9});
    }
    // Runs of non-zeros, where whole warps' mask words are full or empty.
    for (uint32_t rank : {1u, 2u}) {
      const uint64_t n = uint64_t{1} << 24;
      Inputs data([n] { return bench::clustered_elements(n, 4, 4096, n); });
      nonzero_case(types[0], type_names[0], type_bytes[0], n, rank, 0.5, data, 4, " clustered runs");
    }
    // Inputs past 2^24 elements, where the kernel takes more chunks (bench/NOTES.md): each type at
    // 2^26, float32 at 2^28 too, rank 2 at density 0.5; and float32 at density 0, which writes no
    // rows: phase 1 and the grid barrier alone, beside the read-only rate of
    // opendml_grid_layout_bench.
    for (int t = 0; t < 3; ++t)
      for (const int log2 : {26, 28})
        for (const double density : {0.0, 0.5}) {
          if ((log2 == 28 || density == 0.0) && t != 0) continue;
          const uint64_t n = uint64_t{1} << log2;
          Inputs data([&] { return bench::random_elements(n, type_bytes[t], density, n + t); });
          nonzero_case(types[t], type_names[t], type_bytes[t], n, 2, density, data, 4);
        }
  }

  void nonzero_case(DML_TENSOR_DATA_TYPE type, const char* type_name, uint32_t type_bytes, uint64_t n, uint32_t rank,
                    double density, Inputs& inputs, uint32_t coordinate_bytes, const char* pattern = "",
                    const std::vector<uint64_t>& fill = {}) {
    const std::vector<uint32_t> shape = bench::shape_of(n, rank);
    const auto m = static_cast<uint32_t>(n);
    std::vector<uint32_t> count_sizes(rank < 2 ? 1 : rank, 1), coordinate_sizes(std::max(rank, 2u), 1);
    coordinate_sizes[coordinate_sizes.size() - 2] = m;
    coordinate_sizes.back() = rank;
    const DML_TENSOR_DATA_TYPE index_type =
        coordinate_bytes == 8 ? DML_TENSOR_DATA_TYPE_INT64 : DML_TENSOR_DATA_TYPE_UINT32;
    opendml::NonzeroCoordinatesDesc desc(TensorDesc(type, shape), TensorDesc(index_type, count_sizes),
                                         TensorDesc(index_type, coordinate_sizes));
    char name[96];
    std::snprintf(name, sizeof name, "%s n=%s rank=%u density=%g%s%s%s", type_name, bench::pow2(n).c_str(), rank,
                  density, pattern, coordinate_bytes == 8 ? " int64" : "", fill.empty() ? "" : " fill rows");
    if (!selected(std::string("nonzero ") + name)) return;
    const std::vector<uint8_t>& data = inputs.get();
    uint64_t nonzeros = 0;  // for the bytes a perfect kernel writes
    for (uint64_t i = 0; i < n; ++i) {
      uint32_t bits = 0;
      std::memcpy(&bits, &data[i * type_bytes], type_bytes);
      nonzeros += bits != 0;
    }
    const bool filled = !fill.empty();
    const auto defined = [rank, coordinate_bytes, filled, m](size_t k,
                                                             const std::vector<std::vector<uint8_t>>& expected) {
      if (k == 0) return uint64_t{coordinate_bytes};
      if (filled) return uint64_t{m} * rank * coordinate_bytes;
      uint64_t count = 0;
      std::memcpy(&count, expected[0].data(), coordinate_bytes);
      return count * rank * coordinate_bytes;
    };
    const odml_operator_options operator_options{
        (coordinate_bytes == 8 ? ODML_EXTENSION_64BIT_INDICES : 0u) | (filled ? ODML_EXTENSION_FILL_ROWS : 0u), 0,
        nullptr, static_cast<uint32_t>(fill.size()), fill.data()};
    run_case("nonzero", name, desc, {data}, {coordinate_bytes, uint64_t{m} * rank * coordinate_bytes}, defined,
             n * type_bytes + (filled ? n : nonzeros) * rank * coordinate_bytes + coordinate_bytes, options.runs,
             operator_options);
  }

  // JOIN (split == false) or SPLIT of `pieces` tensors of [rows, slice] elements along axis 1.
  void concat_case(bool split, DML_TENSOR_DATA_TYPE type, const char* type_name, uint32_t element_bytes,
                   uint64_t total_bytes, uint32_t slice_bytes, uint32_t pieces) {
    const uint32_t slice = slice_bytes / element_bytes;
    const auto rows = static_cast<uint32_t>(total_bytes / (uint64_t{slice_bytes} * pieces));
    std::vector<TensorDesc> piece_descs(pieces, TensorDesc(type, {rows, slice}));
    TensorDesc whole(type, {rows, slice * pieces});
    char name[96];
    std::snprintf(name, sizeof name, "%s %u x [%u, %u] axis 1 (%u-byte slices)", type_name, pieces, rows, slice,
                  slice_bytes);
    if (!selected(std::string(split ? "split " : "join ") + name)) return;
    std::vector<std::vector<uint8_t>> data;
    const uint64_t piece_bytes = uint64_t{rows} * slice_bytes;
    if (!split) {
      for (uint32_t i = 0; i < pieces; ++i) data.push_back(bench::random_bytes(piece_bytes, i + 1));
      opendml::JoinDesc desc(piece_descs, whole, 1);
      run_case("join", name, desc, data, {piece_bytes * pieces}, full_size, 2 * piece_bytes * pieces, options.runs);
    } else {
      data.push_back(bench::random_bytes(piece_bytes * pieces, 7));
      opendml::SplitDesc desc(whole, piece_descs, 1);
      run_case("split", name, desc, data, std::vector<uint64_t>(pieces, piece_bytes), full_size,
               2 * piece_bytes * pieces, options.runs);
    }
  }

  static uint64_t full_size(size_t k, const std::vector<std::vector<uint8_t>>& expected) { return expected[k].size(); }

  void concat_cases() {
    const uint64_t total = options.quick ? uint64_t{32} << 20 : uint64_t{256} << 20;
    for (bool split : {false, true}) {
      for (uint32_t slice : {4u, 8u, 16u, 64u, 256u, 4096u})
        concat_case(split, DML_TENSOR_DATA_TYPE_FLOAT32, "f32", 4, total, slice, 2);
      for (uint32_t slice : {4u, 8u, 16u}) {
        concat_case(split, DML_TENSOR_DATA_TYPE_FLOAT16, "f16", 2, total, slice, 2);
        concat_case(split, DML_TENSOR_DATA_TYPE_UINT8, "u8", 1, total, slice, 2);
      }
      concat_case(split, DML_TENSOR_DATA_TYPE_FLOAT32, "f32", 4, total, 4, 8);
      // The outer axis: each piece one contiguous block.
      concat_case(split, DML_TENSOR_DATA_TYPE_FLOAT32, "f32", 4, total, static_cast<uint32_t>(total / 2), 2);
      // 1000 pieces of 4 KiB.
      concat_case(split, DML_TENSOR_DATA_TYPE_FLOAT32, "f32", 4, 1000 * 4096, 4096, 1000);
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quick")
      options.quick = true;
    else if (arg == "--filter" && i + 1 < argc)
      options.filter = argv[++i];
    else if (arg == "--runs" && i + 1 < argc)
      options.runs = std::max(1, std::atoi(argv[++i]));
    else {
      std::fprintf(stderr, "usage: %s [--quick] [--runs N] [--filter SUBSTRING]\n", argv[0]);
      return 2;
    }
  }
  try {
    Runner runner;
    runner.options = options;
    cudaDeviceProp props{};
    CUDA_CHECK(cudaGetDeviceProperties(&props, 0));
    std::printf("opendml GPU benchmark on %s (%d SMs, %.0f MB L2), CUDA runtime %d\n", props.name,
                props.multiProcessorCount, props.l2CacheSize / 1e6, CUDART_VERSION);
    runner.measure_copy();
    runner.nonzero_cases();
    runner.concat_cases();
    if (runner.failures) std::printf("\n%d case(s) did not match the CPU backend\n", runner.failures);
    return runner.failures ? 1 : 0;
  } catch (const opendml::Error& e) {
    std::fprintf(stderr, "opendml error (%s): %s\n", odml_status_name(e.status()), e.what());
    return 1;
  }
}
