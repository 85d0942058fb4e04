// Runs a JOIN through the installed C++ API and checks the result; exit status 0 when it matches.
#include <cstdio>
#include <opendml/opendml.hpp>
#include <vector>

int main() {
  try {
    using opendml::TensorDesc;
    constexpr auto i32 = DML_TENSOR_DATA_TYPE_INT32;
    const opendml::Device device("cpu");
    const opendml::JoinDesc join({TensorDesc(i32, {2, 1}), TensorDesc(i32, {2, 2})}, TensorDesc(i32, {2, 3}), 1);
    opendml::CompiledOperator op = opendml::Operator(device, join).compile();
    op.initialize();
    const std::vector<int32_t> a = {1, 4}, b = {2, 3, 5, 6}, want = {1, 2, 3, 4, 5, 6};
    const opendml::Buffer da(device, 8), db(device, 16), out(device, 24);
    device.upload(da.data(), a.data(), 8);
    device.upload(db.data(), b.data(), 16);
    op.execute({da.binding(), db.binding()}, {out.binding()});
    device.synchronize();
    std::vector<int32_t> got(6);
    device.download(got.data(), out.data(), 24);
    if (got != want) {
      std::fprintf(stderr, "opendml_consumer: JOIN gave the wrong result\n");
      return 1;
    }
    std::printf("opendml_consumer: JOIN ok on %s\n", device.name().c_str());
    return 0;
  } catch (const opendml::Error& e) {
    std::fprintf(stderr, "opendml_consumer: %s: %s\n", odml_status_name(e.status()), e.what());
    return 1;
  }
}
