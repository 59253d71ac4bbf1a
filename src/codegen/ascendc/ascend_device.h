// The Ascend NPU as the Ascend C emitter sees it: the CANN release whose API spelling the kernels
// use, and the SoCs whose vector cores and UB the tiling functions divide the work over
// (docs/ascendc-facts.md). Read from the target's Device (target/target.h), which the ascendc
// Backend configures from the options `soc` and `cann`.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "target/target.h"

namespace af::codegen {

/// The CANN release whose Ascend C API the emitted kernels are written for, where the API's
/// spelling differs between releases (docs/ascendc.md "Conformance"). Common: the spellings
/// both 8.x and 9.x accept (9.x keeps some 8.x names as deprecated aliases).
enum class CannVersion { Common, V8, V9 };

/// Its name: "common", "8" or "9".
std::string_view cann_version_name(CannVersion v);

/// The CannVersion called `name` ("" is Common); throws CompileError naming the choices.
CannVersion parse_cann_version(std::string_view name);

/// The CANN release the kernels of `t` are written for: its device's option `cann`.
CannVersion cann_version(const target::Target& t);

/// The SoCs ascend_device knows, Ascend910B1 first.
std::vector<std::string> ascend_soc_names();

/// The Device of Ascend SoC `soc` (CANN's name: Ascend910B1 .. B4, Ascend910_93xx; "" is
/// Ascend910B1) for CANN release `cann` ("", "8", "9"): its vector cores and the UB bytes
/// InitBuffer may hand out, with the options as given. Throws CompileError naming the SoCs or
/// releases it knows for another name.
target::Device ascend_device(const std::string& soc, const std::string& cann);

}  // namespace af::codegen
