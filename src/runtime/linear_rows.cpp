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

void linear_rows(LinearRowsType type, WeightLayout layout, const void* x, int64_t ldx, const void* w, int64_t ldw,
                 const void* b, void* y, int64_t m, int64_t n, int64_t k, int nthreads) {
  using namespace linear_rows_detail;
  if (m < 1 || n < 1 || k < 1 || ldx < k || ldw < (layout == WeightLayout::KN ? n : k))
    throw std::invalid_argument("linear_rows: unsupported sizes");
  if (!linear_rows_supported(type))
    throw std::invalid_argument("linear_rows: this CPU lacks the instructions");
  const int64_t elem = type == LinearRowsType::F32 ? 4 : 2;
  if (layout == WeightLayout::KN) {
    // Blocks of whole vectors of columns, at most kKnColumns, at least one per thread.
    const int64_t per_thread = (n + std::max(nthreads, 1) - 1) / std::max(nthreads, 1);
    const int64_t cols = std::min(kKnColumns, std::max<int64_t>(16, (per_thread + 15) / 16 * 16));
    const Problem p{x, ldx, w, ldw, b, y, m, n, k, std::max<int64_t>(8, kAheadBytes / (cols * elem))};
    const auto block = type == LinearRowsType::F32 ? &kn_block_f32 : &kn_block_bf16;
    parallel_for((n + cols - 1) / cols, nthreads,
                 [&p, block, cols](int64_t i) { block(p, i * cols, std::min(p.n, (i + 1) * cols)); });
    return;
  }
  const int64_t ahead = std::max<int64_t>(kGroupRows, kAheadBytes / (ldw * elem));
  const Problem p{x, ldx, w, ldw, b, y, m, n, k, ahead};
  const auto block = type == LinearRowsType::F32 ? &rows_block_f32 : &rows_block_bf16;
  // Blocks of about 64 KiB of weight (whole groups), at least one per thread where the weight
  // has the rows for it.
  const int64_t by_bytes = (int64_t{64} << 10) / std::max<int64_t>(k * elem, 1);
  int64_t rows = std::max<int64_t>(kGroupRows, by_bytes / kGroupRows * kGroupRows);
  if (nthreads > 1) {
    const int64_t per_thread = (n + nthreads - 1) / nthreads;
    rows = std::min(rows, std::max<int64_t>(
                              kGroupRows, (per_thread + kGroupRows - 1) / kGroupRows * kGroupRows));
  }
  const int64_t blocks = (n + rows - 1) / rows;
  parallel_for(blocks, nthreads,
               [&p, block, rows](int64_t i) { block(p, i * rows, std::min(p.n, (i + 1) * rows)); });
}

}  // namespace af::runtime
