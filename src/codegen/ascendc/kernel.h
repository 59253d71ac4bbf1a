// Internal to the Ascend C emitter: one scheduled kernel printed in pieces (where each goes
// differs between the emulated source and a package), and why a kernel cannot be printed.
#pragma once
#include <string>

#include "ascir/asc_graph.h"
#include "codegen/loop_nest.h"
#include "schedule/target.h"

namespace af::codegen {

/// The printed pieces of one kernel K.
struct KernelParts {
  std::string header;           // "// ---- kernel K ----" and the scheduled AscIR
  std::string tiling_data;      // struct K_TilingData
  std::string tiling_function;  // K_tiling (host)
  std::string kernel;           // the __aicore__ kernel K
  std::string adaptor;          // K_kernel (the ABI) under AF_ASCENDC_EMU
};

/// Prints analyzed kernel `k` (its kernel_reason must be empty).
KernelParts print_kernel(const KernelContext& k, const schedule::Target& t);

/// Why scheduled kernel `g` cannot be printed as Ascend C ("" when it can): see ascendc_reason.
std::string kernel_reason(const ascir::AscGraph& g, const schedule::Target& t);

}  // namespace af::codegen
