// Internal to the Ascend C emitter: one scheduled kernel printed in pieces (where each goes
// differs between the emulated source and a package), and why a kernel cannot be printed.
#pragma once
#include <string>

#include "ascir/asc_graph.h"
#include "codegen/loop_nest.h"
#include "target/target.h"

namespace af::codegen {

/// The printed pieces of one kernel K.
struct KernelParts {
  std::string header;           // "// ---- kernel K ----" and the scheduled AscIR
  std::string tiling_data;      // struct K_TilingData
  std::string tiling_function;  // K_tiling (host)
  std::string kernel;           // the __aicore__ kernel K
  std::string adaptor;          // K_kernel (the ABI) under AF_ASCENDC_EMU
};

/// What planning kernel `k`'s buffers finds: why it cannot be printed after all ("" when it
/// can: a full value read without its broadcast) and the UB bytes per tile element it needs
/// at most (a column sum's cascade at its deepest).
struct KernelPlan {
  std::string reason;
  int64_t bytes_per_element = 0;
};

/// Plans analyzed kernel `k` (kernel.cpp).
KernelPlan plan_kernel(const KernelContext& k, const target::Target& t);

/// Prints analyzed kernel `k` (its kernel_reason must be empty).
KernelParts print_kernel(const KernelContext& k, const target::Target& t);

/// K_kernel, the runtime ABI's entry under AF_ASCENDC_EMU: block block_idx of Ascend C kernel
/// `name`, whose `num_args` GM arguments (inputs, then outputs) are args[0 .. num_args).
std::string emu_adaptor(const std::string& name, int num_args);

/// Why scheduled kernel `g` cannot be printed as Ascend C ("" when it can): see ascendc_reason.
std::string kernel_reason(const ascir::AscGraph& g, const target::Target& t);

}  // namespace af::codegen
