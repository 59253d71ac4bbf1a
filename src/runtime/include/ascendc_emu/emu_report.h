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

/// The block this thread runs: set around each block (emu_launch.h).
struct BlockContext {
  const char* kernel = "?";
  int64_t block_idx = 0;
  int64_t block_num = 1;
};

inline BlockContext& block_context() {
  static thread_local BlockContext c;
  return c;
}

/// The process's violation log: the first kMaxLines reports, and how many more there were.
struct ReportLog {
  static constexpr size_t kMaxLines = 1000;
  std::mutex mu;
  std::vector<std::string> lines;
  size_t dropped = 0;
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
  if (log.lines.size() < ReportLog::kMaxLines)
    log.lines.push_back(std::move(line));
  else
    ++log.dropped;
}

/// Every violation since the last take_violations(), which clears the log.
inline std::vector<std::string> take_violations() {
  ReportLog& log = report_log();
  std::lock_guard<std::mutex> lock(log.mu);
  std::vector<std::string> out;
  out.swap(log.lines);
  if (log.dropped) out.push_back("... and " + std::to_string(log.dropped) + " more reports");
  log.dropped = 0;
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
