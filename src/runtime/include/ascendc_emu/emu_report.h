// ascendc_emu: where the emulation reports a broken device rule, and the block a thread runs.
// A report names the kernel, the block, the API call and the rule; the kernel goes on (the call
// does what the device would, or nothing), so one run lists every violation.
#pragma once
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace AscendC {
namespace emu {

/// The block this thread runs: set by the launcher (run_blocks) around each block.
struct BlockContext {
  const char* kernel = "?";
  int64_t block_idx = 0;
  int64_t block_num = 1;
};

inline BlockContext& block_context() {
  static thread_local BlockContext c;
  return c;
}

/// The process's violation log.
struct ReportLog {
  std::mutex mu;
  std::vector<std::string> lines;
};

inline ReportLog& report_log() {
  static ReportLog log;
  return log;
}

/// Records "kernel K block B: CALL: RULE".
inline void report(const char* call, const std::string& rule) {
  const BlockContext& c = block_context();
  std::string line = "kernel " + std::string(c.kernel) + " block " + std::to_string(c.block_idx) +
                     ": " + call + ": " + rule;
  ReportLog& log = report_log();
  std::lock_guard<std::mutex> lock(log.mu);
  log.lines.push_back(std::move(line));
}

/// Every violation since the last take_violations(), which clears the log.
inline std::vector<std::string> take_violations() {
  ReportLog& log = report_log();
  std::lock_guard<std::mutex> lock(log.mu);
  std::vector<std::string> out;
  out.swap(log.lines);
  return out;
}

}  // namespace emu

inline int64_t GetBlockIdx() {
  return emu::block_context().block_idx;
}
inline int64_t GetBlockNum() {
  return emu::block_context().block_num;
}

}  // namespace AscendC
