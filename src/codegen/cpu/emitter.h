// The CPU emitter (the target interface of codegen/emitter.h for C++ on x86): prints scheduled
// AscGraphs as one C++ translation unit implementing the kernel ABI of
// runtime/include/autofuse_abi.h over the vector library runtime/include/autofuse_cpu.h. It is a
// printer of the final scheduled AscIR: every decision (loop order, merged axes, tile and block
// split, vectorized axis, strides) is read from the graph.
#pragma once
#include <string>
#include <vector>

#include "ascir/asc_graph.h"
#include "codegen/emitter.h"
#include "target/target.h"

namespace af::codegen {

/// One C++ translation unit for `kernels` (plain ones as below; a concat kernel K also exports
/// `K_tiling`, which runs every segment's tiling function into its part of K's TilingData and
/// sums their block_dims, and `K_kernel`, which runs block b of the segment it falls in).
EmittedSource emit_cpu_source(const std::vector<KernelUnit>& kernels, const target::Target& t);

/// One C++ translation unit for `kernels` (each scheduled by schedule::schedule_kernel with the
/// TilingCase "elementwise"). Per kernel K it defines `struct K_TilingData` (af_tiling_header,
/// then the size symbols, then the tiling parameters), `K_tiling` (stores the symbols, picks
/// tile size, block size and block_dim from the target) and `K_kernel` (runs one block). Inside
/// a tile the whole op chain stays in registers, AF_LANES elements per step, with masked or
/// buffered tails. Throws CompileError for an unscheduled graph, an unsupported dtype or op,
/// or a loop nest it cannot print.
EmittedSource emit_cpu_source(const std::vector<const ascir::AscGraph*>& kernels,
                              const target::Target& t);

/// Compiler flags for the emitted source (g++ or clang++): -O3 -fPIC -shared -std=c++17
/// -ffp-contract=off -fno-fast-math -fno-math-errno and the ISA flags of `t`: avx2: -mavx2
/// -mfma -mf16c; avx512: -mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx2 -mfma -mf16c;
/// scalar: none. No -ffast-math: results round like PyTorch's. Add -I<dir of autofuse_cpu.h>
/// and link cpu_link_libs() after the source (-lsleef).
std::vector<std::string> cpu_compile_flags(const target::Target& t);

/// Libraries the emitted source links against, without "-l": {"sleef"}.
std::vector<std::string> cpu_link_libs(const target::Target& t);

}  // namespace af::codegen
