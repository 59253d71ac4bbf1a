// Kernel launch: run a kernel's tiling function, then its block_dim blocks on the thread pool.
#pragma once
#include <array>
#include <cstdint>
#include <functional>

#include "runtime/include/autofuse_abi.h"
#include "target/target.h"

namespace af::runtime {

/// Launches one kernel: fills an af_target from `t` with cores = nthreads, calls
/// tiling(symbols, &target, tiling_data) into an aligned stack buffer of AF_MAX_TILING_DATA_BYTES,
/// reads block_dim from its af_tiling_header and runs kernel(args, tiling_data, b) for every block
/// b in [0, block_dim) on the process's OpenMP team (torch's), or ThreadPool::global() where
/// none is loaded (inline when block_dim == 1 or nthreads <= 1).
/// block_dim 0 launches nothing. Throws CompileError when the tiling function reports a negative
/// block_dim (or leaves it unset).
/// `ub_bytes` > 0 replaces the target's tile buffer budget (a tuned choice).
void launch(af_tiling_fn tiling, af_kernel_fn kernel, void* const* args, const int64_t* symbols,
            int nthreads, const target::Target& t, int64_t ub_bytes = 0);

/// Runs fn(i) for every i in [0, n) on up to `nthreads` threads: the process's OpenMP team
/// (torch's), or ThreadPool::global() where none is loaded; inline for n or nthreads <= 1.
void parallel_for(int64_t n, int nthreads, const std::function<void(int64_t)>& fn);

/// The header (block_dim, tiling_key) the tiling function picks for `symbols` with `nthreads`
/// cores and t's buffer budget; runs no kernel. Throws as launch() does.
af_tiling_header plan_tiling(af_tiling_fn tiling, const int64_t* symbols, int nthreads,
                             const target::Target& t);

/// The whole TilingData the tiling function writes for `symbols` with `nthreads` cores and a
/// tile budget of `ub_bytes` (0: t's), zero beyond what it writes: launches with equal
/// TilingData run the same blocks. Runs no kernel. Throws as launch() does.
std::array<unsigned char, AF_MAX_TILING_DATA_BYTES> tiling_data(af_tiling_fn tiling,
                                                                const int64_t* symbols,
                                                                int nthreads,
                                                                const target::Target& t,
                                                                int64_t ub_bytes);

}  // namespace af::runtime
