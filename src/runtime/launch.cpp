#include "runtime/launch.h"

#include <cstring>
#include <functional>
#include <string>

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

}  // namespace

void launch(af_tiling_fn tiling, af_kernel_fn kernel, void* const* args, const int64_t* symbols,
            int nthreads, const schedule::Target& t) {
  if (nthreads < 1) nthreads = 1;
  af_target target{nthreads, t.ub_bytes, t.align_bytes, t.vector_bytes};
  alignas(64) unsigned char tiling_data[AF_MAX_TILING_DATA_BYTES];
  af_tiling_header header{-1, 0};  // block_dim -1: "the tiling function did not set it"
  std::memcpy(tiling_data, &header, sizeof header);
  tiling(symbols, &target, tiling_data);
  std::memcpy(&header, tiling_data, sizeof header);
  if (header.block_dim < 0)
    throw CompileError("autofuse: kernel tiling function returned block_dim " +
                       std::to_string(header.block_dim) + " (tiling_key " +
                       std::to_string(header.tiling_key) + ")");
  if (header.block_dim == 0) return;
  if (header.block_dim == 1 || nthreads == 1) {
    for (int64_t b = 0; b < header.block_dim; ++b) kernel(args, tiling_data, b);
    return;
  }
  BlockJob job{kernel, args, tiling_data};
  const BlockJob* jp = &job;
  ThreadPool::global().parallel_for(header.block_dim, nthreads,
                                    [jp](int64_t b) { jp->kernel(jp->args, jp->tiling_data, b); });
}

}  // namespace af::runtime
