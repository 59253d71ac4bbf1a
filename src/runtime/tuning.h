// Measured tuning (opt-in, CompilerConfig(tune=True) / AUTOFUSE_TUNE=1): for the shapes a kernel
// actually runs at, time candidate tilings once and keep the fastest in a persistent table, so
// later calls and later processes launch it without measuring. A candidate is a target the
// tiling function sees (cores, tile buffer budget): it changes how the work is split, never the
// values computed (blocks split rows and tiles; each row's reduction order is fixed).
#pragma once
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "runtime/include/autofuse_abi.h"
#include "target/target.h"

namespace af::runtime {

/// The target overrides a tuned kernel launches with.
struct TuneChoice {
  int64_t cores = 0;     // threads the tiling function may use
  int64_t ub_bytes = 0;  // tile buffer budget
  int64_t ns = 0;        // its measured median time (0: the only distinct tiling, not timed)
};

/// The table of tuned choices, keyed by kernel key | target | threads | shape bucket, backed
/// by a text file (one `KEY CORES UB_BYTES NS` line each; "" = memory only). Thread-safe.
class TuningTable {
 public:
  explicit TuningTable(std::string path);
  /// The choice stored for `key`, if any.
  std::optional<TuneChoice> find(const std::string& key) const;
  /// Stores `c` for `key` and appends it to the file (a failed write is ignored: tuning is an
  /// optimisation; the table in memory keeps it).
  void put(const std::string& key, const TuneChoice& c);
  /// find() without counting a hit (a query, not a launch).
  std::optional<TuneChoice> peek(const std::string& key) const;
  /// Counts a launch that used a stored choice found through a KernelTuningCache (a plain
  /// load and store, no locked add on the launch path: concurrent launches may undercount).
  void note_hit() const {
    hits_.store(hits_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  const std::string& path() const { return path_; }
  int64_t measured() const { return measured_; }  // put() calls
  int64_t hits() const { return hits_; }          // launches that found a stored choice

 private:
  std::string path_;
  mutable std::mutex mu_;
  std::map<std::string, TuneChoice> table_;
  int64_t measured_ = 0;
  mutable std::atomic<int64_t> hits_{0};
};

/// The shape bucket of one size symbol value: its bit length (7 and 5 share a bucket, 7 and 9
/// do not).
inline int bucket_of(int64_t value) {
  return value <= 0 ? 0 : 64 - __builtin_clzll(static_cast<uint64_t>(value));
}

/// The choices one kernel has launched with, by thread count and shape bucket: the launch fast
/// path in front of a TuningTable (no key string, no map, no lock on a hit: entries are written
/// once, then published by the count). Holds kCapacity buckets of kernels with at most
/// kMaxSymbols size symbols; the table answers anything else.
class KernelTuningCache {
 public:
  static constexpr int kCapacity = 32;
  static constexpr size_t kMaxSymbols = 8;
  std::optional<TuneChoice> find(int nthreads, const int64_t* symbols, size_t n) const;
  void put(int nthreads, const int64_t* symbols, size_t n, const TuneChoice& c);

 private:
  /// The buckets of a launch's symbols, packed one byte each (unused bytes 0): one compare.
  static uint64_t pack_buckets(const int64_t* symbols, size_t n);

  struct Entry {
    int nthreads = 0;
    uint64_t buckets = 0;  // pack_buckets
    TuneChoice choice;
  };
  std::mutex mu_;  // serialises put()
  std::atomic<int> count_{0};
  Entry entries_[kCapacity];
};

/// The table key of one launch: the kernel's key (a hash of its source), the target's ISA, the
/// thread count and the bucket_of each symbol value.
std::string tuning_key(const std::string& kernel_key, const target::Target& t, int nthreads,
                       const int64_t* symbols, size_t num_symbols);

/// Times the kernel under each candidate target (threads 1..nthreads x tile budgets of 1/8,
/// 1/4, 1/2, 1 and 2 x t.ub_bytes) whose TilingData differs from every earlier one's (the
/// untuned choice first), in `reps` interleaved rounds (a sample of a kernel shorter
/// than ~20 us times a batch of launches) and returns the fastest by median, or the untuned
/// choice (all threads, t.ub_bytes) unless the fastest takes under 90% of its time. The kernel
/// runs on `args` about (reps x batch + 1) x candidates times: it must not read its outputs
/// (generated kernels do not).
TuneChoice measure_tilings(af_tiling_fn tiling, af_kernel_fn kernel, void* const* args,
                           const int64_t* symbols, int nthreads, const target::Target& t,
                           int reps = 7);

/// launch() with the tiling function seeing `c`'s cores and tile budget.
void launch_tuned(af_tiling_fn tiling, af_kernel_fn kernel, void* const* args,
                  const int64_t* symbols, const TuneChoice& c, const target::Target& t);

}  // namespace af::runtime
