// c_abi_fuzzer: the C ABI (include/opendml/opendml.h) from odml_operator_create to
// odml_compiled_operator_execute on the CPU device, every result checked with the tests' oracle
// (tests/support/oracle.h). fuzz/README.md says how to run it.
//
// An input decodes into one case. Its choices come from FuzzedDataProvider; an exhausted input reads
// as zeros, and every choice's zero is the plain valid one, so that short inputs are valid cases.
// A case is JOIN or SPLIT of 1 to 300 pieces, or NONZERO_COORDINATES of any input type; its tensors
// have every data type and rank 1 to 8, strides null, packed, padded, permuted, broadcast (0) or
// arbitrary (overlapping, on an output), OWNED_BY_DML inputs, TotalTensorSizeInBytes and
// GuaranteedBaseOffsetAlignment; it has a feature level and perhaps extensions (contract section 7:
// 64-bit indices, for 64-bit NONZERO outputs and extents past 2^32; coordinate offsets, N values of
// any size up to and past what the coordinates' type holds; fill rows, N fill values of any bits,
// past UINT32 too, alone or beside offsets), asked for through odml_operator_create,
// odml_operator_create_ex or odml_operator_create_with_options; and it binds regions of chosen sizes
// and alignments at initialize and execute, inputs sharing a region, unbound and extra regions; one
// case in 4 runs cpu.copy's non-temporal stores, which ordinary sizes reach only from 64 MiB. At
// most one rule of the contract (docs/contract.md sections 2 to 5 and 7) is broken on purpose, and each
// lifecycle step gets a verdict: it must succeed, it must fail, or, where the contract leaves the
// outcome open (a lower feature level's support table, unknown flag bits), either.
//
// The fuzzer aborts, which libFuzzer reports as a crash and saves the input, when
//   - a step that must succeed fails, or the step that must fail succeeds;
//   - a failed call returns a status other than INVALID_ARGUMENT or UNSUPPORTED, no message, or a
//     handle, or writes anything (docs/contract.md section 4);
//   - a call writes outside its regions (each sits between guard zones) or into an input;
//   - a successful execute's outputs differ from the oracle in any bit (with fill rows, the rows
//     past the count included).
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "opendml/opendml.h"
#include "opendml/opendml.hpp"
#include "support/data_types.h"
#include "support/guarded_buffer.h"
#include "support/op_desc.h"
#include "support/oracle.h"
#include "support/random_cases.h"
#include "support/test_env.h"
#include "support/testers.h"

namespace {

using namespace odml_test;

// Elements per tensor: small for speed; one case in 256 is large enough (1 MiB and more) for the
// CPU backend to split its work over threads.
constexpr uint64_t kElements = 4096;
constexpr uint64_t kLargeElements = uint64_t{1} << 18;
// The largest region a case binds: a tensor that needs more is bound to too little, and must fail.
constexpr uint64_t kMaxRegion = uint64_t{1} << 28;

const DML_FEATURE_LEVEL kLevels[] = {
    DML_FEATURE_LEVEL_1_0, DML_FEATURE_LEVEL_2_0, DML_FEATURE_LEVEL_2_1, DML_FEATURE_LEVEL_3_0, DML_FEATURE_LEVEL_3_1,
    DML_FEATURE_LEVEL_4_0, DML_FEATURE_LEVEL_4_1, DML_FEATURE_LEVEL_5_0, DML_FEATURE_LEVEL_5_1, DML_FEATURE_LEVEL_5_2,
    DML_FEATURE_LEVEL_6_0, DML_FEATURE_LEVEL_6_1, DML_FEATURE_LEVEL_6_2, DML_FEATURE_LEVEL_6_3, DML_FEATURE_LEVEL_6_4};

const opendml::Device& cpu() {
  static const opendml::Device device("cpu");
  return device;
}

// The input's choices, each named (`what`) for the seed writer.
class Choices {
 public:
  Choices(const uint8_t* data, size_t size) : in_(data, size) {}
  // The seed writer answers every choice itself, below n (n 0: any 64-bit value), and the
  // answers are recorded as the input that decodes to them.
  using Answers = std::function<uint64_t(const std::string& what, uint64_t n)>;
  explicit Choices(Answers answers) : in_(nullptr, 0), answers_(std::move(answers)) {}

  // 0 to n - 1.
  uint32_t below(uint64_t n, const char* what = "") {
    if (n <= 1) return 0;
    const uint64_t max = std::min<uint64_t>(n, uint64_t{1} << 32) - 1;
    if (answers_) return static_cast<uint32_t>(record(answers_(what, max + 1), max));
    return in_.ConsumeIntegralInRange<uint32_t>(0, static_cast<uint32_t>(max));
  }
  // True once in n, never on an exhausted input.
  bool one_in(uint32_t n, const char* what = "") { return below(n, what) == n - 1; }
  uint64_t u64(const char* what = "") {
    return answers_ ? record(answers_(what, 0), ~uint64_t{0}) : in_.ConsumeIntegral<uint64_t>();
  }
  uint32_t u32(const char* what = "") {
    return answers_ ? static_cast<uint32_t>(record(answers_(what, 0), ~0u)) : in_.ConsumeIntegral<uint32_t>();
  }
  // The input that decodes to the answers so far.
  std::vector<uint8_t> recorded() const { return {consumed_.rbegin(), consumed_.rend()}; }

 private:
  // FuzzedDataProvider reads an integer of range [0, max] from the input's end, one byte per 8
  // bits of max, the most significant first.
  uint64_t record(uint64_t value, uint64_t max) {
    int bytes = 0;
    for (uint64_t r = max; r != 0; r >>= 8) ++bytes;
    while (bytes-- > 0) consumed_.push_back(static_cast<uint8_t>(value >> (8 * bytes)));
    return value;
  }

  FuzzedDataProvider in_;
  Answers answers_;
  std::vector<uint8_t> consumed_;
};

enum class Verdict { kSucceed, kFail, kEither };
enum Step { kCreate, kInitialize, kExecute, kSteps };  // kCreate covers compile
const char* const kStepNames[] = {"create/compile", "initialize", "execute"};

// The values of an extension that takes one per coordinate column (odml_operator_options'
// coordinate offsets or fill values, contract section 7): the array (perhaps longer than the count
// says), the count, and whether the pointer is null instead.
struct ColumnValues {
  std::vector<uint64_t> values;
  uint32_t count = 0;
  bool null = false;
  bool given() const { return count != 0 || !values.empty() || null; }
  const uint64_t* data() const { return null ? nullptr : values.data(); }
  std::string to_string(const std::string& name) const {
    if (!given()) return "";
    return ", " + std::to_string(count) + " " + name + " " + (null ? "(null)" : odml_test::to_string(values));
  }
};

// One case: the tensors in OpDesc's field order (JOIN InputTensors..., OutputTensor; SPLIT
// InputTensor, OutputTensors...; NONZERO InputTensor, OutputCountTensor, OutputCoordinatesTensor),
// and what each step must do.
struct Case {
  DML_OPERATOR_TYPE type = DML_OPERATOR_JOIN;
  std::vector<TensorSpec> tensors;
  uint32_t axis = 0;
  uint32_t n = 0;  // NONZERO's coordinates per row
  DML_FEATURE_LEVEL level = DML_FEATURE_LEVEL(0);
  uint32_t extensions = ODML_EXTENSION_NONE;  // odml_operator_options' (contract section 7)
  bool wide_indices() const { return extensions & ODML_EXTENSION_64BIT_INDICES; }
  // odml_operator_options' coordinate offsets and fill values (ColumnValues).
  ColumnValues offsets, fill;
  // How create is called: with options; odml_operator_create_ex (odml_operator_create without
  // extensions); with null options where there is nothing to ask for.
  enum class Entry { kWithOptions, kCreateEx, kNullOptions } entry = Entry::kWithOptions;
  // What execute must add to column j: the offsets, when create took them.
  std::vector<uint64_t> applied_offsets() const {
    return extensions & ODML_EXTENSION_COORDINATE_OFFSETS ? offsets.values : std::vector<uint64_t>{};
  }
  bool fills_rows() const { return extensions & ODML_EXTENSION_FILL_ROWS; }
  std::string options_string() const {
    return "extensions " + std::to_string(extensions) + offsets.to_string("coordinate offsets") +
           fill.to_string("fill values");
  }
  Verdict verdict[kSteps] = {Verdict::kSucceed, Verdict::kSucceed, Verdict::kSucceed};
  std::string notes;  // the rules broken on purpose

  void must_fail(Step step, const std::string& why) {
    verdict[step] = Verdict::kFail;
    notes += " [" + std::string(kStepNames[step]) + " must fail: " + why + "]";
  }
  void may_fail(Step step, const std::string& why) {
    if (verdict[step] == Verdict::kSucceed) verdict[step] = Verdict::kEither;
    notes += " [" + std::string(kStepNames[step]) + " may fail: " + why + "]";
  }
  bool is_input(size_t i) const { return type == DML_OPERATOR_JOIN ? i + 1 < tensors.size() : i == 0; }
  std::vector<size_t> inputs() const { return indices(true); }
  std::vector<size_t> outputs() const { return indices(false); }
  std::string tensor_name(size_t i) const {
    return (is_input(i) ? "input " : "output ") + std::to_string(i) + " (" + tensors[i].to_string() + ")";
  }

