// What the bindings' files share: the Program Python holds, and how keyword arguments become
// CompileOptions (module.cpp defines both).
#pragma once
#include <nanobind/nanobind.h>

#include <memory>
#include <string>
#include <vector>

#include "pipeline/pipeline.h"
#include "runtime/cuda/launcher.h"
#include "runtime/tuning.h"
#include "target/target.h"

/// A compiled program as Python sees it; keeps the loaded kernels alive.
struct Program {
  af::CompiledProgram prog;
  af::target::Target target;
  /// Measured tilings (CompilerConfig(tune=True)); null when tuning is off.
  std::shared_ptr<af::runtime::TuningTable> tuning;
  /// Per kernel, the choices its tuned launches used (the fast path in front of `tuning`).
  std::vector<std::shared_ptr<af::runtime::KernelTuningCache>> tuned;
  /// Per kernel, its launcher when the cuda target printed it (else null): launch_cuda.
  std::vector<std::shared_ptr<af::runtime::cuda::CudaKernel>> cuda;
};

/// Fills p.cuda for p's kernels (cuda.cpp).
void add_cuda_kernels(Program& p, const af::CompileOptions& opts);

/// Runs cuda kernel k of `p` on device `device`'s stream `stream` (cuda.cpp).
void launch_cuda(const Program& p, int k, const std::vector<uintptr_t>& ptrs,
                 const std::vector<int64_t>& syms, int device, uintptr_t stream);

/// The options every compile entry takes, from its keyword arguments: `log` (a callable or None)
/// receives the pipeline's lines; `isa` ("" = the host's best) picks the kernels' vector ISA, one
/// the host runs; `sanitize` ("address,undefined") instruments the kernels; `target`, `cann` and
/// `soc` configure the target (backends::configure_target).
af::CompileOptions compile_options(const std::string& dump_dir, const std::string& cache_dir,
                                   const std::string& cxx, nanobind::handle log,
                                   const std::string& isa, const std::string& sanitize,
                                   const std::string& target, const std::string& cann,
                                   const std::string& soc);

/// A Program for `prog`, compiled with `opts`, launching with the measured tilings of
/// `tuning_file` when one is given.
Program* make_program(af::CompiledProgram prog, const af::CompileOptions& opts,
                      const std::string& tuning_file);
