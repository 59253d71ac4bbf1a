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
  std::lock_guard<std::mutex> lock(mu_);
  auto it = table_.find(key);
  if (it == table_.end()) return std::nullopt;
  ++hits_;
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

std::string tuning_key(const std::string& kernel_key, const schedule::Target& t, int nthreads,
                       const int64_t* symbols, size_t num_symbols) {
  std::string key = kernel_key + "|" + t.isa + "|t" + std::to_string(nthreads) + "|";
  for (size_t i = 0; i < num_symbols; ++i) {
    int bits = 0;
    for (uint64_t v = static_cast<uint64_t>(std::max<int64_t>(symbols[i], 0)); v; v >>= 1) ++bits;
    key += (i ? "." : "") + std::to_string(bits);
  }
  return key;
}

void launch_tuned(af_tiling_fn tiling, af_kernel_fn kernel, void* const* args,
                  const int64_t* symbols, const TuneChoice& c, const schedule::Target& t) {
  schedule::Target tt = t;
  tt.ub_bytes = c.ub_bytes;
  launch(tiling, kernel, args, symbols, static_cast<int>(c.cores), tt);
}

TuneChoice measure_tilings(af_tiling_fn tiling, af_kernel_fn kernel, void* const* args,
                           const int64_t* symbols, int nthreads, const schedule::Target& t,
                           int reps) {
  using clock = std::chrono::steady_clock;
  TuneChoice best;
  TuneChoice model;  // what the tiling model picks untuned: all threads, the target's budget
  for (int64_t cores = 1; cores <= std::max(nthreads, 1); ++cores) {
    for (int64_t ub :
         {t.ub_bytes / 8, t.ub_bytes / 4, t.ub_bytes / 2, t.ub_bytes, 2 * t.ub_bytes}) {
      TuneChoice c{cores, std::max<int64_t>(ub, 4096), 0};
      launch_tuned(tiling, kernel, args, symbols, c, t);  // warm-up
      std::vector<int64_t> ns;
      for (int r = 0; r < reps; ++r) {
        auto start = clock::now();
        launch_tuned(tiling, kernel, args, symbols, c, t);
        ns.push_back(
            std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - start).count());
      }
      std::nth_element(ns.begin(), ns.begin() + ns.size() / 2, ns.end());
      c.ns = ns[ns.size() / 2];
      if (best.ns == 0 || c.ns < best.ns) best = c;
      if (cores == std::max(nthreads, 1) && ub == t.ub_bytes) model = c;
    }
  }
  // Keep the model's choice unless a candidate is clearly faster (noise must not make a
  // tuned launch slower than an untuned one).
  if (model.ns > 0 && best.ns * 100 > model.ns * kTuneMargin) return model;
  return best;
}

}  // namespace af::runtime
