// Baselines for bench_jax_host.py: XLA FFI handlers that do nothing, bound exactly as opendml.jax's
// handlers are (python/src/jax_ffi.cpp: a State made at instantiate, the remaining arguments and
// results, the same three attributes; on CUDA also the stream, the scratch allocator and the device
// ordinal). A jitted call of one of them costs what XLA charges for such a custom call; what an
// opendml.jax call costs beyond it is opendml's. The script compiles this file itself:
//   c++ -std=c++17 -O2 -shared -fPIC -I$(python -c 'import jax.ffi; print(jax.ffi.include_dir())') \
//       [-DWITH_CUDA -I/usr/local/cuda/include] jax_noop_ffi.cpp -o libjax_noop_ffi.so
#include <xla/ffi/api/ffi.h>

#include <memory>

#ifdef WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace ffi = xla::ffi;

namespace {

struct NoopState {
  static ffi::TypeId id;
};
ffi::TypeId NoopState::id = {};
const XLA_FFI_TypeInfo kNoopStateInfo = {XLA_FFI_TypeInfo_STRUCT_SIZE, nullptr,
                                         [](void* state) { delete static_cast<NoopState*>(state); }};

ffi::ErrorOr<std::unique_ptr<NoopState>> instantiate(int64_t, int64_t, int64_t, ffi::Span<const int64_t>) {
  return std::make_unique<NoopState>();
}

ffi::Error cpu_noop(NoopState*, ffi::RemainingArgs, ffi::RemainingRets, int64_t, int64_t, int64_t,
                    ffi::Span<const int64_t>) {
  return ffi::Error::Success();
}

#define NOOP_ATTRS \
  .Attr<int64_t>("dml_type").Attr<int64_t>("axis").Attr<int64_t>("batched").Attr<ffi::Span<const int64_t>>("fill")

XLA_FFI_DEFINE_HANDLER(kInstantiate, instantiate, ffi::Ffi::BindInstantiate() NOOP_ATTRS);
XLA_FFI_DEFINE_HANDLER(kCpuNoop, cpu_noop,
                       ffi::Ffi::Bind().Ctx<ffi::State<NoopState>>().RemainingArgs().RemainingRets() NOOP_ATTRS);

#ifdef WITH_CUDA
// `axis` bytes of scratch are taken from XLA's allocator, as opendml.jax takes its temporary region.
ffi::Error cuda_noop(cudaStream_t, ffi::ScratchAllocator scratch, int32_t, NoopState*, ffi::RemainingArgs,
                     ffi::RemainingRets, int64_t, int64_t axis, int64_t, ffi::Span<const int64_t>) {
  if (axis > 0 && !scratch.Allocate(static_cast<size_t>(axis))) return ffi::Error::Internal("no scratch");
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER(kCudaNoop, cuda_noop,
                       ffi::Ffi::Bind()
                           .Ctx<ffi::PlatformStream<cudaStream_t>>()
                           .Ctx<ffi::ScratchAllocator>()
                           .Ctx<ffi::DeviceOrdinal>()
                           .Ctx<ffi::State<NoopState>>()
                           .RemainingArgs()
                           .RemainingRets() NOOP_ATTRS);
#endif

}  // namespace

extern "C" {
void* noop_instantiate() { return reinterpret_cast<void*>(kInstantiate); }
void* noop_cpu() { return reinterpret_cast<void*>(kCpuNoop); }
#ifdef WITH_CUDA
void* noop_cuda() { return reinterpret_cast<void*>(kCudaNoop); }
#endif
void* noop_state_id() { return &NoopState::id; }
void* noop_state_info() { return const_cast<XLA_FFI_TypeInfo*>(&kNoopStateInfo); }
}
