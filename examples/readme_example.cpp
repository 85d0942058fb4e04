// The C++ example of README.md, compiled and run as a test: DirectML's JOIN example
// (docs/contract.md section 3.1) on the CPU.
// example-begin
#include <cstdio>
#include <opendml/opendml.hpp>
#include <vector>

int main() {
  using opendml::TensorDesc;
  constexpr auto f32 = DML_TENSOR_DATA_TYPE_FLOAT32;

  opendml::Device device("cpu");
  opendml::JoinDesc join({TensorDesc(f32, {1, 1, 2, 3}), TensorDesc(f32, {1, 1, 2, 4})},  // inputs
                         TensorDesc(f32, {1, 1, 2, 7}),                                   // output
                         /*axis=*/3);
  opendml::CompiledOperator op = opendml::Operator(device, join).compile();
  op.initialize();  // no persistent or temporary region for JOIN on the CPU

  std::vector<float> a = {1, 2, 3, 4, 5, 6}, b = {7, 8, 9, 10, 11, 12, 13, 14}, out(14);
  op.execute({{a.data(), a.size() * 4}, {b.data(), b.size() * 4}}, {{out.data(), out.size() * 4}});

  for (float v : out) std::printf("%g ", v);  // 1 2 3 7 8 9 10 4 5 6 11 12 13 14
  std::printf("\n");
}
// example-end
