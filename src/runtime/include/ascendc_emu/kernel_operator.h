// ascendc_emu: our header-only emulation of the Ascend C API subset autofuse's Ascend C emitter
// uses, so its kernels compile with g++ and run on the CPU. Named as CANN's header so the same
// kernel source builds against either. Every device rule it knows is checked at run time and
// reported (emu_report.h) naming the kernel, the block, the call and the rule: UB capacity per
// TPipe, 32-byte alignment of UB operands and DataCopy lengths, queue discipline, live tensors
// per position, partial overlap of a destination with a source, operands beyond their tensor.
// What it cannot know: timing, bank conflicts, instruction latencies (docs/ascendc.md).
#pragma once
#include "emu_copy.h"
#include "emu_memory.h"
#include "emu_report.h"
#include "emu_types.h"
#include "emu_vector.h"