 private:
  std::vector<size_t> indices(bool input) const {
    std::vector<size_t> r;
    for (size_t i = 0; i < tensors.size(); ++i)
      if (is_input(i) == input) r.push_back(i);
    return r;
  }
};

// --- Descriptors ---------------------------------------------------------------------------------

Shape sizes_within(Choices& in, uint32_t rank, uint64_t budget, uint32_t max_size) {
  Shape sizes(rank, 1);
  uint64_t count = 1;
  for (uint32_t& s : sizes) {
    const uint32_t v = 1 + in.below(max_size, "size");
    if (count * v > budget) continue;
    s = v;
    count *= v;
  }
  return sizes;
}

// Whether two logical elements share an address: what an output must not do (contract section 2,
// rule 4). Counted out element by element, independently of the library's proof.
bool elements_overlap(const Shape& sizes, const Shape& strides) {
  std::vector<uint64_t> offsets;
  for_each_coordinate(sizes, [&](const Shape& c) { offsets.push_back(element_offset(c, strides)); });
  std::sort(offsets.begin(), offsets.end());
  return std::adjacent_find(offsets.begin(), offsets.end()) != offsets.end();
}

std::optional<Shape> choose_strides(Choices& in, Case& c, const Shape& sizes, bool input, const std::string& name) {
  const auto rank = static_cast<uint32_t>(sizes.size());
  switch (in.below(5, "strides")) {
    case 0: return std::nullopt;
    case 1:
    case 2: {  // packed, padded, permuted; broadcast on inputs
      Rng rng(in.u64("layout seed"));
      return random_strides(rng, sizes, input);
    }
    case 3: {  // anything small: broadcast, interleaved, overlapping
      Shape strides(rank);
      for (uint32_t& s : strides) s = in.below(7, "stride");
      if (!input && elements_overlap(sizes, strides)) c.must_fail(kCreate, name + ": output elements overlap");
      return strides;
    }
    default: {  // a physical extent past 2^32 - 1 elements (rule 7; with 64-bit indices, too large to bind)
      Shape strides = packed_strides(sizes);
      const auto widest = std::max_element(sizes.begin(), sizes.end()) - sizes.begin();
      if (sizes[widest] == 1) return strides;
      strides[widest] = 0xFFFFFFFFu;
      if (!c.wide_indices()) c.must_fail(kCreate, name + ": extent past 2^32 - 1 elements");
      return strides;
    }
  }
}

// The options every tensor has.
void choose_options(Choices& in, TensorSpec& t, bool input) {
  if (in.one_in(3, "has extra bytes")) t.extra_bytes = in.below(65, "extra bytes");
  if (in.one_in(2, "has alignment"))
    t.alignment = std::min<uint32_t>(256, element_bytes(t.type) << in.below(6, "alignment"));
  if (input && in.one_in(4, "owned")) t.flags = DML_TENSOR_FLAG_OWNED_BY_DML;
}

DML_TENSOR_DATA_TYPE choose_type(Choices& in, Case& c, const std::vector<DML_TENSOR_DATA_TYPE>& supported) {
  const DML_TENSOR_DATA_TYPE type = kAllTypes[in.below(kAllTypes.size(), "type")];
  if (!contains(supported, type)) c.must_fail(kCreate, type_name(type) + " is outside every support row");
  return type;
}

// NONZERO's count or coordinates type: UINT32, or INT64 or UINT64, which need 64-bit indices.
DML_TENSOR_DATA_TYPE choose_index_type(Choices& in, Case& c, const char* what) {
  const DML_TENSOR_DATA_TYPE types[] = {DML_TENSOR_DATA_TYPE_INT64, DML_TENSOR_DATA_TYPE_UINT64};
  const uint32_t k = in.below(6, what);
  if (k < 4) return DML_TENSOR_DATA_TYPE_UINT32;
  if (!c.wide_indices()) c.must_fail(kCreate, std::string(what) + " 64-bit without 64-bit indices");
  return types[k - 4];
}

void make_concat(Choices& in, Case& c) {
  const bool join = c.type == DML_OPERATOR_JOIN;
  const DML_TENSOR_DATA_TYPE type = choose_type(in, c, kElevenTypes);
  const uint32_t rank = 1 + in.below(8, "rank");
  c.axis = in.below(rank, "axis");
  const bool wide = in.one_in(8, "wide"), large = in.one_in(256, "large");
  std::vector<uint32_t> lengths(wide ? 5 + in.below(296, "pieces") : 1 + in.below(4, "pieces"));
  uint32_t whole_length = 0;
  for (uint32_t& l : lengths) whole_length += l = 1 + in.below(wide ? 2 : 4, "length");
  const uint64_t budget = std::max<uint64_t>(1, (large ? kLargeElements : kElements) / whole_length);
  Shape whole = sizes_within(in, rank, budget, large ? 512 : 6);
  whole[c.axis] = whole_length;

  std::vector<TensorSpec> pieces;
  for (size_t i = 0; i < lengths.size(); ++i) {
    Shape sizes = whole;
    sizes[c.axis] = lengths[i];
    TensorSpec t = spec(type, sizes);
    t.strides = choose_strides(in, c, sizes, join, "piece " + std::to_string(i));
    choose_options(in, t, join);
    pieces.push_back(std::move(t));
  }
  TensorSpec w = spec(type, whole);
  w.strides = choose_strides(in, c, whole, !join, "whole");
  choose_options(in, w, !join);
  if (join) {
    c.tensors = std::move(pieces);
    c.tensors.push_back(std::move(w));
  } else {
    c.tensors = {std::move(w)};
    c.tensors.insert(c.tensors.end(), pieces.begin(), pieces.end());
  }
}

void make_nonzero(Choices& in, Case& c) {
  const DML_TENSOR_DATA_TYPE type = choose_type(in, c, kEightTypes);
  const uint32_t rank = 1 + in.below(8, "rank");
  const bool large = in.one_in(256, "large");
  Shape sizes = sizes_within(in, rank, large ? kLargeElements : kElements, large ? 512 : 6);
  if (in.one_in(3, "has leading ones"))
    std::fill_n(sizes.begin(), in.below(rank + 1, "leading ones"), 1u);  // leading 1s: a lower effective rank
  uint32_t effective = rank;
  while (effective > 0 && sizes[rank - effective] == 1) --effective;
  const uint32_t min_n = std::max(1u, effective);
  c.n = min_n + in.below(rank - min_n + 1, "n");

  TensorSpec input = spec(type, sizes);
  input.strides = choose_strides(in, c, sizes, true, "InputTensor");
  choose_options(in, input, true);

  TensorSpec count = spec(choose_index_type(in, c, "count type"), Shape(1 + in.below(8, "count rank"), 1));
  count.strides = choose_strides(in, c, count.sizes, false, "OutputCountTensor");
  choose_options(in, count, false);

  Shape coordinate_sizes(2 + in.below(7, "coordinates rank"), 1);
  coordinate_sizes.end()[-2] = static_cast<uint32_t>(element_count(sizes));
  coordinate_sizes.back() = c.n;
  TensorSpec coordinates = spec(choose_index_type(in, c, "coordinates type"), coordinate_sizes);
  coordinates.strides = choose_strides(in, c, coordinate_sizes, false, "OutputCoordinatesTensor");
  choose_options(in, coordinates, false);
  c.tensors = {std::move(input), std::move(count), std::move(coordinates)};
}

void choose_level(Choices& in, Case& c) {
  switch (in.below(4, "level kind")) {
    case 0: return;  // 0: the highest
    case 1: c.level = DML_FEATURE_LEVEL_6_4; return;
    case 2: c.level = kLevels[in.below(std::size(kLevels), "level")]; break;
    default: c.level = static_cast<DML_FEATURE_LEVEL>(in.u32()); break;
  }
  const bool known = std::find(std::begin(kLevels), std::end(kLevels), c.level) != std::end(kLevels);
  // A value that names no level is refused (contract section 4). From 4_1 every operator takes
  // ranks 1 to 8 and its every type; below, the support rows decide.
  if (c.level != 0 && !known) c.must_fail(kCreate, "feature level " + std::to_string(c.level));
  if (known && c.level < DML_FEATURE_LEVEL_4_1) c.may_fail(kCreate, "feature level " + std::to_string(c.level));
}

// Rules broken in the TensorSpecs, before the descriptor is built.
enum SpecBreak {
  kNoSpecBreak,
  kSizeZero,
  kCountPast32Bits,
  kOwnedOutput,
  kUnknownFlag,
  kBadAlignment,
  kPieceType,
  kPieceRank,
  kPieceSize,
  kWholeLength,
  kSpecBreaks
};

void break_spec(Choices& in, Case& c) {
  const auto kind =
      static_cast<SpecBreak>(in.one_in(3, "spec break?") ? 1 + in.below(kSpecBreaks - 1, "spec break") : 0);
  const size_t i = in.below(c.tensors.size(), "spec break tensor");
  TensorSpec& t = c.tensors[i];
  const std::string name = c.tensor_name(i);
  const bool concat = c.type != DML_OPERATOR_NONZERO_COORDINATES;
  // For JOIN and SPLIT, `piece` is tensor 1 and `whole` tensor 0 (SPLIT) or the last (JOIN); for
  // NONZERO_COORDINATES they are the coordinates and the count.
  const size_t whole_index = c.type == DML_OPERATOR_JOIN ? c.tensors.size() - 1 : 0;
  const size_t piece_index = c.type == DML_OPERATOR_JOIN ? 0 : 1;
  TensorSpec& whole = c.tensors[concat ? whole_index : 1];
  TensorSpec& piece = c.tensors[concat ? piece_index : 2];
  switch (kind) {
    case kNoSpecBreak:
    case kSpecBreaks: return;
    case kSizeZero: t.sizes[in.below(t.rank())] = 0; return c.must_fail(kCreate, name + ": a size of 0");
    case kCountPast32Bits:  // never consistent with the other tensors, 64-bit indices or not
      if (t.rank() < 2) return;
      t.sizes[0] = t.sizes[1] = 65536;
      return c.must_fail(kCreate, name + ": 2^32 elements");
    case kOwnedOutput:
      if (c.is_input(i)) return;
      t.flags = DML_TENSOR_FLAG_OWNED_BY_DML;
      return c.must_fail(kCreate, name + ": OWNED_BY_DML on an output");
    case kUnknownFlag:
      t.flags = static_cast<DML_TENSOR_FLAGS>(t.flags | (2u << in.below(31)));
      return c.may_fail(kCreate, name + ": an unknown flag");
    case kBadAlignment: {
      const uint32_t eb = element_bytes(t.type);
      const uint32_t bad[] = {3, 6, 12, 24, 48, 96, 0x80000001u, eb / 2};
      t.alignment = bad[in.below(eb >= 2 ? 8 : 7)];
      return c.must_fail(kCreate, name + ": GuaranteedBaseOffsetAlignment " + std::to_string(t.alignment));
    }
    case kPieceType: {  // JOIN/SPLIT: types differ; NONZERO: a count or coordinates type other than UINT32
      TensorSpec& u = in.below(2) ? whole : piece;
      const DML_TENSOR_DATA_TYPE other = kAllTypes[in.below(kAllTypes.size())];
      const bool index_type = other == DML_TENSOR_DATA_TYPE_UINT32 ||
                              (c.wide_indices() && element_bytes(other) == 8 && other != DML_TENSOR_DATA_TYPE_FLOAT64);
      if (other == u.type || (!concat && index_type)) return;
      u.type = other;
      return c.must_fail(kCreate, "a tensor's type is " + type_name(other));
    }
    case kPieceRank:  // JOIN/SPLIT: ranks differ; NONZERO: coordinates of rank 1
      if (!concat) {
        piece.sizes.erase(piece.sizes.begin(), piece.sizes.end() - 1);
        piece.strides.reset();
        return c.must_fail(kCreate, "coordinates of rank 1");
      }
      if (piece.rank() == 8) {
        piece.sizes.pop_back();
      } else {
        piece.sizes.push_back(1);
      }
      piece.strides.reset();
      return c.must_fail(kCreate, "a piece's rank differs");
    case kPieceSize: {  // JOIN/SPLIT: a dimension other than Axis differs; NONZERO: a count size of 2
      if (!concat) {
        whole.sizes[in.below(whole.rank())] = 2;
        return c.must_fail(kCreate, "a count size of 2");
      }
      if (piece.rank() < 2) return;
      const uint32_t d = (c.axis + 1 + in.below(piece.rank() - 1)) % piece.rank();
      ++piece.sizes[d];
      return c.must_fail(kCreate, "a piece's Sizes[" + std::to_string(d) + "] differs");
    }
    case kWholeLength: {  // JOIN/SPLIT: the whole's Axis length is not the sum; NONZERO: M or N wrong
      if (concat) {
        ++whole.sizes[c.axis];
        return c.must_fail(kCreate, "the whole's Axis length is not the sum");
      }
      Shape& s = piece.sizes;
      const uint32_t input_rank = c.tensors[0].rank();
      switch (in.below(4)) {
        case 0: ++s.end()[-2]; return c.must_fail(kCreate, "M is the element count + 1");
        case 1:
          if (s.end()[-2] < 2) return;
          --s.end()[-2];
          return c.must_fail(kCreate, "M is the element count - 1");
        case 2: s.back() = input_rank + 1; return c.must_fail(kCreate, "N is the input's rank + 1");
        default:
          if (s.size() < 3) return;
          s[0] = 2;
          return c.must_fail(kCreate, "a leading coordinates size of 2");
      }
    }
  }
}

// The extensions that take a value per coordinate column (contract section 7), chosen after
// break_spec so that the verdicts see the final tensors. Each is asked for by one NONZERO case in 2
// (so a case in 4 has both) and by one JOIN or SPLIT case in 16, which must fail; one in 4 of those
// breaks a rule of the values. Each extension names its choices with its own prefix (`name`).
struct ColumnExtension {
  uint32_t bit;
  const char* name;    // the choices' prefix
  const char* values;  // what the notes call the values
};
const ColumnExtension kOffsetsExtension{ODML_EXTENSION_COORDINATE_OFFSETS, "offsets", "coordinate offsets"};
const ColumnExtension kFillExtension{ODML_EXTENSION_FILL_ROWS, "fill", "fill values"};

enum ColumnsBreak {
  kNoColumnsBreak,
  kValuesWithoutBit,
  kBitWithoutValues,
  kNullValues,
  kValueCount,
  kValuePastType,
  kColumnsBreaks
};

// Whether the case asks for the extension, and then the number of values: NONZERO's N, the
// coordinates' last size (at most 9: a larger one, from break_spec, fails anyway), or 1 to 8 for
// JOIN and SPLIT.
std::optional<uint32_t> ask_for_columns(Choices& in, Case& c, const ColumnExtension& e) {
  const std::string name = e.name;
  const bool nonzero = c.type == DML_OPERATOR_NONZERO_COORDINATES;
  if (!in.one_in(nonzero ? 2 : 16, (name + "?").c_str())) return std::nullopt;
  c.extensions |= e.bit;
  return nonzero ? std::min(c.tensors[2].sizes.back(), 9u) : 1 + in.below(8, (name + " columns").c_str());
}

// The coordinates' data type (UINT32 for JOIN and SPLIT, which have none) and its largest value.
DML_TENSOR_DATA_TYPE coordinates_type(const Case& c) {
  return c.type == DML_OPERATOR_NONZERO_COORDINATES ? c.tensors[2].type : DML_TENSOR_DATA_TYPE_UINT32;
}
uint64_t largest_value(DML_TENSOR_DATA_TYPE type) {
  return type == DML_TENSOR_DATA_TYPE_UINT32  ? std::numeric_limits<uint32_t>::max()
         : type == DML_TENSOR_DATA_TYPE_INT64 ? std::numeric_limits<int64_t>::max()
                                              : std::numeric_limits<uint64_t>::max();
}

// With the values chosen (room[j]: the largest value column j takes), one case in 4 breaks a
// rule: values without the bit, the bit with a count of 0, a null array with a count, a count
// other than N (up to 2^31 + 8), a value past room; then the verdict.
void break_columns(Choices& in, Case& c, const ColumnExtension& e, ColumnValues& v, const std::vector<uint64_t>& room) {
  const std::string name = e.name, values = e.values;
  const auto n = static_cast<uint32_t>(room.size());
  v.count = n;
  const auto kind = static_cast<ColumnsBreak>(
      in.one_in(4, (name + " break?").c_str()) ? 1 + in.below(kColumnsBreaks - 1, (name + " break").c_str()) : 0);
  switch (kind) {
    case kNoColumnsBreak:
    case kColumnsBreaks: break;
    case kValuesWithoutBit:
      c.extensions &= ~e.bit;
      if (in.below(2, (name + " without bit").c_str())) {  // a count of 0 and an array: not plainly values
        v.count = 0;
        c.may_fail(kCreate, "an array of " + values + " of count 0 without the bit");
      } else {
        c.must_fail(kCreate, values + " without the bit");
      }
      break;
    case kBitWithoutValues:
      v.count = 0;
      v.null = in.below(2, (name + " null too").c_str());
      c.must_fail(kCreate, "the bit of " + values + " with a count of 0");
      break;
    case kNullValues:
      v.null = true;
      c.must_fail(kCreate, "null " + values + " with a count of N");
      break;
    case kValueCount: {
      // The array holds as many as the count says, but for a count past any rank, which must be
      // refused before the array is read.
      const uint32_t counts[] = {n - 1, n + 1, 9, 9 + in.below(1u << 31)};
      v.count = counts[in.below(std::size(counts), (name + " count").c_str())];
      if (v.count <= 9) v.values.resize(std::max(v.count, n));
      c.must_fail(kCreate, std::to_string(v.count) + " " + values + " for " + std::to_string(n) + " columns");
      break;
    }
    case kValuePastType: {
      const uint32_t j = in.below(n, (name + " past type").c_str());
      if (n == 0 || room[j] == std::numeric_limits<uint64_t>::max()) break;  // no uint64 is past it
      v.values[j] = room[j] + 1 + in.below(std::min<uint64_t>(~room[j], uint64_t{1} << 32));
      break;
    }
  }
  if (!(c.extensions & e.bit)) return;
  if (c.type != DML_OPERATOR_NONZERO_COORDINATES)
    c.must_fail(kCreate, values + " on " + (c.type == DML_OPERATOR_JOIN ? "JOIN" : "SPLIT"));
  for (size_t j = 0; j < std::min<size_t>(n, v.values.size()); ++j)
    if (v.values[j] > room[j]) c.must_fail(kCreate, values + "[" + std::to_string(j) + "] past the coordinates' type");
}

// ODML_EXTENSION_COORDINATE_OFFSETS: an offset a column of every size (small, at and around the
// coordinates' type's limit or 2^32, any).
void choose_offsets(Choices& in, Case& c) {
  const std::optional<uint32_t> n = ask_for_columns(in, c, kOffsetsExtension);
  if (!n) return;
  // Column j holds the input's dimension rank - N + j, whose largest coordinate plus the offset
  // must fit the coordinates' type.
  const bool nonzero = c.type == DML_OPERATOR_NONZERO_COORDINATES;
  const Shape& input = c.tensors[0].sizes;
  const uint64_t limit = largest_value(coordinates_type(c));
  std::vector<uint64_t> room(*n);  // the largest offset column j takes
  for (uint32_t j = 0; j < *n; ++j) {
    const uint32_t d = static_cast<uint32_t>(input.size()) - *n + j;
    room[j] = limit - (nonzero && *n <= input.size() && input[d] > 0 ? input[d] - 1 : 0);
    const auto near = [&](uint64_t v) { return v + in.below(5, "offset step") - 2; };  // wraps as uint64
    uint64_t offset = 0;
    switch (in.below(5, "offset kind")) {
      case 0: offset = in.below(1000, "offset"); break;
      case 1: offset = near(room[j]); break;
      case 2: offset = near(room[j] - (limit - std::numeric_limits<uint32_t>::max())); break;  // around 2^32
      case 3: offset = uint64_t{1} << in.below(64, "offset bit"); break;
      default: offset = in.u64("offset"); break;
    }
    c.offsets.values.push_back(offset);
  }
  break_columns(in, c, kOffsetsExtension, c.offsets, room);
}

// ODML_EXTENSION_FILL_ROWS: a fill value a column, the bits of one coordinate: small, around
// 2^32 (2^32 - 2 to 2^32 + 1), -1, a power of two, any. UINT32 coordinates hold 32 bits, so for
// them -1, the powers and the any are 32-bit ones, and only the values just past 2^32 - 1 (and the
// break kValuePastType) are past the type; 64-bit coordinates take every pattern.
void choose_fill(Choices& in, Case& c) {
  const std::optional<uint32_t> n = ask_for_columns(in, c, kFillExtension);
  if (!n) return;
  const bool narrow = coordinates_type(c) == DML_TENSOR_DATA_TYPE_UINT32;
  for (uint32_t j = 0; j < *n; ++j) {
    uint64_t fill = 0;
    switch (in.below(5, "fill kind")) {
      case 0: fill = in.below(1000, "fill"); break;
      case 1: fill = uint64_t{std::numeric_limits<uint32_t>::max()} - 1 + in.below(4, "fill step"); break;
      case 2: fill = narrow ? std::numeric_limits<uint32_t>::max() : std::numeric_limits<uint64_t>::max(); break;
      case 3: fill = uint64_t{1} << in.below(narrow ? 32 : 64, "fill bit"); break;
      default: fill = narrow ? in.u32("fill bits") : in.u64("fill bits"); break;
    }
    c.fill.values.push_back(fill);
  }
  // Fill values take any bits of the coordinates' width; INT64's -1 is 2^64 - 1 (contract section 7).
  const uint64_t room = narrow ? std::numeric_limits<uint32_t>::max() : std::numeric_limits<uint64_t>::max();
  break_columns(in, c, kFillExtension, c.fill, std::vector<uint64_t>(*n, room));
}

// The entry point (Case::Entry); with offsets, or options broken, always with options.
void choose_entry(Choices& in, Case& c) {
  c.entry = static_cast<Case::Entry>(in.below(3, "entry"));
  if (c.offsets.given() || c.fill.given()) c.entry = Case::Entry::kWithOptions;
  if (c.entry == Case::Entry::kNullOptions && c.extensions != ODML_EXTENSION_NONE) c.entry = Case::Entry::kCreateEx;
}

odml_status create(const Case& c, const OpDesc& desc, odml_operator* op) {
  const odml_device device = cpu().get();
  switch (c.entry) {
    case Case::Entry::kCreateEx:
      return c.extensions == ODML_EXTENSION_NONE
                 ? odml_operator_create(device, &desc.get(), c.level, op)
                 : odml_operator_create_ex(device, &desc.get(), c.level, c.extensions, op);
    case Case::Entry::kNullOptions: return odml_operator_create_with_options(device, &desc.get(), c.level, nullptr, op);
    default: {
      const odml_operator_options options{c.extensions, c.offsets.count, c.offsets.data(), c.fill.count, c.fill.data()};
      return odml_operator_create_with_options(device, &desc.get(), c.level, &options, op);
    }
  }
}

// Rules broken in the raw structs, after the descriptor is built. kHugeTotal keeps the descriptor
// valid but no region can be that large, so binding the tensor must fail.
enum RawBreak {
  kNoRawBreak,
  kSmallTotal,
  kHugeTotal,
  kBadDataType,
  kBadDimensionCount,
  kBadTensorType,
  kNullBuffer,
  kNullTensor,
  kBadOperatorType,
  kNullOperatorDesc,
  kBadAxis,
  kZeroCount,
  kRawBreaks
};

struct RawResult {
  size_t huge_total_tensor = SIZE_MAX;
  uint64_t huge_total = 0;
};

RawResult break_raw(Choices& in, Case& c, OpDesc& desc) {
  RawResult r;
  const auto kind = static_cast<RawBreak>(in.one_in(3, "raw break?") ? 1 + in.below(kRawBreaks - 1, "raw break") : 0);
  const size_t i = in.below(c.tensors.size(), "raw break tensor");
  DML_BUFFER_TENSOR_DESC& b = desc.buffer(i);
  const std::string name = c.tensor_name(i);
  const bool concat = c.type != DML_OPERATOR_NONZERO_COORDINATES;
  switch (kind) {
    case kNoRawBreak:
    case kRawBreaks: break;
    case kSmallTotal: {
      const uint64_t required = DMLCalcBufferTensorSize(b.DataType, b.DimensionCount, b.Sizes, b.Strides);
      if (required == 0) break;
      b.TotalTensorSizeInBytes = required - 1 - in.below(required);
      c.must_fail(kCreate, name + ": TotalTensorSizeInBytes below the required size");
      break;
    }
    case kHugeTotal: {
      b.TotalTensorSizeInBytes = in.below(4) ? ~uint64_t{0} - in.below(1u << 20) : uint64_t{1} << (40 + in.below(24));
      r.huge_total_tensor = i;
      r.huge_total = b.TotalTensorSizeInBytes;
      // With 64-bit indices a tensor may need more than 2^40 bytes (a stride of 2^32 - 1).
      if (b.TotalTensorSizeInBytes < DMLCalcBufferTensorSize(b.DataType, b.DimensionCount, b.Sizes, b.Strides))
        c.must_fail(kCreate, name + ": a huge TotalTensorSizeInBytes still below the required size");
      // An OWNED_BY_DML input's copy needs that much persistent region: compile may refuse it.
      if (c.is_input(i) && (c.tensors[i].flags & DML_TENSOR_FLAG_OWNED_BY_DML))
        c.may_fail(kCreate, name + ": an OWNED_BY_DML input's TotalTensorSizeInBytes near 2^64");
      break;
    }
    case kBadDataType: {
      const int64_t values[] = {0, 14, 15, 255, -1, static_cast<int64_t>(in.u32())};
      const int64_t v = values[in.below(std::size(values))];
      if (v >= 1 && v <= 13) break;
      store_raw(b.DataType, v);
      c.must_fail(kCreate, name + ": DataType " + std::to_string(v));
      break;
    }
    case kBadDimensionCount:
      b.DimensionCount = in.below(2) ? 0 : 9 + in.below(1u << 31);
      c.must_fail(kCreate, name + ": DimensionCount " + std::to_string(b.DimensionCount));
      break;
    case kBadTensorType: {
      const int64_t v = in.below(2) ? 0 : 2 + in.below(1u << 31);
      store_raw(desc.tensor(i).Type, v);
      c.must_fail(kCreate, name + ": DML_TENSOR_DESC.Type " + std::to_string(v));
      break;
    }
    case kNullBuffer:
      desc.tensor(i).Desc = nullptr;
      c.must_fail(kCreate, name + ": DML_TENSOR_DESC.Desc is null");
      break;
    case kNullTensor:
      if (c.type == DML_OPERATOR_JOIN) {
        (in.below(2) ? desc.join_desc().InputTensors : desc.join_desc().OutputTensor) = nullptr;
      } else if (c.type == DML_OPERATOR_SPLIT) {
        (in.below(2) ? desc.split_desc().InputTensor : desc.split_desc().OutputTensors) = nullptr;
      } else {
        auto& d = desc.nonzero_desc();
        (in.below(3) == 0 ? d.InputTensor : in.below(2) ? d.OutputCountTensor : d.OutputCoordinatesTensor) = nullptr;
      }
      c.must_fail(kCreate, "a tensor pointer is null");
      break;
    case kBadOperatorType: {
      const int64_t v = in.u32();
      if (v == DML_OPERATOR_JOIN || v == DML_OPERATOR_SPLIT || v == DML_OPERATOR_NONZERO_COORDINATES) break;
      store_raw(desc.op().Type, v);
      c.must_fail(kCreate, "operator type " + std::to_string(v));
      break;
    }
    case kNullOperatorDesc:
      desc.op().Desc = nullptr;
      c.must_fail(kCreate, "DML_OPERATOR_DESC.Desc is null");
      break;
    case kBadAxis: {
      if (!concat) break;
      const uint32_t axis = c.tensors[0].rank() + in.below(1u << 31);
      (c.type == DML_OPERATOR_JOIN ? desc.join_desc().Axis : desc.split_desc().Axis) = axis;
      c.must_fail(kCreate, "Axis " + std::to_string(axis));
      break;
    }
    case kZeroCount:
      if (!concat) break;
      (c.type == DML_OPERATOR_JOIN ? desc.join_desc().InputCount : desc.split_desc().OutputCount) = 0;
      c.must_fail(kCreate, "a piece count of 0");
      break;
  }
  return r;
}

OpDesc build(const Case& c) {
  switch (c.type) {
    case DML_OPERATOR_JOIN: return OpDesc::join({c.tensors.begin(), c.tensors.end() - 1}, c.tensors.back(), c.axis);
    case DML_OPERATOR_SPLIT: return OpDesc::split(c.tensors[0], {c.tensors.begin() + 1, c.tensors.end()}, c.axis);
    default: return OpDesc::nonzero(c.tensors[0], c.tensors[1], c.tensors[2]);
  }
}

// --- Regions and bindings ------------------------------------------------------------------------

enum class Kind { kInput, kOutput, kTemporary, kPersistent, kSpare };

// One allocation between guard zones. An input's region must always hold `payload`; a spare one
// (bound where nothing is asked for) must stay poisoned.
struct Region {
  std::unique_ptr<GuardedBuffer> buffer;
  Kind kind;
  std::string name;
  Bytes payload;
};

struct Slot {
  int region = -1;  // -1: not bound
  uint64_t size = 0;
};

// Rules broken in the bindings.
enum BindBreak {
  kNoBindBreak,
  kRegionTooSmall,
  kMisaligned,
  kUnbound,
  kBoundWhenNot,
  kSharedInputs,
  kOutputOverlaps,
  kTemporary,
  kPersistent,
  kCounts,
  kNullBindings,
  kNoInitialize,
  kBindBreaks
};

struct Run {
  Run(Case& c_, const OpDesc& desc_, Choices& in_, uint64_t seed) : c(c_), desc(desc_), in(in_), rng(seed) {}

