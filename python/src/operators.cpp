#include "operators.h"

#include <mutex>
#include <unordered_map>

namespace opendml::python {

const Device& device_for(Place place) {
  static auto& mutex = *new std::mutex;
  static auto& devices = *new std::unordered_map<int32_t, Device>;  // -1: the CPU, N: cuda:N
  const int32_t key = place.cuda ? place.id : -1;
  std::lock_guard lock(mutex);  // entries are never removed, so a reference outlives the lock
  auto it = devices.find(key);
  if (it == devices.end()) it = devices.emplace(key, Device(place.name())).first;
  return it->second;
}

std::unique_ptr<OperatorDesc> nonzero_desc(std::vector<TensorDesc>& d) {
  return std::make_unique<NonzeroCoordinatesDesc>(d[0], d[1], d[2]);
}

std::unique_ptr<OperatorDesc> join_desc(std::vector<TensorDesc>& d, uint32_t axis) {
  TensorDesc output = d.back();
  d.pop_back();
  return std::make_unique<JoinDesc>(std::move(d), output, axis);
}

std::unique_ptr<OperatorDesc> split_desc(std::vector<TensorDesc>& d, uint32_t axis) {
  return std::make_unique<SplitDesc>(d.front(), std::vector<TensorDesc>(d.begin() + 1, d.end()), axis);
}

void initialize(const Entry& e, void* persistent, void* stream) {
  e.op.initialize(
      odml_bindings{nullptr,
                    0,
                    nullptr,
                    0,
                    {},
                    e.persistent_bytes ? odml_buffer_binding{persistent, e.persistent_bytes} : odml_buffer_binding{}},
      stream);
}

odml_bindings bindings(const Entry& e, std::span<std::byte* const> in, std::span<std::byte* const> out, void* temporary,
                       void* persistent, std::vector<odml_buffer_binding>& storage) {
  storage.clear();
  size_t r = 0;
  for (std::byte* p : in) storage.push_back({p, e.region_bytes[r++]});
  for (std::byte* p : out) storage.push_back({p, e.region_bytes[r++]});
  return odml_bindings{
      storage.data(),
      static_cast<uint32_t>(in.size()),
      storage.data() + in.size(),
      static_cast<uint32_t>(out.size()),
      e.temporary_bytes ? odml_buffer_binding{temporary, e.temporary_bytes} : odml_buffer_binding{},
      e.persistent_bytes ? odml_buffer_binding{persistent, e.persistent_bytes} : odml_buffer_binding{}};
}

}  // namespace opendml::python
