// The Ascend C emitter (the target interface of codegen/emitter.h for Huawei's Ascend C): prints
// scheduled AscGraphs as Ascend C — per kernel K a TilingData struct, a host tiling function
// and an `extern "C" __global__ __aicore__` kernel over TPipe/TQue/TBuf and the count-form
// vector API (docs/ascendc.md). Built with g++ against ascendc_emu
// (runtime/include/ascendc_emu/kernel_operator.h), the source also exports the kernel ABI of
// runtime/include/autofuse_abi.h (`K_tiling`, `K_kernel` running one block under the
// emulation), so the runtime launches it like a CPU kernel. A printer of the final scheduled
// AscIR: loop order, merged axes, splits and strides are read from the graph.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "ascir/asc_graph.h"
#include "codegen/backend.h"
#include "codegen/emitter.h"
#include "target/target.h"

namespace af::codegen {

/// Why the Ascend C emitter cannot print scheduled kernel `g` ("" when it can): a schedule
/// family (it prints elementwise and reduce_inner), op, dtype or layout it has no mapping for, a
/// tile of 64 elements or a row of known length that does not fit the target's UB, more queue
/// buffers than a TPosition has. Such a kernel keeps the CPU target.
std::string ascendc_reason(const ascir::AscGraph& g, const target::Target& t);

/// Why the Ascend C emitter cannot print kernel unit `u` ("" when it can): a plain kernel's
/// ascendc_reason; for a concat kernel, the first segment's that is not elementwise or has one.
std::string ascendc_unit_reason(const KernelUnit& u, const target::Target& t);

/// One Ascend C translation unit for `kernels` (each must have an empty ascendc_unit_reason; a
/// concat kernel's segments are printed as kernels whose `S_block` its entry calls). Per kernel K:
/// `struct K_TilingData`, `K_tiling` (tile: the largest multiple of 64 elements whose
/// double-buffered queue slots and f32 scratch fit t.device.onchip_bytes; block_dim at most
/// t.device.cores), the kernel `K`, and under AF_ASCENDC_EMU the ABI's `K_kernel`. Throws
/// CompileError naming the kernel otherwise.
EmittedSource emit_ascendc_source(const std::vector<KernelUnit>& kernels, const target::Target& t);

/// The sources of a CANN-style package of `kernels` (each with an empty ascendc_unit_reason), by
/// file name: `<name>_tiling.h` (the TilingData structs, the tiling functions' declarations),
/// `<name>_tiling.cpp` (the host tiling functions) and `<name>_kernels.cpp` (the __aicore__
/// kernels), each including autofuse_abi.h, autofuse_ascendc_tiling.h, autofuse_cpu_int.h or
/// autofuse_cpu_cascade.h from runtime/include (export_ascendc.py's HEADERS copies them). Every
/// kernel, TilingData struct and tiling function is named `<name>_<kernel>` (g0_k0), so the
/// packages of several graphs link into one program. `<name>_launch.{h,cpp}`: a host launcher
/// per kernel (launcher.h), for an NPU and for Ascend C's CPU-debug mode. Built only by CANN's
/// Ascend C toolchain: unverified here.
Package ascendc_package(const std::vector<KernelUnit>& kernels, const target::Target& t,
                        const std::string& name);

/// Compiler flags for building the emitted source against ascendc_emu with g++: -O1 -fPIC
/// -shared -std=c++17 -ffp-contract=off -fno-fast-math -DAF_ASCENDC_EMU (later on a command line
/// than the CPU flags, its -O1 wins: the whole source of an ascendc program is a check, not
/// timed). Add -I<runtime/include> and -I<runtime/include/ascendc_emu>.
std::vector<std::string> ascendc_compile_flags(const target::Target& t);

}  // namespace af::codegen
