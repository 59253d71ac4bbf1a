// ascendc_emu: our header-only emulation of the Ascend C API subset autofuse's Ascend C emitter
// uses, so its kernels compile with g++ and run on the CPU. Named as CANN's header so the same
// kernel source builds against either. Every device rule it knows is checked at run time and
// reported (emu_report.h) naming the kernel, the block, the call and the rule: UB capacity per
// TPipe, queue buffers per position, queue discipline, 32-byte alignment of UB operands and
// DataCopy lengths, operands beyond their tensor, partial overlap of a destination with a
// source, vector/scalar ordering (V_S, S_V), Cast pairs and round modes, reduce work sizes,
// the advanced math calls' temporary buffers.
// What it cannot know: timing, bank conflicts, instruction latencies (docs/ascendc.md).
#pragma once
#include "emu_cast.h"
#include "emu_copy.h"
#include "emu_launch.h"
#include "emu_math.h"
#include "emu_memory.h"
#include "emu_reduce.h"
#include "emu_report.h"
#include "emu_select.h"
#include "emu_sync.h"
#include "emu_types.h"
#include "emu_vector.h"
