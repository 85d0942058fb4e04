// NONZERO_COORDINATES on the CPU, in two passes over chunks of the logical index range: count the
// non-zeros of every chunk, then (after a prefix sum over the chunks) write each chunk's
// coordinates from its own starting row. Both passes run the chunks in parallel; the rows come out
// in ascending element order because every chunk knows where its rows start. Elements are read in
// runs along the input's coalesced dimensions (a packed input is one run, however narrow its
// innermost dimension) and tested 64 at a time into a bit mask (a loop the compiler vectorizes);
// the write pass visits only the set bits, working out the coordinates once a block where the block
// lies in one innermost row and stepping them from one set bit to the next where it does not, so
// neither pass branches per element.
#include <algorithm>
#include <array>
#include <bit>
#include <cstring>

#include "backends/cpu/cpu_device.h"
#include "backends/cpu/parallel.h"

namespace opendml::internal {
namespace {

// Bit k: element k of the n <= 64 elements at p (stride in elements) is non-zero. The test runs
// on all 64 lanes as a byte per element, which vectorizes; a multiply then gathers each 8 bytes
// (0 or 1 each) into 8 bits.
template <class T>
uint64_t mask_of_64(const T (&values)[64], uint32_t mask) {
  uint8_t flags[64];
  for (uint32_t k = 0; k < 64; ++k) flags[k] = (values[k] & mask) != 0;
  uint64_t bits = 0;
  for (uint32_t i = 0; i < 8; ++i) {
    uint64_t eight;
    std::memcpy(&eight, flags + 8 * i, 8);
    bits |= ((eight * 0x0102040810204080ull) >> 56) << (8 * i);
  }
  return bits;
}

template <class T>
uint64_t nonzero_bits(const std::byte* p, uint64_t stride, uint32_t n, uint32_t mask) {
  T values[64];
  if (stride == 1 && n == 64) {  // the common case, with sizes the compiler knows
    std::memcpy(values, p, sizeof(values));
    return mask_of_64(values, mask);
  }
  std::memset(values, 0, sizeof(values));
  for (uint32_t k = 0; k < n; ++k) std::memcpy(&values[k], p + k * stride * sizeof(T), sizeof(T));
  return mask_of_64(values, mask);
}

// Calls fn(first, bits) for each block of up to 64 elements of a run.
template <class T, class Fn>
void for_each_mask(const std::byte* p, uint64_t stride, uint64_t count, uint32_t mask, Fn&& fn) {
  for (uint64_t first = 0; first < count; first += 64) {
    const auto n = static_cast<uint32_t>(std::min<uint64_t>(64, count - first));
    fn(first, nonzero_bits<T>(p + first * stride * sizeof(T), stride, n, mask));
  }
}

// Fill rows of dense coordinates are copied on in blocks of this many rows (at most 64 KiB).
constexpr uint64_t kFillBlockRows = 1024;

class CpuNonzeroKernel final : public Kernel {
 public:
  explicit CpuNonzeroKernel(const NonzeroPlan& plan)
      : plan_(plan),
        // Saturated: 2^62 elements of 4 bytes would wrap (only the count of chunks depends on it).
        chunks_(chunk_count(plan.element_count > UINT64_MAX / plan.element_bytes
                                ? UINT64_MAX
                                : plan.element_count * plan.element_bytes)),
        wide_rows_(plan.column_sizes[plan.columns - 1] >= 64) {}

  Status execute(const ExecuteArgs& args) const override {
    const auto with_coordinates = [&]<class T>() {
      if (plan_.coordinate_bytes == 8) return wide_rows_ ? run<T, uint64_t, true>(args) : run<T, uint64_t, false>(args);
      return wide_rows_ ? run<T, uint32_t, true>(args) : run<T, uint32_t, false>(args);
    };
    switch (plan_.element_bytes) {
      case 1: return with_coordinates.template operator()<uint8_t>();
      case 2: return with_coordinates.template operator()<uint16_t>();
      default: return with_coordinates.template operator()<uint32_t>();
    }
  }

 private:
  // Chunk c is the logical indices [chunk_begin(c), chunk_begin(c + 1)): element_count * c / chunks_,
  // worked out from the quotient and remainder so that 2^62 elements (64-bit indices) times up to
  // kMaxChunks cannot wrap.
  uint64_t chunk_begin(uint64_t c) const {
    const uint64_t m = plan_.element_count;
    return m / chunks_ * c + m % chunks_ * c / chunks_;
  }

  // Calls fn(index, p, count) for each run of the chunk along the coalesced read dimensions: logical
  // indices index .. index + count - 1, the first at p, the others read_strides[read_rank - 1] apart.
  template <class Fn>
  void for_each_run_of_chunk(uint64_t c, const std::byte* input, uint32_t element_bytes, Fn&& fn) const {
    uint64_t index = chunk_begin(c);
    for_each_run(plan_.read_rank, plan_.read_sizes, index, chunk_begin(c + 1), [&](const Dims& at, uint64_t count) {
      fn(index, input + dot(at, plan_.read_strides, plan_.read_rank) * element_bytes, count);
      index += count;
    });
  }

