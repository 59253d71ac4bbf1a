#include "runtime/openmp_team.h"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>

namespace af::runtime {
namespace {

// The OpenMP runtimes a host process may have loaded, by soname; the first one found is used.
constexpr const char* kRuntimes[] = {"libgomp.so.1", "libiomp5.so", "libomp.so"};

/// One openmp_parallel_for: what every team thread reads.
struct Job {
  const std::function<void(int64_t)>* fn;
  int64_t n;
  std::atomic<int64_t> next{0};
  std::mutex error_mu;
  std::exception_ptr error;
};

/// The body every team thread runs: indices until none are left (or one has thrown).
void run_items(void* data) {
  Job& job = *static_cast<Job*>(data);
  for (;;) {
    int64_t i = job.next.fetch_add(1, std::memory_order_relaxed);
    if (i >= job.n) return;
    try {
      (*job.fn)(i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(job.error_mu);
      if (!job.error) job.error = std::current_exception();
      job.next.store(job.n, std::memory_order_relaxed);
    }
  }
}

}  // namespace

GompParallel find_loaded_openmp() {
  for (const char* name : kRuntimes) {
    void* handle = dlopen(name, RTLD_LAZY | RTLD_NOLOAD);  // a handle only if already loaded
    if (handle == nullptr) continue;
    auto parallel = reinterpret_cast<GompParallel>(dlsym(handle, "GOMP_parallel"));
    dlclose(handle);  // drops the reference NOLOAD added; the library stays loaded
    if (parallel != nullptr) return parallel;
  }
  return nullptr;
}

void openmp_parallel_for(GompParallel parallel, int64_t n, int nthreads,
                         const std::function<void(int64_t)>& fn) {
  if (n <= 0) return;
  Job job;
  job.fn = &fn;
  job.n = n;
  parallel(&run_items, &job, static_cast<unsigned>(std::min<int64_t>(n, std::max(nthreads, 1))), 0);
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace af::runtime
