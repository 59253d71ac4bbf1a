// ThreadPool: persistent workers that run the blocks of a kernel launch (the Ascend launch model
// on the CPU) where the process has no OpenMP runtime loaded; under torch, launches run on
// torch's own OpenMP team instead (openmp_team.h): a second pool would compete with it.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>

namespace af::runtime {

/// How many times this process has forked since the runtime first asked (0 in the original
/// process): state created under another generation belongs to a parent whose threads are gone.
uint64_t fork_generation();

/// A pool of persistent worker threads, created lazily as calls ask for them. One call runs at a
/// time (concurrent callers queue); a parallel_for issued from inside a running one runs inline.
/// After fork() the child starts with a fresh, empty pool.
class ThreadPool {
 public:
  ThreadPool();
  /// Stops and joins the workers.
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  /// The process-wide pool (never destroyed).
  static ThreadPool& global();

  /// Runs fn(i) for every i in [0, n), on up to `nthreads` threads including the calling thread,
  /// and returns when all are done. n == 1 or nthreads <= 1 runs inline with no synchronisation.
  /// Indices are handed out dynamically, so which thread runs which index is unspecified. An
  /// exception thrown by fn stops the remaining indices and is rethrown here.
  void parallel_for(int64_t n, int nthreads, const std::function<void(int64_t)>& fn);

  /// Worker threads started so far (the caller thread is not counted).
  int num_workers() const;

  /// Most threads (caller included) one call uses.
  static constexpr int kMaxThreads = 512;

 private:
  struct State;
  /// The live state, replaced (and the old one leaked) in a forked child.
  State& state();

  std::atomic<State*> state_;
};

}  // namespace af::runtime
