// Api (device-independent): the C ABI's argument checks and thread-local messages, the C++
// wrapper's exceptions and descriptor builders, and the binary layout DirectML code relies on
// (docs/contract.md sections 1 and 4).
#include <gtest/gtest.h>

#include <cstddef>
#include <thread>
#include <type_traits>

#include "opendml/opendml.hpp"
#include "support/expect.h"
#include "support/sample_descs.h"

namespace odml_test {
namespace {

constexpr auto kInvalid = ODML_STATUS_INVALID_ARGUMENT;

// ---- Section 1: values and layouts equal to DirectML.h ----

TEST(Abi, EnumValuesMatchDirectML) {
  EXPECT_EQ(DML_TENSOR_DATA_TYPE_FLOAT32, 1);
  EXPECT_EQ(DML_TENSOR_DATA_TYPE_FLOAT16, 2);
  EXPECT_EQ(DML_TENSOR_DATA_TYPE_UINT32, 3);
  EXPECT_EQ(DML_TENSOR_DATA_TYPE_UINT16, 4);
  EXPECT_EQ(DML_TENSOR_DATA_TYPE_UINT8, 5);
  EXPECT_EQ(DML_TENSOR_DATA_TYPE_INT32, 6);
  EXPECT_EQ(DML_TENSOR_DATA_TYPE_INT16, 7);
  EXPECT_EQ(DML_TENSOR_DATA_TYPE_INT8, 8);
  EXPECT_EQ(DML_TENSOR_DATA_TYPE_FLOAT64, 9);
  EXPECT_EQ(DML_TENSOR_DATA_TYPE_UINT64, 10);
  EXPECT_EQ(DML_TENSOR_DATA_TYPE_INT64, 11);
  EXPECT_EQ(DML_TENSOR_DATA_TYPE_UINT4, 12);
  EXPECT_EQ(DML_TENSOR_DATA_TYPE_INT4, 13);
  EXPECT_EQ(DML_TENSOR_TYPE_BUFFER, 1);
  EXPECT_EQ(DML_TENSOR_FLAG_OWNED_BY_DML, 1);
  EXPECT_EQ(DML_OPERATOR_SPLIT, 62);
  EXPECT_EQ(DML_OPERATOR_JOIN, 63);
  EXPECT_EQ(DML_OPERATOR_NONZERO_COORDINATES, 133);
  EXPECT_EQ(DML_FEATURE_LEVEL_1_0, 0x1000);
  EXPECT_EQ(DML_FEATURE_LEVEL_2_1, 0x2100);
  EXPECT_EQ(DML_FEATURE_LEVEL_3_1, 0x3100);
  EXPECT_EQ(DML_FEATURE_LEVEL_4_1, 0x4100);
  EXPECT_EQ(DML_FEATURE_LEVEL_5_2, 0x5200);
  EXPECT_EQ(DML_FEATURE_LEVEL_6_4, 0x6400);
}

TEST(Abi, StructLayoutsMatchDirectML) {
  EXPECT_EQ(offsetof(DML_BUFFER_TENSOR_DESC, DataType), 0u);
  EXPECT_EQ(offsetof(DML_BUFFER_TENSOR_DESC, Flags), 4u);
  EXPECT_EQ(offsetof(DML_BUFFER_TENSOR_DESC, DimensionCount), 8u);
  EXPECT_EQ(offsetof(DML_BUFFER_TENSOR_DESC, Sizes), 16u);
  EXPECT_EQ(offsetof(DML_BUFFER_TENSOR_DESC, Strides), 24u);
  EXPECT_EQ(offsetof(DML_BUFFER_TENSOR_DESC, TotalTensorSizeInBytes), 32u);
  EXPECT_EQ(offsetof(DML_BUFFER_TENSOR_DESC, GuaranteedBaseOffsetAlignment), 40u);
  EXPECT_EQ(sizeof(DML_BUFFER_TENSOR_DESC), 48u);
  EXPECT_EQ(offsetof(DML_JOIN_OPERATOR_DESC, InputTensors), 8u);
  EXPECT_EQ(offsetof(DML_JOIN_OPERATOR_DESC, Axis), 24u);
  EXPECT_EQ(offsetof(DML_SPLIT_OPERATOR_DESC, OutputCount), 8u);
  EXPECT_EQ(offsetof(DML_SPLIT_OPERATOR_DESC, Axis), 24u);
  EXPECT_EQ(offsetof(DML_NONZERO_COORDINATES_OPERATOR_DESC, OutputCoordinatesTensor), 16u);
}

// Code written against DirectML.h uses its older dimension limit and combines flags with its
// operators; both must compile and keep the type.
TEST(Abi, ConstantsAndFlagOperatorsAsDirectMLDeclaresThem) {
  EXPECT_EQ(DML_TENSOR_DIMENSION_COUNT_MAX, 5);
  EXPECT_EQ(DML_TENSOR_DIMENSION_COUNT_MAX1, 8);
  DML_BUFFER_TENSOR_DESC desc{};
  desc.Flags = DML_TENSOR_FLAG_NONE | DML_TENSOR_FLAG_OWNED_BY_DML;
  EXPECT_EQ(desc.Flags, DML_TENSOR_FLAG_OWNED_BY_DML);
  desc.Flags &= ~DML_TENSOR_FLAG_OWNED_BY_DML;
  EXPECT_EQ(desc.Flags, DML_TENSOR_FLAG_NONE);
  desc.Flags |= DML_TENSOR_FLAG_OWNED_BY_DML;
  desc.Flags ^= DML_TENSOR_FLAG_OWNED_BY_DML;
  EXPECT_EQ(desc.Flags, DML_TENSOR_FLAG_NONE);
  static_assert(std::is_same_v<decltype(DML_TENSOR_FLAG_OWNED_BY_DML & DML_TENSOR_FLAG_NONE), DML_TENSOR_FLAGS>);
}

// ---- The C ABI ----

TEST(CApi, StatusNames) {
  EXPECT_STREQ(odml_status_name(ODML_STATUS_SUCCESS), "SUCCESS");
  EXPECT_STREQ(odml_status_name(ODML_STATUS_INVALID_ARGUMENT), "INVALID_ARGUMENT");
  EXPECT_STREQ(odml_status_name(ODML_STATUS_UNSUPPORTED), "UNSUPPORTED");
  EXPECT_STREQ(odml_status_name(ODML_STATUS_OUT_OF_MEMORY), "OUT_OF_MEMORY");
  EXPECT_STREQ(odml_status_name(ODML_STATUS_DEVICE_FAILURE), "DEVICE_FAILURE");
  // A C caller may pass any int (regression: a value outside the enumerators was undefined
  // behaviour before odml_status had a fixed underlying type).
  for (int value : {5, 7, 8, 1000, -1, INT32_MIN, INT32_MAX})
    EXPECT_STREQ(odml_status_name(static_cast<odml_status>(value)), "UNKNOWN_STATUS") << value;
}

TEST(CApi, EnumNames) {
  EXPECT_STREQ(odml_data_type_name(DML_TENSOR_DATA_TYPE_FLOAT32), "FLOAT32");
  EXPECT_STREQ(odml_data_type_name(DML_TENSOR_DATA_TYPE_INT4), "INT4");
  EXPECT_EQ(odml_data_type_name(DML_TENSOR_DATA_TYPE_UNKNOWN), nullptr);
  EXPECT_EQ(odml_data_type_name(static_cast<DML_TENSOR_DATA_TYPE>(99)), nullptr);
  EXPECT_EQ(odml_data_type_bits(DML_TENSOR_DATA_TYPE_FLOAT16), 16u);
  EXPECT_EQ(odml_data_type_bits(DML_TENSOR_DATA_TYPE_UINT4), 4u);
  EXPECT_EQ(odml_data_type_bits(DML_TENSOR_DATA_TYPE_UINT64), 64u);
  EXPECT_EQ(odml_data_type_bits(static_cast<DML_TENSOR_DATA_TYPE>(-1)), 0u);
  EXPECT_STREQ(odml_feature_level_name(DML_FEATURE_LEVEL_1_0), "1_0");
  EXPECT_STREQ(odml_feature_level_name(DML_FEATURE_LEVEL_6_4), "6_4");
  EXPECT_EQ(odml_feature_level_name(static_cast<DML_FEATURE_LEVEL>(0x6500)), nullptr);
  EXPECT_EQ(odml_feature_level_name(static_cast<DML_FEATURE_LEVEL>(0)), nullptr);
}

TEST(CApi, ExtensionBitsMustBeKnown) {
  const OpDesc desc = sample_join();
  odml_operator op = nullptr;
  EXPECT_TRUE(status_is(odml_operator_create_ex(cpu_device().get(), &desc.get(), DML_FEATURE_LEVEL(0), 0xA, &op),
                        kInvalid, {"extensions 0xa", "not odml_extension values"}));
  EXPECT_EQ(op, nullptr);
  ASSERT_TRUE(status_is(
      odml_operator_create_ex(cpu_device().get(), &desc.get(), DML_FEATURE_LEVEL(0), ODML_EXTENSION_64BIT_INDICES, &op),
      ODML_STATUS_SUCCESS));
  odml_operator_destroy(op);
  // Every bit at once, on the one operator that takes them all (coordinate offsets need values).
  const OpDesc nonzero = sample_nonzero();
  const uint64_t offsets[] = {1, 2}, fill[] = {3, 4};
  const odml_operator_options all{ODML_EXTENSIONS_ALL, 2, offsets, 2, fill};
  op = nullptr;
  ASSERT_TRUE(
      status_is(odml_operator_create_with_options(cpu_device().get(), &nonzero.get(), DML_FEATURE_LEVEL(0), &all, &op),
                ODML_STATUS_SUCCESS));
  odml_operator_destroy(op);
  const odml_operator_options unknown{0x8, 0, nullptr, 0, nullptr};
  EXPECT_TRUE(status_is(
      odml_operator_create_with_options(cpu_device().get(), &nonzero.get(), DML_FEATURE_LEVEL(0), &unknown, &op),
      kInvalid, {"extensions 0x8"}));
}

TEST(CApi, CpuDeviceOpens) {
  odml_device d = nullptr;
  EXPECT_TRUE(status_is(odml_device_create("cpu", &d), ODML_STATUS_SUCCESS));
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(std::string(odml_device_name(d)).rfind("cpu", 0), 0u) << odml_device_name(d);
  odml_device_destroy(d);
}

TEST(CApi, BadDeviceNamesRejected) {
  for (const char* name : {"", "CPU", "cpu0", "cpu:0", "gpu", "cuda:", "cuda:x", "cuda:-1", "cuda:-0", "cuda:1x",
                           "cuda: 0", "cuda:+1", "cuda0", " cuda", "cuda:99999999999"}) {
    odml_device d = reinterpret_cast<odml_device>(uintptr_t{0x5A5A});
    EXPECT_TRUE(status_is(odml_device_create(name, &d), kInvalid,
                          {std::string("device name '") + name + "'", "cpu, cuda, cuda:N"}))
        << "'" << name << "'";
    EXPECT_EQ(d, reinterpret_cast<odml_device>(uintptr_t{0x5A5A})) << "a failed create wrote the handle";
  }
}

// "cuda" names a device that exists in principle: without it here, the status is not the
// caller's mistake.
TEST(CApi, CudaDeviceNamesAreWellFormed) {
  for (const char* name : {"cuda", "cuda:0", "cuda:7"}) {
    odml_device d = nullptr;
    const odml_status s = odml_device_create(name, &d);
#if OPENDML_WITH_CUDA
    EXPECT_NE(s, kInvalid) << name << ": " << odml_last_error_message();
#else
    EXPECT_TRUE(status_is(s, ODML_STATUS_UNSUPPORTED, {"no CUDA backend"})) << name;
#endif
    odml_device_destroy(d);
  }
}

TEST(CApi, NullArgumentsRejected) {
  const odml_device cpu = cpu_device().get();
  const OpDesc desc = sample_join();
  odml_device d = nullptr;
  odml_operator op = nullptr;
  odml_compiled_operator compiled = nullptr;
  odml_binding_properties props{};
  void* p = nullptr;
  uint8_t host[4] = {};
  EXPECT_TRUE(status_is(odml_device_create("cpu", nullptr), kInvalid, {"odml_device_create: device is null"}));
  EXPECT_TRUE(status_is(odml_device_create(nullptr, &d), kInvalid, {"odml_device_create: name is null"}));
  EXPECT_TRUE(status_is(odml_device_allocate(nullptr, 16, &p), kInvalid, {"odml_device_allocate: device is null"}));
  EXPECT_TRUE(status_is(odml_device_free(nullptr, p), kInvalid, {"odml_device_free: device is null"}));
  EXPECT_TRUE(status_is(odml_device_upload(nullptr, host, host, 4), kInvalid, {"odml_device_upload: device is null"}));
  EXPECT_TRUE(
      status_is(odml_device_download(nullptr, host, host, 4), kInvalid, {"odml_device_download: device is null"}));
  EXPECT_TRUE(
      status_is(odml_device_synchronize(nullptr, nullptr), kInvalid, {"odml_device_synchronize: device is null"}));
  EXPECT_TRUE(status_is(odml_operator_create(nullptr, &desc.get(), DML_FEATURE_LEVEL(0), &op), kInvalid,
                        {"odml_operator_create: device is null"}));
  EXPECT_TRUE(status_is(odml_operator_create(cpu, &desc.get(), DML_FEATURE_LEVEL(0), nullptr), kInvalid,
                        {"odml_operator_create: op is null"}));
  EXPECT_TRUE(status_is(odml_operator_compile(nullptr, &compiled), kInvalid, {"odml_operator_compile: op is null"}));
  ASSERT_TRUE(status_is(odml_operator_create(cpu, &desc.get(), DML_FEATURE_LEVEL(0), &op), ODML_STATUS_SUCCESS));
  EXPECT_TRUE(status_is(odml_operator_compile(op, nullptr), kInvalid, {"odml_operator_compile: compiled is null"}));
  ASSERT_TRUE(status_is(odml_operator_compile(op, &compiled), ODML_STATUS_SUCCESS));
  EXPECT_TRUE(
      status_is(odml_compiled_operator_get_binding_properties(nullptr, &props), kInvalid, {"compiled is null"}));
  EXPECT_TRUE(
      status_is(odml_compiled_operator_get_binding_properties(compiled, nullptr), kInvalid, {"properties is null"}));
  const odml_bindings none{};
  EXPECT_TRUE(status_is(odml_compiled_operator_initialize(nullptr, &none, nullptr), kInvalid,
                        {"odml_compiled_operator_initialize: compiled is null"}));
  EXPECT_TRUE(status_is(odml_compiled_operator_execute(nullptr, &none, nullptr), kInvalid,
                        {"odml_compiled_operator_execute: compiled is null"}));
  odml_compiled_operator_destroy(compiled);
  odml_operator_destroy(op);
}

TEST(CApi, NullHandlesAreHarmlessWhereNothingIsReturned) {
  odml_device_destroy(nullptr);
  odml_operator_destroy(nullptr);
  odml_compiled_operator_destroy(nullptr);
  EXPECT_STREQ(odml_device_name(nullptr), "");
  EXPECT_STREQ(odml_compiled_operator_implementation(nullptr), "");
}

TEST(CApi, LastErrorEmptyAfterSuccess) {
  odml_device d = nullptr;
  ASSERT_EQ(odml_device_create("nope", &d), kInvalid);
  EXPECT_STRNE(odml_last_error_message(), "");
  ASSERT_EQ(odml_device_create("cpu", &d), ODML_STATUS_SUCCESS);
  EXPECT_STREQ(odml_last_error_message(), "");
  odml_device_destroy(d);
}

TEST(CApi, LastErrorIsPerThread) {
  odml_device d = nullptr;
  ASSERT_EQ(odml_device_create("first", &d), kInvalid);
  std::string other_before, other_after;
  std::thread([&] {
    other_before = odml_last_error_message();
    odml_device dd = nullptr;
    (void)odml_device_create("second", &dd);
    other_after = odml_last_error_message();
  }).join();
  EXPECT_EQ(other_before, "") << "a new thread sees another thread's message";
  EXPECT_NE(other_after.find("'second'"), std::string::npos) << other_after;
  EXPECT_NE(std::string(odml_last_error_message()).find("'first'"), std::string::npos)
      << "another thread's failure replaced this thread's message: " << odml_last_error_message();
}

TEST(CApi, BindingPropertiesCountTensorsInBindingOrder) {
  const OpDesc join = OpDesc::join({spec(kF32, {1}), spec(kF32, {2}), spec(kF32, {3})}, spec(kF32, {6}), 0);
  const OpDesc split = sample_split(), nonzero = sample_nonzero();
  const std::tuple<const OpDesc*, uint32_t, uint32_t> expected[] = {{&join, 3, 1}, {&split, 1, 2}, {&nonzero, 1, 2}};
  for (const auto& [desc, inputs, outputs] : expected) {
    const opendml::CompiledOperator c = opendml::Operator(cpu_device(), desc->get()).compile();
    const odml_binding_properties p = c.binding_properties();
    EXPECT_EQ(p.input_count, inputs) << desc->to_string();
    EXPECT_EQ(p.output_count, outputs) << desc->to_string();
  }
}

TEST(CApi, ImplementationIsNamedAfterTheDevice) {
  const opendml::CompiledOperator c = opendml::Operator(cpu_device(), sample_join().get()).compile();
  EXPECT_EQ(c.implementation().rfind("cpu.", 0), 0u) << c.implementation();
}

// Operators keep their device alive: the handle may go first.
TEST(CApi, OperatorsKeepTheirDeviceAlive) {
  odml_device d = nullptr;
  ASSERT_EQ(odml_device_create("cpu", &d), ODML_STATUS_SUCCESS);
  const OpDesc desc = sample_join();
  odml_operator op = nullptr;
  ASSERT_EQ(odml_operator_create(d, &desc.get(), DML_FEATURE_LEVEL(0), &op), ODML_STATUS_SUCCESS);
  odml_device_destroy(d);
  odml_compiled_operator compiled = nullptr;
  EXPECT_TRUE(status_is(odml_operator_compile(op, &compiled), ODML_STATUS_SUCCESS));
  odml_operator_destroy(op);
  EXPECT_STRNE(odml_compiled_operator_implementation(compiled), "");
  odml_compiled_operator_destroy(compiled);
}

// ---- The C++ wrapper ----

TEST(CppApi, ErrorCarriesStatusAndMessage) {
  OpDesc d = sample_join();
  d.join_desc().Axis = 5;
  try {
    opendml::Operator op(cpu_device(), d.get());
    FAIL() << "no exception";
  } catch (const opendml::Error& e) {
    EXPECT_EQ(e.status(), kInvalid);
    EXPECT_NE(std::string(e.what()).find("JOIN: Axis is 5"), std::string::npos) << e.what();
  }
  OpDesc unknown = sample_join();
  unknown.op().Type = static_cast<DML_OPERATOR_TYPE>(1);
  try {
    opendml::Operator op(cpu_device(), unknown.get());
    FAIL() << "no exception";
  } catch (const opendml::Error& e) {
    EXPECT_EQ(e.status(), ODML_STATUS_UNSUPPORTED);
  }
}

TEST(CppApi, BadDeviceNameThrows) {
  try {
    opendml::Device device("gpu");
    FAIL() << "no exception";
  } catch (const opendml::Error& e) {
    EXPECT_EQ(e.status(), kInvalid);
    EXPECT_NE(std::string(e.what()).find("'gpu'"), std::string::npos) << e.what();
  }
}

// The C ABI reads a name up to its NUL: "cpu\0xyz" opened the CPU.
TEST(CppApi, DeviceNameWithNulThrows) {
  try {
    opendml::Device device(std::string("cpu\0xyz", 7));
    FAIL() << "no exception";
  } catch (const opendml::Error& e) {
    EXPECT_EQ(e.status(), kInvalid);
    EXPECT_NE(std::string(e.what()).find("NUL"), std::string::npos) << e.what();
  }
}

TEST(CppApi, BadBindingsThrow) {
  opendml::CompiledOperator c = opendml::Operator(cpu_device(), sample_join().get()).compile();
  c.initialize();
  try {
    c.execute({}, {});
    FAIL() << "no exception";
  } catch (const opendml::Error& e) {
    EXPECT_EQ(e.status(), kInvalid);
    EXPECT_NE(std::string(e.what()).find("input_count is 0 but the operator has 2 inputs"), std::string::npos)
        << e.what();
  }
}

// initialize() keeps its regions only once it succeeds: a failed one (an OWNED_BY_DML input left
// unbound) kept a persistent region it never filled, which a later execute without a persistent
// region bound and read, after an initialize with the caller's own region had succeeded.
TEST(CppApi, FailedInitializeKeepsNoUnfilledRegion) {
  const opendml::TensorDesc owned(kF32, {1, 2}, std::vector<uint32_t>{2, 1}, DML_TENSOR_FLAG_OWNED_BY_DML);
  const opendml::JoinDesc join({owned, opendml::TensorDesc(kF32, {1, 1})}, opendml::TensorDesc(kF32, {1, 3}), 1);
  opendml::CompiledOperator c = opendml::Operator(cpu_device(), join).compile();
  EXPECT_THROW(c.initialize(), opendml::Error);
  alignas(16) float w[2] = {5, 6};
  alignas(16) float x = 7;
  opendml::Buffer persistent(cpu_device(), c.binding_properties().persistent_size_in_bytes);
  const odml_buffer_binding owned_inputs[2] = {{w, sizeof w}, {}};
  c.initialize(odml_bindings{owned_inputs, 2, nullptr, 0, {}, persistent.binding()});
  std::vector<float> out(3, -1);
  try {
    c.execute({{}, {&x, 4}}, {{out.data(), 12}});
    FAIL() << "no exception";
  } catch (const opendml::Error& e) {
    EXPECT_NE(std::string(e.what()).find("persistent"), std::string::npos) << e.what();
  }
  EXPECT_EQ(out, std::vector<float>(3, -1));
  c.execute({{}, {&x, 4}}, {{out.data(), 12}}, {}, persistent.binding());
  EXPECT_EQ(out, (std::vector<float>{5, 6, 7}));
}

TEST(CppApi, TensorDescFillsTheBufferDesc) {
  const opendml::TensorDesc packed(kF32, {2, 3});
  EXPECT_EQ(packed.total_size(), 24u);
  EXPECT_EQ(packed.buffer().Strides, nullptr);
  EXPECT_EQ(packed.buffer().DimensionCount, 2u);
  EXPECT_EQ(packed.desc().Type, DML_TENSOR_TYPE_BUFFER);
  EXPECT_EQ(packed.desc().Desc, &packed.buffer());
  opendml::TensorDesc strided(kF32, {2, 3}, std::vector<uint32_t>{4, 1}, DML_TENSOR_FLAG_OWNED_BY_DML);
  strided.alignment(8);
  EXPECT_EQ(strided.total_size(), 28u);
  EXPECT_EQ(strided.buffer().Flags, DML_TENSOR_FLAG_OWNED_BY_DML);
  EXPECT_EQ(strided.buffer().GuaranteedBaseOffsetAlignment, 8u);
  EXPECT_EQ(strided.total_size(64).total_size(), 64u);
}

// Strides are one per size: a list of another length is refused, never read past its end.
TEST(CppApi, TensorDescStridesTakeOnePerSize) {
  for (const std::vector<uint32_t>& strides : {std::vector<uint32_t>{12}, std::vector<uint32_t>{12, 4, 1, 1}}) {
    try {
      opendml::TensorDesc(kF32, {2, 3, 4}, strides);
      ADD_FAILURE() << strides.size() << " strides were accepted";
    } catch (const opendml::Error& e) {
      EXPECT_EQ(e.status(), ODML_STATUS_INVALID_ARGUMENT);
      EXPECT_NE(std::string(e.what()).find(std::to_string(strides.size()) + " strides for 3 sizes"), std::string::npos)
          << e.what();
    }
  }
}

// A copy owns its arrays: the original may go first.
TEST(CppApi, TensorDescCopiesOwnTheirArrays) {
  auto original = std::make_unique<opendml::TensorDesc>(kF32, std::vector<uint32_t>{2, 3}, std::vector<uint32_t>{4, 1});
  const opendml::TensorDesc copy = *original;
  opendml::TensorDesc assigned(kF32, {1});
  assigned = *original;
  original.reset();
  for (const opendml::TensorDesc* t : std::initializer_list<const opendml::TensorDesc*>{&copy, &assigned}) {
    EXPECT_EQ(t->buffer().Sizes, t->sizes().data());
    EXPECT_EQ(t->buffer().Sizes[1], 3u);
    EXPECT_EQ(t->buffer().Strides[0], 4u);
  }
}

TEST(CppApi, OperatorDescsBuildDirectMLStructs) {
  const opendml::JoinDesc join({opendml::TensorDesc(kF32, {2, 3}), opendml::TensorDesc(kF32, {2, 5})},
                               opendml::TensorDesc(kF32, {2, 8}), 1);
  const DML_OPERATOR_DESC j = join.desc();
  EXPECT_EQ(j.Type, DML_OPERATOR_JOIN);
  const auto& jd = *static_cast<const DML_JOIN_OPERATOR_DESC*>(j.Desc);
  EXPECT_EQ(jd.InputCount, 2u);
  EXPECT_EQ(jd.Axis, 1u);
  EXPECT_EQ(static_cast<const DML_BUFFER_TENSOR_DESC*>(jd.InputTensors[1].Desc)->Sizes[1], 5u);
  EXPECT_EQ(static_cast<const DML_BUFFER_TENSOR_DESC*>(jd.OutputTensor->Desc)->Sizes[1], 8u);

  const opendml::SplitDesc split(opendml::TensorDesc(kF32, {2, 8}),
                                 {opendml::TensorDesc(kF32, {2, 3}), opendml::TensorDesc(kF32, {2, 5})}, 1);
  const auto& sd = *static_cast<const DML_SPLIT_OPERATOR_DESC*>(split.desc().Desc);
  EXPECT_EQ(split.desc().Type, DML_OPERATOR_SPLIT);
  EXPECT_EQ(sd.OutputCount, 2u);
  EXPECT_EQ(static_cast<const DML_BUFFER_TENSOR_DESC*>(sd.OutputTensors[0].Desc)->Sizes[1], 3u);

  const opendml::NonzeroCoordinatesDesc nonzero(opendml::TensorDesc(kF32, {2, 3}), opendml::TensorDesc(kU32, {1}),
                                                opendml::TensorDesc(kU32, {6, 2}));
  const auto& nd = *static_cast<const DML_NONZERO_COORDINATES_OPERATOR_DESC*>(nonzero.desc().Desc);
  EXPECT_EQ(nonzero.desc().Type, DML_OPERATOR_NONZERO_COORDINATES);
  EXPECT_EQ(static_cast<const DML_BUFFER_TENSOR_DESC*>(nd.OutputCoordinatesTensor->Desc)->Sizes[0], 6u);
  for (const opendml::OperatorDesc* d : std::initializer_list<const opendml::OperatorDesc*>{&join, &split, &nonzero})
    EXPECT_NO_THROW(opendml::Operator(cpu_device(), *d));
}

}  // namespace
}  // namespace odml_test
