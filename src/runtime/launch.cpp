#include "runtime/launch.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>

#include "runtime/openmp_team.h"
#include "runtime/thread_pool.h"
#include "support/error.h"

namespace af::runtime {
namespace {

/// What every block needs; the parallel_for closure captures only a pointer to it, so the
/// std::function stays in its small buffer (no allocation per launch).
struct BlockJob {
  af_kernel_fn kernel;
  void* const* args;
  const void* tiling_data;
};

/// Runs the tiling function into `tiling_data` (AF_MAX_TILING_DATA_BYTES) and returns its
/// header; throws CompileError when it reports a negative block_dim or leaves it unset.
af_tiling_header run_tiling(af_tiling_fn tiling, const int64_t* symbols, int nthreads,
                            const target::Target& t, int64_t ub_bytes, unsigned char* tiling_data) {
  af_target target{nthreads, ub_bytes > 0 ? ub_bytes : t.ub_bytes, t.align_bytes, t.vector_bytes};
  af_tiling_header header{-1, 0};  // block_dim -1: "the tiling function did not set it"
  std::memcpy(tiling_data, &header, sizeof header);
  tiling(symbols, &target, tiling_data);
  std::memcpy(&header, tiling_data, sizeof header);
  if (header.block_dim < 0)
    throw CompileError("autofuse: kernel tiling function returned block_dim " +
                       std::to_string(header.block_dim) + " (tiling_key " +
                       std::to_string(header.tiling_key) + ")");
  return header;
}

}  // namespace

af_tiling_header plan_tiling(af_tiling_fn tiling, const int64_t* symbols, int nthreads,
                             const target::Target& t) {
  alignas(64) unsigned char tiling_data[AF_MAX_TILING_DATA_BYTES];
  return run_tiling(tiling, symbols, std::max(nthreads, 1), t, 0, tiling_data);
}

std::array<unsigned char, AF_MAX_TILING_DATA_BYTES> tiling_data(af_tiling_fn tiling,
                                                                const int64_t* symbols,
                                                                int nthreads,
                                                                const target::Target& t,
                                                                int64_t ub_bytes) {
  alignas(64) std::array<unsigned char, AF_MAX_TILING_DATA_BYTES> data{};
  run_tiling(tiling, symbols, std::max(nthreads, 1), t, ub_bytes, data.data());
  return data;
}

void launch(af_tiling_fn tiling, af_kernel_fn kernel, void* const* args, const int64_t* symbols,
            int nthreads, const target::Target& t, int64_t ub_bytes) {
  if (nthreads < 1) nthreads = 1;
  alignas(64) unsigned char tiling_data[AF_MAX_TILING_DATA_BYTES];
  const af_tiling_header header = run_tiling(tiling, symbols, nthreads, t, ub_bytes, tiling_data);
  if (header.block_dim == 0) return;
  if (header.block_dim == 1 || nthreads == 1) {
    for (int64_t b = 0; b < header.block_dim; ++b) kernel(args, tiling_data, b);
    return;
  }
  BlockJob job{kernel, args, tiling_data};
  const BlockJob* jp = &job;
  parallel_for(header.block_dim, nthreads,
               [jp](int64_t b) { jp->kernel(jp->args, jp->tiling_data, b); });
}

void parallel_for(int64_t n, int nthreads, const std::function<void(int64_t)>& fn) {
  // Under torch, on its OpenMP team: the threads ATen's ops (the matmuls between kernels) use,
  // which would otherwise spin on the cores a second pool needs. In a child forked after the
  // lookup, or without OpenMP loaded, on the pool.
  static const GompParallel openmp = find_loaded_openmp();
  static const uint64_t openmp_generation = fork_generation();
  if (n <= 1 || nthreads <= 1) {
    for (int64_t i = 0; i < n; ++i) fn(i);
  } else if (openmp != nullptr && openmp_generation == fork_generation()) {
    openmp_parallel_for(openmp, n, nthreads, fn);
  } else {
    ThreadPool::global().parallel_for(n, nthreads, fn);
  }
}

}  // namespace af::runtime
