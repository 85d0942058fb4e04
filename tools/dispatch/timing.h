// The samples of a dispatch's timing loop (-i, -r, -t, -w) and DxDispatch's statistics of them, in
// bounded memory: DxDispatch keeps every sample, which -t gathers at millions a second.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace opendml::tool {

// One iteration's times in milliseconds: the host's, and on CUDA the GPU's (0 elsewhere).
struct Sample {
  double cpu = 0;
  double gpu = 0;
};

// DxDispatch's statistics of a run of samples; its median is the upper one of an even count.
struct Stats {
  uint64_t count = 0;
  double average = 0, min = 0, median = 0, max = 0;
};

// A run of samples. The count, average, min and max are exact. The median (and -v 2's listing) is
// of the kept samples: every one up to kMaxKept, and past that an evenly spaced subset, every
// stride()-th from the first, the stride doubling each time the kept ones fill the bound.
class SampleRun {
 public:
  static constexpr size_t kMaxKept = size_t{1} << 18;  // 4 MiB of samples a run

  void add(const Sample& sample);
  uint64_t count() const { return count_; }
  Stats stats(double Sample::*column) const;
  // Kept sample i is sample i * stride() of the run.
  std::span<const Sample> kept() const { return kept_; }
  uint64_t stride() const { return stride_; }

 private:
  uint64_t count_ = 0;
  Sample sum_, min_, max_;
  std::vector<Sample> kept_;
  uint64_t stride_ = 1;
};

// A dispatch's samples, split as DxDispatch splits them: the first `warmup` are cold, but the last
// one is always hot. A sample is placed when the next one comes, or at finish().
class Timings {
 public:
  explicit Timings(uint64_t warmup) : warmup_(warmup) {}
  void add(const Sample& sample);
  void finish();
  uint64_t count() const { return cold_.count() + hot_.count() + (pending_ ? 1 : 0); }
  const SampleRun& cold() const { return cold_; }
  const SampleRun& hot() const { return hot_; }

 private:
  uint64_t warmup_;
  std::optional<Sample> pending_;  // the latest sample, which is hot if it is the last
  SampleRun cold_, hot_;
};

}  // namespace opendml::tool
