// Builder-style testers (XNNPACK's test/operators/*-tester.h): one line per case, e.g.
//   JoinTester().type(DML_TENSOR_DATA_TYPE_FLOAT16).axis(1).inputs({{2, 3}, {2, 5}}).run();
// run() makes the data (random from a printed seed unless values are given), runs the operator on
// the test device through the public API (support/runner.h) and compares the outputs bit for bit
// with the oracle (support/oracle.h), and with any values the case expects from docs/contract.md.
#pragma once

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "support/oracle.h"
#include "support/runner.h"
#include "support/tensor_spec.h"
#include "support/test_env.h"

namespace odml_test {

template <class T>
Bytes to_bytes(const std::vector<T>& values) {
  Bytes b(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(b.data(), values.data(), b.size());
  return b;
}

// Random bytes; never all zero.
Bytes random_bytes(Rng& rng, uint64_t n);
// Writes one element's bytes, element_bytes(type) of them at `out`, that the oracle's zero test
// calls non-zero, or zero (+0.0 or -0.0 for floats).
void random_element(Rng& rng, DML_TENSOR_DATA_TYPE type, bool nonzero, uint8_t* out);

// The options every operator tester has.
template <class Derived>
class Tester {
 public:
  Derived& type(DML_TENSOR_DATA_TYPE t) { return set(type_, t); }
  Derived& feature_level(DML_FEATURE_LEVEL level) { return set(options_.feature_level, level); }
  Derived& extensions(uint32_t bits) { return set(options_.extensions, bits); }
  Derived& threads(int n) { return set(options_.threads, n); }
  Derived& executions(int n) { return set(options_.executions, n); }
  Derived& seed(uint64_t s) { return set(seed_, std::optional<uint64_t>(s)); }
  // TotalTensorSizeInBytes this much larger than needed, on every tensor.
  Derived& extra_bytes(uint64_t n) { return set(extra_bytes_, n); }
  // GuaranteedBaseOffsetAlignment on every tensor; buffers are bound at an address that is a
  // multiple of it and of nothing larger.
  Derived& alignment(uint32_t a) { return set(alignment_, a); }
  // Flags every input OWNED_BY_DML.
  Derived& owned_by_dml(bool on = true) { return set(owned_, on); }

 protected:
  template <class F, class V>
  Derived& set(F& field, V value) {
    field = std::move(value);
    return static_cast<Derived&>(*this);
  }
  TensorSpec make(Shape sizes, const std::optional<Shape>& strides, bool input,
                  DML_TENSOR_DATA_TYPE type = DML_TENSOR_DATA_TYPE_UNKNOWN) const {
    TensorSpec t = spec(type == DML_TENSOR_DATA_TYPE_UNKNOWN ? type_ : type, std::move(sizes), strides);
    t.extra_bytes = extra_bytes_;
    t.alignment = alignment_;
    if (input && owned_) t.flags = DML_TENSOR_FLAG_OWNED_BY_DML;
    return t;
  }
  uint64_t resolved_seed() {
    if (!seed_) seed_ = next_seed();
    return *seed_;
  }

  DML_TENSOR_DATA_TYPE type_ = DML_TENSOR_DATA_TYPE_FLOAT32;
  RunOptions options_;
  std::optional<uint64_t> seed_;
  uint64_t extra_bytes_ = 0;
  uint32_t alignment_ = 0;
  bool owned_ = false;
};

// Strides per tensor: an empty Shape means packed (null Strides in the desc).
std::optional<Shape> strides_or_null(const std::vector<Shape>& strides, size_t i);

class JoinTester : public Tester<JoinTester> {
 public:
  JoinTester& axis(uint32_t a) { return set(axis_, a); }
  JoinTester& inputs(std::vector<Shape> sizes) { return set(inputs_, std::move(sizes)); }
  JoinTester& input_strides(std::vector<Shape> strides) { return set(input_strides_, std::move(strides)); }
  JoinTester& output_strides(Shape strides) { return set(output_strides_, std::optional<Shape>(std::move(strides))); }
  // The logical elements of input i (instead of random data).
  template <class T>
  JoinTester& input_values(size_t i, const std::vector<T>& values) {
    values_.resize(inputs_.size());
    values_[i] = to_bytes(values);
    return *this;
  }
  // What docs/contract.md says the output's logical elements are.
  template <class T>
  JoinTester& expect_output(const std::vector<T>& values) {
    return set(expected_, std::optional<Bytes>(to_bytes(values)));
  }
  // Runs the case; returns the output region (empty after a failure).
  Bytes run();

 private:
  uint32_t axis_ = 0;
  std::vector<Shape> inputs_, input_strides_;
  std::optional<Shape> output_strides_;
  std::vector<Bytes> values_;
  std::optional<Bytes> expected_;
};

class SplitTester : public Tester<SplitTester> {
 public:
  SplitTester& axis(uint32_t a) { return set(axis_, a); }
  SplitTester& outputs(std::vector<Shape> sizes) { return set(outputs_, std::move(sizes)); }
  SplitTester& input_strides(Shape strides) { return set(input_strides_, std::optional<Shape>(std::move(strides))); }
  SplitTester& output_strides(std::vector<Shape> strides) { return set(output_strides_, std::move(strides)); }
  template <class T>
  SplitTester& input_values(const std::vector<T>& values) {
    return set(values_, std::optional<Bytes>(to_bytes(values)));
  }
  template <class T>
  SplitTester& expect_output(size_t i, const std::vector<T>& values) {
    expected_.resize(outputs_.size());
    expected_[i] = to_bytes(values);
    return *this;
  }
  // Runs the case; returns the output regions (empty after a failure).
  std::vector<Bytes> run();

 private:
  uint32_t axis_ = 0;
  std::vector<Shape> outputs_, output_strides_;
  std::optional<Shape> input_strides_;
  std::optional<Bytes> values_;
  std::vector<Bytes> expected_;
};

class NonzeroTester : public Tester<NonzeroTester> {
 public:
  NonzeroTester& sizes(Shape s) { return set(sizes_, std::move(s)); }
  NonzeroTester& strides(Shape s) { return set(strides_, std::optional<Shape>(std::move(s))); }
  // The fraction of elements that are non-zero in the random data.
  NonzeroTester& density(double d) { return set(density_, d); }
  // N, the coordinates per row (default: the input's DimensionCount).
  NonzeroTester& n(uint32_t columns) { return set(n_, std::optional<uint32_t>(columns)); }
  // DimensionCount of the count tensor (all sizes 1) and of the coordinates tensor ({1,..,1,M,N}).
  NonzeroTester& count_rank(uint32_t r) { return set(count_rank_, r); }
  NonzeroTester& coordinates_rank(uint32_t r) { return set(coordinates_rank_, r); }
  NonzeroTester& count_strides(Shape s) { return set(count_strides_, std::optional<Shape>(std::move(s))); }
  // The count's and the coordinates' type: UINT32, or INT64 / UINT64 (which need
  // extensions(ODML_EXTENSION_64BIT_INDICES)).
  NonzeroTester& index_type(DML_TENSOR_DATA_TYPE t) { return set(index_type_, t); }
  // With 64-bit indices, the coordinates' row dimensions (multiplying to M) instead of {1,..,1,M}.
  NonzeroTester& row_sizes(Shape s) { return set(row_sizes_, std::move(s)); }
  NonzeroTester& coordinates_strides(Shape s) { return set(coordinates_strides_, std::optional<Shape>(std::move(s))); }
  // The input's logical elements, each sizeof(T) bytes (FLOAT16 as uint16_t bits).
  template <class T>
  NonzeroTester& values(const std::vector<T>& v) {
    return set(values_, std::optional<Bytes>(to_bytes(v)));
  }
  NonzeroTester& expect_count(uint32_t count) { return set(expected_count_, std::optional<uint32_t>(count)); }
  // ODML_EXTENSION_COORDINATE_OFFSETS with these offsets, one per coordinate column: the rows
  // expected are the oracle's plus the offsets.
  NonzeroTester& coordinate_offsets(Shape offsets) {
    options_.extensions |= ODML_EXTENSION_COORDINATE_OFFSETS;
    options_.coordinate_offsets.assign(offsets.begin(), offsets.end());
    return static_cast<NonzeroTester&>(*this);
  }
  // ODML_EXTENSION_FILL_ROWS with these values (bits of a coordinate), one per column: every row
  // past the count must hold them.
  NonzeroTester& fill_values(std::vector<uint64_t> values) {
    options_.extensions |= ODML_EXTENSION_FILL_ROWS;
    options_.fill_values = std::move(values);
    return static_cast<NonzeroTester&>(*this);
  }
  NonzeroTester& expect_rows(std::vector<Coordinates> rows) { return set(expected_rows_, std::move(rows)); }
  void run();

 private:
  Shape sizes_;
  std::optional<Shape> strides_, count_strides_, coordinates_strides_;
  double density_ = 0.5;
  std::optional<uint32_t> n_;
  uint32_t count_rank_ = 1, coordinates_rank_ = 2;
  DML_TENSOR_DATA_TYPE index_type_ = DML_TENSOR_DATA_TYPE_UINT32;
  Shape row_sizes_;
  std::optional<Bytes> values_;
  std::optional<uint32_t> expected_count_;
  std::vector<Coordinates> expected_rows_;
};

// A NONZERO case of alternating runs of non-zero and zero elements of type T (FLOAT16 as uint16_t
// bits): run k is lengths[k % lengths.size()] * unit elements long, the first one non-zero where
// first_nonzero. For inputs whose mask words, warps or tiles are all full or all empty beside
// partial ones.
template <class T>
NonzeroTester alternating_runs(DML_TENSOR_DATA_TYPE type, const Shape& sizes, const std::vector<uint64_t>& lengths,
                               uint64_t unit = 1, bool first_nonzero = true) {
  uint64_t elements = 1;
  for (uint32_t size : sizes) elements *= size;
  std::vector<T> values(elements);
  bool nonzero = first_nonzero;
  for (uint64_t i = 0, k = 0; i < elements; nonzero = !nonzero, ++k)
    for (uint64_t end = std::min(elements, i + lengths[k % lengths.size()] * unit); i < end; ++i)
      values[i] = nonzero ? static_cast<T>(i % 200 + 1) : T{0};
  return NonzeroTester().type(type).sizes(sizes).values(values);
}

}  // namespace odml_test
