// The host side of an Ascend C package (emitter.h ascendc_package): per kernel K a launcher
// K_launch(stream, symbols, in0.., out0..) that runs K's host tiling function, puts the
// TilingData where the kernel reads it and launches K, for an NPU (ACL) and for Ascend C's
// CPU-debug mode (ASCENDC_CPU_DEBUG), as CANN's kernel-launch samples do.
#pragma once
#include <string>
#include <vector>

#include "codegen/emitter.h"

namespace af::codegen {

/// `<name>_launch.h`: the launchers' declarations (extern "C").
std::string launcher_header(const std::string& name, const std::vector<EmittedKernel>& kernels);

/// `<name>_launch.cpp`: the launchers, including `<name>_tiling.h` and `<name>_launch.h`; in NPU
/// mode also acl/acl.h and the aclrtlaunch_K.h headers CANN's build generates per kernel.
std::string launcher_source(const std::string& name, const std::vector<EmittedKernel>& kernels);

}  // namespace af::codegen
