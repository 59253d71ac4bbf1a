// Linear layers of a few rows on the weight as it is: y = x W^T + b with W a row-major [N, K]
// matrix (nn.Linear's own layout) or y = x W + b with W a row-major [K, N] one (GPT-2's Conv1D),
// each weight row streamed once for all of x's rows. Decoding a token is such a product; a
// library's packed layout makes it no faster (the weight is read once either way) but keeps a
// second copy of every weight.
#pragma once
#include <cstdint>

namespace af::runtime {

/// The element types linear_rows computes.
enum class LinearRowsType { F32, BF16 };

/// How the weight is stored: NK: [N, K] row-major (nn.Linear); KN: [K, N] row-major (Conv1D).
enum class WeightLayout { NK, KN };

/// Whether this CPU runs linear_rows for `type` (F32: AVX-512F; BF16: AVX-512 BF16).
bool linear_rows_supported(LinearRowsType type);

/// Most rows of x linear_rows_pays takes (either layout).
constexpr int64_t kLinearRowsMostRows = 12;

/// Whether linear_rows computes `rows` rows of x against K = `k` at least as fast as oneDNN's
/// linear on the same plain weight: while x's rows stay in L1 beside the weight rows a tile
/// streams (at most 24 KiB of x, and 12 rows). Measured on AMD Zen 4, 2 threads, weights of
/// 768x768 to 32000x768 streamed from memory: bf16 0.56-0.95x oneDNN's time at 8 rows of K = 768,
/// 0.63-0.94x at 12, 1.1-1.24x at 8 rows of K = 2048 (32 KiB of x); fp32 0.71-0.85x at 8 rows of
/// K = 768, 1.3x at 8 rows of K = 2048.
/// KN: up to 4 rows (one pass over the weight).
bool linear_rows_pays(LinearRowsType type, WeightLayout layout, int64_t rows, int64_t k);

/// y[m, N] = x[m, K] · W[N, K]^T (NK; KN: x[m, K] · W[K, N]) (+ b[N] where b is not null), any
/// m >= 1 (meant for few): x rows `ldx` elements apart, W rows `ldw` apart (each row
/// contiguous), y contiguous. Products
/// summed in f32 (BF16: AVX-512 BF16's pair-wise dot products, as oneDNN's), the bias added in
/// f32 and each result rounded once. Runs on up to `nthreads` threads (parallel_for): NK in one
/// run of W's rows per thread, x's rows 8, 4, 2 or 1 at a time against 16 rows of W, which stay
/// in cache between them; KN in equal blocks of y's columns (linear_kn_kernel.h).
/// Throws std::invalid_argument where the CPU or the sizes are not supported.
void linear_rows(LinearRowsType type, WeightLayout layout, const void* x, int64_t ldx, const void* w, int64_t ldw,
                 const void* b, void* y, int64_t m, int64_t n, int64_t k, int nthreads);

}  // namespace af::runtime
