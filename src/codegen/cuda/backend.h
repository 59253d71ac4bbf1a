// The cuda target: CUDA C++ for NVIDIA GPUs, compiled by NVRTC.
#pragma once
#include <string>
#include <vector>

#include "codegen/backend.h"

namespace af::codegen {

/// The cuda Backend (registered as "cuda"): elementwise, row- and column-reduction kernels
/// printed as CUDA C++ (kernel.h)
/// inside a host source holding their tiling functions and, as the string af_cuda_source, the
/// device code NVRTC compiles for the GPU (option arch). Kernels it has no form for give their
/// reason. Built and launched: not yet (toolchain() refuses with the reason).
const Backend& cuda_backend();

/// The source of `units` for the cuda target: the host translation unit (tiling functions) with
/// the device code embedded between the lines `R"af_cuda(` and `)af_cuda";`. The device code
/// includes autofuse_cpu_int.h (and through it autofuse_abi.h): NVRTC is given them by name.
EmittedSource emit_cuda_source(const std::vector<KernelUnit>& units, const target::Target& t);

}  // namespace af::codegen
