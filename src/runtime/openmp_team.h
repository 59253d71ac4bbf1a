// The host process's OpenMP runtime (torch's), found at run time: kernel blocks run on its team,
// the threads ATen's own ops use, instead of on a second pool that competes with it for the cores.
#pragma once
#include <cstdint>
#include <functional>

namespace af::runtime {

/// `GOMP_parallel`, the entry point of `#pragma omp parallel` in GNU's runtime (Intel's and
/// LLVM's export it too): runs fn(data) on a team of `num_threads` threads, the caller included.
using GompParallel = void (*)(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags);

/// The GOMP_parallel of an OpenMP runtime already loaded in this process, or nullptr. Never
/// loads one: without torch (the C++ tests, autofuse-opt) kernels run on ThreadPool.
GompParallel find_loaded_openmp();

/// Runs fn(i) for every i in [0, n) on a team of min(n, nthreads) threads started by `parallel`,
/// handing out indices dynamically. The first exception fn throws stops the remaining indices
/// and is rethrown here.
void openmp_parallel_for(GompParallel parallel, int64_t n, int nthreads,
                         const std::function<void(int64_t)>& fn);

}  // namespace af::runtime