  Case& c;
  const OpDesc& desc;
  Choices& in;
  Rng rng;
  odml_binding_properties properties{};
  std::vector<Region> regions;
  std::vector<Slot> slots;  // per tensor, field order
  Slot temporary, persistent;
  Bytes persistent_snapshot;
  std::vector<Bytes> owned_at_initialize;  // per tensor: the bytes an OWNED_BY_DML input had then
  double density = 0.5;

  [[noreturn]] void fail(const std::string& what) const {
    std::fprintf(stderr, "\nc_abi_fuzzer: %s\n  case: %s, feature level 0x%x, %s%s\n", what.c_str(),
                 desc.to_string().c_str(), static_cast<unsigned>(c.level), c.options_string().c_str(), c.notes.c_str());
    std::abort();
  }
  void expect(const ::testing::AssertionResult& r) const {
    if (!r) fail(r.message());
  }

  int add_region(uint64_t size, uint32_t alignment, Kind kind, std::string name) {
    regions.push_back({std::make_unique<GuardedBuffer>(cpu(), size, alignment), kind, std::move(name), {}});
    return static_cast<int>(regions.size() - 1);
  }
  odml_buffer_binding binding(const Slot& s) const {
    if (s.region < 0) return {nullptr, 0};
    return {regions[s.region].buffer->data(), s.size};
  }

