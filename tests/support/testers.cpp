#include "support/testers.h"

#include <algorithm>
#include <cstring>

#include "support/data_types.h"

namespace odml_test {
namespace {

// Random bytes for every input region, except where the case gives an input's logical values,
// which are written through its strides over random padding.
std::vector<Bytes> make_inputs(Rng& rng, const std::vector<TensorSpec>& specs, const std::vector<Bytes>& values) {
  std::vector<Bytes> regions;
  for (size_t i = 0; i < specs.size(); ++i) {
    regions.push_back(random_bytes(rng, specs[i].total_bytes()));
    if (i < values.size() && !values[i].empty()) scatter(specs[i], values[i], regions.back());
  }
  return regions;
}

// The context every failure of a case prints.
std::string describe(const OpDesc& desc, uint64_t seed) { return desc.to_string() + ", " + seed_note(seed); }

// n random bytes at `out`, never all zero.
void fill_random_bytes(Rng& rng, uint8_t* out, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) out[i] = static_cast<uint8_t>(rng());
  if (n > 0 && std::all_of(out, out + n, [](uint8_t x) { return x == 0; })) out[0] = 1;
}

// One element's bytes that the oracle's zero test calls non-zero.
void random_nonzero(Rng& rng, DML_TENSOR_DATA_TYPE type, uint8_t* out) {
  const uint32_t eb = element_bytes(type);
  if (is_float(type) && rng() % 4 == 0) {
    // The values a zero test might get wrong: the smallest denormal, a quiet NaN, infinity, each
    // with either sign.
    const uint64_t sign = rng() % 2;
    const int which = static_cast<int>(rng() % 3);
    const int mantissa_bits = eb == 2 ? 10 : eb == 4 ? 23 : 52;
    const uint64_t exponent_all = (eb == 2 ? 0x1Full : eb == 4 ? 0xFFull : 0x7FFull) << mantissa_bits;
    uint64_t bits = which == 0 ? 1 : which == 1 ? exponent_all | (uint64_t{1} << (mantissa_bits - 1)) : exponent_all;
    bits |= sign << (8 * eb - 1);
    std::memcpy(out, &bits, eb);
    return;
  }
  do {
    fill_random_bytes(rng, out, eb);
  } while (is_zero(type, out));
}

}  // namespace

Bytes random_bytes(Rng& rng, uint64_t n) {
  Bytes b(n);
  fill_random_bytes(rng, b.data(), n);
  return b;
}

void random_element(Rng& rng, DML_TENSOR_DATA_TYPE type, bool nonzero, uint8_t* out) {
  if (nonzero) return random_nonzero(rng, type, out);
  const uint32_t eb = element_bytes(type);
  std::memset(out, 0, eb);
  if (is_float(type) && rng() % 2) out[eb - 1] = 0x80;  // -0.0
}

std::optional<Shape> strides_or_null(const std::vector<Shape>& strides, size_t i) {
  if (i < strides.size() && !strides[i].empty()) return strides[i];
  return std::nullopt;
}

Bytes JoinTester::run() {
  std::vector<TensorSpec> in;
  for (size_t i = 0; i < inputs_.size(); ++i) in.push_back(make(inputs_[i], strides_or_null(input_strides_, i), true));
  const OpDesc desc = OpDesc::join(in, make(concat_sizes(inputs_, axis_), output_strides_, false), axis_);
  const uint64_t seed = resolved_seed();
  SCOPED_TRACE(describe(desc, seed));

  Rng rng(seed);
  const std::vector<Bytes> regions = make_inputs(rng, in, values_);
  const Bytes expected = join_oracle(in, regions, axis_);
  if (expected_) {
    EXPECT_TRUE(expected == *expected_) << "the oracle disagrees with the values the case expects";
  }
  const RunOutputs outputs = run_operator(desc, regions, options_);
  if (outputs.empty()) return {};
  const TensorSpec out = desc.outputs()[0];
  for (size_t t = 0; t < outputs.size(); ++t)
    EXPECT_TRUE(elements_equal(out, outputs[t][0], expected, "OutputTensor")) << "thread " << t;
  return outputs[0][0];
}

