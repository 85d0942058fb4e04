// DeviceBindings: the binding rules of docs/contract.md section 2 ("Binding") and section 4, at
// initialize and execute on the test device. Every rejected call must leave every output region
// (and its guards) holding the poison: nothing is written when a call fails validation.
#include <gtest/gtest.h>

#include <memory>

#include "support/expect.h"
#include "support/guarded_buffer.h"
#include "support/oracle.h"
#include "support/test_env.h"
#include "support/testers.h"

namespace odml_test {
namespace {

constexpr auto kF32 = DML_TENSOR_DATA_TYPE_FLOAT32;
using Region = std::unique_ptr<GuardedBuffer>;

odml_buffer_binding shifted(odml_buffer_binding b, uint64_t bytes) {
  return {static_cast<uint8_t*>(b.data) + bytes, b.size_in_bytes};
}

// An operator compiled on the test device, a guarded region for each of its tensors and for the
// regions compile asks for, and execute bindings that a test edits to break one rule.
class Bound {
 public:
  explicit Bound(const OpDesc& desc)
      : op_(opendml::Operator(test_device(), desc.get()).compile()), props_(op_.binding_properties()) {
    Rng rng(next_seed());
    const auto in_specs = desc.inputs();
    for (const TensorSpec& t : in_specs) {
      in.push_back(std::make_unique<GuardedBuffer>(test_device(), t));
      in_data.push_back(random_bytes(rng, t.total_bytes()));
      in.back()->upload(in_data.back());
      owned.push_back((t.flags & DML_TENSOR_FLAG_OWNED_BY_DML) != 0);
      inputs.push_back(owned.back() ? odml_buffer_binding{} : in.back()->binding());
    }
    for (const TensorSpec& t : desc.outputs()) {
      out.push_back(std::make_unique<GuardedBuffer>(test_device(), t));
      outputs.push_back(out.back()->binding());
    }
    temporary_region = make(props_.temporary_size_in_bytes);
    persistent_region = make(props_.persistent_size_in_bytes);
    temporary = binding(temporary_region);
    persistent = binding(persistent_region);
  }

  const odml_binding_properties& properties() const { return props_; }
  odml_compiled_operator get() const { return op_.get(); }

  // The bindings initialize takes: exactly the OWNED_BY_DML inputs, and the regions.
  odml_bindings initialize_bindings() {
    init_inputs.assign(in.size(), odml_buffer_binding{});
    bool any = false;
    for (size_t i = 0; i < in.size(); ++i) {
      if (!owned[i]) continue;
      init_inputs[i] = in[i]->binding();
      any = true;
    }
    return {init_inputs.data(), any ? static_cast<uint32_t>(in.size()) : 0, nullptr, 0, temporary, persistent};
  }
  void initialize() {
    const odml_bindings b = initialize_bindings();
    op_.initialize(b);
    test_device().synchronize();
  }
  odml_bindings bindings() const {
    return {inputs.data(),  static_cast<uint32_t>(inputs.size()),
            outputs.data(), static_cast<uint32_t>(outputs.size()),
            temporary,      persistent};
  }
  // The call failed with INVALID_ARGUMENT and `parts` in its message, and wrote nothing.
  ::testing::AssertionResult rejected(odml_status status, const std::vector<std::string>& parts) const {
    ::testing::AssertionResult r = status_is(status, ODML_STATUS_INVALID_ARGUMENT, parts);
    test_device().synchronize();
    for (size_t o = 0; o < out.size() && r; ++o) r = out[o]->untouched("output " + std::to_string(o));
    for (size_t i = 0; i < in.size() && r; ++i) {
      r = in[i]->guards_intact("input " + std::to_string(i));
      if (r && in[i]->download() != in_data[i]) r = ::testing::AssertionFailure() << "input " << i << " was written";
    }
    return r;
  }
  ::testing::AssertionResult execute_rejected(const odml_bindings& b, const std::vector<std::string>& parts) const {
    poison();
    return rejected(odml_compiled_operator_execute(op_.get(), &b, nullptr), parts);
  }
  ::testing::AssertionResult execute_rejected(const std::vector<std::string>& parts) const {
    return execute_rejected(bindings(), parts);
  }
  ::testing::AssertionResult initialize_rejected(const odml_bindings& b, const std::vector<std::string>& parts) const {
    poison();
    if (persistent_region) persistent_region->poison();
    ::testing::AssertionResult r = rejected(odml_compiled_operator_initialize(op_.get(), &b, nullptr), parts);
    if (r && persistent_region) r = persistent_region->untouched("persistent region");
    return r;
  }
  ::testing::AssertionResult execute_succeeds() const {
    const odml_bindings b = bindings();
    ::testing::AssertionResult r =
        status_is(odml_compiled_operator_execute(op_.get(), &b, nullptr), ODML_STATUS_SUCCESS);
    test_device().synchronize();
    return r;
  }

