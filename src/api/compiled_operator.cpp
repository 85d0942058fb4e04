#include "api/compiled_operator.h"

namespace opendml::internal {
namespace {

// `sum` (a multiple of 256) plus n rounded up to a multiple of 256, or kTooLarge where that passes
// 2^64 - 1: a TotalTensorSizeInBytes near 2^64 is valid, but must not wrap the persistent region's
// size (docs/contract.md section 2, rule 5).
constexpr uint64_t kTooLarge = ~uint64_t{0};
uint64_t add_aligned(uint64_t sum, uint64_t n) {
  if (sum == kTooLarge || n > kTooLarge - 255 - sum) return kTooLarge;
  return sum + ((n + 255) & ~uint64_t{255});
}

}  // namespace

Result<std::unique_ptr<CompiledOperator>> CompiledOperator::compile(std::shared_ptr<const Device> device,
                                                                    const OperatorDef& op) {
  Result<CompiledKernel> kernel = device->compile(plan_operator(op));
  if (!kernel.ok()) return kernel.status();
  std::unique_ptr<CompiledOperator> compiled(new CompiledOperator(std::move(device), op, std::move(*kernel)));
  if (compiled->sizes_.persistent == kTooLarge)
    return unsupported(op.name, ": compile: the persistent region, which holds a copy of each OWNED_BY_DML input ",
                       "(TotalTensorSizeInBytes each), would need more than 2^64 - 1 bytes");
  return compiled;
}

CompiledOperator::CompiledOperator(std::shared_ptr<const Device> device, const OperatorDef& op, CompiledKernel kernel)
    : device_(std::move(device)), op_(op), kernel_(std::move(kernel)) {
  sizes_.temporary = kernel_.kernel->temporary_bytes();
  uint64_t persistent = add_aligned(0, kernel_.kernel->persistent_bytes());
  owned_offsets_.assign(op_.inputs.size(), 0);
  for (size_t i = 0; i < op_.inputs.size(); ++i) {
    if (!op_.inputs[i].tensor.owned_by_dml) continue;
    owned_offsets_[i] = persistent;
    persistent = add_aligned(persistent, op_.inputs[i].tensor.total_bytes);
  }
  sizes_.persistent = persistent;
}

odml_binding_properties CompiledOperator::properties() const {
  return {static_cast<uint32_t>(op_.inputs.size()), static_cast<uint32_t>(op_.outputs.size()), sizes_.temporary,
          sizes_.persistent};
}

Status CompiledOperator::initialize(const odml_bindings* bindings, void* stream) {
  ODML_RETURN_IF_ERROR(check_bindings(op_, bindings, Phase::kInitialize, sizes_));
  auto* persistent = static_cast<std::byte*>(bindings->persistent.data);
  for (uint32_t i = 0; i < bindings->input_count; ++i) {
    if (!op_.inputs[i].tensor.owned_by_dml) continue;
    ODML_RETURN_IF_ERROR(device_->copy(persistent + owned_offsets_[i], bindings->inputs[i].data,
                                       op_.inputs[i].tensor.total_bytes, stream));
  }
  ODML_RETURN_IF_ERROR(kernel_.kernel->initialize(persistent, stream));
  initialized_ = true;
  return {};
}

Status CompiledOperator::execute(const odml_bindings* bindings, void* stream) const {
  if (!initialized_)
    return invalid_argument(op_.name,
                            ": execute: the compiled operator has not been initialized; initialize it once first");
  ODML_RETURN_IF_ERROR(check_bindings(op_, bindings, Phase::kExecute, sizes_));

  // Reused per thread, so that executing allocates nothing after a thread's first call.
  thread_local std::vector<const std::byte*> inputs;
  thread_local std::vector<std::byte*> outputs;
  const auto* persistent = static_cast<const std::byte*>(bindings->persistent.data);
  inputs.resize(op_.inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    inputs[i] = op_.inputs[i].tensor.owned_by_dml ? persistent + owned_offsets_[i]
                                                  : static_cast<const std::byte*>(bindings->inputs[i].data);
  outputs.resize(op_.outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) outputs[i] = static_cast<std::byte*>(bindings->outputs[i].data);

  return kernel_.kernel->execute(
      {inputs, outputs, static_cast<std::byte*>(bindings->temporary.data), persistent, stream});
}

}  // namespace opendml::internal
