// Internal: pieces of the library below the C ABI that no operator suite reaches directly: the
// host side of FastDivmod (which the CUDA kernels use on the device), ceil_div, implementation
// choice, and the rules for temporary and persistent regions, which no CPU operator asks for.
#include <gtest/gtest.h>

#include <cstdlib>
#include <limits>
#include <string>

#include "api/bindings.h"
#include "backends/cpu/cpu_device.h"
#include "backends/cuda/fast_divmod.h"
#include "backends/device.h"
#include "core/arithmetic.h"
#include "ops/operator.h"
#include "support/random_cases.h"
#include "support/sample_descs.h"

namespace odml_test {
namespace {

using opendml::internal::FastDivmod;

void expect_divides(const FastDivmod& f, uint32_t n) {
  uint32_t q = 0, r = 0;
  f.divmod(n, q, r);
  ASSERT_EQ(q, n / f.divisor) << n << " / " << f.divisor;
  ASSERT_EQ(r, n % f.divisor) << n << " % " << f.divisor;
}

TEST(FastDivmod, ExactAtTheEdgesOfEveryDivisorsRange) {
  constexpr uint32_t kMax = std::numeric_limits<uint32_t>::max();
  for (uint64_t d : std::initializer_list<uint64_t>{1, 2, 3, 5, 7, 255, 256, 257, 65535, 65536, 65537, 1ull << 31,
                                                    (1ull << 31) + 1, kMax - 1ull, kMax}) {
    const FastDivmod f(static_cast<uint32_t>(d));
    for (uint64_t n : std::initializer_list<uint64_t>{0, 1, d - 1, d, d + 1, 2 * d - 1, 2 * d, kMax - 1ull, kMax})
      if (n <= kMax) expect_divides(f, static_cast<uint32_t>(n));
    for (uint64_t k = 1; k * d <= kMax; k = k * 3 + 1) {  // multiples and their neighbours
      expect_divides(f, static_cast<uint32_t>(k * d));
      expect_divides(f, static_cast<uint32_t>(k * d - 1));
    }
  }
}

// Grids are sized with it in 32 bits: near the top of the type it once wrapped to 0.
TEST(CeilDiv, RoundsUpWithoutWrappingAtTheTopOfTheType) {
  using opendml::internal::ceil_div;
  constexpr uint32_t kMax = std::numeric_limits<uint32_t>::max();
  EXPECT_EQ(ceil_div(0u, 1024u), 0u);
  EXPECT_EQ(ceil_div(1u, 1024u), 1u);
  EXPECT_EQ(ceil_div(1024u, 1024u), 1u);
  EXPECT_EQ(ceil_div(1025u, 1024u), 2u);
  EXPECT_EQ(ceil_div(kMax - 1022, 1024u), 4194304u);
  EXPECT_EQ(ceil_div(kMax, 1024u), 4194304u);
  EXPECT_EQ(ceil_div(kMax, 1u), kMax);
  EXPECT_EQ(ceil_div(kMax, kMax), 1u);
  EXPECT_EQ(ceil_div(std::numeric_limits<uint64_t>::max(), uint64_t{2}), uint64_t{1} << 63);
  static_assert(ceil_div(7u, 2u) == 4u);
}

TEST(FastDivmod, ExactOnRandomDividendsAndDivisors) {
  random_cases(200, [](Rng& rng) {
    const uint32_t bits = 1 + rng() % 32;
    const uint32_t d = std::max<uint32_t>(1, static_cast<uint32_t>(rng() >> (64 - bits)));
    const FastDivmod f(d);
    for (int i = 0; i < 1000; ++i) expect_divides(f, static_cast<uint32_t>(rng()));
  });
}

// ---- Implementation choice ----

namespace internal = opendml::internal;

struct FakePlan {
  int size = 0;
};

struct FakeDevice {
  std::string name_ = "fake";
  const std::string& name() const { return name_; }
};

class FakeKernel final : public internal::Kernel {
 public:
  internal::Status execute(const internal::ExecuteArgs&) const override { return {}; }
};

internal::Result<std::unique_ptr<internal::Kernel>> make_fake(const FakePlan&, const FakeDevice&) {
  return std::make_unique<FakeKernel>();
}
// A kernel whose making asks the device something, and the device fails.
internal::Result<std::unique_ptr<internal::Kernel>> make_failing(const FakePlan&, const FakeDevice&) {
  return internal::Status(ODML_STATUS_DEVICE_FAILURE, "fake.fast: the device did not answer");
}
std::string fast_declines(const FakePlan& p, const FakeDevice&) { return p.size > 10 ? "too large" : ""; }
std::string general_declines(const FakePlan&, const FakeDevice&) { return ""; }

constexpr internal::Implementation<FakePlan, FakeDevice> kFakeList[] = {{"fake.fast", fast_declines, make_fake},
                                                                        {"fake.general", general_declines, make_fake}};

struct ForcedImplementation : ScopedEnv {
  explicit ForcedImplementation(const char* name) : ScopedEnv("OPENDML_IMPLEMENTATION", name) {}
};

const char* chosen(const FakePlan& plan) {
  auto kernel = internal::choose_implementation<FakePlan, FakeDevice>(kFakeList, plan, FakeDevice{});
  return kernel.ok() ? kernel->implementation : "(none)";
}

TEST(ImplementationChoice, FirstThatAcceptsWins) {
  ForcedImplementation none("");
  EXPECT_STREQ(chosen(FakePlan{5}), "fake.fast");
  EXPECT_STREQ(chosen(FakePlan{50}), "fake.general");
}

TEST(ImplementationChoice, ForcedImplementationWinsWhereItAccepts) {
  ForcedImplementation general("fake.general");
  EXPECT_STREQ(chosen(FakePlan{5}), "fake.general");
  ForcedImplementation fast("fake.fast");
  EXPECT_STREQ(chosen(FakePlan{5}), "fake.fast");
  EXPECT_STREQ(chosen(FakePlan{50}), "fake.general") << "a forced implementation that declines falls back";
}

// An implementation that could run a plan but leaves it to a later one (passes_over) runs it only
// where forced, and its reason stands beside the others' where none is left.
std::string slow_passes_over(const FakePlan& p, const FakeDevice&) { return p.size > 1 ? "slower here" : ""; }

TEST(ImplementationChoice, PassedOverOnlyWhereForced) {
  constexpr internal::Implementation<FakePlan, FakeDevice> kList[] = {
      {"fake.small", general_declines, make_fake, slow_passes_over}, {"fake.fast", fast_declines, make_fake}};
  const auto pick = [&](const FakePlan& plan) {
    auto kernel = internal::choose_implementation<FakePlan, FakeDevice>(kList, plan, FakeDevice{});
    return std::string(kernel.ok() ? kernel->implementation : kernel.status().message());
  };
  {
    ForcedImplementation none("");
    EXPECT_EQ(pick(FakePlan{1}), "fake.small");
    EXPECT_EQ(pick(FakePlan{5}), "fake.fast");
    const std::string none_left = pick(FakePlan{50});
    EXPECT_NE(none_left.find("fake.small: slower here"), std::string::npos) << none_left;
    EXPECT_NE(none_left.find("fake.fast: too large"), std::string::npos) << none_left;
  }
  ForcedImplementation small("fake.small");
  EXPECT_EQ(pick(FakePlan{5}), "fake.small");
  EXPECT_EQ(pick(FakePlan{50}), "fake.small");
}

TEST(ImplementationChoice, NoneAcceptsIsUnsupportedWithEveryReason) {
  ForcedImplementation none("");
  constexpr internal::Implementation<FakePlan, FakeDevice> kOnlyFast[] = {{"fake.fast", fast_declines, make_fake}};
  auto kernel = internal::choose_implementation<FakePlan, FakeDevice>(kOnlyFast, FakePlan{50}, FakeDevice{});
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.status().code(), ODML_STATUS_UNSUPPORTED);
  EXPECT_NE(kernel.status().message().find("fake.fast: too large"), std::string::npos) << kernel.status().message();
}

TEST(ImplementationChoice, AKernelThatCannotBeMadeFailsTheCompile) {
  ForcedImplementation none("");
  constexpr internal::Implementation<FakePlan, FakeDevice> kFailing[] = {{"fake.fast", fast_declines, make_failing},
                                                                         {"fake.general", general_declines, make_fake}};
  auto kernel = internal::choose_implementation<FakePlan, FakeDevice>(kFailing, FakePlan{5}, FakeDevice{});
  ASSERT_FALSE(kernel.ok()) << "the device's failure is reported, not hidden behind the next implementation";
  EXPECT_EQ(kernel.status().code(), ODML_STATUS_DEVICE_FAILURE);
  EXPECT_EQ(kernel.status().message(), "fake.fast: the device did not answer");
}

// sample_join's bindings (FLOAT32 inputs of 24 and 40 bytes, an output of 64) checked at execute,
// with the temporary and persistent regions given and the sizes compile asked for them.
opendml::internal::Status check_sample_join(odml_buffer_binding input0, odml_buffer_binding input1,
                                            odml_buffer_binding output, odml_buffer_binding temporary = {},
                                            odml_buffer_binding persistent = {},
                                            opendml::internal::RegionSizes sizes = {}) {
  const OpDesc join = sample_join();
  auto op = opendml::internal::create_operator_def(&join.get());
  if (!op.ok()) return op.status();
  odml_buffer_binding inputs[] = {input0, input1}, outputs[] = {output};
  const odml_bindings b{inputs, 2, outputs, 1, temporary, persistent};
  return opendml::internal::check_bindings(*op, &b, opendml::internal::Phase::kExecute, sizes);
}

// The binding rules for a temporary or persistent region of a given size (docs/contract.md section
// 2), checked where no operator of the CPU asks for one: DeviceBindings checks them again through
// execute on a device whose operators do.
TEST(Bindings, RegionsAreRequiredLargeEnoughAlignedAndApart) {
  using opendml::internal::RegionSizes;
  alignas(256) static std::byte memory[4096];
  const auto check = [&](bool persistent, odml_buffer_binding region) {
    const odml_buffer_binding none{};
    return check_sample_join({memory, 256}, {memory + 256, 256}, {memory + 512, 256}, persistent ? none : region,
                             persistent ? region : none, persistent ? RegionSizes{0, 512} : RegionSizes{512, 0});
  };
  for (bool persistent : {false, true}) {
    const std::string name = persistent ? "the persistent region" : "the temporary region";
    SCOPED_TRACE(name);
    EXPECT_TRUE(check(persistent, {memory + 1024, 512}).ok());
    const auto refused = [&](odml_buffer_binding region, const std::string& part) {
      const opendml::internal::Status s = check(persistent, region);
      return !s.ok() && s.code() == ODML_STATUS_INVALID_ARGUMENT && s.message().find(part) != std::string::npos;
    };
    EXPECT_TRUE(refused({}, name + " is not bound but compile asked for 512"));
    EXPECT_TRUE(refused({memory + 1024, 511}, name + " is 511 bytes"));
    EXPECT_TRUE(refused({memory + 1024 + 16, 512}, "not a multiple of 256"));
    EXPECT_TRUE(refused({memory + 512, 512}, "overlaps"));
  }
}

// Regions are half-open: a region that starts at the byte where another ends does not overlap it,
// whichever of the two is written and whichever comes first.
TEST(Bindings, TouchingRegionsDoNotOverlap) {
  alignas(256) static std::byte memory[256];
  const opendml::internal::Status after = check_sample_join({memory, 32}, {memory + 32, 48}, {memory + 80, 64});
  EXPECT_TRUE(after.ok()) << after.message();
  const opendml::internal::Status before = check_sample_join({memory + 64, 32}, {memory + 96, 48}, {memory, 64});
  EXPECT_TRUE(before.ok()) << before.message();
  // 16 bytes into the second input: refused.
  const opendml::internal::Status overlapping = check_sample_join({memory, 32}, {memory + 32, 48}, {memory + 64, 64});
  EXPECT_EQ(overlapping.code(), ODML_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(overlapping.message().find("overlaps InputTensors[1]"), std::string::npos) << overlapping.message();
}

// A region whose end would pass the top of the address space is refused: its end would wrap round
// below its start, where the overlap check (and the kernel) would take it for a small region.
TEST(Bindings, RegionPastTheEndOfTheAddressSpaceRejected) {
  alignas(256) static std::byte memory[256];
  // 16-byte aligned, 16 bytes below the top, for a 64-byte output.
  void* const top = reinterpret_cast<void*>(std::numeric_limits<uintptr_t>::max() - 15);
  const opendml::internal::Status s = check_sample_join({memory, 32}, {memory + 32, 48}, {top, 64});
  EXPECT_EQ(s.code(), ODML_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(s.message().find("JOIN: execute: OutputTensor at 0xfffffffffffffff0 with 64 bytes runs past the end of "
                             "the address space"),
            std::string::npos)
      << s.message();
}

// cpu.copy lists at most 2^20 tiles of what a plan moves, however much the descriptors declare: a
// SPLIT of a broadcast FLOAT64 input of about 2^62 elements moves 2^65 bytes, past the 2^62 at
// which CopyPlan::bytes stops, and tiles sized from that sum made 2^23 of them (8 million chunks,
// a second and hundreds of MB at compile).
TEST(CpuCopy, TilesStayWithinTheLimitPastTwoToThe62Bytes) {
  const uint32_t big = (1u << 31) - 1;
  std::vector<TensorSpec> outputs;
  for (uint32_t i = 0, left = big; i < 64; ++i) {
    const uint32_t rows = i == 63 ? left : (1u << 25) - i % 2;  // unequal neighbours: each tiled alone
    outputs.push_back(spec(DML_TENSOR_DATA_TYPE_FLOAT64, {rows, big}));
    left -= rows;
  }
  const OpDesc split = OpDesc::split(spec(DML_TENSOR_DATA_TYPE_FLOAT64, {big, big}, Shape{0, 0}), outputs, 0);
  const odml_operator_options options{ODML_EXTENSION_64BIT_INDICES, 0, nullptr, 0, nullptr};
  auto def = opendml::internal::create_operator_def(&split.get(), DML_FEATURE_LEVEL(0), &options);
  ASSERT_TRUE(def.ok()) << def.status().message();
  const opendml::internal::Plan planned = opendml::internal::plan_operator(*def);
  const auto& plan = std::get<opendml::internal::CopyPlan>(planned);
  uint64_t tiles = 0;  // as cpu.copy lists them: each item alone, in tiles of at most `tile` bytes
  double total = 0;
  const uint64_t tile = opendml::internal::cpu_copy_tile_bytes(plan);
  for (const auto& item : plan.items) {
    total += static_cast<double>(item.element_count()) * item.width;
    tiles += opendml::internal::ceil_div(item.element_count() * item.width, tile);
  }
  ASSERT_GT(total, 0x1p62);
  EXPECT_LE(tiles, (uint64_t{1} << 20) + plan.items.size()) << tile << "-byte tiles";
  // Small plans keep 64 KiB tiles.
  EXPECT_EQ(opendml::internal::cpu_copy_tile_bytes(opendml::internal::CopyPlan{}), uint64_t{64} << 10);
}

}  // namespace
}  // namespace odml_test
