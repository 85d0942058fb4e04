// What only the CUDA device promises (docs/contract.md section 5; docs/decisions.md, "Execution"):
// execute can be captured in a CUDA graph and replayed, one compiled operator runs on several
// streams at once, NONZERO handles inputs beyond 2^31 elements, and JOIN/SPLIT with more tensors
// than one launch's parameters hold. Results are compared bit for bit with the CPU backend. Built
// only with CUDA; DeviceCuda needs --device=cuda (ctest entry cuda_operators), CudaCopyHost (the
// kernels' host-side limits) needs no GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_device.h"
#include "opendml/opendml.hpp"
#include "support/data_types.h"
#include "support/test_env.h"
#include "support/testers.h"

namespace odml_test {
namespace {

using opendml::TensorDesc;

#define ASSERT_CUDA(expr) ASSERT_EQ((expr), cudaSuccess) << #expr << ": " << cudaGetErrorString(cudaGetLastError())

class DeviceCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    if (test_device_name().rfind("cuda", 0) != 0) GTEST_SKIP() << "needs --device=cuda";
  }
};

struct CudaBuffer {
  explicit CudaBuffer(uint64_t bytes) : size(bytes) {
    if (cudaMalloc(&data, bytes) != cudaSuccess) data = nullptr;
  }
  ~CudaBuffer() { cudaFree(data); }
  CudaBuffer(const CudaBuffer&) = delete;
  void* data = nullptr;
  uint64_t size;
  odml_buffer_binding binding() const { return {data, size}; }
  // Waits for the copy to land: from pageable memory cudaMemcpy may return before its DMA ends,
  // and work on a non-blocking stream does not wait for it.
  void upload(const Bytes& b) const {
    ASSERT_EQ(cudaMemcpy(data, b.data(), b.size(), cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }
  Bytes download(uint64_t n) const { return read(data, n); }
  static Bytes read(const void* device, uint64_t n) {
    Bytes b(n);
    EXPECT_EQ(cudaMemcpy(b.data(), device, n, cudaMemcpyDeviceToHost), cudaSuccess);
    return b;
  }
};

// One operator compiled on the CUDA device with its own regions, and the same operator on the
// CPU as the reference.
class Compiled {
 public:
  Compiled(const opendml::OperatorDesc& desc, std::vector<uint64_t> input_sizes, std::vector<uint64_t> output_sizes)
      : gpu_(opendml::Operator(test_device(), desc).compile()),
        cpu_(opendml::Operator(cpu_device(), desc).compile()),
        input_sizes_(std::move(input_sizes)),
        output_sizes_(std::move(output_sizes)) {
    const odml_binding_properties p = gpu_.binding_properties();
    persistent_ = std::make_unique<CudaBuffer>(std::max<uint64_t>(p.persistent_size_in_bytes, 256));
    temporary_bytes_ = p.temporary_size_in_bytes;
    gpu_.initialize(odml_bindings{nullptr, 0, nullptr, 0, {}, persistent()});
    cpu_.initialize();
  }
  std::string implementation() const { return gpu_.implementation(); }
  odml_buffer_binding persistent() const { return persistent_->binding(); }
  uint64_t temporary_bytes() const { return temporary_bytes_; }

  // Execute on the GPU (queued on stream) with the given regions.
  void execute(const std::vector<odml_buffer_binding>& in, const std::vector<odml_buffer_binding>& out,
               odml_buffer_binding temporary, cudaStream_t stream) const {
    gpu_.execute(odml_bindings{in.data(), static_cast<uint32_t>(in.size()), out.data(),
                               static_cast<uint32_t>(out.size()), temporary, persistent()},
                 stream);
  }
  // The CPU backend's outputs for `inputs`.
  std::vector<Bytes> reference(std::vector<Bytes> inputs) const {
    std::vector<Bytes> outputs;
    for (uint64_t size : output_sizes_) outputs.emplace_back(size, 0);
    std::vector<odml_buffer_binding> in, out;
    for (Bytes& b : inputs) in.push_back({b.data(), b.size()});
    for (Bytes& b : outputs) out.push_back({b.data(), b.size()});
    cpu_.execute(odml_bindings{
        in.data(), static_cast<uint32_t>(in.size()), out.data(), static_cast<uint32_t>(out.size()), {}, {}});
    return outputs;
  }
  const std::vector<uint64_t>& input_sizes() const { return input_sizes_; }
  const std::vector<uint64_t>& output_sizes() const { return output_sizes_; }

 private:
  opendml::CompiledOperator gpu_, cpu_;
  std::vector<uint64_t> input_sizes_, output_sizes_;
  std::unique_ptr<CudaBuffer> persistent_;
  uint64_t temporary_bytes_ = 0;
};

// The bytes of an output that are defined after a run: all of them, except NONZERO's coordinates
// past the count.
uint64_t defined_bytes(const std::vector<Bytes>& expected, size_t output, bool nonzero, uint32_t columns) {
  if (!nonzero || output == 0) return expected[output].size();
  uint32_t count;
  std::memcpy(&count, expected[0].data(), 4);
  return uint64_t{count} * columns * 4;
}

// A set of device regions for one execution of `op`.
struct Regions {
  Regions(const Compiled& op) : temporary(std::max<uint64_t>(op.temporary_bytes(), 256)) {
    for (uint64_t size : op.input_sizes()) inputs.push_back(std::make_unique<CudaBuffer>(size));
    for (uint64_t size : op.output_sizes()) outputs.push_back(std::make_unique<CudaBuffer>(size));
  }
  std::vector<odml_buffer_binding> in() const {
    std::vector<odml_buffer_binding> b;
    for (const auto& x : inputs) b.push_back(x->binding());
    return b;
  }
  std::vector<odml_buffer_binding> out() const {
    std::vector<odml_buffer_binding> b;
    for (const auto& x : outputs) b.push_back(x->binding());
    return b;
  }
  std::vector<std::unique_ptr<CudaBuffer>> inputs, outputs;
  CudaBuffer temporary;
};

std::vector<Bytes> random_inputs(Rng& rng, const Compiled& op, double density = 1.0) {
  std::vector<Bytes> inputs;
  for (uint64_t size : op.input_sizes()) {
    Bytes b = random_bytes(rng, size);
    for (auto& v : b)
      if (std::uniform_real_distribution<double>(0, 1)(rng) >= density) v = 0;
    inputs.push_back(std::move(b));
  }
  return inputs;
}

void expect_matches(const Compiled& op, const Regions& r, const std::vector<Bytes>& inputs, bool nonzero,
                    uint32_t columns, const std::string& what) {
  const std::vector<Bytes> expected = op.reference(inputs);
  for (size_t k = 0; k < expected.size(); ++k) {
    const uint64_t n = defined_bytes(expected, k, nonzero, columns);
    const Bytes got = r.outputs[k]->download(n);
    EXPECT_TRUE(std::equal(got.begin(), got.end(), expected[k].begin())) << what << ": output " << k << " differs";
  }
}

struct Case {
  std::string name;
  std::shared_ptr<opendml::OperatorDesc> desc;
  std::vector<uint64_t> inputs, outputs;
  bool nonzero = false;
  uint32_t columns = 0;
  std::string implementation;
};

std::vector<Case> capture_cases() {
  const auto f32 = DML_TENSOR_DATA_TYPE_FLOAT32, u8 = DML_TENSOR_DATA_TYPE_UINT8;
  std::vector<Case> cases;
  cases.push_back({"JOIN narrow slices",
                   std::make_shared<opendml::JoinDesc>(
                       std::vector<TensorDesc>{TensorDesc(f32, {4096, 1}), TensorDesc(f32, {4096, 3})},
                       TensorDesc(f32, {4096, 4}), 1),
                   {4096 * 4, 4096 * 12},
                   {4096 * 16},
                   false,
                   0,
                   "cuda.slices"});
  cases.push_back({"JOIN wide rows",
                   std::make_shared<opendml::JoinDesc>(
                       std::vector<TensorDesc>{TensorDesc(f32, {64, 512}), TensorDesc(f32, {64, 256})},
                       TensorDesc(f32, {64, 768}), 1),
                   {64 * 512 * 4, 64 * 256 * 4},
                   {64 * 768 * 4},
                   false,
                   0,
                   "cuda.copy"});
  cases.push_back(
      {"SPLIT narrow slices",
       std::make_shared<opendml::SplitDesc>(
           TensorDesc(u8, {8192, 6}), std::vector<TensorDesc>{TensorDesc(u8, {8192, 2}), TensorDesc(u8, {8192, 4})}, 1),
       {8192 * 6},
       {8192 * 2, 8192 * 4},
       false,
       0,
       "cuda.slices"});
  cases.push_back({"NONZERO",
                   std::make_shared<opendml::NonzeroCoordinatesDesc>(
                       TensorDesc(u8, {300, 1000}), TensorDesc(DML_TENSOR_DATA_TYPE_UINT32, {1}),
                       TensorDesc(DML_TENSOR_DATA_TYPE_UINT32, {300000, 2})),
                   {300000},
                   {4, 300000 * 8},
                   true,
                   2,
                   "cuda.nonzero"});
  cases.push_back({"NONZERO of one tile",
                   std::make_shared<opendml::NonzeroCoordinatesDesc>(
                       TensorDesc(u8, {64, 64}), TensorDesc(DML_TENSOR_DATA_TYPE_UINT32, {1}),
                       TensorDesc(DML_TENSOR_DATA_TYPE_UINT32, {4096, 2})),
                   {4096},
                   {4, 4096 * 8},
                   true,
                   2,
                   "cuda.lookback"});
  return cases;
}

// Execute is captured once (global capture mode, which refuses any synchronising or allocating
// call) and the graph replayed after the inputs change.
TEST_F(DeviceCuda, GraphCaptureAndReplay) {
  Rng rng(next_seed());
  cudaStream_t stream;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (const Case& c : capture_cases()) {
    SCOPED_TRACE(c.name);
    const Compiled op(*c.desc, c.inputs, c.outputs);
    if (std::getenv("OPENDML_IMPLEMENTATION") == nullptr) {
      EXPECT_EQ(op.implementation(), c.implementation);
      // One tile in one block: no statuses, so no temporary to bind.
      if (c.implementation == "cuda.lookback") {
        EXPECT_EQ(op.temporary_bytes(), 0u);
      }
    }
    const Regions r(op);
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    ASSERT_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    op.execute(r.in(), r.out(), r.temporary.binding(), stream);
    ASSERT_CUDA(cudaStreamEndCapture(stream, &graph));
    ASSERT_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    for (double density : {0.5, 0.01, 1.0}) {
      const std::vector<Bytes> inputs = random_inputs(rng, op, density);
      for (size_t i = 0; i < inputs.size(); ++i) r.inputs[i]->upload(inputs[i]);
      ASSERT_CUDA(cudaGraphLaunch(exec, stream));
      ASSERT_CUDA(cudaStreamSynchronize(stream));
      expect_matches(op, r, inputs, c.nonzero, c.columns, "replay at density " + std::to_string(density));
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  }
  cudaStreamDestroy(stream);
}

// A CUDA error the caller left set (a cudaMalloc too large, checked by its return value only, as is
// usual) is the caller's: execute succeeds and does its work, on every launch path, and leaves the
// error to the caller. Execute's launch check read the thread's last error, so it failed with the
// caller's OUT_OF_MEMORY although its kernel had been queued and wrote the outputs.
TEST_F(DeviceCuda, ACallersUnclearedErrorIsNotExecutesFailure) {
  Rng rng(next_seed());
  const auto i32 = DML_TENSOR_DATA_TYPE_INT32;
  std::vector<Case> cases = capture_cases();
  // JOINs of pieces of `rows` x `columns` int32 along `axis` (0: rows, 1: columns).
  const auto join = [&](std::string name, std::vector<uint32_t> sizes, uint32_t other, uint32_t axis) {
    std::vector<TensorDesc> pieces;
    std::vector<uint64_t> bytes;
    uint32_t total = 0;
    for (uint32_t n : sizes) {
      pieces.push_back(axis == 0 ? TensorDesc(i32, {n, other}) : TensorDesc(i32, {other, n}));
      bytes.push_back(uint64_t{n} * other * 4);
      total += n;
    }
    const TensorDesc whole = axis == 0 ? TensorDesc(i32, {total, other}) : TensorDesc(i32, {other, total});
    cases.push_back({std::move(name),
                     std::make_shared<opendml::JoinDesc>(pieces, whole, axis),
                     bytes,
                     {uint64_t{total} * other * 4},
                     false,
                     0,
                     "cuda.copy"});
  };
  join("JOIN of contiguous runs", {3, 5}, 64, 0);
  join("JOIN of 40 pieces of one shape", std::vector<uint32_t>(40, 1), 64, 0);
  join("JOIN of 12 pieces of several shapes", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, 64, 0);
  join("JOIN of 4500 pieces, in two launches", std::vector<uint32_t>(4500, 1), 2, 1);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Compiled op(*c.desc, c.inputs, c.outputs);
    if (std::getenv("OPENDML_IMPLEMENTATION") == nullptr) {
      EXPECT_EQ(op.implementation(), c.implementation);
    }
    const Regions r(op);
    const std::vector<Bytes> inputs = random_inputs(rng, op, 0.5);
    for (size_t i = 0; i < inputs.size(); ++i) r.inputs[i]->upload(inputs[i]);
    void* p = nullptr;
    ASSERT_EQ(cudaMalloc(&p, uint64_t{1} << 62), cudaErrorMemoryAllocation);
    EXPECT_NO_THROW(op.execute(r.in(), r.out(), r.temporary.binding(), nullptr));
    EXPECT_EQ(cudaGetLastError(), cudaErrorMemoryAllocation) << "the caller's error, left to the caller";
    ASSERT_CUDA(cudaDeviceSynchronize());
    expect_matches(op, r, inputs, c.nonzero, c.columns, "after the caller's error");
  }
}

// odml_device_upload is synchronous with the host (docs/contract.md section 5): a copy queued right
// after it on a non-blocking stream reads what it uploaded, the last bytes too. From pageable
// memory cudaMemcpy alone returned once the bytes were staged, before their DMA ended.
TEST_F(DeviceCuda, UploadHasLandedWhenItReturns) {
  constexpr uint64_t kBytes = uint64_t{256} << 20;
  cudaStream_t stream;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const opendml::Buffer uploaded(test_device(), kBytes), copied(test_device(), kBytes);
  Bytes host(kBytes);
  for (int round = 1; round <= 4; ++round) {
    std::memset(host.data(), round, host.size());
    test_device().upload(uploaded.data(), host.data(), host.size());
    ASSERT_CUDA(cudaMemcpyAsync(copied.data(), uploaded.data(), kBytes, cudaMemcpyDeviceToDevice, stream));
    ASSERT_CUDA(cudaStreamSynchronize(stream));
    const Bytes back = CudaBuffer::read(copied.data(), kBytes);
    const auto stale = std::find_if(back.begin(), back.end(), [&](uint8_t b) { return b != uint8_t(round); });
    EXPECT_EQ(stale, back.end()) << "round " << round << ": byte " << (stale - back.begin()) << " is an earlier one";
  }
  cudaStreamDestroy(stream);
}

// One compiled operator, two streams, each with its own regions, executions interleaved with no
// synchronisation between them.
TEST_F(DeviceCuda, OneCompiledOperatorOnTwoStreams) {
  Rng rng(next_seed());
  for (const Case& c : capture_cases()) {
    SCOPED_TRACE(c.name);
    const Compiled op(*c.desc, c.inputs, c.outputs);
    cudaStream_t streams[2];
    std::unique_ptr<Regions> regions[2];
    std::vector<Bytes> inputs[2];
    for (int s = 0; s < 2; ++s) {
      ASSERT_CUDA(cudaStreamCreateWithFlags(&streams[s], cudaStreamNonBlocking));
      regions[s] = std::make_unique<Regions>(op);
      inputs[s] = random_inputs(rng, op, s == 0 ? 0.3 : 0.9);
      for (size_t i = 0; i < inputs[s].size(); ++i) regions[s]->inputs[i]->upload(inputs[s][i]);
    }
    for (int round = 0; round < 20; ++round)
      for (int s = 0; s < 2; ++s)
        op.execute(regions[s]->in(), regions[s]->out(), regions[s]->temporary.binding(), streams[s]);
    for (int s = 0; s < 2; ++s) {
      ASSERT_CUDA(cudaStreamSynchronize(streams[s]));
      expect_matches(op, *regions[s], inputs[s], c.nonzero, c.columns, "stream " + std::to_string(s));
      cudaStreamDestroy(streams[s]);
    }
  }
}

// Inputs of 2 to 8 tiles (of 16 KiB: 4096 float32, 8192 float16 or 16384 uint8 elements) take a grid
// of a block a tile, launched as one thread block cluster whose hardware barrier is the grid barrier
// (kClusterBlocks in nonzero_kernels.cu); 9 tiles take the cooperative launch. Each size whole and
// cut short, at three densities, bit for bit against the CPU; one case with fill rows and one read
// transposed, and two executions on one temporary region.
TEST_F(DeviceCuda, NonzeroOfGridsOfOneCluster) {
  for (const auto& [type, tile] :
       {std::pair{DML_TENSOR_DATA_TYPE_FLOAT32, 4096u}, std::pair{DML_TENSOR_DATA_TYPE_FLOAT16, 8192u},
        std::pair{DML_TENSOR_DATA_TYPE_UINT8, 16384u}})
    for (uint32_t tiles : {2u, 3u, 8u, 9u})
      for (uint32_t elements : {tiles * tile, tiles * tile - 5})
        for (double density : {0.0, 0.5, 1.0}) {
          SCOPED_TRACE(::testing::Message() << type_name(type) << ", " << elements << " elements, density " << density);
          NonzeroTester().type(type).sizes({elements}).density(density).executions(2).run();
        }
  NonzeroTester().sizes({3, 8000}).density(0.3).fill_values({7, 9}).run();
  NonzeroTester().sizes({5000, 6}).strides({1, 5000}).density(0.7).run();
}

// A block keeps the mask words and counts of as many of its tiles as fit in shared memory beside the
// other resident blocks; only the tiles past those have slots in the temporary region
// (nonzero_kernels.cu, Kept), so it is a few bytes a block until an input is large enough for some
// to spill. The first size that spills (in steps of 2^22 elements), found by its temporary size, bit
// for bit against the CPU, for one-byte and four-byte inputs (one and two tiles a group in phase 2).
// Four-byte inputs spill first the tiles of their pool (NonzeroOfPooledGroups), which is never kept.
TEST_F(DeviceCuda, NonzeroOfTilesPastTheKeptOnes) {
  for (DML_TENSOR_DATA_TYPE type : {DML_TENSOR_DATA_TYPE_UINT8, DML_TENSOR_DATA_TYPE_FLOAT32}) {
    uint32_t rows = 1u << 10;
    for (;; rows += 1u << 10) {
      ASSERT_LE(rows, 1u << 16) << "no input of up to 2^28 elements spills";
      opendml::NonzeroCoordinatesDesc desc(TensorDesc(type, {rows, 4096}), TensorDesc(DML_TENSOR_DATA_TYPE_UINT32, {1}),
                                           TensorDesc(DML_TENSOR_DATA_TYPE_UINT32, {rows * 4096, 2}));
      if (opendml::Operator(test_device(), desc).compile().binding_properties().temporary_size_in_bytes > (1u << 16))
        break;
    }
    SCOPED_TRACE(::testing::Message() << rows << " x 4096 elements");
    // Sparse enough for the reference to stay cheap at 10^8 elements, dense enough that every group
    // of tiles has non-zeros, so phase 2 reads every spilled tile's words.
    NonzeroTester().type(type).sizes({rows, 4096}).density(0.05).run();
  }
}

// Executes a compiled NONZERO_COORDINATES once on `input`, already on the GPU, into outputs of its own:
// a count of count_bytes (4 or 8) and coordinates of coordinate_bytes, of which the first row_bytes
// come back in `rows`.
void execute_nonzero(opendml::CompiledOperator& op, const CudaBuffer& input, uint32_t count_bytes,
                     uint64_t coordinate_bytes, uint64_t row_bytes, uint64_t& count, Bytes& rows) {
  CudaBuffer counted(count_bytes), coordinates(coordinate_bytes),
      temporary(op.binding_properties().temporary_size_in_bytes);
  ASSERT_NE(coordinates.data, nullptr);
  op.initialize();
  const odml_buffer_binding in = input.binding(), out[2] = {counted.binding(), coordinates.binding()};
  op.execute(odml_bindings{&in, 1, out, 2, temporary.binding(), {}}, nullptr);
  ASSERT_CUDA(cudaDeviceSynchronize());
  const Bytes c = counted.download(count_bytes);
  count = 0;
  std::memcpy(&count, c.data(), count_bytes);  // little-endian: a 4-byte count is the low half
  rows = coordinates.download(row_bytes);
}

// NONZERO_COORDINATES of a 1-D input of m elements of `type`, already on the GPU: the count and the
// rows, flat indices in uint32, must be `nonzero`.
void expect_flat_rows(DML_TENSOR_DATA_TYPE type, uint32_t m, const CudaBuffer& input,
                      const std::vector<uint32_t>& nonzero) {
  opendml::NonzeroCoordinatesDesc desc(TensorDesc(type, {m}), TensorDesc(DML_TENSOR_DATA_TYPE_UINT32, {1}),
                                       TensorDesc(DML_TENSOR_DATA_TYPE_UINT32, {m, 1}));
  opendml::CompiledOperator op = opendml::Operator(test_device(), desc).compile();
  uint64_t n = 0;
  Bytes rows;
  ASSERT_NO_FATAL_FAILURE(execute_nonzero(op, input, 4, uint64_t{m} * 4, nonzero.size() * 4, n, rows));
  ASSERT_EQ(n, nonzero.size());
  std::vector<uint32_t> got(nonzero.size());
  std::memcpy(got.data(), rows.data(), rows.size());
  for (size_t k = 0; k < nonzero.size(); ++k) ASSERT_EQ(got[k], nonzero[k]) << "row " << k;
}

// Executes a compiled NONZERO_COORDINATES of m elements in rows of `columns`, with two UINT32
// coordinates a row, on `input`, already on the GPU: the count (count_bytes wide) and the rows must be
// those of the logical indices `nonzero`.
void expect_row_column_rows(opendml::CompiledOperator& op, const CudaBuffer& input, uint32_t count_bytes, uint64_t m,
                            uint32_t columns, const std::vector<uint64_t>& nonzero) {
  uint64_t n = 0;
  Bytes got;
  ASSERT_NO_FATAL_FAILURE(execute_nonzero(op, input, count_bytes, m * 8, nonzero.size() * 8, n, got));
  ASSERT_EQ(n, nonzero.size());
  for (size_t k = 0; k < nonzero.size(); ++k) {
    uint32_t row[2];
    std::memcpy(row, &got[k * 8], 8);
    ASSERT_EQ(row[0], nonzero[k] / columns) << "row " << k;
    ASSERT_EQ(row[1], nonzero[k] % columns) << "row " << k;
  }
}

// 2^31 + 2^21 + 3 one-byte elements (a partial last tile), non-zeros on both sides of 2^31 and
// at the very end. Rows are flat indices (a 1-D input), so they are known without a reference.
TEST_F(DeviceCuda, HugeNonzeroOverTwoToThe31Elements) {
  const uint32_t m = (1u << 31) + (1u << 21) + 3;
  size_t free_bytes = 0, total = 0;
  ASSERT_CUDA(cudaMemGetInfo(&free_bytes, &total));
  if (free_bytes < uint64_t{m} * 5 + (uint64_t{1} << 30)) GTEST_SKIP() << "needs about 11 GB of free GPU memory";
  const std::vector<uint32_t> nonzero = {0, 1000, (1u << 31) - 1, 1u << 31, (1u << 31) + 5, m - 1};
  // Regions of TotalTensorSizeInBytes: the input's m bytes round up to a multiple of 4.
  CudaBuffer input((uint64_t{m} + 3) / 4 * 4);
  ASSERT_NE(input.data, nullptr);
  ASSERT_CUDA(cudaMemset(input.data, 0, input.size));
  for (uint32_t i : nonzero) ASSERT_CUDA(cudaMemset(static_cast<uint8_t*>(input.data) + i, 0x80, 1));  // INT8 -128
  expect_flat_rows(DML_TENSOR_DATA_TYPE_INT8, m, input, nonzero);
}

// 2^28 float32 elements: on a GPU of 132 SMs, 528 blocks (4 an SM) of 126 tiles would start their
// ranges a multiple of 64 KiB apart, so the kernel gives them an odd number, 127 (kOddRangeTiles in
// nonzero_kernels.cu), and every block's last group of two tiles, one of its pooled groups, is half
// full. Non-zeros every 4099 elements and on both sides of every boundary of 127 tiles (4096
// elements each); the rows of a 1-D input are flat indices, so they are known without a reference.
TEST_F(DeviceCuda, NonzeroOfBlocksOfAnOddNumberOfTiles) {
  const uint32_t m = 1u << 28, range = 127 * 4096;
  size_t free_bytes = 0, total = 0;
  ASSERT_CUDA(cudaMemGetInfo(&free_bytes, &total));
  if (free_bytes < uint64_t{m} * 8 + (uint64_t{1} << 30)) GTEST_SKIP() << "needs about 3 GB of free GPU memory";
  std::vector<float> values(m, 0.0f);
  std::vector<uint32_t> nonzero;
  for (uint32_t i = 0; i < m; ++i) {
    if (i % 4099 == 0 || i % range == 0 || i % range == range - 1) {
      values[i] = static_cast<float>(i % 1000 + 1);
      nonzero.push_back(i);
    }
  }
  CudaBuffer input(uint64_t{m} * 4);
  ASSERT_NE(input.data, nullptr);
  Bytes bytes(uint64_t{m} * 4);
  std::memcpy(bytes.data(), values.data(), bytes.size());
  input.upload(bytes);
  expect_flat_rows(DML_TENSOR_DATA_TYPE_FLOAT32, m, input, nonzero);
}

// Grids of fewer blocks than first fit, at 2^26 elements on a GPU of 132 SMs. uint8 (4096 tiles):
// one block an SM fewer (kBalanceGain in nonzero_kernels.cu), 512 blocks of 8 tiles, four an SM where
// five fit, the kept region sized for four, every tile kept. float16 (8192 tiles): 13 tiles a block
// at five an SM reach kPoolTiles, so the grid takes the pooled kernel, 512 blocks of 16 with a pool.
// Non-zeros at each tile's first and last element and every 4099th.
TEST_F(DeviceCuda, NonzeroOfGridsOfFewerBlocksThanFit) {
  const uint32_t m = 1u << 26;
  for (const uint32_t element_bytes : {1u, 2u}) {
    const uint32_t tile = 16384 / element_bytes;
    Bytes values(uint64_t{m} * element_bytes, 0);
    std::vector<uint32_t> nonzero;
    for (uint32_t i = 0; i < m; ++i) {
      if (i % 4099 == 0 || i % tile == 0 || i % tile == tile - 1) {
        // uint8: 1-255; float16: 0x3C00 (1.0), whose low byte is zero.
        values[uint64_t{i} * element_bytes + element_bytes - 1] =
            static_cast<uint8_t>(element_bytes == 1 ? i % 255 + 1 : 0x3C);
        nonzero.push_back(i);
      }
    }
    CudaBuffer input(values.size());
    ASSERT_NE(input.data, nullptr);
    input.upload(values);
    SCOPED_TRACE(::testing::Message() << element_bytes << "-byte elements");
    expect_flat_rows(element_bytes == 1 ? DML_TENSOR_DATA_TYPE_UINT8 : DML_TENSOR_DATA_TYPE_FLOAT16, m, input, nonzero);
  }
}

// Groups of tiles that other blocks write (the pool, kPoolTiles in nonzero_kernels.cu): runs of
// whole tiles, non-zero and zero, so that pooled and own groups are full, empty or partly full
// beside each other, against the CPU, twice on the same temporary region for the first case (the
// pool's state is reset by each call). A grid has a pool from 12 tiles a block under the kernel
// without one, 5 blocks an SM for two- and four-byte elements; then it takes the pooled kernel, 4 an
// SM. On a GPU of 132 SMs: float32 at 10240 tiles of 4096 elements makes 512 blocks of 20 tiles, the
// last 2 of each block's 10 groups pooled; {4096, 10243} float32 elements read transposed (strides
// {1, 4096}: the kernel for strided inputs, rows of two coordinates, tiles cut short, fill rows) 513
// blocks, the last of 3 tiles with its pooled groups past the input's end; float16 {3, 27962027}
// (10241 tiles of 8192 elements, one tile a group) 513 blocks of 20 tiles, 5 of them pooled, the
// last block of one tile.
TEST_F(DeviceCuda, NonzeroOfPooledGroups) {
  const std::vector<uint64_t> tiles = {1, 2, 3, 5, 8, 13, 21, 34, 7, 1, 1, 4};
  alternating_runs<uint32_t>(DML_TENSOR_DATA_TYPE_FLOAT32, {10240 * 4096}, tiles, 4096).executions(2).run();
  alternating_runs<uint32_t>(DML_TENSOR_DATA_TYPE_FLOAT32, {4096, 10243}, tiles, 4096 + 17, false)
      .strides({1, 4096})
      .fill_values({7, 9})
      .run();
  alternating_runs<uint16_t>(DML_TENSOR_DATA_TYPE_FLOAT16, {3, 27962027}, tiles, 8192).fill_values({1, 2}).run();
}

// 64-bit indices (docs/contract.md section 7): an input of more than 2^32 elements, with rows
// numbered past 2^32 - 1 and the coordinates' row dimensions split in two.
TEST_F(DeviceCuda, HugeNonzeroPastTwoToThe32ElementsWith64BitIndices) {
  const uint32_t rows = 2, columns = (1u << 31) + 64;  // 2^32 + 128 UINT8 elements
  const uint64_t m = uint64_t{rows} * columns;
  size_t free_bytes = 0, total = 0;
  ASSERT_CUDA(cudaMemGetInfo(&free_bytes, &total));
  if (free_bytes < m * 9 + (uint64_t{1} << 30)) GTEST_SKIP() << "needs about 40 GB of free GPU memory";
  const std::vector<uint64_t> nonzero = {0,    7, (uint64_t{1} << 32) - 1, uint64_t{1} << 32, (uint64_t{1} << 32) + 5,
                                         m - 1};
  opendml::NonzeroCoordinatesDesc desc(TensorDesc(DML_TENSOR_DATA_TYPE_UINT8, {rows, columns}),
                                       TensorDesc(DML_TENSOR_DATA_TYPE_UINT64, {1}),
                                       TensorDesc(DML_TENSOR_DATA_TYPE_UINT32, {rows, columns, 2}));
  opendml::CompiledOperator op =
      opendml::Operator(test_device(), desc, DML_FEATURE_LEVEL(0), ODML_EXTENSION_64BIT_INDICES).compile();
  CudaBuffer input(m);
  ASSERT_NE(input.data, nullptr);
  ASSERT_CUDA(cudaMemset(input.data, 0, input.size));
  for (uint64_t i : nonzero) ASSERT_CUDA(cudaMemset(static_cast<uint8_t*>(input.data) + i, 3, 1));
  expect_row_column_rows(op, input, 8, m, columns, nonzero);
}

// 64-bit indices in the kernel with a pool: float16 {3, 2^26} read with strides {2^31, 1}, whose
// extent passes 2^32 elements, so that element offsets take 64 bits (wide_indices in
// nonzero_kernels.cu) in the strided pooled kernel. On a GPU of 132 SMs: 523 blocks of 47 tiles, the
// last 11 of each block's groups pooled. Non-zeros every 4099 elements, so that every group has
// some, and at both ends of every row; coordinates are (row, column), known without a reference.
TEST_F(DeviceCuda, HugeNonzeroOfPooledGroupsWith64BitIndices) {
  const uint32_t rows = 3, columns = 1u << 26, stride = 1u << 31;
  const uint64_t extent = uint64_t{rows - 1} * stride + columns, m = uint64_t{rows} * columns;
  size_t free_bytes = 0, total = 0;
  ASSERT_CUDA(cudaMemGetInfo(&free_bytes, &total));
  if (free_bytes < extent * 2 + m * 8 + (uint64_t{1} << 30)) GTEST_SKIP() << "needs about 11 GB of free GPU memory";
  std::vector<uint64_t> nonzero;  // logical indices
  for (uint64_t i = 0; i < m; ++i)
    if (i % 4099 == 0 || i % columns == 0 || i % columns == columns - 1) nonzero.push_back(i);
  CudaBuffer input(extent * 2);
  ASSERT_NE(input.data, nullptr);
  ASSERT_CUDA(cudaMemset(input.data, 0, input.size));
  std::vector<uint16_t> row(columns);
  for (uint32_t r = 0; r < rows; ++r) {
    std::fill(row.begin(), row.end(), uint16_t{0});
    for (uint64_t i : nonzero)
      if (i / columns == r) row[i % columns] = 0x3C00;  // 1.0
    ASSERT_CUDA(cudaMemcpy(static_cast<uint16_t*>(input.data) + uint64_t{r} * stride, row.data(), uint64_t{columns} * 2,
                           cudaMemcpyHostToDevice));
  }
  ASSERT_CUDA(cudaDeviceSynchronize());
  opendml::NonzeroCoordinatesDesc desc(TensorDesc(DML_TENSOR_DATA_TYPE_FLOAT16, {rows, columns}, {{stride, 1}}),
                                       TensorDesc(DML_TENSOR_DATA_TYPE_UINT32, {1}),
                                       TensorDesc(DML_TENSOR_DATA_TYPE_UINT32, {static_cast<uint32_t>(m), 2}));
  opendml::CompiledOperator op =
      opendml::Operator(test_device(), desc, DML_FEATURE_LEVEL(0), ODML_EXTENSION_64BIT_INDICES).compile();
  expect_row_column_rows(op, input, 4, m, columns, nonzero);
}

// 64-bit indices: a JOIN and a SPLIT whose joined tensor has more than 2^32 elements, copied in
// pieces by cuda.copy; compared byte for byte on the host.
TEST_F(DeviceCuda, HugeJoinAndSplitPastTwoToThe32ElementsWith64BitIndices) {
  const uint32_t half = (1u << 31) + 16;  // two pieces of 2^31 + 16 UINT8 elements
  const uint64_t whole = uint64_t{half} * 2;
  size_t free_bytes = 0, total = 0;
  ASSERT_CUDA(cudaMemGetInfo(&free_bytes, &total));
  if (free_bytes < whole * 2 + (uint64_t{1} << 30)) GTEST_SKIP() << "needs about 10 GB of free GPU memory";
  const TensorDesc piece(DML_TENSOR_DATA_TYPE_UINT8, {1, half}), joined(DML_TENSOR_DATA_TYPE_UINT8, {2, half});
  CudaBuffer a(half), b(half), out(whole);
  ASSERT_NE(out.data, nullptr);
  ASSERT_CUDA(cudaMemset(a.data, 0x11, half));
  ASSERT_CUDA(cudaMemset(b.data, 0x22, half));
  ASSERT_CUDA(cudaMemset(static_cast<uint8_t*>(b.data) + half - 1, 0x33, 1));
  opendml::JoinDesc join({piece, piece}, joined, 0);
  opendml::CompiledOperator j =
      opendml::Operator(test_device(), join, DML_FEATURE_LEVEL(0), ODML_EXTENSION_64BIT_INDICES).compile();
  j.initialize();
  j.execute({a.binding(), b.binding()}, {out.binding()});
  ASSERT_CUDA(cudaDeviceSynchronize());
  const Bytes host = out.download(whole);
  ASSERT_EQ(std::count(host.begin(), host.begin() + half, 0x11), half);
  ASSERT_EQ(std::count(host.begin() + half, host.end() - 1, 0x22), half - 1);
  ASSERT_EQ(host.back(), 0x33);
  // And back: SPLIT the joined tensor into the two pieces.
  ASSERT_CUDA(cudaMemset(a.data, 0, half));
  ASSERT_CUDA(cudaMemset(b.data, 0, half));
  opendml::SplitDesc split(joined, {piece, piece}, 0);
  opendml::CompiledOperator s =
      opendml::Operator(test_device(), split, DML_FEATURE_LEVEL(0), ODML_EXTENSION_64BIT_INDICES).compile();
  s.initialize();
  s.execute({out.binding()}, {a.binding(), b.binding()});
  ASSERT_CUDA(cudaDeviceSynchronize());
  const Bytes first = a.download(half), second = b.download(half);
  EXPECT_TRUE(std::equal(first.begin(), first.end(), host.begin()));
  EXPECT_TRUE(std::equal(second.begin(), second.end(), host.begin() + half));
}

// 2^32 - 1 UINT8 elements in slices of one byte and two (rows of 3: columns of 1 and 2), without
// 64-bit indices: the most 32-bit indices address. Units one a thread, 2^32 - 1023 to 2^32 - 1 of
// them: the grid was sized in 32 bits and wrapped to 0 blocks, and every execute failed.
TEST_F(DeviceCuda, HugeJoinAndSplitOfNarrowSlicesOfTwoToThe32MinusOneElements) {
  const uint32_t rows = 1431655765;  // x 3 = 2^32 - 1
  const uint64_t whole = uint64_t{rows} * 3;
  const auto region = [](uint64_t n) { return (n + 3) / 4 * 4; };  // TotalTensorSizeInBytes
  size_t free_bytes = 0, total = 0;
  ASSERT_CUDA(cudaMemGetInfo(&free_bytes, &total));
  if (free_bytes < whole * 2 + (uint64_t{1} << 30)) GTEST_SKIP() << "needs about 10 GB of free GPU memory";
  const auto u8 = DML_TENSOR_DATA_TYPE_UINT8;
  const TensorDesc narrow(u8, {rows, 1}), wide(u8, {rows, 2}), joined(u8, {rows, 3});
  CudaBuffer a(region(rows)), b(region(uint64_t{rows} * 2)), out(region(whole));
  ASSERT_NE(out.data, nullptr);
  ASSERT_CUDA(cudaMemset(a.data, 0x11, a.size));
  ASSERT_CUDA(cudaMemset(b.data, 0x22, b.size));
  ASSERT_CUDA(cudaMemset(out.data, 0, out.size));
  opendml::CompiledOperator j =
      opendml::Operator(test_device(), opendml::JoinDesc({narrow, wide}, joined, 1)).compile();
  j.initialize();
  j.execute({a.binding(), b.binding()}, {out.binding()});
  ASSERT_CUDA(cudaDeviceSynchronize());
  const Bytes host = out.download(whole);
  uint64_t wrong = 0;
  for (uint64_t r = 0; r < rows; ++r)
    wrong += host[3 * r] != 0x11 || host[3 * r + 1] != 0x22 || host[3 * r + 2] != 0x22;
  ASSERT_EQ(wrong, 0u) << "rows joined wrong (" << j.implementation() << ")";
  ASSERT_CUDA(cudaMemset(a.data, 0, a.size));
  ASSERT_CUDA(cudaMemset(b.data, 0, b.size));
  opendml::CompiledOperator s =
      opendml::Operator(test_device(), opendml::SplitDesc(joined, {narrow, wide}, 1)).compile();
  s.initialize();
  s.execute({out.binding()}, {a.binding(), b.binding()});
  ASSERT_CUDA(cudaDeviceSynchronize());
  const Bytes first = a.download(rows), second = b.download(uint64_t{rows} * 2);
  EXPECT_EQ(uint64_t(std::count(first.begin(), first.end(), 0x11)), rows) << s.implementation();
  EXPECT_EQ(uint64_t(std::count(second.begin(), second.end(), 0x22)), uint64_t{rows} * 2) << s.implementation();
}

// A thread with no CUDA context has none after opendml's calls: each makes its device current and
// puts the thread's context back as it was, none included. Restoring "device 0" instead created a
// context there, on GPU 0, in every process that used only another GPU.
TEST_F(DeviceCuda, AThreadWithoutAContextHasNoneAfterwards) {
  void* get = nullptr;
  cudaDriverEntryPointQueryResult found{};
  ASSERT_CUDA(cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &get, 12000, cudaEnableDefault, &found));
  ASSERT_EQ(found, cudaDriverEntryPointSuccess);
  const auto current = [get] {
    void* context = nullptr;  // a CUcontext
    reinterpret_cast<int (*)(void**)>(get)(&context);
    return context;
  };
  const opendml::Device& device = test_device();
  const TensorDesc t(DML_TENSOR_DATA_TYPE_FLOAT32, {4, 4}), twice(DML_TENSOR_DATA_TYPE_FLOAT32, {8, 4});
  opendml::CompiledOperator op = opendml::Operator(device, opendml::JoinDesc({t, t}, twice, 0)).compile();
  op.initialize();
  CudaBuffer in(64), out(128);
  ASSERT_CUDA(cudaDeviceSynchronize());
  void* before = reinterpret_cast<void*>(1);
  void* after_execute = reinterpret_cast<void*>(1);
  void* after_device_calls = reinterpret_cast<void*>(1);
  std::thread([&] {
    before = current();
    op.execute({in.binding(), in.binding()}, {out.binding()});
    after_execute = current();
    void* p = device.allocate(256);
    device.synchronize();
    device.free(p);
    after_device_calls = current();
  }).join();
  EXPECT_EQ(before, nullptr) << "a new thread has no context";
  EXPECT_EQ(after_execute, nullptr);
  EXPECT_EQ(after_device_calls, nullptr);
  ASSERT_CUDA(cudaDeviceSynchronize());
}

// JOIN and SPLIT of pieces of one shape bound inside one buffer. cuda.copy finds pieces at evenly
// stepped addresses by arithmetic (packed, with gaps, in descending order, in two runs far apart,
// the last piece or the first one a run of its own), and pieces in three runs or shuffled through its
// pointer table (a shuffle of 3 may happen to step evenly; either way the results must match). The
// bytes between the pieces must stay as they were.
TEST_F(DeviceCuda, PiecesOfOneShapeInOneBuffer) {
  Rng rng(next_seed());
  const auto f32 = DML_TENSOR_DATA_TYPE_FLOAT32;
  struct Pieces {
    uint32_t count, rows, columns, axis;
  };
  for (const Pieces& p :
       {Pieces{3, 1, 1024, 0}, Pieces{1000, 1, 1024, 0}, Pieces{1000, 1, 5000, 1}, Pieces{12, 37, 100, 1},
        Pieces{1000, 3, 40, 1}}) {  // the last: several a block, the last block's cut short (on 132 SMs)
    const uint64_t bytes = uint64_t{p.rows} * p.columns * 4;
    const std::vector<TensorDesc> pieces(p.count, TensorDesc(f32, {p.rows, p.columns}));
    const TensorDesc whole =
        p.axis == 0 ? TensorDesc(f32, {p.rows * p.count, p.columns}) : TensorDesc(f32, {p.rows, p.columns * p.count});
    const std::vector<uint64_t> piece_sizes(p.count, bytes);
    const Compiled join(opendml::JoinDesc(pieces, whole, p.axis), piece_sizes, {bytes * p.count});
    const Compiled split(opendml::SplitDesc(whole, pieces, p.axis), {bytes * p.count}, piece_sizes);
    const CudaBuffer temporary(std::max<uint64_t>({join.temporary_bytes(), split.temporary_bytes(), 256}));
    for (const std::string layout :
         {"packed", "gaps", "descending", "two runs", "last apart", "first apart", "three runs", "shuffled"}) {
      SCOPED_TRACE(::testing::Message() << p.count << " pieces of " << p.rows << " x " << p.columns << " along axis "
                                        << p.axis << ", " << layout);
      std::vector<uint64_t> offsets(p.count);
      for (uint32_t i = 0; i < p.count; ++i)
        offsets[i] = layout == "gaps"          ? i * (bytes + 256)
                     : layout == "descending"  ? (p.count - 1 - i) * (bytes + 48)
                     : layout == "two runs"    ? i * bytes + (i < p.count / 2 ? 0 : 3 * bytes + 4096)
                     : layout == "last apart"  ? i * bytes + (i + 1 < p.count ? 0 : 2 * bytes + 512)
                     : layout == "first apart" ? (i + 1) * bytes + (i == 0 ? 0 : bytes + 256)
                     : layout == "three runs"
                         ? i * bytes + (i < p.count / 3 ? 0 : 5 * bytes) + (i < 2 * p.count / 3 ? 0 : 7 * bytes)
                         : i * bytes;
      if (layout == "shuffled") std::shuffle(offsets.begin(), offsets.end(), rng);
      const uint64_t span = *std::max_element(offsets.begin(), offsets.end()) + bytes;
      const CudaBuffer buffer(span), other(bytes * p.count);
      ASSERT_NE(buffer.data, nullptr);
      ASSERT_NE(other.data, nullptr);
      std::vector<odml_buffer_binding> bound;
      for (uint64_t offset : offsets) bound.push_back({static_cast<std::byte*>(buffer.data) + offset, bytes});

      // JOIN: the pieces are the inputs.
      const Bytes poison = random_bytes(rng, span);
      Bytes inside = poison;
      std::vector<Bytes> inputs;
      for (uint32_t i = 0; i < p.count; ++i) {
        inputs.push_back(random_bytes(rng, bytes));
        std::memcpy(inside.data() + offsets[i], inputs.back().data(), bytes);
      }
      buffer.upload(inside);
      join.execute(bound, {other.binding()}, temporary.binding(), nullptr);
      ASSERT_CUDA(cudaDeviceSynchronize());
      const Bytes joined = other.download(other.size);
      EXPECT_TRUE(joined == join.reference(inputs)[0]) << "JOIN output differs";
      EXPECT_TRUE(buffer.download(span) == inside) << "JOIN changed its inputs' buffer";

      // SPLIT of that output: the pieces are the outputs, and every byte between them keeps its poison.
      buffer.upload(poison);
      split.execute({other.binding()}, bound, temporary.binding(), nullptr);
      ASSERT_CUDA(cudaDeviceSynchronize());
      const std::vector<Bytes> parts = split.reference({joined});
      Bytes expected = poison;
      for (uint32_t i = 0; i < p.count; ++i) std::memcpy(expected.data() + offsets[i], parts[i].data(), bytes);
      EXPECT_TRUE(buffer.download(span) == expected) << "SPLIT's outputs or the bytes between them differ";
    }
  }
}

// More tensors than one launch's parameter table holds (4000): the copy is split into launches.
TEST_F(DeviceCuda, JoinAndSplitOfMoreTensorsThanOneLaunchHolds) {
  JoinTester().type(DML_TENSOR_DATA_TYPE_INT32).axis(1).inputs(std::vector<Shape>(4500, {2, 1})).run();
  SplitTester().type(DML_TENSOR_DATA_TYPE_UINT16).axis(0).outputs(std::vector<Shape>(4100, {1, 3})).run();
}

// NONZERO of one-byte elements broadcast from one row of 2^30 (stride 0), which a GiB holds: at 2^46
// elements the kernel's 2^32 tiles of 16 KiB wrapped to 0 and compiling divided by zero (SIGFPE), and
// from 2^31 tiles (2^45 elements) a block's end wrapped. Declined from 2^31 tiles; a row fewer compiles.
TEST_F(DeviceCuda, NonzeroOfTwoToThe31TilesIsUnsupported) {
  const uint32_t columns = 1u << 30;
  const auto nonzero = [&](uint32_t rows) {
    const auto u64 = DML_TENSOR_DATA_TYPE_UINT64;
    return opendml::Operator(
        test_device(),
        opendml::NonzeroCoordinatesDesc(opendml::TensorDesc(DML_TENSOR_DATA_TYPE_UINT8, {rows, columns}, {{0, 1}}),
                                        opendml::TensorDesc(u64, {1}), opendml::TensorDesc(u64, {rows, columns, 2})),
        DML_FEATURE_LEVEL(0), ODML_EXTENSION_64BIT_INDICES);
  };
  EXPECT_NO_THROW(nonzero(32767).compile());
  try {
    nonzero(32768).compile();
    FAIL() << "2^45 elements compiled";
  } catch (const opendml::Error& e) {
    EXPECT_EQ(e.status(), ODML_STATUS_UNSUPPORTED);
    EXPECT_NE(std::string(e.what()).find("more than 2^31 - 1 tiles"), std::string::npos) << e.what();
  }
}

// A JOIN of a transposed n x n input with 64-bit indices, compiled only: cuda.copy's pieces of 32-bit
// offsets were made a row at a time, 2^22 of them at n = 2^18 (2 GB of host memory) and 2^28 at
// 2^20 (unfinished after minutes); now 2^16 at 2^20. One declared far past any memory (2^58 bytes)
// is declined rather than cut into 2^52 pieces: its 2^48 blocks are past what cuda.copy numbers,
// which it checks first (the limit on pieces is tested by CudaCopyHost below).
TEST_F(DeviceCuda, CompilingATransposedHugeJoinIsBounded) {
  const auto transposed_join = [&](uint32_t n) {
    const auto u8 = DML_TENSOR_DATA_TYPE_UINT8;
    return opendml::Operator(
        test_device(),
        opendml::JoinDesc({opendml::TensorDesc(u8, {n, n}, {{1, n}})}, opendml::TensorDesc(u8, {n, n}), 0),
        DML_FEATURE_LEVEL(0), ODML_EXTENSION_64BIT_INDICES);
  };
  EXPECT_NO_THROW(transposed_join(1u << 20).compile());
  try {
    transposed_join(1u << 29).compile();
    FAIL() << "a join of 2^58 elements in 2^52 pieces compiled";
  } catch (const opendml::Error& e) {
    EXPECT_EQ(e.status(), ODML_STATUS_UNSUPPORTED);
    EXPECT_NE(std::string(e.what()).find("2^31 or more"), std::string::npos) << e.what();
  }
}

// cuda.copy's host side alone, which needs no GPU (a ctest entry on every machine with CUDA in the
// build): its blocks of 1024 vectors are numbered in 32 bits. A copy of 2^42 one-byte vectors (2048
// pieces of 2^31 vectors, 2^32 blocks) wrapped the count to 0, and compiling it wrote the block ->
// item table out of its bounds (SIGSEGV). It is declined; one of 2^40 (2^30 blocks) still compiles.
// A plan of one-byte elements that copies `item` alone, for cuda.copy's host side.
opendml::internal::CopyPlan byte_copy(const opendml::internal::CopyItem& item) {
  opendml::internal::CopyPlan plan;
  plan.element_bytes = 1;
  plan.items = {item};
  return plan;
}

TEST(CudaCopyHost, PlansOf2To31BlocksOrMoreAreDeclined) {
  using namespace opendml::internal;
  const CudaDevice device(0, "cuda:0 (host side only)", 132);
  const auto copy = [](uint64_t vectors) {
    CopyItem item;
    item.sizes[0] = vectors;
    item.src_strides[0] = item.dst_strides[0] = 1;
    return byte_copy(item);
  };
  EXPECT_EQ(cuda_copy_declines(copy(uint64_t{1} << 40), device), "");
  EXPECT_TRUE(make_cuda_copy_kernel(copy(uint64_t{1} << 40), device).ok());
  for (const uint64_t vectors : {uint64_t{1} << 41, uint64_t{1} << 42}) {
    const std::string why = cuda_copy_declines(copy(vectors), device);
    EXPECT_NE(why.find("2^31 or more"), std::string::npos) << vectors << " vectors: '" << why << "'";
    EXPECT_FALSE(make_cuda_copy_kernel(copy(vectors), device).ok()) << vectors << " vectors";
  }
}

// Few blocks, many pieces: 2 x m one-byte elements read with a column stride of 2^32 - 1 (a
// transposed view declared far larger than memory) span more than 2^32 elements from any two
// columns on, so split_items makes a piece a column. Up to 2^20 more pieces than items compile; past
// that the plan is declined before any piece is made.
TEST(CudaCopyHost, PlansOfMoreThan2To20ExtraPiecesAreDeclined) {
  using namespace opendml::internal;
  const CudaDevice device(0, "cuda:0 (host side only)", 132);
  const auto copy = [](uint64_t columns) {
    CopyItem item;
    item.rank = 2;
    item.sizes[0] = 2;
    item.sizes[1] = columns;
    item.src_strides[0] = 1;
    item.src_strides[1] = UINT32_MAX;
    item.dst_strides[0] = columns;
    item.dst_strides[1] = 1;
    return byte_copy(item);
  };
  EXPECT_EQ(cuda_copy_declines(copy(uint64_t{1} << 20), device), "");
  EXPECT_TRUE(make_cuda_copy_kernel(copy(uint64_t{1} << 20), device).ok());
  const std::string why = cuda_copy_declines(copy((uint64_t{1} << 20) + 2), device);
  EXPECT_NE(why.find("more pieces"), std::string::npos) << "'" << why << "'";
  EXPECT_FALSE(make_cuda_copy_kernel(copy((uint64_t{1} << 20) + 2), device).ok());
}

// make_cuda_device on its own, which needs no GPU: where it fails (no driver, no device, an ordinal
// past the last) it leaves the thread's last CUDA error as it found it, so that the caller's next
// check of cudaGetLastError does not report a failure opendml already reported. A failed
// cudaGetDeviceCount was left set. Where the runtime cannot start at all (no driver) every call
// reports the same error again, clearing or not: the test accepts that, and tells it apart by
// clearing once more. It tests the clearing where the count fails and a clear holds, as with
// CUDA_VISIBLE_DEVICES= on a GPU machine.
TEST(CudaDeviceHost, AFailedOpenLeavesNoErrorBehind) {
  using namespace opendml::internal;
  cudaGetLastError();  // what earlier tests left, unless it is sticky
  for (const int ordinal : {0, -1, 4096}) {
    SCOPED_TRACE(::testing::Message() << "ordinal " << ordinal);
    if (make_cuda_device(ordinal).ok()) continue;
    const cudaError_t left = cudaGetLastError();
    if (left == cudaSuccess) continue;
    EXPECT_EQ(cudaGetLastError(), left) << "make_cuda_device left " << cudaGetErrorName(left)
                                        << " behind, which one cudaGetLastError cleared";
  }
}

// A well-formed name of a device this machine lacks is UNSUPPORTED (a malformed one is invalid).
TEST_F(DeviceCuda, MissingOrdinalIsUnsupported) {
  try {
    opendml::Device("cuda:4096");
    FAIL() << "cuda:4096 opened";
  } catch (const opendml::Error& e) {
    EXPECT_EQ(e.status(), ODML_STATUS_UNSUPPORTED);
    EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace odml_test
