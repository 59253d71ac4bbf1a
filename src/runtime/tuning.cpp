// Measured tuning: the persistent table and the timing of candidate tilings (tuning.h).
#include "runtime/tuning.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>

#include "runtime/launch.h"

namespace af::runtime {
namespace {
/// A measured candidate replaces the model's choice only when it takes under this % of its time.
constexpr int64_t kTuneMargin = 90;
/// A timing sample of a short kernel batches launches up to about this many nanoseconds.
constexpr int64_t kSampleNs = 20000;
}  // namespace

TuningTable::TuningTable(std::string path) : path_(std::move(path)) {
  if (path_.empty()) return;
  std::ifstream in(path_);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ss(line);
    std::string key;
    TuneChoice c;
    if (ss >> key >> c.cores >> c.ub_bytes >> c.ns && c.cores > 0 && c.ub_bytes > 0)
      table_[key] = c;  // a later line wins; malformed lines are skipped
  }
}

std::optional<TuneChoice> TuningTable::find(const std::string& key) const {
  std::optional<TuneChoice> c = peek(key);
  if (c) note_hit();
  return c;
}

std::optional<TuneChoice> TuningTable::peek(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = table_.find(key);
  if (it == table_.end()) return std::nullopt;
  return it->second;
}

void TuningTable::put(const std::string& key, const TuneChoice& c) {
  std::lock_guard<std::mutex> lock(mu_);
  table_[key] = c;
  ++measured_;
  if (path_.empty()) return;
  std::ofstream out(path_, std::ios::app);
  out << key << " " << c.cores << " " << c.ub_bytes << " " << c.ns << "\n";
}

std::string tuning_key(const std::string& kernel_key, const target::Target& t, int nthreads,
                       const int64_t* symbols, size_t num_symbols) {
  std::string key = kernel_key + "|" + std::string(target::isa_name(t.isa)) + "|t" +
                    std::to_string(nthreads) + "|";
  for (size_t i = 0; i < num_symbols; ++i)
    key += (i ? "." : "") + std::to_string(bucket_of(symbols[i]));
  return key;
}

uint64_t KernelTuningCache::pack_buckets(const int64_t* symbols, size_t n) {
  uint64_t packed = 0;
  for (size_t i = 0; i < n; ++i) packed |= static_cast<uint64_t>(bucket_of(symbols[i])) << (8 * i);
  return packed;
}

std::optional<TuneChoice> KernelTuningCache::find(int nthreads, const int64_t* symbols,
                                                  size_t n) const {
  if (n > kMaxSymbols) return std::nullopt;
  const uint64_t buckets = pack_buckets(symbols, n);
  const int count = count_.load(std::memory_order_acquire);  // entries below are immutable
  for (int e = 0; e < count; ++e)
    if (entries_[e].buckets == buckets && entries_[e].nthreads == nthreads)
      return entries_[e].choice;
  return std::nullopt;
}

void KernelTuningCache::put(int nthreads, const int64_t* symbols, size_t n, const TuneChoice& c) {
  if (n > kMaxSymbols) return;
  std::lock_guard<std::mutex> lock(mu_);
  const int count = count_.load(std::memory_order_relaxed);
  if (count == kCapacity) return;  // more buckets than that: the table answers the rest
  Entry& entry = entries_[count];
  entry.nthreads = nthreads;
  entry.buckets = pack_buckets(symbols, n);
  entry.choice = c;
  count_.store(count + 1, std::memory_order_release);
}

void launch_tuned(af_tiling_fn tiling, af_kernel_fn kernel, void* const* args,
                  const int64_t* symbols, const TuneChoice& c, const target::Target& t) {
  launch(tiling, kernel, args, symbols, static_cast<int>(c.cores), t, c.ub_bytes);
}

TuneChoice measure_tilings(af_tiling_fn tiling, af_kernel_fn kernel, void* const* args,
                           const int64_t* symbols, int nthreads, const target::Target& t,
                           int reps) {
  using clock = std::chrono::steady_clock;
  // The candidates with distinct TilingData: equal TilingData run the same blocks, and timing
  // copies would only let noise pick a copy of the model's tiling. cands[0] is the model's
  // choice (all threads, the target's budget).
  std::vector<TuneChoice> cands;
  std::vector<std::array<unsigned char, AF_MAX_TILING_DATA_BYTES>> seen;
  auto consider = [&](int64_t cores, int64_t ub) {
    TuneChoice c{cores, std::max<int64_t>(ub, 4096), 0};
    auto data = tiling_data(tiling, symbols, static_cast<int>(c.cores), t, c.ub_bytes);
    if (std::find(seen.begin(), seen.end(), data) != seen.end()) return;
    seen.push_back(data);
    cands.push_back(c);
  };
  const int64_t threads = std::max(nthreads, 1);
  consider(threads, t.ub_bytes);
  for (int64_t cores = 1; cores <= threads; ++cores)
    for (int64_t ub : {t.ub_bytes / 8, t.ub_bytes / 4, t.ub_bytes / 2, t.ub_bytes, 2 * t.ub_bytes})
      consider(cores, ub);
  const size_t model = 0;
  if (cands.size() == 1) return cands[model];
  auto time_ns = [&](const TuneChoice& c, int64_t launches) {
    auto start = clock::now();
    for (int64_t i = 0; i < launches; ++i) launch_tuned(tiling, kernel, args, symbols, c, t);
    return std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - start).count();
  };
  // Warm-up; a sample of a short kernel is a batch of launches of about kSampleNs.
  for (const TuneChoice& c : cands) time_ns(c, 1);
  const int64_t one = std::max<int64_t>(time_ns(cands[model], 1), 1);
  const int64_t batch = std::clamp<int64_t>(kSampleNs / one, 1, 64);
  // Rounds interleave the candidates, so a burst of load from elsewhere hits all of them alike
  // instead of whichever was running; each keeps the median of its samples.
  std::vector<std::vector<int64_t>> samples(cands.size());
  for (int r = 0; r < reps; ++r)
    for (size_t i = 0; i < cands.size(); ++i)
      samples[i].push_back(time_ns(cands[i], batch) / batch);
  size_t best = model;
  for (size_t i = 0; i < cands.size(); ++i) {
    std::nth_element(samples[i].begin(), samples[i].begin() + reps / 2, samples[i].end());
    cands[i].ns = samples[i][reps / 2];
    if (cands[i].ns < cands[best].ns) best = i;
  }
  // Keep the model's choice unless a candidate is clearly faster (noise must not make a
  // tuned launch slower than an untuned one).
  if (cands[best].ns * 100 > cands[model].ns * kTuneMargin) return cands[model];
  return cands[best];
}

}  // namespace af::runtime