  // The fill rows that chunk c owns (NonzeroPlan::fill_rows): its zeros' mirror images, counted
  // back from the last row. Its non-zeros are rows [row, end_row). Dense rows are one run of a
  // repeating row: the first kFillBlockRows rows are written, doubling by copies, and then copied
  // on, from the cache.
  template <class C>
  void fill_rows(C* coordinates, uint64_t c, uint64_t row, uint64_t end_row) const {
    const uint64_t m = plan_.element_count, begin = chunk_begin(c), end = chunk_begin(c + 1);
    const uint64_t zeros_before = begin - row, zeros = (end - begin) - (end_row - row);
    const uint64_t first = m - zeros_before - zeros, last = m - zeros_before, n = plan_.columns;
    if (first == last) return;
    if (plan_.dense_rows()) {
      C* run = coordinates + first * n;
      const uint64_t total = (last - first) * n, block = std::min(total, kFillBlockRows * n);
      for (uint64_t j = 0; j < n; ++j) run[j] = static_cast<C>(plan_.fill_values[j]);
      for (uint64_t done = n; done < block; done *= 2)
        std::memcpy(run + done, run, std::min(done, block - done) * sizeof(C));
      for (uint64_t done = block; done < total; done += block)
        std::memcpy(run + done, run, std::min(block, total - done) * sizeof(C));
      return;
    }
    for (uint64_t r = first; r < last; ++r)
      for (uint32_t j = 0; j < n; ++j)
        coordinates[r * plan_.row_stride + j * plan_.column_stride] = static_cast<C>(plan_.fill_values[j]);
  }

  // T: the input's element bits; C: a coordinate (uint32_t, or uint64_t with 64-bit indices);
  // kWideRows: innermost rows at least a mask block wide, so that most blocks lie in one row, whose
  // coordinates the write pass works out once a block. Narrower rows step the coordinates from one
  // non-zero to the next. Compiled apart, so that the narrow loop carries no test of the wide one.
  template <class T, class C, bool kWideRows>
  Status run(const ExecuteArgs& args) const {
    const std::byte* input = args.inputs[0];
    const uint32_t columns = plan_.columns, last = columns - 1;
    const uint64_t stride = plan_.read_strides[plan_.read_rank - 1];
    const uint32_t mask = plan_.value_mask;
    std::array<uint64_t, kMaxChunks + 1> first_row{};  // per chunk: its first output row

    for_each_index(chunks_, chunks_ > 1, false, [&](uint64_t c) {
      uint64_t n = 0;
      for_each_run_of_chunk(c, input, sizeof(T), [&](uint64_t, const std::byte* p, uint64_t count) {
        for_each_mask<T>(p, stride, count, mask, [&](uint64_t, uint64_t bits) { n += std::popcount(bits); });
      });
      first_row[c + 1] = n;
    });
    for (uint64_t c = 0; c < chunks_; ++c) first_row[c + 1] += first_row[c];

    auto* coordinates = reinterpret_cast<C*>(args.outputs[1]);
    const uint64_t row_stride = plan_.row_stride, column_stride = plan_.column_stride;
    const Dims& offsets = plan_.column_offsets;
    for_each_index(chunks_, chunks_ > 1, false, [&](uint64_t c) {
      C* out = coordinates + first_row[c] * row_stride;
      uint64_t at = chunk_begin(c);  // the logical index whose coordinates `coord` holds
      Dims coord = unravel(at, columns, plan_.column_sizes);
      for_each_run_of_chunk(c, input, sizeof(T), [&](uint64_t index, const std::byte* p, uint64_t count) {
        for_each_mask<T>(p, stride, count, mask, [&](uint64_t first, uint64_t bits) {
          if (kWideRows && bits != 0) {
            advance(coord, index + first - at, columns, plan_.column_sizes);
            at = index + first;
            if (coord[last] + (63 - std::countl_zero(bits)) < plan_.column_sizes[last]) {
              // The block's non-zeros all lie in coord's innermost row: only the last coordinate
              // differs, by the bit's position.
              C row[kMaxRank];
              for (uint32_t j = 0; j <= last; ++j) row[j] = static_cast<C>(coord[j] + offsets[j]);
              for (; bits != 0; bits &= bits - 1) {
                for (uint32_t j = 0; j < last; ++j) out[j * column_stride] = row[j];
                out[last * column_stride] = row[last] + static_cast<C>(std::countr_zero(bits));
                out += row_stride;
              }
              return;
            }
          }
          for (; bits != 0; bits &= bits - 1) {  // a block across rows: coord steps from bit to bit
            const uint64_t i = index + first + std::countr_zero(bits);
            advance(coord, i - at, columns, plan_.column_sizes);
            at = i;
            for (uint32_t j = 0; j < columns; ++j) out[j * column_stride] = static_cast<C>(coord[j] + offsets[j]);
            out += row_stride;
          }
        });
      });
      if (plan_.fill_rows) fill_rows<C>(coordinates, c, first_row[c], first_row[c + 1]);
    });
    const uint64_t count = first_row[chunks_];
    if (plan_.count_bytes == 8) {
      std::memcpy(args.outputs[0], &count, 8);
    } else {
      const auto narrow = static_cast<uint32_t>(count);
      std::memcpy(args.outputs[0], &narrow, 4);
    }
    return {};
  }

  NonzeroPlan plan_;
  uint64_t chunks_ = 1;
  bool wide_rows_ = false;  // run's kWideRows: innermost rows of a mask block (64 elements) or more
};

}  // namespace

Result<std::unique_ptr<Kernel>> make_cpu_nonzero_kernel(const NonzeroPlan& plan, const CpuDevice&) {
  return std::make_unique<CpuNonzeroKernel>(plan);
}

}  // namespace opendml::internal
