// IndexQueue: the indices of one parallel_for, handed out one at a time to whichever thread
// asks next (ThreadPool's workers or an OpenMP team); the first exception ends the handing out.
#pragma once
#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>

namespace af::runtime {

/// fn(i) for i in [0, n), claimed dynamically by the threads that call run().
struct IndexQueue {
  const std::function<void(int64_t)>* fn = nullptr;
  int64_t n = 0;
  alignas(64) std::atomic<int64_t> next{0};
  std::mutex error_mu;
  std::exception_ptr error;

  /// Starts a new job of n indices (no thread may be inside run()).
  void reset(const std::function<void(int64_t)>* job, int64_t count) {
    fn = job;
    n = count;
    next.store(0, std::memory_order_relaxed);
    error = nullptr;
  }

  /// Runs indices until none are left; records the first exception and skips the rest.
  void run() {
    for (;;) {
      int64_t i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= n) return;
      try {
        (*fn)(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mu);
        if (!error) error = std::current_exception();
        next.store(n, std::memory_order_relaxed);
      }
    }
  }

  /// Rethrows the exception run() recorded, if any (after every thread has left run()).
  void rethrow() const {
    if (error) std::rethrow_exception(error);
  }
};

}  // namespace af::runtime