std::vector<Bytes> SplitTester::run() {
  std::vector<TensorSpec> out;
  for (size_t i = 0; i < outputs_.size(); ++i)
    out.push_back(make(outputs_[i], strides_or_null(output_strides_, i), false));
  const TensorSpec in = make(concat_sizes(outputs_, axis_), input_strides_, true);
  const OpDesc desc = OpDesc::split(in, out, axis_);
  const uint64_t seed = resolved_seed();
  SCOPED_TRACE(describe(desc, seed));

  Rng rng(seed);
  const std::vector<Bytes> regions =
      make_inputs(rng, {in}, values_ ? std::vector<Bytes>{*values_} : std::vector<Bytes>{});
  const std::vector<Bytes> expected = split_oracle(in, regions[0], out, axis_);
  for (size_t i = 0; i < expected_.size(); ++i)
    if (!expected_[i].empty()) {
      EXPECT_TRUE(expected[i] == expected_[i])
          << "the oracle disagrees with the values the case expects for output " << i;
    }
  const RunOutputs outputs = run_operator(desc, regions, options_);
  if (outputs.empty()) return {};
  for (size_t t = 0; t < outputs.size(); ++t)
    for (size_t i = 0; i < out.size(); ++i)
      EXPECT_TRUE(elements_equal(out[i], outputs[t][i], expected[i], "OutputTensors[" + std::to_string(i) + "]"))
          << "thread " << t;
  return outputs[0];
}

void NonzeroTester::run() {
  TensorSpec in = make(sizes_, strides_, true);
  const uint32_t n = n_.value_or(in.rank());
  const uint64_t m = element_count(sizes_);
  Shape count_sizes(count_rank_, 1),
      coordinate_sizes = row_sizes_.empty() ? Shape{static_cast<uint32_t>(m)} : row_sizes_;
  coordinate_sizes.insert(coordinate_sizes.begin(), coordinates_rank_ - 1 - coordinate_sizes.size(), 1);
  coordinate_sizes.push_back(n);
  TensorSpec count = make(count_sizes, count_strides_, false, index_type_);
  TensorSpec coordinates = make(coordinate_sizes, coordinates_strides_, false, index_type_);
  if (alignment_ != 0)  // the outputs' alignment cannot be below their element size
    count.alignment = coordinates.alignment = std::max(alignment_, element_bytes(index_type_));
  const OpDesc desc = OpDesc::nonzero(in, count, coordinates);
  const uint64_t seed = resolved_seed();
  SCOPED_TRACE(describe(desc, seed) + ", density " + std::to_string(density_));

  Rng rng(seed);
  std::vector<Bytes> regions = make_inputs(rng, {in}, {});
  if (values_) {
    scatter(in, *values_, regions[0]);
  } else {
    const uint32_t eb = element_bytes(in.type);
    std::bernoulli_distribution nonzero(density_);
    Bytes logical(m * eb);
    for (uint64_t i = 0; i < m; ++i) random_element(rng, in.type, nonzero(rng), &logical[i * eb]);
    scatter(in, logical, regions[0]);
  }
  const NonzeroResult expected = nonzero_oracle(in, regions[0], n);
  if (expected_count_) {
    EXPECT_EQ(expected.count, *expected_count_) << "the oracle disagrees with the case";
  }
  if (!expected_rows_.empty()) {
    EXPECT_EQ(expected.rows, expected_rows_) << "the oracle disagrees with the case";
  }
  const NonzeroResult wanted =
      options_.coordinate_offsets.empty() ? expected : nonzero_oracle(in, regions[0], n, options_.coordinate_offsets);
  const RunOutputs outputs = run_operator(desc, regions, options_);
  for (size_t t = 0; t < outputs.size(); ++t) {
    EXPECT_TRUE(nonzero_equal(read_nonzero(count, outputs[t][0], coordinates, outputs[t][1]), wanted))
        << "thread " << t;
    if (!options_.fill_values.empty()) {
      EXPECT_TRUE(rows_filled(coordinates, outputs[t][1], wanted.count, options_.fill_values)) << "thread " << t;
    }
  }
}

}  // namespace odml_test
