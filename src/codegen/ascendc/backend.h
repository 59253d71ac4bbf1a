// The ascendc target: Ascend C for Huawei NPUs (docs/ascendc.md).
#pragma once
#include "codegen/backend.h"

namespace af::codegen {

/// The ascendc Backend (registered as "ascendc"; options soc and cann, ascend_device.h): prints
/// the kernels the Ascend C emitter can express as Ascend C, built and run here against
/// ascendc_emu, and exports CANN kernel-launch packages with host launchers; the rest fall back
/// to the next backend of the chain (cpu), each with its reason.
const Backend& ascendc_backend();

}  // namespace af::codegen