  // Random bytes; a NONZERO input gets zeros at the chosen density through its strides.
  void fill(Region& r, size_t tensor) {
    r.payload = random_bytes(rng, r.buffer->size());
    if (c.type == DML_OPERATOR_NONZERO_COORDINATES) {
      const TensorSpec& t = c.tensors[tensor];
      const uint32_t eb = element_bytes(t.type);
      const Shape strides = t.element_strides();
      std::uniform_real_distribution<double> u;
      for_each_coordinate(t.sizes, [&](const Shape& coordinate) {
        uint8_t v[8];
        random_element(rng, t.type, u(rng) < density, v);
        const uint64_t at = element_offset(coordinate, strides) * eb;
        if (at + eb <= r.payload.size()) std::copy(v, v + eb, r.payload.begin() + at);  // a region too small
      });
    }
    r.buffer->upload(r.payload);
  }

  Step step_of(size_t tensor) const {
    return c.is_input(tensor) && c.tensors[tensor].flags & DML_TENSOR_FLAG_OWNED_BY_DML ? kInitialize : kExecute;
  }

  // The regions of every tensor and of the temporary and persistent regions, with one rule of
  // binding perhaps broken.
  BindBreak plan(size_t huge_total_tensor) {
    const auto kind =
        static_cast<BindBreak>(in.one_in(3, "bind break?") ? 1 + in.below(kBindBreaks - 1, "bind break") : 0);
    const size_t target = in.below(c.tensors.size(), "bind break tensor");
    slots.resize(c.tensors.size());
    for (size_t i = 0; i < c.tensors.size(); ++i) {
      const TensorSpec& t = c.tensors[i];
      const uint64_t total = t.total_bytes();  // the descriptor's, but for kHugeTotal
      uint64_t size = total + (in.one_in(4) ? in.below(64) : 0);
      uint32_t alignment = t.alignment ? t.alignment : 16;
      const std::string name = c.tensor_name(i);
      if (i == huge_total_tensor) c.must_fail(step_of(i), name + ": TotalTensorSizeInBytes near 2^64");
      if (i == target && kind == kRegionTooSmall) {
        size = total - 1 - in.below(total);
        c.must_fail(step_of(i), name + ": region of " + std::to_string(size) + " bytes");
      }
      if (total > kMaxRegion) {  // a valid descriptor with 64-bit indices, but more than can be bound here
        c.must_fail(step_of(i), name + ": a region smaller than its " + std::to_string(total) + " bytes");
        size = std::min<uint64_t>(size, 256);
      }
      if (i == target && kind == kMisaligned && alignment >= 2) {
        alignment /= 2;
        c.must_fail(step_of(i), name + ": region aligned to " + std::to_string(alignment));
      }
      if (i == target && kind == kUnbound) {
        c.must_fail(step_of(i), name + ": not bound");
        continue;
      }
      if (i == target && kind == kSharedInputs && c.is_input(i) && i > 0) {  // inputs may share a region
        const size_t j = in.below(i);
        const Slot& other = slots[j];
        if (other.region >= 0 && c.is_input(j)) {
          const GuardedBuffer& b = *regions[other.region].buffer;
          if (b.size() >= size && reinterpret_cast<uintptr_t>(b.data()) % alignment == 0) {
            slots[i] = {other.region, size};
            c.notes += " [" + name + " shares a region]";
            continue;
          }
        }
      }
      if (i == target && kind == kOutputOverlaps && !c.is_input(i)) {
        // Into a region bound at execute: an input not OWNED_BY_DML or another output.
        const size_t j = in.below(i);
        if (j != i && slots[j].region >= 0 && step_of(j) == kExecute) {
          const GuardedBuffer& b = *regions[slots[j].region].buffer;
          if (b.size() >= size && reinterpret_cast<uintptr_t>(b.data()) % alignment == 0 && size > 0) {
            slots[i] = {slots[j].region, size};
            c.must_fail(kExecute, name + ": overlaps tensor " + std::to_string(j));
            continue;
          }
        }
      }
      const Kind k = c.is_input(i) ? Kind::kInput : Kind::kOutput;
      slots[i] = {add_region(size, alignment, k, name), size};
      if (k == Kind::kInput) fill(regions[slots[i].region], i);
    }

    temporary = plan_region(kind == kTemporary, properties.temporary_size_in_bytes, "temporary", Kind::kTemporary);
    persistent = plan_region(kind == kPersistent, properties.persistent_size_in_bytes, "persistent", Kind::kPersistent);
    if (persistent.region >= 0) persistent_snapshot = regions[persistent.region].buffer->download();
    return kind;
  }

