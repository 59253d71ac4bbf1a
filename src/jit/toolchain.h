// The system C++ toolchain as the JIT sees it: running a program without a shell and the
// compiler's identity (for the cache key).
#pragma once
#include <string>
#include <vector>

namespace af::jit {

/// How a child process ended.
struct ProcessExit {
  int code = 0;    // exit status when it exited normally, else -1
  int signal = 0;  // the signal that killed it, else 0
  /// "exit N" or "killed by signal N".
  std::string describe() const;
  bool ok() const { return code == 0 && signal == 0; }
};

/// Runs argv[0] (searched in PATH when it has no '/') with argv, no shell, stdin from /dev/null,
/// stdout and stderr both appended to `output_path` (created 0600). Throws ToolchainError
/// "autofuse: C++ compiler '<argv0>' not found ..." when the program cannot be executed.
ProcessExit run_process(const std::vector<std::string>& argv, const std::string& output_path);

/// Runs argv like run_process and returns its stdout+stderr (at most `max_bytes`) in `output`.
ProcessExit run_process_capture(const std::vector<std::string>& argv, std::string* output,
                                size_t max_bytes = 1 << 16);

/// The first line of `<cxx> --version`, memoised per process and per `cxx` string. Throws
/// ToolchainError when the compiler is missing or fails to answer.
std::string compiler_identity(const std::string& cxx);

/// The message for a compiler that cannot be run.
std::string compiler_not_found_message(const std::string& cxx);

}  // namespace af::jit
