// ascendc_emu: running a kernel's blocks. Each block runs with its BlockContext set (GetBlockIdx,
// the kernel named in reports) and its own synchronisation state, checked when it ends.
#pragma once
#include <cstdint>
#include <string>

#include "emu_report.h"
#include "emu_sync.h"

namespace AscendC {
namespace emu {

/// Starts block `idx` of `num` of kernel `kernel` on this thread.
inline void begin_block(const char* kernel, int64_t idx, int64_t num) {
  block_context() = {kernel, idx, num};
  sync_state() = {};
  event_ids() = {};
}

/// Ends this thread's block: an event set and never waited for is reported.
inline void end_block() {
  for (const auto& [event, id] : sync_state().flags)
    report("SetFlag", "event " + std::to_string(event) + " id " + std::to_string(id) +
                          " was set and never waited for");
  sync_state() = {};
  event_ids() = {};
}

/// Runs body(block) for block = 0..block_num-1 as kernel `kernel`'s blocks, one after another
/// on this thread (the runtime's launcher spreads them over its thread team instead).
template <typename Body>
void run_blocks(const char* kernel, int64_t block_num, Body&& body) {
  BlockContext saved = block_context();
  for (int64_t b = 0; b < block_num; ++b) {
    begin_block(kernel, b, block_num);
    body(b);
    end_block();
  }
  block_context() = saved;
}

}  // namespace emu
}  // namespace AscendC