  // The temporary or persistent region: `required` bytes at 256, or broken (null, too small,
  // misaligned), or, when none is required, perhaps a spare region that must stay untouched.
  Slot plan_region(bool broken, uint64_t required, const std::string& name, Kind kind) {
    const Step step = kind == Kind::kTemporary ? kExecute : kInitialize;
    if (required == 0) {
      if (!broken) return {};
      return {add_region(256, 256, Kind::kSpare, "spare " + name + " region"), 256};
    }
    if (required > kMaxRegion) {  // only for an OWNED_BY_DML input's huge TotalTensorSizeInBytes
      c.must_fail(step, name + " region smaller than its " + std::to_string(required) + " bytes");
      return {add_region(256, 256, kind, name + " region"), 256};
    }
    uint64_t size = required + (in.one_in(4) ? in.below(512) : 0);
    uint32_t alignment = 256;
    if (broken) {
      switch (in.below(3)) {
        case 0: c.must_fail(step, name + " region not bound"); return {};
        case 1:
          size = required - 1 - in.below(required);
          c.must_fail(step, name + " region of " + std::to_string(size) + " bytes");
          break;
        default:
          alignment = 128;
          c.must_fail(step, name + " region aligned to 128");
          break;
      }
    }
    return {add_region(size, alignment, kind, name + " region"), size};
  }

  // --- Checks after each call ---

  // Inputs hold what they held; guard zones are intact everywhere; what a failed call (or a
  // call that does not use it) was given is still poisoned.
  void check_regions(Step step, bool ok) const {
    for (const Region& r : regions) {
      expect(r.buffer->guards_intact(r.name));
      switch (r.kind) {
        case Kind::kInput:
          if (r.buffer->download() != r.payload) fail(r.name + ": an input was written by " + kStepNames[step]);
          break;
        case Kind::kSpare: expect(r.buffer->untouched(r.name)); break;
        case Kind::kOutput:
        case Kind::kTemporary:
          if (step == kInitialize || !ok) expect(r.buffer->untouched(r.name + " after " + kStepNames[step]));
          break;
        case Kind::kPersistent:
          if (step == kInitialize && !ok) expect(r.buffer->untouched(r.name + " after a failed initialize"));
          if (step == kExecute && r.buffer->download() != persistent_snapshot)
            fail(r.name + ": execute wrote the persistent region");
          break;
      }
    }
  }

  // The step's verdict against its status; true to go on. A descriptor's fault may be reported at
  // create or at compile (contract section 4), so create's success is judged only at compile.
  bool judge(Step step, odml_status status, bool compile_follows = false) const {
    const std::string message = odml_last_error_message();
    const std::string said = std::string(kStepNames[step]) + " returned " + odml_status_name(status) + " (" +
                             (message.empty() ? "no message" : message) + ")";
    if (status == ODML_STATUS_SUCCESS) {
      if (!message.empty()) fail(said + ": a message after success");
      if (c.verdict[step] == Verdict::kFail && !compile_follows) fail(said + " but must fail");
      return true;
    }
    if (c.verdict[step] == Verdict::kSucceed) fail(said + " but must succeed");
    if (status != ODML_STATUS_INVALID_ARGUMENT && status != ODML_STATUS_UNSUPPORTED) fail(said + ": wrong status");
    if (message.empty()) fail(said + " without a message");
    return false;
  }

