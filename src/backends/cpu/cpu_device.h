// The CPU backend: the reference every other backend is compared with. Simple and obviously
// right; OpenMP spreads large operators over every core.
#pragma once

#include <memory>

#include "backends/device.h"

namespace opendml::internal {

class CpuDevice;

std::shared_ptr<Device> make_cpu_device();

// The implementations of each plan kind, fastest first (cpu_device.cpp).
std::span<const Implementation<CopyPlan, CpuDevice>> implementations(const CopyPlan&, const CpuDevice&);
std::span<const Implementation<NonzeroPlan, CpuDevice>> implementations(const NonzeroPlan&, const CpuDevice&);

// The kernels (cpu_copy.cpp, cpu_nonzero.cpp).
Result<std::unique_ptr<Kernel>> make_cpu_copy_kernel(const CopyPlan& plan, const CpuDevice& device);
// The bytes of one of cpu.copy's tiles for plan: 64 KiB, or more where that would make more than
// 2^20 tiles (they are listed at compile, from what the descriptors declare).
uint64_t cpu_copy_tile_bytes(const CopyPlan& plan);
Result<std::unique_ptr<Kernel>> make_cpu_nonzero_kernel(const NonzeroPlan& plan, const CpuDevice& device);

}  // namespace opendml::internal