  std::vector<Region> in, out;
  std::vector<Bytes> in_data;
  std::vector<bool> owned;
  std::vector<odml_buffer_binding> inputs, outputs, init_inputs;
  Region temporary_region, persistent_region;
  odml_buffer_binding temporary{}, persistent{};

 private:
  // Outputs to the poison, so that a refused call can be seen to write nothing.
  void poison() const {
    for (const Region& o : out) o->poison();
  }
  static Region make(uint64_t size) {
    return size ? std::make_unique<GuardedBuffer>(test_device(), size, DML_TEMPORARY_BUFFER_ALIGNMENT) : nullptr;
  }
  static odml_buffer_binding binding(const Region& r) { return r ? r->binding() : odml_buffer_binding{}; }

  opendml::CompiledOperator op_;
  odml_binding_properties props_;
};

// JOIN {2,4} + {2,4} -> {2,8}, FLOAT32: 32-byte inputs, a 64-byte output.
OpDesc join_desc(uint32_t alignment = 0, DML_TENSOR_FLAGS first_input_flags = DML_TENSOR_FLAG_NONE) {
  TensorSpec a = spec(kF32, {2, 4}), b = spec(kF32, {2, 4}), out = spec(kF32, {2, 8});
  a.alignment = b.alignment = out.alignment = alignment;
  a.flags = first_input_flags;
  return OpDesc::join({a, b}, out, 1);
}

OpDesc split_desc() { return OpDesc::split(spec(kF32, {2, 8}), {spec(kF32, {2, 4}), spec(kF32, {2, 4})}, 1); }

OpDesc nonzero_desc() {
  return OpDesc::nonzero(spec(DML_TENSOR_DATA_TYPE_INT16, {6, 8}), spec(DML_TENSOR_DATA_TYPE_UINT32, {1}),
                         spec(DML_TENSOR_DATA_TYPE_UINT32, {48, 2}));
}

TEST(DeviceBindings, RegionSmallerThanTotalTensorSizeRejected) {
  Bound j(join_desc());
  j.initialize();
  j.inputs[1].size_in_bytes = 31;
  EXPECT_TRUE(
      j.execute_rejected({"JOIN: execute: ", "InputTensors[1] is bound to 31 bytes", "TotalTensorSizeInBytes is 32"}));
  j.inputs[1].size_in_bytes = 32;
  j.outputs[0].size_in_bytes = 60;
  EXPECT_TRUE(j.execute_rejected({"OutputTensor is bound to 60 bytes", "TotalTensorSizeInBytes is 64"}));
  j.outputs[0].size_in_bytes = 64;
  EXPECT_TRUE(j.execute_succeeds());
}

TEST(DeviceBindings, AddressNotMultipleOfSixteenRejected) {
  Bound j(join_desc());
  j.initialize();
  j.inputs[0] = shifted(j.inputs[0], 8);
  EXPECT_TRUE(j.execute_rejected({"InputTensors[0] is bound at 0x", "not a multiple of 16"}));
  j.inputs[0] = j.in[0]->binding();
  j.outputs[0] = shifted(j.outputs[0], 4);
  EXPECT_TRUE(j.execute_rejected({"OutputTensor is bound at 0x", "not a multiple of 16"}));
}

TEST(DeviceBindings, AddressNotMultipleOfGuaranteedBaseOffsetAlignmentRejected) {
  Bound small(join_desc(8));  // bound at multiples of 8 that are not multiples of 16: accepted
  small.initialize();
  EXPECT_TRUE(small.execute_succeeds());
  small.inputs[1] = shifted(small.inputs[1], 4);
  EXPECT_TRUE(small.execute_rejected({"InputTensors[1] is bound at 0x", "not a multiple of 8"}));

  Bound large(join_desc(64));  // bound at multiples of 16 that are not multiples of 64: rejected
  large.initialize();
  large.outputs[0] = shifted(large.outputs[0], 16);
  EXPECT_TRUE(large.execute_rejected({"OutputTensor is bound at 0x", "not a multiple of 64"}));
}

TEST(DeviceBindings, OutputsOverlappingEachOtherRejected) {
  Bound s(split_desc());
  s.initialize();
  s.outputs[1] = shifted(s.outputs[0], 16);
  EXPECT_TRUE(s.execute_rejected({"SPLIT: execute: ", "OutputTensors[1]", "overlaps", "OutputTensors[0]"}));

  Bound n(nonzero_desc());
  n.initialize();
  n.outputs[0] = shifted(n.outputs[1], 64);  // the count inside the coordinates
  EXPECT_TRUE(n.execute_rejected({"OutputCountTensor", "overlaps", "OutputCoordinatesTensor"}));
}

TEST(DeviceBindings, OutputOverlappingAnInputRejected) {
  Bound j(join_desc());
  j.initialize();
  j.outputs[0] = {j.inputs[0].data, 64};  // in place over input 0 and its guard
  EXPECT_TRUE(j.execute_rejected({"OutputTensor", "overlaps", "InputTensors[0]"}));
  j.outputs[0] = shifted(j.inputs[1], 16);
  j.outputs[0].size_in_bytes = 64;
  EXPECT_TRUE(j.execute_rejected({"overlaps", "InputTensors[1]"}));
}

TEST(DeviceBindings, InputsOverlappingEachOtherAllowed) {
  // Input 1 starts 16 bytes into input 0, inside one 48-byte region.
  GuardedBuffer shared(test_device(), 48, 16);
  Rng rng(next_seed());
  const Bytes data = random_bytes(rng, 48);
  shared.upload(data);
  const TensorSpec in = spec(kF32, {2, 4}), out = spec(kF32, {2, 8});
  const OpDesc desc = OpDesc::join({in, in}, out, 1);
  opendml::CompiledOperator op = opendml::Operator(test_device(), desc.get()).compile();
  op.initialize();
  GuardedBuffer result(test_device(), out);
  op.execute({shared.binding(), shifted(shared.binding(), 16)}, {result.binding()});
  test_device().synchronize();
  const Bytes a(data.begin(), data.begin() + 32), b(data.begin() + 16, data.end());
  EXPECT_TRUE(elements_equal(out, result.download(), join_oracle({in, in}, {a, b}, 1), "OutputTensor"));
  EXPECT_TRUE(result.guards_intact("OutputTensor"));
}

TEST(DeviceBindings, MissingBindingRejected) {
  Bound j(join_desc());
  j.initialize();
  j.inputs[1].data = nullptr;
  EXPECT_TRUE(j.execute_rejected({"JOIN: execute: InputTensors[1] is not bound"}));
  j.inputs[1] = j.in[1]->binding();
  j.outputs[0].data = nullptr;
  EXPECT_TRUE(j.execute_rejected({"JOIN: execute: OutputTensor is not bound"}));
}

TEST(DeviceBindings, WrongInputCountRejected) {
  Bound j(join_desc());
  j.initialize();
  odml_bindings b = j.bindings();
  b.input_count = 1;
  EXPECT_TRUE(j.execute_rejected(b, {"input_count is 1 but the operator has 2 inputs"}));
  b.input_count = 2;
  b.inputs = nullptr;
  EXPECT_TRUE(j.execute_rejected(b, {"inputs is null but input_count is 2"}));
}

TEST(DeviceBindings, WrongOutputCountRejected) {
  Bound s(split_desc());
  s.initialize();
  odml_bindings b = s.bindings();
  b.output_count = 1;
  EXPECT_TRUE(s.execute_rejected(b, {"output_count is 1 but the operator has 2 outputs"}));
  b.output_count = 3;
  EXPECT_TRUE(s.execute_rejected(b, {"output_count is 3"}));
  b.output_count = 2;
  b.outputs = nullptr;
  EXPECT_TRUE(s.execute_rejected(b, {"outputs is null but output_count is 2"}));
}

TEST(DeviceBindings, NullBindingsRejected) {
  Bound j(join_desc());
  j.initialize();
  EXPECT_TRUE(j.rejected(odml_compiled_operator_execute(j.get(), nullptr, nullptr), {"odml_bindings pointer is null"}));
  EXPECT_TRUE(j.rejected(odml_compiled_operator_initialize(j.get(), nullptr, nullptr), {"null"}));
}

TEST(DeviceBindings, ExecuteBeforeInitializeRejected) {
  Bound j(join_desc());
  EXPECT_TRUE(j.execute_rejected({"JOIN", "has not been initialized"}));
  j.initialize();
  EXPECT_TRUE(j.execute_succeeds());
}

TEST(DeviceBindings, OwnedByDmlInputBoundAtExecuteRejected) {
  Bound j(join_desc(0, DML_TENSOR_FLAG_OWNED_BY_DML));
  j.initialize();
  EXPECT_TRUE(j.execute_succeeds());
  j.inputs[0] = j.in[0]->binding();
  EXPECT_TRUE(j.execute_rejected({"InputTensors[0] is bound", "OWNED_BY_DML", "bound at initialize"}));
}

TEST(DeviceBindings, OwnedByDmlInputNotBoundAtInitializeRejected) {
  Bound j(join_desc(0, DML_TENSOR_FLAG_OWNED_BY_DML));
  odml_bindings b = j.initialize_bindings();
  b.input_count = 0;
  EXPECT_TRUE(j.initialize_rejected(b, {"JOIN: initialize: ", "input_count is 0 but the operator has 2 inputs"}));
  b = j.initialize_bindings();
  j.init_inputs[0].data = nullptr;
  EXPECT_TRUE(j.initialize_rejected(b, {"InputTensors[0] is not bound", "OWNED_BY_DML"}));
  b = j.initialize_bindings();
  j.init_inputs[0].size_in_bytes = 8;
  EXPECT_TRUE(j.initialize_rejected(b, {"InputTensors[0] is bound to 8 bytes"}));
  // Nothing was initialized, so execute is still refused.
  EXPECT_TRUE(j.execute_rejected({"has not been initialized"}));
}

// initialize writes the persistent region, so it may not overlap the OWNED_BY_DML input it copies,
// and the message names that rule (it named only outputs and the temporary region).
TEST(DeviceBindings, PersistentRegionOverlappingAnOwnedInputAtInitializeRejected) {
  Bound j(join_desc(0, DML_TENSOR_FLAG_OWNED_BY_DML));
  odml_bindings b = j.initialize_bindings();
  j.init_inputs[0].data = j.persistent.data;
  EXPECT_TRUE(j.initialize_rejected(b, {"JOIN: initialize: ", "overlaps", "InputTensors[0]", "the persistent region [",
                                        "the persistent region at initialize"}));
}

// Each OWNED_BY_DML input's copy takes TotalTensorSizeInBytes of the persistent region. A total
// near 2^64 is a valid descriptor, but summing it must not wrap: compile reported a persistent size
// of 2^64 - 29440, or of a few bytes, until it refused such a region (found by fuzz/c_abi_fuzzer).
TEST(DeviceBindings, PersistentRegionOfHugeOwnedInputsDoesNotWrap) {
  for (const uint64_t total : {~uint64_t{0}, ~uint64_t{0} - 100, ~uint64_t{0} - 300, uint64_t{1} << 63}) {
    SCOPED_TRACE("TotalTensorSizeInBytes " + std::to_string(total));
    TensorSpec owned = spec(kF32, {2, 3});
    owned.flags = DML_TENSOR_FLAG_OWNED_BY_DML;
    OpDesc desc = OpDesc::join({owned, spec(kF32, {2, 3})}, spec(kF32, {2, 6}), 1);
    desc.buffer(0).TotalTensorSizeInBytes = total;
    odml_operator op = nullptr;
    ASSERT_TRUE(status_is(odml_operator_create(test_device().get(), &desc.get(), DML_FEATURE_LEVEL(0), &op),
                          ODML_STATUS_SUCCESS));
    odml_compiled_operator compiled = nullptr;
    const odml_status status = odml_operator_compile(op, &compiled);
    odml_operator_destroy(op);
    if (status != ODML_STATUS_SUCCESS) {
      EXPECT_TRUE(status_is(status, ODML_STATUS_UNSUPPORTED, {"JOIN: compile: ", "persistent region", "2^64"}));
      EXPECT_EQ(compiled, nullptr);
      continue;
    }
    odml_binding_properties properties{};
    EXPECT_EQ(odml_compiled_operator_get_binding_properties(compiled, &properties), ODML_STATUS_SUCCESS);
    EXPECT_GE(properties.persistent_size_in_bytes, total);
    odml_compiled_operator_destroy(compiled);
  }
}

TEST(DeviceBindings, InitializeBindsOnlyOwnedInputsAndNoOutputs) {
  Bound j(join_desc(0, DML_TENSOR_FLAG_OWNED_BY_DML));
  odml_bindings b = j.initialize_bindings();
  j.init_inputs[1] = j.in[1]->binding();
  EXPECT_TRUE(j.initialize_rejected(b, {"InputTensors[1] is bound", "only inputs flagged OWNED_BY_DML"}));
  b = j.initialize_bindings();
  b.outputs = j.outputs.data();
  b.output_count = 1;
  EXPECT_TRUE(j.initialize_rejected(b, {"output_count is 1", "initialize binds no outputs"}));
}

// The operators whose temporary and persistent regions the next tests check: each rule runs
// wherever compile asks for a region, and where it asks for none, none is needed.
std::vector<std::unique_ptr<Bound>> region_cases() {
  std::vector<std::unique_ptr<Bound>> cases;
  cases.push_back(std::make_unique<Bound>(join_desc()));
  cases.push_back(std::make_unique<Bound>(join_desc(0, DML_TENSOR_FLAG_OWNED_BY_DML)));
  cases.push_back(std::make_unique<Bound>(split_desc()));
  cases.push_back(std::make_unique<Bound>(nonzero_desc()));
  return cases;
}

enum class Break { kMissing, kTooSmall, kMisaligned, kOverlapsOutput };

// Breaks the temporary (or persistent) region of each case and expects execute to refuse it.
void check_region_rule(bool persistent, Break how) {
  int checked = 0;
  for (auto& c : region_cases()) {
    const uint64_t size =
        persistent ? c->properties().persistent_size_in_bytes : c->properties().temporary_size_in_bytes;
    const std::string name = persistent ? "persistent region" : "temporary region";
    SCOPED_TRACE("case " + std::to_string(checked++) + ", " + name + " of " + std::to_string(size) + " bytes");
    c->initialize();
    odml_buffer_binding& region = persistent ? c->persistent : c->temporary;
    if (size == 0) {
      region = {};
      EXPECT_TRUE(c->execute_succeeds()) << "compile asked for no " << name << ", so none is needed";
      continue;
    }
    switch (how) {
      case Break::kMissing:
        region = {};
        EXPECT_TRUE(
            c->execute_rejected({"the " + name + " is not bound but compile asked for " + std::to_string(size)}));
        break;
      case Break::kTooSmall:
        region.size_in_bytes = size - 1;
        EXPECT_TRUE(c->execute_rejected({"the " + name + " is " + std::to_string(size - 1) + " bytes"}));
        break;
      case Break::kMisaligned:
        region = shifted(region, 16);
        EXPECT_TRUE(c->execute_rejected({"the " + name + " starts at 0x", "not a multiple of 256"}));
        break;
      case Break::kOverlapsOutput:
        c->outputs[0] = {region.data, c->outputs[0].size_in_bytes};
        EXPECT_TRUE(c->execute_rejected({"overlaps", "the " + name}));
        break;
    }
  }
}

TEST(DeviceBindings, TemporaryRegionMissingRejected) { check_region_rule(false, Break::kMissing); }
TEST(DeviceBindings, TemporaryRegionTooSmallRejected) { check_region_rule(false, Break::kTooSmall); }
TEST(DeviceBindings, TemporaryRegionMisalignedRejected) { check_region_rule(false, Break::kMisaligned); }
TEST(DeviceBindings, TemporaryRegionOverlappingOutputRejected) { check_region_rule(false, Break::kOverlapsOutput); }
TEST(DeviceBindings, PersistentRegionMissingRejected) { check_region_rule(true, Break::kMissing); }
TEST(DeviceBindings, PersistentRegionTooSmallRejected) { check_region_rule(true, Break::kTooSmall); }
TEST(DeviceBindings, PersistentRegionMisalignedRejected) { check_region_rule(true, Break::kMisaligned); }
TEST(DeviceBindings, PersistentRegionOverlappingOutputRejected) { check_region_rule(true, Break::kOverlapsOutput); }

// An operator with an OWNED_BY_DML input needs a persistent region to keep it in, on every device.
TEST(DeviceBindings, OwnedByDmlInputNeedsPersistentRegion) {
  Bound j(join_desc(0, DML_TENSOR_FLAG_OWNED_BY_DML));
  EXPECT_GE(j.properties().persistent_size_in_bytes, 32u);
  odml_bindings b = j.initialize_bindings();
  b.persistent = {};
  EXPECT_TRUE(j.initialize_rejected(b, {"JOIN: initialize: the persistent region is not bound"}));
}

}  // namespace
}  // namespace odml_test