  // A successful execute's outputs against the oracle.
  void check_outputs() const {
    std::vector<TensorSpec> in_specs;
    std::vector<Bytes> in_bytes;
    std::vector<std::pair<const TensorSpec*, Bytes>> outs;
    for (size_t i = 0; i < c.tensors.size(); ++i) {
      if (c.is_input(i)) {
        in_specs.push_back(c.tensors[i]);
        in_bytes.push_back(step_of(i) == kInitialize ? owned_at_initialize[i] : regions[slots[i].region].payload);
      } else {
        outs.emplace_back(&c.tensors[i], regions[slots[i].region].buffer->download());
      }
    }
    switch (c.type) {
      case DML_OPERATOR_JOIN:
        expect(elements_equal(*outs[0].first, outs[0].second, join_oracle(in_specs, in_bytes, c.axis), "OutputTensor"));
        break;
      case DML_OPERATOR_SPLIT: {
        std::vector<TensorSpec> out_specs;
        for (const auto& o : outs) out_specs.push_back(*o.first);
        const std::vector<Bytes> expected = split_oracle(in_specs[0], in_bytes[0], out_specs, c.axis);
        for (size_t k = 0; k < outs.size(); ++k)
          expect(elements_equal(out_specs[k], outs[k].second, expected[k], "OutputTensors[" + std::to_string(k) + "]"));
        break;
      }
      default: {
        const NonzeroResult expected = nonzero_oracle(in_specs[0], in_bytes[0], c.n, c.applied_offsets());
        expect(nonzero_equal(read_nonzero(*outs[0].first, outs[0].second, *outs[1].first, outs[1].second), expected));
        // ODML_EXTENSION_FILL_ROWS: every row from the count on holds the fill, offsets not added.
        if (c.fills_rows()) expect(rows_filled(*outs[1].first, outs[1].second, expected.count, c.fill.values));
        break;
      }
    }
  }
};

using OperatorHandle = std::unique_ptr<odml_operator_s, decltype(&odml_operator_destroy)>;
using CompiledHandle = std::unique_ptr<odml_compiled_operator_s, decltype(&odml_compiled_operator_destroy)>;

// The bindings of one call, with the counts perhaps broken.
struct Bindings {
  std::vector<odml_buffer_binding> inputs, outputs;
  odml_bindings b{};
  const odml_bindings* pointer = &b;
};

// Runs the case the choices describe; `summary` gets its descriptor and what it breaks.
void run_case(Choices& in, std::string* summary = nullptr) {
  Case c;
  const DML_OPERATOR_TYPE types[] = {DML_OPERATOR_JOIN, DML_OPERATOR_SPLIT, DML_OPERATOR_NONZERO_COORDINATES};
  c.type = types[in.below(3, "op")];
  // None in 5 of 8 cases, 64-bit indices in 2, an unknown bit in 1.
  const uint32_t extensions = in.below(8, "extensions");
  if (extensions >= 5) c.extensions = ODML_EXTENSION_64BIT_INDICES;
  if (extensions == 7) {
    // A bit past ODML_EXTENSIONS_ALL (whose bits are the low ones).
    c.extensions |= (ODML_EXTENSIONS_ALL + 1u) << in.below(std::countl_zero(uint32_t{ODML_EXTENSIONS_ALL}));
    c.must_fail(kCreate, "unknown extension bits");
  }
  if (c.type == DML_OPERATOR_NONZERO_COORDINATES) {
    make_nonzero(in, c);
  } else {
    make_concat(in, c);
  }
  choose_level(in, c);
  break_spec(in, c);
  choose_offsets(in, c);
  choose_fill(in, c);
  choose_entry(in, c);
  OpDesc desc = build(c);
  const RawResult raw = break_raw(in, c, desc);
  Run run(c, desc, in, in.u64("data seed"));
  run.density = std::vector<double>{0.5, 0.0, 1.0, 0.03, 0.97}[in.below(5, "density")];
  // One case in 4 compiles with cpu.copy's non-temporal stores at every size (contract section 5's
  // OPENDML_CPU_STREAM_BYTES): ordinary tensors reach them only from 64 MiB, too large to fuzz.
  const bool stream = in.one_in(4, "non-temporal");
  if (stream) c.notes += " [non-temporal stores]";
  const ScopedEnv stream_bytes("OPENDML_CPU_STREAM_BYTES", stream ? "0" : nullptr);
  if (summary)
    *summary = desc.to_string() + ", feature level " + std::to_string(c.level) + ", " + c.options_string() +
               ", entry " + std::to_string(static_cast<int>(c.entry)) + c.notes;

  odml_operator op_raw = nullptr;
  odml_status status = create(c, desc, &op_raw);
  OperatorHandle op(op_raw, odml_operator_destroy);
  if (!run.judge(kCreate, status, true)) {
    if (op) run.fail("a failed create returned a handle");
    return;
  }
  odml_compiled_operator compiled_raw = nullptr;
  status = odml_operator_compile(op.get(), &compiled_raw);
  CompiledHandle compiled(compiled_raw, odml_compiled_operator_destroy);
  if (!run.judge(kCreate, status)) {
    if (compiled) run.fail("a failed compile returned a handle");
    return;
  }
  if (in.one_in(2)) op.reset();  // the compiled operator does not need it (contract section 5)

  if (odml_compiled_operator_get_binding_properties(compiled.get(), &run.properties) != ODML_STATUS_SUCCESS)
    run.fail(std::string("get_binding_properties failed: ") + odml_last_error_message());
  const auto ins = c.inputs(), outs = c.outputs();
  if (run.properties.input_count != ins.size() || run.properties.output_count != outs.size())
    run.fail("binding properties count " + std::to_string(run.properties.input_count) + " inputs and " +
             std::to_string(run.properties.output_count) + " outputs");
  // The persistent region holds each OWNED_BY_DML input whole (TotalTensorSizeInBytes): it has
  // room for the largest, and only a huge one (near 2^64, or past 2^32 elements with 64-bit
  // indices) makes it huge.
  uint64_t largest_owned = 0;
  for (size_t i : ins)
    if (c.tensors[i].flags & DML_TENSOR_FLAG_OWNED_BY_DML)
      largest_owned = std::max(largest_owned, i == raw.huge_total_tensor ? raw.huge_total : c.tensors[i].total_bytes());
  if (run.properties.persistent_size_in_bytes < largest_owned)
    run.fail("a persistent region of " + std::to_string(run.properties.persistent_size_in_bytes) +
             " bytes for an OWNED_BY_DML input of " + std::to_string(largest_owned));
  if (run.properties.temporary_size_in_bytes > kMaxRegion ||
      (run.properties.persistent_size_in_bytes > kMaxRegion && largest_owned <= kMaxRegion))
    run.fail("compile asks for " + std::to_string(run.properties.temporary_size_in_bytes) + " temporary and " +
             std::to_string(run.properties.persistent_size_in_bytes) + " persistent bytes");

  const BindBreak broken = run.plan(raw.huge_total_tensor);
  const Step broken_step = in.below(2) ? kInitialize : kExecute;  // where kCounts and kNullBindings strike
  bool any_owned = false;
  for (size_t i : ins) any_owned |= run.step_of(i) == kInitialize;
  // kBoundWhenNot: an input bound at the step that must not bind it.
  size_t extra = SIZE_MAX;
  if (broken == kBoundWhenNot) {
    extra = ins[in.below(ins.size())];
    if (run.slots[extra].region < 0) extra = SIZE_MAX;
  }
  const auto bind_input = [&](size_t i, Step step) {
    if (run.step_of(i) == step) return run.binding(run.slots[i]);
    if (i != extra) return odml_buffer_binding{};
    c.must_fail(step, c.tensor_name(i) + " bound at " + kStepNames[step]);
    return run.binding(run.slots[i]);
  };

  // Initialize binds the OWNED_BY_DML inputs (input_count 0 is allowed when there are none) and the
  // persistent region. Each array has room for one entry past its count, for the broken counts.
  Bindings init;
  for (size_t i : ins) init.inputs.push_back(bind_input(i, kInitialize));
  init.inputs.push_back({});
  init.outputs.assign(outs.size() + 1, {});
  const bool init_lists_inputs = any_owned || extra != SIZE_MAX || in.below(2);
  init.b = {init.inputs.data(),         init_lists_inputs ? static_cast<uint32_t>(ins.size()) : 0, nullptr, 0, {},
            run.binding(run.persistent)};
  if (broken == kCounts && broken_step == kInitialize) {
    switch (in.below(3)) {
      case 0: init.b.input_count = any_owned ? 0 : static_cast<uint32_t>(ins.size()) + 1; break;
      case 1:
        init.b.outputs = init.outputs.data();
        init.b.output_count = 1;
        break;
      default:
        init.b.input_count = static_cast<uint32_t>(ins.size());
        init.b.inputs = nullptr;
        break;
    }
    c.must_fail(kInitialize, "initialize's counts");
  }
  if (broken == kNullBindings && broken_step == kInitialize) {
    init.pointer = nullptr;
    c.must_fail(kInitialize, "null bindings");
  }

  if (broken == kNoInitialize) {
    c.must_fail(kExecute, "execute before initialize");
  } else {
    status = odml_compiled_operator_initialize(compiled.get(), init.pointer, nullptr);
    const bool ok = run.judge(kInitialize, status);
    run.check_regions(kInitialize, ok);
    if (!ok) return;
    if (run.persistent.region >= 0) run.persistent_snapshot = run.regions[run.persistent.region].buffer->download();
    // OWNED_BY_DML inputs were copied at initialize: execute must read the copies, so the
    // originals change (all snapshots first, as inputs may share a region).
    run.owned_at_initialize.resize(c.tensors.size());
    for (size_t i : ins)
      if (run.step_of(i) == kInitialize) run.owned_at_initialize[i] = run.regions[run.slots[i].region].payload;
    for (size_t i : ins)
      if (run.step_of(i) == kInitialize) {
        Region& r = run.regions[run.slots[i].region];
        r.payload = random_bytes(run.rng, r.buffer->size());
        r.buffer->upload(r.payload);
      }
  }

  // Execute, once or twice, with fresh inputs and poisoned outputs each time.
  const int executions = 1 + in.below(2, "executions");
  for (int e = 0; e < executions; ++e) {
    Bindings exec;
    for (size_t i : ins) exec.inputs.push_back(bind_input(i, kExecute));
    for (size_t o : outs) exec.outputs.push_back(run.binding(run.slots[o]));
    exec.inputs.push_back({});
    exec.outputs.push_back({});
    exec.b = {exec.inputs.data(),         static_cast<uint32_t>(ins.size()),
              exec.outputs.data(),        static_cast<uint32_t>(outs.size()),
              run.binding(run.temporary), run.binding(run.persistent)};
    if (broken == kCounts && broken_step == kExecute) {
      switch (in.below(4)) {
        case 0: ++exec.b.input_count; break;
        case 1: ++exec.b.output_count; break;
        case 2: exec.b.inputs = nullptr; break;
        default: exec.b.outputs = nullptr; break;
      }
      c.must_fail(kExecute, "execute's counts");
    }
    if (broken == kNullBindings && broken_step == kExecute) {
      exec.pointer = nullptr;
      c.must_fail(kExecute, "null bindings");
    }
    for (Region& r : run.regions)
      if (r.kind == Kind::kOutput || r.kind == Kind::kTemporary) r.buffer->poison();
    if (e > 0)
      for (size_t i : ins)
        if (run.step_of(i) == kExecute && run.slots[i].region >= 0) run.fill(run.regions[run.slots[i].region], i);

    status = odml_compiled_operator_execute(compiled.get(), exec.pointer, nullptr);
    const bool ok = run.judge(kExecute, status);
    run.check_regions(kExecute, ok);
    if (!ok) return;
    run.check_outputs();
  }
}

}  // namespace

#ifndef OPENDML_C_ABI_SEED_WRITER

// With C_ABI_FUZZER_VERBOSE set, each input's case is printed first.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool verbose = std::getenv("C_ABI_FUZZER_VERBOSE") != nullptr;
  Choices in(data, size);
  std::string summary;
  run_case(in, verbose ? &summary : nullptr);
  if (verbose) std::fprintf(stderr, "c_abi_fuzzer: ran %s\n", summary.c_str());
  return 0;
}

#else

// c_abi_seed_writer: the seed corpus, fuzz/corpus/c_abi_fuzzer/seed-*, written from the tests'
// cases (tests/device_*_test.cpp, the contract's examples) as answers to the fuzzer's named choices;
// a choice a seed does not name is answered 0, the plain valid one. Each seed runs once as it is
// written, and once more decoded from its bytes, which must give the same case.
//
//   c_abi_seed_writer write DIR   writes the seeds into DIR
//   c_abi_seed_writer check DIR   fails unless DIR holds exactly these seeds (a ctest test)

#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>

