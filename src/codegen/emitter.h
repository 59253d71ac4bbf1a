// What every target's emitter shares: the kernels it is given (KernelUnit) and what it returns
// (EmittedSource). A target's emitter lives in its own folder (codegen/cpu/ for C++ on x86) and
// implements, for a list of scheduled kernels and a schedule::Target:
//   EmittedSource emit_<target>_source(const std::vector<KernelUnit>&, const schedule::Target&);
//     one source text exporting, per kernel K, `K_tiling` (fills K's TilingData from the size
//     symbols and the target: the tiling function) and `K_kernel` (runs one block), the ABI of
//     runtime/include/autofuse_abi.h; a printer of the final AscIR, deciding nothing the
//     schedule did not;
//   std::vector<std::string> <target>_compile_flags(const schedule::Target&) and
//   <target>_link_libs(const schedule::Target&): how jit/ builds that text.
// The stages before (fusion, schedule) and after (jit, runtime) do not name the target.
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
  schedule::TargetKind target = schedule::TargetKind::Cpu;  // which emitter printed it
};

/// The generated source and what it exports.
struct EmittedSource {
  std::string code;
  std::vector<EmittedKernel> kernels;
};

/// One launchable kernel to print: a plain kernel (one scheduled loop nest) or a concat kernel,
/// whose segments (fusion/concat_merge.h) share one launch: block indices run over segment 0's
/// blocks, then segment 1's, ... Segment s reads kernel input input_map[s][j] as its input j and
/// writes kernel output output_map[s][j] as its output j.
struct KernelUnit {
  std::string name;
  std::vector<const ascir::AscGraph*> segments;         // one: a plain kernel named `name`
  std::vector<std::vector<int>> input_map, output_map;  // concat kernels only
  int num_inputs = 0, num_outputs = 0;                  // concat kernels only
};

}  // namespace af::codegen
