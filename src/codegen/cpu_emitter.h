// The CPU emitter: prints scheduled AscGraphs as one C++ translation unit implementing the kernel
// ABI of runtime/include/autofuse_abi.h over the vector library runtime/include/autofuse_cpu.h.
// It is a printer of the final scheduled AscIR: every decision (loop order, merged axes, tile
// and block split, vectorized axis, strides) is read from the graph.
#pragma once
#include <string>
#include <vector>

#include "ascir/asc_graph.h"
#include "schedule/target.h"

namespace af::codegen {

/// One kernel of an emitted source: the exported symbols are `<name>_tiling` and
/// `<name>_kernel`; `symbols` are its size symbols sorted by name (the order the runtime passes
/// their values to the tiling function); inputs then outputs are the kernel's `args`.
struct EmittedKernel {
  std::string name;
  std::vector<std::string> symbols;
  int num_inputs = 0;
  int num_outputs = 0;
};

/// The generated C++ and what it exports.
struct EmittedSource {
  std::string code;
  std::vector<EmittedKernel> kernels;
};

/// One launchable kernel to print: a plain kernel (one scheduled loop nest) or a concat kernel,
/// whose segments (fusion/concat_fuse.h) share one launch: block indices run over segment 0's
/// blocks, then segment 1's, ... Segment s reads kernel input input_map[s][j] as its input j and
/// writes kernel output output_map[s][j] as its output j.
struct KernelUnit {
  std::string name;
  std::vector<const ascir::AscGraph*> segments;         // one: a plain kernel named `name`
  std::vector<std::vector<int>> input_map, output_map;  // concat kernels only
  int num_inputs = 0, num_outputs = 0;                  // concat kernels only
};

/// One C++ translation unit for `kernels` (plain ones as below; a concat kernel K also exports
/// `K_tiling`, which runs every segment's tiling function into its part of K's TilingData and
/// sums their block_dims, and `K_kernel`, which runs block b of the segment it falls in).
EmittedSource emit_cpu_source(const std::vector<KernelUnit>& kernels, const schedule::Target& t);

/// One C++ translation unit for `kernels` (each scheduled by schedule::schedule_kernel with the
/// TilingCase "elementwise"). Per kernel K it defines `struct K_TilingData` (af_tiling_header,
/// then the size symbols, then the tiling parameters), `K_tiling` (stores the symbols, picks
/// tile size, block size and block_dim from the target) and `K_kernel` (runs one block). Inside
/// a tile the whole op chain stays in registers, AF_LANES elements per step, with masked or
/// buffered tails. Throws CompileError for an unscheduled graph, an unsupported dtype or op,
/// or a loop nest it cannot print.
EmittedSource emit_cpu_source(const std::vector<const ascir::AscGraph*>& kernels,
                              const schedule::Target& t);

/// Compiler flags for the emitted source (g++ or clang++): -O3 -fPIC -shared -std=c++17
/// -ffp-contract=off -fno-fast-math -fno-math-errno and the ISA flags of `t`: avx2: -mavx2
/// -mfma -mf16c; avx512: -mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx2 -mfma -mf16c;
/// scalar: none. No -ffast-math: results round like PyTorch's. Add -I<dir of autofuse_cpu.h>
/// and link cpu_link_libs() after the source (-lsleef).
std::vector<std::string> cpu_compile_flags(const schedule::Target& t);

/// Libraries the emitted source links against, without "-l": {"sleef"}.
std::vector<std::string> cpu_link_libs(const schedule::Target& t);

}  // namespace af::codegen
