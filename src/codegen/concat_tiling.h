// What every emitter prints the same way for a concat kernel (codegen/emitter.h KernelUnit): its
// TilingData (the header, then each segment's TilingData) and its tiling function (each
// segment's tiling function on its symbols, block_dims summed: blocks of segment 0 come first).
#pragma once
#include <string>
#include <vector>

#include "codegen/emitter.h"

namespace af::codegen {

/// The concat kernel of unit `u` over its emitted segments `segs`: its name, symbols (every
/// segment's, sorted) and argument counts.
EmittedKernel concat_kernel(const KernelUnit& u, const std::vector<EmittedKernel>& segs);

/// `struct K_TilingData` of concat kernel `k` over `segs` (C++).
std::string concat_tiling_data(const EmittedKernel& k, const std::vector<EmittedKernel>& segs);

/// `K_tiling` (AF_EXPORT) of concat kernel `k` over `segs` (C++).
std::string concat_tiling_function(const EmittedKernel& k, const std::vector<EmittedKernel>& segs);

/// "{a[i0], a[i1], ...}": the entries of C array `a` at `idx` (+ `base`).
std::string pick(const std::string& a, const std::vector<int>& idx, int base = 0);

}  // namespace af::codegen
