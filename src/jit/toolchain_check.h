// What a kernel compile needs from this machine, checked one by one with what to fix when a
// check fails (`python -m autofuse doctor` prints them).
#pragma once
#include <string>
#include <vector>

namespace af::jit {

/// One check of check_toolchain().
struct ToolchainFinding {
  std::string what;  // "C++ compiler", "runtime headers", "SLEEF", "cache dir"
  bool ok = false;
  std::string found;  // what was found (a version, a path) or what went wrong
  std::string fix;    // what to do about it; empty when ok
};

/// Checks the C++ compiler `cxx` (it runs and names itself), the kernels' runtime headers, the
/// SLEEF library the kernels link, and the JIT cache dir `cache_dir` ("" = the default: it
/// exists or can be made, is private and writable). Never throws.
std::vector<ToolchainFinding> check_toolchain(const std::string& cxx, const std::string& cache_dir);

}  // namespace af::jit
