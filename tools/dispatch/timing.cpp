#include "timing.h"

#include <algorithm>

namespace opendml::tool {

void SampleRun::add(const Sample& sample) {
  for (double Sample::*column : {&Sample::cpu, &Sample::gpu}) {
    sum_.*column += sample.*column;
    min_.*column = count_ == 0 ? sample.*column : std::min(min_.*column, sample.*column);
    max_.*column = count_ == 0 ? sample.*column : std::max(max_.*column, sample.*column);
  }
  if (count_ % stride_ == 0) {
    if (kept_.size() == kMaxKept) {
      // Full: keep every other one (samples 0, 2 * stride, ...), so that the kept ones stay evenly
      // spaced over the whole run, then take this one if it falls on the doubled stride.
      for (size_t i = 0; 2 * i < kept_.size(); ++i) kept_[i] = kept_[2 * i];
      kept_.resize(kMaxKept / 2);
      stride_ *= 2;
    }
    if (count_ % stride_ == 0) kept_.push_back(sample);
  }
  ++count_;
}

Stats SampleRun::stats(double Sample::*column) const {
  if (count_ == 0) return {};
  std::vector<double> values(kept_.size());
  std::transform(kept_.begin(), kept_.end(), values.begin(), [&](const Sample& s) { return s.*column; });
  const auto median = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);  // the upper middle one
  std::nth_element(values.begin(), median, values.end());
  return {count_, sum_.*column / static_cast<double>(count_), min_.*column, *median, max_.*column};
}

void Timings::add(const Sample& sample) {
  // The pending sample is not the last, so it is cold while fewer than `warmup` came before it.
  if (pending_) (cold_.count() < warmup_ ? cold_ : hot_).add(*pending_);
  pending_ = sample;
}

void Timings::finish() {
  if (pending_) hot_.add(*pending_);
  pending_.reset();
}

}  // namespace opendml::tool
