// What every target's emitter shares: the kernels it is given (KernelUnit), what it returns
// (EmittedSource) and the module exports every target may have. A target's emitter lives in its
// own folder (codegen/cpu/, codegen/ascendc/) behind the Backend interface (codegen/backend.h):
// a printer of the final AscIR, deciding nothing the schedule did not. The stages before
// (fusion, schedule) and after (jit, runtime) do not name the target.
#pragma once
#include <string>
#include <vector>

#include "ascir/asc_graph.h"
#include "target/target.h"

namespace af::codegen {

/// A module with a gather (AscIR load(%data, %index)) exports `int64_t af_take_index_fault(void)`:
/// the first index a gather met outside its dim since the last call (INT64_MIN: none), cleared.
/// An out-of-range lane reads row 0 instead; the launcher raises IndexError.
inline constexpr const char* kTakeIndexFault = "af_take_index_fault";

/// A module with an integer division or remainder exports `int af_take_zero_division(void)`:
/// whether a lane met a zero divisor since the last call (it gave 0), cleared. The launcher
/// raises ZeroDivisionError, as eager.
inline constexpr const char* kTakeZeroDivision = "af_take_zero_division";

/// One kernel of an emitted source: the exported symbols are `<name>_tiling` and
/// `<name>_kernel`; `symbols` are its size symbols sorted by name (the order the runtime passes
/// their values to the tiling function); inputs then outputs are the kernel's `args`.
struct EmittedKernel {
  std::string name;
  std::vector<std::string> symbols;
  int num_inputs = 0;
  int num_outputs = 0;
  std::string target = "cpu";  // the registered target whose emitter printed it
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
