#include "runtime/openmp_team.h"

#include <dlfcn.h>

#include <algorithm>

#include "runtime/index_queue.h"

namespace af::runtime {
namespace {

// The OpenMP runtimes a host process may have loaded, by soname; the first one found is used.
constexpr const char* kRuntimes[] = {"libgomp.so.1", "libiomp5.so", "libomp.so"};

/// The body every team thread runs.
void run_items(void* queue) {
  static_cast<IndexQueue*>(queue)->run();
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
  IndexQueue items;
  items.reset(&fn, n);
  parallel(&run_items, &items, static_cast<unsigned>(std::min<int64_t>(n, std::max(nthreads, 1))),
           0);
  items.rethrow();
}

}  // namespace af::runtime
