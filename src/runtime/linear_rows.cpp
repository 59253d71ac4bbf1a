#include "runtime/linear_rows.h"

#include <algorithm>
#include <stdexcept>

#include "runtime/launch.h"
#include "runtime/linear_kn_kernel.h"
#include "runtime/linear_rows_kernel.h"

namespace af::runtime {
namespace linear_rows_detail {
void rows_block_f32(const Problem& p, int64_t n0, int64_t n1);   // linear_rows_f32.cpp
void rows_block_bf16(const Problem& p, int64_t n0, int64_t n1);  // linear_rows_bf16.cpp
void kn_block_f32(const Problem& p, int64_t n0, int64_t n1);     // linear_rows_f32.cpp
void kn_block_bf16(const Problem& p, int64_t n0, int64_t n1);    // linear_rows_bf16.cpp
}  // namespace linear_rows_detail

bool linear_rows_supported(LinearRowsType type) {
  __builtin_cpu_init();
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl");
  return type == LinearRowsType::F32 ? avx512 : avx512 && __builtin_cpu_supports("avx512bf16");
}

bool linear_rows_pays(LinearRowsType type, WeightLayout layout, int64_t rows, int64_t k) {
  const int64_t elem = type == LinearRowsType::F32 ? 4 : 2;
  if (layout == WeightLayout::KN) return rows >= 1 && rows <= linear_rows_detail::kKnRows;
  return rows >= 1 && rows <= kLinearRowsMostRows && rows * k * elem <= (int64_t{24} << 10);
}

void linear_rows(LinearRowsType type, WeightLayout layout, const void* x, int64_t ldx,
                 const void* w, int64_t ldw, const void* b, void* y, int64_t m, int64_t n,
                 int64_t k, int nthreads) {
  using namespace linear_rows_detail;
  if (m < 1 || n < 1 || k < 1 || ldx < k || ldw < (layout == WeightLayout::KN ? n : k))
    throw std::invalid_argument("linear_rows: unsupported sizes");
  if (!linear_rows_supported(type))
    throw std::invalid_argument("linear_rows: this CPU lacks the instructions");
  const int64_t elem = type == LinearRowsType::F32 ? 4 : 2;
  if (layout == WeightLayout::KN) {
    // Blocks of whole vectors of columns, at most kKnColumns, as many per thread: each thread's
    // columns in equal blocks (a [768, 3072] weight at 2 threads: 4 blocks of 768 columns,
    // where blocks of 1024 gave one thread two of the three).
    const int64_t threads = std::max(nthreads, 1);
    const int64_t per_thread = (n + threads - 1) / threads;
    const int64_t per_thread_blocks = (per_thread + kKnColumns - 1) / kKnColumns;
    const int64_t cols = std::min(
        kKnColumns,
        std::max<int64_t>(
            16, ((per_thread + per_thread_blocks - 1) / per_thread_blocks + 15) / 16 * 16));
    const Problem p{x, ldx, w, ldw, b,
                    y, m,   n, k,   std::max<int64_t>(8, kAheadBytes / (cols * elem))};
    const auto block = type == LinearRowsType::F32 ? &kn_block_f32 : &kn_block_bf16;
    parallel_for((n + cols - 1) / cols, nthreads, [&p, block, cols](int64_t i) {
      block(p, i * cols, std::min(p.n, (i + 1) * cols));
    });
    return;
  }
  const int64_t ahead = std::max<int64_t>(kGroupRows, kAheadBytes / (ldw * elem));
  const Problem p{x, ldx, w, ldw, b, y, m, n, k, ahead};
  const auto block = type == LinearRowsType::F32 ? &rows_block_f32 : &rows_block_bf16;
  // One contiguous run of W's rows per thread (whole groups), streamed front to back with the
  // prefetch ahead inside it. Blocks of 64 KiB claimed in turn interleaved the threads' rows,
  // so each prefetched mostly the other's: a decode step's 43 bf16 linears of a 6-layer Qwen2
  // (67 MB, one row, 2 threads, Zen 4) streamed 0.44-0.53x the bandwidth of torch.sum over 64 MB
  // so, 0.64-0.73x in one run per thread (two runs per thread: 0.55-0.64x).
  const int64_t threads = std::max(nthreads, 1);
  const int64_t per_thread = (n + threads - 1) / threads;
  const int64_t rows = (per_thread + kGroupRows - 1) / kGroupRows * kGroupRows;
  const int64_t blocks = (n + rows - 1) / rows;
  parallel_for(blocks, nthreads,
               [&p, block, rows](int64_t i) { block(p, i * rows, std::min(p.n, (i + 1) * rows)); });
}

}  // namespace af::runtime
