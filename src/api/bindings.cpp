#include "api/bindings.h"

#include <algorithm>
#include <limits>
#include <ostream>
#include <string_view>
#include <vector>

namespace opendml::internal {
namespace {

// The prefix of every message ("JOIN: execute: "), written only when a message is: a check that
// passes builds no string (execute runs these checks on every call).
struct Where {
  std::string_view op;
  bool execute;
};
std::ostream& operator<<(std::ostream& out, const Where& w) {
  return out << w.op << (w.execute ? ": execute: " : ": initialize: ");
}

struct Region {
  uintptr_t begin, end;
  const std::string* name;  // the tensor's (or the region's) name, for messages
  bool written;
};

std::string address(uintptr_t a) { return cat("0x", std::hex, a); }

// [begin, begin + bytes) as a Region; an end past the top of the address space is an error.
Status add_region(std::vector<Region>& regions, const void* data, uint64_t bytes, const std::string& name, bool written,
                  const Where& where) {
  const auto begin = reinterpret_cast<uintptr_t>(data);
  if (bytes > std::numeric_limits<uintptr_t>::max() - begin)
    return invalid_argument(where, name, " at ", address(begin), " with ", bytes,
                            " bytes runs past the end of the address space");
  regions.push_back({begin, begin + bytes, &name, written});
  return {};
}

// Every pair of regions where at least one is written must be disjoint. Sorted by start, a region
// overlaps an earlier one exactly when it starts before the furthest end seen so far.
Status check_overlaps(std::vector<Region>& regions, const Where& where) {
  std::sort(regions.begin(), regions.end(), [](const Region& a, const Region& b) { return a.begin < b.begin; });
  const Region* furthest = nullptr;          // of all regions so far
  const Region* furthest_written = nullptr;  // of written regions so far
  for (const Region& r : regions) {
    const Region* other = r.written ? furthest : furthest_written;
    if (other != nullptr && r.begin < other->end)
      return invalid_argument(
          where, *r.name, " [", address(r.begin), ", ", address(r.end), ") overlaps ", *other->name, " [",
          address(other->begin), ", ", address(other->end),
          "); a region written here (an output, the temporary region, the persistent region at initialize) must "
          "not overlap any other bound region");
    if (furthest == nullptr || r.end > furthest->end) furthest = &r;
    if (r.written && (furthest_written == nullptr || r.end > furthest_written->end)) furthest_written = &r;
  }
  return {};
}

// A tensor's region: bound when it must be, unbound when it must not be, large and aligned enough.
Status check_tensor(const NamedTensor& t, const odml_buffer_binding& b, bool must_bind, bool written,
                    const Where& where, std::vector<Region>& regions) {
  if (!must_bind) {
    if (b.data == nullptr) return {};
    return invalid_argument(where, t.name, " is bound but ",
                            t.tensor.owned_by_dml
                                ? "it is flagged OWNED_BY_DML, so it is bound at initialize, not execute"
                                : "only inputs flagged OWNED_BY_DML are bound at initialize");
  }
  if (b.data == nullptr)
    return invalid_argument(where, t.name, " is not bound",
                            t.tensor.owned_by_dml ? " but it is flagged OWNED_BY_DML, so initialize must bind it" : "");
  if (b.size_in_bytes < t.tensor.total_bytes)
    return invalid_argument(where, t.name, " is bound to ", b.size_in_bytes,
                            " bytes but its TotalTensorSizeInBytes is ", t.tensor.total_bytes);
  const auto begin = reinterpret_cast<uintptr_t>(b.data);
  if (begin % t.tensor.base_alignment != 0)
    return invalid_argument(where, t.name, " is bound at ", address(begin), ", which is not a multiple of ",
                            t.tensor.base_alignment, " (GuaranteedBaseOffsetAlignment, or 16 when that is 0)");
  return add_region(regions, b.data, t.tensor.total_bytes, t.name, written, where);
}

Status check_region(const odml_buffer_binding& b, uint64_t required, const std::string& name, bool written,
                    const Where& where, std::vector<Region>& regions) {
  if (required == 0) return {};
  if (b.data == nullptr)
    return invalid_argument(where, name, " is not bound but compile asked for ", required, " bytes");
  if (b.size_in_bytes < required)
    return invalid_argument(where, name, " is ", b.size_in_bytes, " bytes but compile asked for ", required);
  const auto begin = reinterpret_cast<uintptr_t>(b.data);
  if (begin % DML_TEMPORARY_BUFFER_ALIGNMENT != 0)
    return invalid_argument(where, name, " starts at ", address(begin), ", which is not a multiple of ",
                            DML_TEMPORARY_BUFFER_ALIGNMENT);
  return add_region(regions, b.data, required, name, written, where);
}

}  // namespace

Status check_bindings(const OperatorDef& op, const odml_bindings* bindings, Phase phase, RegionSizes sizes) {
  const bool execute = phase == Phase::kExecute;
  const Where where{op.name, execute};
  if (bindings == nullptr) return invalid_argument(where, "the odml_bindings pointer is null");
  const odml_bindings& b = *bindings;

  const bool any_owned =
      std::any_of(op.inputs.begin(), op.inputs.end(), [](const NamedTensor& t) { return t.tensor.owned_by_dml; });
  const bool inputs_optional = !execute && !any_owned;
  if (b.input_count != op.inputs.size() && !(inputs_optional && b.input_count == 0))
    return invalid_argument(where, "input_count is ", b.input_count, " but the operator has ", op.inputs.size(),
                            " inputs");
  if (b.input_count > 0 && b.inputs == nullptr)
    return invalid_argument(where, "inputs is null but input_count is ", b.input_count);
  const uint32_t expected_outputs = execute ? static_cast<uint32_t>(op.outputs.size()) : 0;
  if (b.output_count != expected_outputs)
    return invalid_argument(
        where, "output_count is ", b.output_count, " but ",
        execute ? cat("the operator has ", expected_outputs, " outputs") : "initialize binds no outputs");
  if (b.output_count > 0 && b.outputs == nullptr)
    return invalid_argument(where, "outputs is null but output_count is ", b.output_count);

  thread_local std::vector<Region> regions;  // reused, so that a call allocates nothing once warm
  regions.clear();
  for (uint32_t i = 0; i < b.input_count; ++i) {
    const NamedTensor& t = op.inputs[i];
    const bool must_bind = execute != t.tensor.owned_by_dml;
    ODML_RETURN_IF_ERROR(check_tensor(t, b.inputs[i], must_bind, false, where, regions));
  }
  for (uint32_t i = 0; i < b.output_count; ++i)
    ODML_RETURN_IF_ERROR(check_tensor(op.outputs[i], b.outputs[i], true, true, where, regions));
  static const std::string temporary = "the temporary region", persistent = "the persistent region";
  // Only execute uses the temporary region.
  ODML_RETURN_IF_ERROR(check_region(b.temporary, execute ? sizes.temporary : 0, temporary, true, where, regions));
  ODML_RETURN_IF_ERROR(check_region(b.persistent, sizes.persistent, persistent, !execute, where, regions));
  return check_overlaps(regions, where);
}

}  // namespace opendml::internal
