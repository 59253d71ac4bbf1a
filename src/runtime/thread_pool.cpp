#include "runtime/thread_pool.h"

#include <pthread.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/index_queue.h"

namespace af::runtime {
namespace {

// Spin this many rounds before sleeping on a condition variable (about tens of microseconds).
constexpr int kWorkerSpin = 2000;
constexpr int kCallerSpin = 20000;
// A ticket packs (sequence << kHelperBits) | helpers so that a worker reads both at once.
constexpr int kHelperBits = 16;
constexpr uint64_t kHelperMask = (uint64_t{1} << kHelperBits) - 1;
// The join word packs (sequence << 32) | closed bit | number of helpers inside the job.
constexpr uint64_t kClosed = uint64_t{1} << 31;
constexpr uint64_t kActiveMask = kClosed - 1;
constexpr uint64_t kSeqMask = 0xffffffffULL;

std::atomic<uint64_t> g_fork_generation{0};
std::once_flag g_atfork_once;
thread_local bool t_in_parallel = false;  // inside a parallel_for (caller or worker)

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

inline void backoff(int round, int spin) {
  if (round < spin / 2)
    cpu_relax();
  else
    std::this_thread::yield();
}

}  // namespace

/// Everything the workers share. Heap-allocated so a forked child can abandon it.
struct ThreadPool::State {
  uint64_t generation = g_fork_generation.load();
  std::mutex call_mu;  // one parallel_for at a time
  std::mutex mu;       // guards the sleeps below
  std::condition_variable work_cv, done_cv;
  std::atomic<uint64_t> ticket{0};
  std::atomic<int> sleepers{0};
  std::atomic<bool> caller_sleeping{false};
  std::atomic<bool> stop{false};
  std::vector<std::thread> workers;

  // The current job; reset by the caller before it publishes the ticket and stable until the
  // caller has closed the job and no helper is inside it.
  IndexQueue items;
  // Helpers join a job only while it is open, so the caller never waits for a worker that has
  // not started (a descheduled worker cannot delay a launch; the caller does its share instead).
  alignas(64) std::atomic<uint64_t> join{0};

  /// Waits until the ticket differs from `seen`; returns the new ticket.
  uint64_t wait_ticket(uint64_t seen) {
    for (int r = 0; r < kWorkerSpin; ++r) {
      uint64_t t = ticket.load(std::memory_order_acquire);
      if (t != seen) return t;
      backoff(r, kWorkerSpin);
    }
    std::unique_lock<std::mutex> lock(mu);
    sleepers.fetch_add(1);
    uint64_t t;
    while ((t = ticket.load()) == seen) work_cv.wait(lock);
    sleepers.fetch_sub(1);
    return t;
  }

  /// The body of worker `index`.
  void worker_loop(int index, uint64_t seen) {
    t_in_parallel = true;
    for (;;) {
      seen = wait_ticket(seen);
      if (stop.load()) return;
      if (index >= static_cast<int>(seen & kHelperMask)) continue;  // not needed for this job
      if (!try_join((seen >> kHelperBits) & kSeqMask)) continue;    // job already over
      items.run();
      // Leaving: the last helper out of a closed job wakes the caller, who may then return.
      uint64_t left = join.fetch_sub(1) - 1;
      if ((left & kActiveMask) == 0 && (left & kClosed) && caller_sleeping.load()) {
        { std::lock_guard<std::mutex> lock(mu); }
        done_cv.notify_one();
      }
    }
  }

  /// Enters job `seq` if it is still open.
  bool try_join(uint64_t seq) {
    uint64_t j = join.load();
    for (;;) {
      if ((j >> 32) != seq || (j & kClosed)) return false;
      if (join.compare_exchange_weak(j, j + 1)) return true;
    }
  }

  /// Opens a new job, publishes its ticket and wakes sleeping workers.
  void publish(int job_helpers) {
    uint64_t seq = (ticket.load(std::memory_order_relaxed) >> kHelperBits) + 1;
    join.store((seq & kSeqMask) << 32);
    ticket.store((seq << kHelperBits) | static_cast<uint64_t>(job_helpers));
    if (sleepers.load() > 0) {
      { std::lock_guard<std::mutex> lock(mu); }
      work_cv.notify_all();
    }
  }

  /// Closes the current job to late helpers and waits until the ones inside have left.
  void close_and_wait() {
    if ((join.fetch_or(kClosed) & kActiveMask) == 0) return;
    for (int r = 0; r < kCallerSpin; ++r) {
      if ((join.load() & kActiveMask) == 0) return;
      backoff(r, kCallerSpin);
    }
    std::unique_lock<std::mutex> lock(mu);
    caller_sleeping.store(true);
    while ((join.load() & kActiveMask) != 0) done_cv.wait(lock);
    caller_sleeping.store(false);
  }

  /// Starts workers until there are `count`. Called with call_mu held.
  void ensure_workers(int count) {
    while (static_cast<int>(workers.size()) < count) {
      int index = static_cast<int>(workers.size());
      uint64_t seen = ticket.load();
      workers.emplace_back([this, index, seen] { worker_loop(index, seen); });
    }
  }

  /// Stops and joins every worker.
  void shutdown() {
    std::lock_guard<std::mutex> call(call_mu);
    stop.store(true);
    publish(0);
    { std::lock_guard<std::mutex> lock(mu); }
    work_cv.notify_all();
    for (auto& w : workers) w.join();
    workers.clear();
  }
};

uint64_t fork_generation() {
  std::call_once(g_atfork_once,
                 [] { pthread_atfork(nullptr, nullptr, [] { g_fork_generation.fetch_add(1); }); });
  return g_fork_generation.load(std::memory_order_relaxed);
}

ThreadPool::ThreadPool() : state_(nullptr) {
  fork_generation();  // registers the fork handler before any state exists
  state_.store(new State());
}

ThreadPool::~ThreadPool() {
  State* s = state_.load();
  if (s->generation != g_fork_generation.load()) return;  // forked child: its workers are gone
  s->shutdown();
  delete s;
}

ThreadPool& ThreadPool::global() {
  static ThreadPool* pool = new ThreadPool();  // never destroyed: workers run until exit
  return *pool;
}

ThreadPool::State& ThreadPool::state() {
  State* s = state_.load(std::memory_order_acquire);
  uint64_t gen = g_fork_generation.load(std::memory_order_relaxed);
  if (s->generation == gen) return *s;
  // In a forked child: abandon (leak) the parent's state, whose workers do not exist here.
  State* fresh = new State();
  if (state_.compare_exchange_strong(s, fresh)) return *fresh;
  delete fresh;
  return *s;
}

int ThreadPool::num_workers() const {
  State* s = state_.load();
  if (s->generation != g_fork_generation.load()) return 0;
  std::lock_guard<std::mutex> lock(s->call_mu);
  return static_cast<int>(s->workers.size());
}

void ThreadPool::parallel_for(int64_t n, int nthreads, const std::function<void(int64_t)>& fn) {
  if (n <= 0) return;
  if (n == 1 || nthreads <= 1 || t_in_parallel) {
    for (int64_t i = 0; i < n; ++i) fn(i);
    return;
  }
  State& s = state();
  std::lock_guard<std::mutex> call(s.call_mu);
  int participants = static_cast<int>(std::min<int64_t>({n, nthreads, kMaxThreads}));
  int helpers = participants - 1;
  s.ensure_workers(helpers);
  s.items.reset(&fn, n);
  s.publish(helpers);
  t_in_parallel = true;
  s.items.run();
  t_in_parallel = false;
  s.close_and_wait();
  s.items.rethrow();
}

}  // namespace af::runtime
