// The CPU backend against memcpy: JOIN, SPLIT and NONZERO_COORDINATES on a 256 MiB input, each
// timed (median of several runs, host clock) beside a plain memcpy of the same 256 MiB in the same
// run, with one thread and with every thread, so the table shows both the fraction of memcpy and
// that large operators use every core.
//
//   opendml_cpu_bench [--mib N] [--runs N]
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <opendml/opendml.hpp>
#include <string>
#include <vector>

#include "bench_util.h"

namespace {

using opendml::TensorDesc;
using Clock = std::chrono::steady_clock;

double time_ms(const std::function<void()>& fn, int runs) {
  fn();  // warm-up: page faults, caches
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    const auto start = Clock::now();
    fn();
    times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  return bench::median(times);
}

struct Case {
  std::string name;
  std::function<std::unique_ptr<opendml::OperatorDesc>()> desc;
  std::vector<std::vector<uint8_t>>* inputs;
  std::vector<uint64_t> output_sizes;
};

}  // namespace

int main(int argc, char** argv) {
  uint64_t mib = 256;
  int runs = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--mib") == 0) mib = std::strtoull(argv[i + 1], nullptr, 10);
    if (std::strcmp(argv[i], "--runs") == 0) runs = std::atoi(argv[i + 1]);
  }
  const uint64_t bytes = mib << 20;
  const int max_threads = omp_get_max_threads();
  opendml::Device cpu("cpu");
  std::printf("opendml CPU benchmark: %llu MiB per operator, %d threads available, median of %d runs\n",
              static_cast<unsigned long long>(mib), max_threads, runs);

  std::vector<uint8_t> source = bench::random_bytes(bytes, 1), target(bytes, 0);
  const double memcpy_ms = time_ms([&] { std::memcpy(target.data(), source.data(), bytes); }, runs);
  std::printf("memcpy of %llu MiB: %.2f ms, %.2f GB/s (bytes copied per second)\n\n",
              static_cast<unsigned long long>(mib), memcpy_ms, bytes / (memcpy_ms * 1e6));
  std::printf("%-58s %8s %10s %10s %12s\n", "case", "threads", "time_ms", "GB/s", "memcpy/time");

  // JOIN and SPLIT: two halves along axis 1 of [rows, 2 * slice] (slice in FLOAT32 elements).
  std::vector<std::vector<uint8_t>> halves = {bench::random_bytes(bytes / 2, 2), bench::random_bytes(bytes / 2, 3)};
  std::vector<std::vector<uint8_t>> whole = {bench::random_bytes(bytes, 4)};
  std::vector<Case> cases;
  for (uint32_t slice_bytes : {16u, 256u, static_cast<uint32_t>(bytes / 2)}) {
    const uint32_t slice = slice_bytes / 4;
    const auto rows = static_cast<uint32_t>(bytes / 2 / slice_bytes);
    const auto f32 = DML_TENSOR_DATA_TYPE_FLOAT32;
    char name[96];
    std::snprintf(name, sizeof name, "JOIN  2 x [%u, %u] f32 axis 1 (%u-byte slices)", rows, slice, slice_bytes);
    cases.push_back({name,
                     [=] {
                       return std::make_unique<opendml::JoinDesc>(
                           std::vector<TensorDesc>{TensorDesc(f32, {rows, slice}), TensorDesc(f32, {rows, slice})},
                           TensorDesc(f32, {rows, 2 * slice}), 1);
                     },
                     &halves,
                     {bytes}});
    std::snprintf(name, sizeof name, "SPLIT [%u, %u] f32 axis 1 into 2 (%u-byte slices)", rows, 2 * slice, slice_bytes);
    cases.push_back({name,
                     [=] {
                       return std::make_unique<opendml::SplitDesc>(
                           TensorDesc(f32, {rows, 2 * slice}),
                           std::vector<TensorDesc>{TensorDesc(f32, {rows, slice}), TensorDesc(f32, {rows, slice})}, 1);
                     },
                     &whole,
                     {bytes / 2, bytes / 2}});
  }
  // NONZERO_COORDINATES over FLOAT32 and UINT8 inputs of `bytes` bytes, as a 2-D tensor.
  std::vector<std::vector<uint8_t>> f32_inputs[2], u8_inputs[2];
  const double densities[2] = {0.01, 0.5};
  for (int d = 0; d < 2; ++d) {
    f32_inputs[d] = {bench::random_elements(bytes / 4, 4, densities[d], 5 + d)};
    u8_inputs[d] = {bench::random_elements(bytes, 1, densities[d], 7 + d)};
  }
  for (int d = 0; d < 2; ++d) {
    for (auto [type, element_bytes, inputs, type_name] :
         {std::tuple{DML_TENSOR_DATA_TYPE_FLOAT32, 4u, &f32_inputs[d], "f32"},
          std::tuple{DML_TENSOR_DATA_TYPE_UINT8, 1u, &u8_inputs[d], "u8"}}) {
      const uint64_t n = bytes / element_bytes;
      const auto shape = bench::shape_of(n, 2);
      char name[96];
      std::snprintf(name, sizeof name, "NONZERO_COORDINATES [%u, %u] %s density %g", shape[0], shape[1], type_name,
                    densities[d]);
      const auto t = type;
      cases.push_back({name,
                       [=] {
                         return std::make_unique<opendml::NonzeroCoordinatesDesc>(
                             TensorDesc(t, shape), TensorDesc(DML_TENSOR_DATA_TYPE_UINT32, {1}),
                             TensorDesc(DML_TENSOR_DATA_TYPE_UINT32, {static_cast<uint32_t>(n), 2}));
                       },
                       inputs,
                       {4, n * 8}});
    }
  }

  for (const Case& c : cases) {
    std::vector<std::vector<uint8_t>> outputs;
    for (uint64_t size : c.output_sizes) outputs.emplace_back(size, 0);
    std::vector<odml_buffer_binding> in, out;
    for (auto& v : *c.inputs) in.push_back({v.data(), v.size()});
    for (auto& v : outputs) out.push_back({v.data(), v.size()});
    for (int threads : {1, max_threads}) {
      omp_set_num_threads(threads);  // before compile: the kernel plans its chunks for the team size
      const auto desc = c.desc();
      opendml::CompiledOperator op = opendml::Operator(cpu, *desc).compile();
      op.initialize();
      const odml_bindings b{
          in.data(), static_cast<uint32_t>(in.size()), out.data(), static_cast<uint32_t>(out.size()), {}, {}};
      const double ms = time_ms([&] { op.execute(b); }, runs);
      std::printf("%-58s %8d %10.2f %10.2f %12.3f\n", c.name.c_str(), threads, ms, bytes / (ms * 1e6), memcpy_ms / ms);
      if (max_threads == 1) break;
    }
  }
  return 0;
}