namespace {

constexpr uint64_t kYes = ~uint64_t{0};  // answers a one_in choice with yes

struct Seed {
  std::string name;
  std::vector<std::pair<std::string, uint64_t>> answers;  // in the order the choices are made
};

// The indices of kAllTypes.
uint64_t type_index(DML_TENSOR_DATA_TYPE type) {
  return std::find(kAllTypes.begin(), kAllTypes.end(), type) - kAllTypes.begin();
}

std::vector<Seed> seeds() {
  using A = std::vector<std::pair<std::string, uint64_t>>;
  const uint64_t f32 = type_index(DML_TENSOR_DATA_TYPE_FLOAT32);
  // clang-format off
  std::vector<Seed> s = {
      // Contract section 3.1: {1,1,2,3} + {1,1,2,4} along axis 3, and three {1,1,2,2} along 1, 2, 3.
      {"join-example", {{"op", 0}, {"rank", 3}, {"axis", 3}, {"pieces", 1}, {"length", 2}, {"length", 3}, {"size", 0},
                        {"size", 0}, {"size", 1}}},
      {"join-three-axis1", {{"op", 0}, {"rank", 3}, {"axis", 1}, {"pieces", 2}, {"size", 0}, {"size", 0}, {"size", 1},
                            {"size", 1}}},
      {"join-three-axis2", {{"op", 0}, {"rank", 3}, {"axis", 2}, {"pieces", 2}, {"length", 1}, {"length", 1},
                            {"length", 1}, {"size", 0}, {"size", 0}, {"size", 0}, {"size", 1}}},
      {"join-three-axis3", {{"op", 0}, {"rank", 3}, {"axis", 3}, {"pieces", 2}, {"length", 1}, {"length", 1},
                            {"length", 1}, {"size", 0}, {"size", 0}, {"size", 1}}},
      // Contract section 3.2: {1,1,6,2} into {1,1,2,2}, {1,1,1,2}, {1,1,3,2}; into two {1,1,6,1}.
      {"split-example-axis2", {{"op", 1}, {"rank", 3}, {"axis", 2}, {"pieces", 2}, {"length", 1}, {"length", 0},
                               {"length", 2}, {"size", 0}, {"size", 0}, {"size", 0}, {"size", 1}}},
      {"split-example-axis3", {{"op", 1}, {"rank", 3}, {"axis", 3}, {"pieces", 1}, {"size", 0}, {"size", 0},
                               {"size", 5}}},
      // Contract section 3.3: {1,1,2,4} with N 3 into {1,1,8,3}.
      {"nonzero-example", {{"op", 2}, {"rank", 3}, {"size", 0}, {"size", 0}, {"size", 1}, {"size", 3}, {"n", 1},
                           {"count rank", 3}, {"coordinates rank", 2}}},
      // DeviceJoin.ThousandSmallInputs and DeviceSplit.ThousandSmallOutputs, at the fuzzer's 300.
      {"join-300-inputs", {{"op", 0}, {"type", type_index(DML_TENSOR_DATA_TYPE_INT16)}, {"rank", 1}, {"axis", 1},
                           {"wide", kYes}, {"pieces", 295}, {"size", 1}}},
      {"split-300-outputs", {{"op", 1}, {"type", type_index(DML_TENSOR_DATA_TYPE_UINT16)}, {"rank", 1},
                             {"wide", kYes}, {"pieces", 295}, {"size", 0}, {"size", 1}}},
      // *.LargeEnoughForEveryThread: over 1 MiB, where the CPU backend splits the work.
      {"join-large", {{"op", 0}, {"type", type_index(DML_TENSOR_DATA_TYPE_FLOAT64)}, {"rank", 2}, {"axis", 2},
                      {"large", kYes}, {"pieces", 1}, {"length", 3}, {"length", 3}, {"size", 511}, {"size", 63}}},
      {"split-large", {{"op", 1}, {"type", type_index(DML_TENSOR_DATA_TYPE_FLOAT64)}, {"rank", 2}, {"axis", 0},
                       {"large", kYes}, {"pieces", 1}, {"length", 3}, {"length", 3}, {"size", 0}, {"size", 511},
                       {"size", 63}}},
      {"nonzero-large", {{"op", 2}, {"rank", 1}, {"large", kYes}, {"size", 511}, {"size", 511}, {"density", 3}}},
      // DeviceJoin.AndSplitWithNonTemporalStoresAtEverySize: the large ones, and slices of 16 bytes (UINT32
      // {6, 4}) joined row by row, with non-temporal stores.
      {"join-large-non-temporal", {{"op", 0}, {"type", type_index(DML_TENSOR_DATA_TYPE_FLOAT64)}, {"rank", 2},
                                   {"axis", 2}, {"large", kYes}, {"pieces", 1}, {"length", 3}, {"length", 3},
                                   {"size", 511}, {"size", 63}, {"non-temporal", kYes}}},
      {"split-large-non-temporal", {{"op", 1}, {"type", type_index(DML_TENSOR_DATA_TYPE_FLOAT64)}, {"rank", 2},
                                    {"axis", 0}, {"large", kYes}, {"pieces", 1}, {"length", 3}, {"length", 3},
                                    {"size", 0}, {"size", 511}, {"size", 63}, {"non-temporal", kYes}}},
      {"join-slices-non-temporal", {{"op", 0}, {"type", type_index(DML_TENSOR_DATA_TYPE_UINT32)}, {"rank", 1},
                                    {"axis", 1}, {"pieces", 1}, {"length", 3}, {"length", 3}, {"size", 5},
                                    {"non-temporal", kYes}}},
      // Contract section 7, the 64-bit index extension: 64-bit NONZERO outputs, an extent past 2^32.
      {"nonzero-64bit-count", {{"op", 2}, {"extensions", 5}, {"rank", 1}, {"size", 2}, {"size", 3},
                               {"count type", 4}}},
      {"nonzero-64bit-both", {{"op", 2}, {"extensions", 5}, {"rank", 2}, {"size", 2}, {"size", 3}, {"size", 1},
                              {"count type", 5}, {"coordinates type", 4}}},
      {"nonzero-64bit-unasked", {{"op", 2}, {"rank", 1}, {"size", 2}, {"size", 3}, {"coordinates type", 5}}},
      {"join-64bit-extent", {{"op", 0}, {"extensions", 5}, {"rank", 1}, {"axis", 1}, {"pieces", 1}, {"length", 1},
                             {"length", 2}, {"size", 2}, {"strides", 4}}},
      // Regressions: what fuzz/regressions/c_abi_fuzzer/ found, in the current decoder's terms.
      {"regression-persistent-size-wraps", {{"op", 0}, {"rank", 1}, {"axis", 1}, {"pieces", 1}, {"length", 1},
                                            {"length", 2}, {"size", 2}, {"owned", kYes}, {"raw break?", kYes},
                                            {"raw break", kHugeTotal - 1}, {"raw break tensor", 0}}},
      // NONZERO's {36, 2} UINT64 coordinates with a stride of 2^32 - 1 need 1.2e12 bytes: a "huge"
      // TotalTensorSizeInBytes of 2^40 is still too small.
      {"regression-huge-total-below-64bit-extent", {{"op", 2}, {"extensions", 5}, {"rank", 1}, {"size", 5},
                                                     {"size", 5}, {"coordinates type", 5}, {"strides", 0},
                                                     {"strides", 0}, {"strides", 4}, {"raw break?", kYes},
                                                     {"raw break", kHugeTotal - 1}, {"raw break tensor", 2}}},
      {"join-unknown-extension", {{"op", 0}, {"extensions", 7}, {"rank", 1}, {"axis", 1}, {"size", 2}}},
  };
  // clang-format on
  // Contract section 7, the extensions of column values: NONZERO of {3, 4} asking for one of them.
  const auto nonzero_with = [](const ColumnExtension& e, A extra) {
    A a = {{"op", 2}, {"rank", 1}, {"size", 2}, {"size", 3}, {std::string(e.name) + "?", kYes}};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  const auto with_offsets = [&](A extra) { return nonzero_with(kOffsetsExtension, std::move(extra)); };
  const auto with_fill = [&](A extra) { return nonzero_with(kFillExtension, std::move(extra)); };
  // Coordinate offsets {100, 3}, then each offset kind, at, around and past each coordinates type's
  // limit (step 2 is the limit itself).
  const A int64 = {{"extensions", 5}, {"coordinates type", 4}}, uint64 = {{"extensions", 5}, {"coordinates type", 5}};
  const auto both = [](const char* what, uint64_t v) { return A{{what, v}, {what, v}}; };
  const auto kind = [&](uint64_t k, uint64_t step, A extra = {}) {
    A a = both("offset kind", k);
    for (const auto& answer : both("offset step", step)) a.push_back(answer);
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  s.push_back({"nonzero-offsets", with_offsets({{"offset", 100}, {"offset", 3}})});
  s.push_back({"nonzero-offsets-uint32-limit", with_offsets(kind(1, 2))});
  s.push_back({"nonzero-offsets-uint32-past-limit", with_offsets(kind(1, 3))});
  s.push_back({"nonzero-offsets-int64-past-2e32", with_offsets(kind(2, 4, int64))});
  s.push_back({"nonzero-offsets-int64-limit", with_offsets(kind(1, 2, int64))});
  s.push_back({"nonzero-offsets-int64-past-limit", with_offsets(kind(1, 4, int64))});
  s.push_back({"nonzero-offsets-uint64-limit", with_offsets(kind(1, 2, uint64))});
  s.push_back({"nonzero-offsets-uint64-wraps", with_offsets(kind(1, 4, uint64))});
  s.push_back({"nonzero-offsets-uint32-sum-wraps", with_offsets(A{{"offset kind", 4}, {"offset", kYes}})});
  s.push_back({"nonzero-offsets-bit-63", with_offsets(A{{"offset kind", 3}, {"offset bit", 63}})});
  A rank_8 = {{"op", 2}, {"rank", 7}};  // {2,2,2,2,2,2,2,3} with offsets 1 to 8, fill values 9 to 2
  for (uint64_t d = 0; d < 8; ++d) rank_8.push_back({"size", d < 7 ? 1 : 2});
  A offsets_rank_8 = rank_8, fill_rank_8 = rank_8;
  offsets_rank_8.push_back({"offsets?", kYes});
  fill_rank_8.push_back({"fill?", kYes});
  for (uint64_t j = 1; j <= 8; ++j) {
    offsets_rank_8.push_back({"offset", j});
    fill_rank_8.push_back({"fill", 10 - j});
  }
  s.push_back({"nonzero-offsets-rank-8", offsets_rank_8});
  // *.LargeEnoughForEveryThread with UINT64 coordinates past 2^32.
  const A large = {{"op", 2},     {"extensions", 5},       {"rank", 1},       {"large", kYes}, {"size", 511},
                   {"size", 511}, {"coordinates type", 5}, {"offsets?", kYes}};
  s.push_back({"nonzero-offsets-large", kind(2, 4, large)});
  // Fill values {7, 2^32 - 1} (DeviceExtension.NonzeroFillRows), then each fill kind around each
  // coordinates type's limit (step 1 is 2^32 - 1, step 2 is 2^32), on every row (density 0), on
  // none (density 1), on padded coordinates, beside offsets, at rank 8 and large.
  const auto fill_kinds = [&](uint64_t k, A extra, const A& type = {}) {
    A a = both("fill kind", k);
    a.insert(a.end(), extra.begin(), extra.end());
    a.insert(a.end(), type.begin(), type.end());
    return with_fill(a);
  };
  const A two_steps = {{"fill step", 1}, {"fill step", 2}};
  s.push_back({"nonzero-fill", with_fill({{"fill kind", 0}, {"fill", 7}, {"fill kind", 1}, {"fill step", 1}})});
  s.push_back({"nonzero-fill-uint32-max", fill_kinds(1, both("fill step", 1))});
  s.push_back({"nonzero-fill-uint32-past-max", fill_kinds(1, two_steps)});
  s.push_back({"nonzero-fill-int64-around-2e32", fill_kinds(1, two_steps, int64)});
  s.push_back({"nonzero-fill-uint64-around-2e32", fill_kinds(1, two_steps, uint64)});
  s.push_back({"nonzero-fill-uint32-minus-1", fill_kinds(2, {})});
  s.push_back({"nonzero-fill-int64-minus-1", fill_kinds(2, {}, int64)});
  s.push_back({"nonzero-fill-uint32-bit-31", fill_kinds(3, both("fill bit", 31))});
  s.push_back({"nonzero-fill-uint64-bit-63", fill_kinds(3, both("fill bit", 63), uint64)});
  s.push_back({"nonzero-fill-int64-any",
               fill_kinds(4, {{"fill bits", 0x0123456789ABCDEF}, {"fill bits", 0xFEDCBA9876543210}}, int64)});
  s.push_back({"nonzero-fill-every-row", with_fill({{"fill", 5}, {"fill", 6}, {"density", 1}})});
  s.push_back({"nonzero-fill-no-row", with_fill({{"fill", 5}, {"fill", 6}, {"density", 2}})});
  s.push_back(
      {"nonzero-fill-padded-coordinates",
       with_fill({{"fill", 5}, {"fill", 6}, {"strides", 0}, {"strides", 0}, {"strides", 1}, {"layout seed", 7}})});
  s.push_back({"nonzero-fill-offsets",
               with_offsets({{"offset", 100}, {"offset", 3}, {"fill?", kYes}, {"fill", 5}, {"fill", 6}})});
  s.push_back({"nonzero-fill-rank-8", fill_rank_8});
  // Large, UINT64 coordinates, 3% non-zero: fill {2^32 + 1, 2^32 + 1} on most rows.
  A fill_large = large;
  fill_large.back() = {"fill?", kYes};
  for (const auto& answer : both("fill kind", 1)) fill_large.push_back(answer);
  for (const auto& answer : both("fill step", 3)) fill_large.push_back(answer);
  fill_large.push_back({"density", 3});
  s.push_back({"nonzero-fill-large", fill_large});
  // Each rule of the values broken, and JOIN and SPLIT asking for them: for each extension.
  for (const ColumnExtension& e : {kOffsetsExtension, kFillExtension}) {
    const std::string name = e.name;
    for (uint64_t k = 0; k + 1 < kColumnsBreaks; ++k)
      s.push_back({"nonzero-" + name + "-break-" + std::to_string(k + 1),
                   nonzero_with(e, {{name + " break?", kYes}, {name + " break", k}})});
    s.push_back({"nonzero-" + name + "-array-without-bit", nonzero_with(e, {{name + " break?", kYes},
                                                                            {name + " break", kValuesWithoutBit - 1},
                                                                            {name + " without bit", 1}})});
    s.push_back({"join-" + name, {{"op", 0}, {"rank", 1}, {"axis", 1}, {"size", 2}, {name + "?", kYes}}});
    s.push_back({"split-" + name, {{"op", 1}, {"rank", 1}, {"size", 2}, {name + "?", kYes}, {name + " columns", 1}}});
  }
  // odml_operator_create_ex (odml_operator_create without extensions), and null options.
  for (uint64_t entry = 1; entry < 3; ++entry)
    s.push_back({"nonzero-entry-" + std::to_string(entry), {{"op", 2}, {"rank", 1}, {"size", 2}, {"entry", entry}}});
  s.push_back({"nonzero-64bit-entry-1",
               {{"op", 2}, {"extensions", 5}, {"rank", 1}, {"size", 2}, {"count type", 4}, {"entry", 1}}});
  // Every data type, every rank, every layout, each option, each feature level: for each operator.
  for (uint64_t op = 0; op < 3; ++op) {
    const std::string name = op == 0 ? "join" : op == 1 ? "split" : "nonzero";
    const A two_d = op < 2 ? A{{"rank", 1}, {"axis", 1}, {"pieces", 1}, {"length", 1}, {"length", 2}, {"size", 2}}
                           : A{{"rank", 1}, {"size", 2}, {"size", 3}};
    const auto with = [&](A extra, bool front = false) {
      A a = {{"op", op}};
      if (front) a.insert(a.end(), extra.begin(), extra.end());
      a.insert(a.end(), two_d.begin(), two_d.end());
      if (!front) a.insert(a.end(), extra.begin(), extra.end());
      return a;
    };
    for (DML_TENSOR_DATA_TYPE type : kAllTypes) {
      A a = {{"op", op}, {"type", type_index(type)}};
      a.insert(a.end(), two_d.begin(), two_d.end());
      s.push_back({name + "-type-" + type_name(type), a});
    }
    for (uint64_t rank = 0; rank < 8; ++rank) {
      A a = {{"op", op}, {"rank", rank}};
      if (op < 2 && rank > 0) a.push_back({"axis", rank / 2});
      if (op < 2) a.push_back({"pieces", 1});
      for (uint64_t d = 0; d <= rank; ++d) a.push_back({"size", 1});
      s.push_back({name + "-rank-" + std::to_string(rank + 1), a});
    }
    // Each tensor's strides kind in turn (null, random_strides twice, small, past 2^32).
    for (uint64_t kind = 1; kind < 5; ++kind) {
      A a = with({});
      for (int t = 0; t < 3; ++t) {
        a.push_back({"strides", kind});
        if (kind == 1 || kind == 2) a.push_back({"layout seed", kind * 10 + t});
      }
      // Two dimensions a tensor, but NONZERO's count has one.
      if (kind == 3)
        for (uint64_t v : {3u, 1u, 6u, 1u, 5u, 2u}) a.push_back({"stride", v});
      if (kind == 3 && op == 2) a.pop_back();
      s.push_back({name + "-strides-" + std::to_string(kind), a});
    }
    s.push_back({name + "-owned", with({{"owned", kYes}})});
    s.push_back({name + "-alignment", with({{"has alignment", kYes}, {"alignment", 3}})});
    s.push_back({name + "-extra-bytes", with({{"has extra bytes", kYes}, {"extra bytes", 37}})});
    for (uint64_t level = 0; level < std::size(kLevels); ++level)
      s.push_back({name + "-level-" + std::to_string(level),
                   {{"op", op},
                    {"rank", 3},
                    {"size", 1},
                    {"size", 1},
                    {"size", 1},
                    {"size", 1},
                    {"level kind", 2},
                    {"level", level}}});
    for (uint64_t k = 0; k + 1 < kSpecBreaks; ++k)
      s.push_back({name + "-spec-break-" + std::to_string(k + 1), with({{"spec break?", kYes}, {"spec break", k}})});
    for (uint64_t k = 0; k + 1 < kRawBreaks; ++k)
      s.push_back({name + "-raw-break-" + std::to_string(k + 1), with({{"raw break?", kYes}, {"raw break", k}})});
    for (uint64_t k = 0; k + 1 < kBindBreaks; ++k)
      for (uint64_t t = 0; t < (op == 0 ? 3u : 3u); ++t)
        s.push_back({name + "-bind-break-" + std::to_string(k + 1) + "-tensor-" + std::to_string(t),
                     with({{"owned", kYes}, {"bind break?", kYes}, {"bind break", k}, {"bind break tensor", t}})});
  }
  return s;
}

// Runs the seed, answering its choices; returns the input that decodes to the same case, and
// describes the case in `summary`.
std::vector<uint8_t> write(const Seed& seed, std::string& summary) {
  std::map<std::string, std::vector<uint64_t>> answers;
  for (const auto& [what, value] : seed.answers) answers[what].push_back(value);
  std::map<std::string, size_t> used;
  const auto fail = [&](const std::string& why) {
    std::cerr << "c_abi_seed_writer: seed " << seed.name << ": " << why << "\n";
    std::exit(1);
  };
  Choices in([&](const std::string& what, uint64_t n) -> uint64_t {
    auto it = answers.find(what);
    if (it == answers.end() || used[what] == it->second.size()) return 0;
    const uint64_t v = it->second[used[what]++];
    if (v == kYes) return n - 1;
    if (n != 0 && v >= n)
      fail("the answer " + std::to_string(v) + " to '" + what + "' is not below " + std::to_string(n));
    return v;
  });
  std::string as_written, as_read;
  run_case(in, &as_written);
  for (const auto& [what, values] : answers)
    if (used[what] != values.size()) fail("'" + what + "' was asked fewer times than the seed answers it");
  const std::vector<uint8_t> bytes = in.recorded();
  Choices decoded(bytes.data(), bytes.size());
  run_case(decoded, &as_read);
  if (as_read != as_written) fail("its bytes decode to " + as_read + " instead of " + as_written);
  summary = as_written;
  return bytes;
}

}  // namespace

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  const std::string mode = argc == 3 ? argv[1] : "";
  if (mode != "write" && mode != "check") {
    std::cerr << "usage: c_abi_seed_writer write|check DIR\n";
    return 2;
  }
  const fs::path dir = argv[2];
  std::map<std::string, std::vector<uint8_t>> expected;
  for (const Seed& seed : seeds()) {
    std::string summary;
    expected["seed-" + seed.name] = write(seed, summary);
    if (mode == "write") std::cout << "seed-" << seed.name << ": " << summary << "\n";
  }
  if (mode == "write") {
    fs::create_directories(dir);
    for (const auto& [name, bytes] : expected)
      std::ofstream(dir / name, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    std::cout << "wrote " << expected.size() << " seeds to " << dir << "\n";
    return 0;
  }
  int stale = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename();
    if (name.rfind("seed-", 0) != 0) continue;
    std::ifstream file(entry.path(), std::ios::binary);
    const std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(file), {}};
    if (!expected.count(name) || expected[name] != bytes) {
      std::cerr << name << ": not what the seed writer writes now\n";
      ++stale;
    }
    expected.erase(name);
  }
  for (const auto& [name, bytes] : expected) {
    std::cerr << name << ": missing\n";
    ++stale;
  }
  if (stale) {
    std::cerr << "rewrite the seeds: c_abi_seed_writer write " << dir.string() << "\n";
    return 1;
  }
  std::cout << "the seeds in " << dir << " are current\n";
  return 0;
}

#endif
