// Error types thrown by the compiler; each message names the op, value or position it is about.
#pragma once
#include <stdexcept>
#include <string>

namespace af {

/// A malformed textual IR: the message carries line:column.
struct ParseError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// An IR that breaks an invariant (verifier) or input the compiler cannot handle.
struct CompileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// The toolchain or cache failed (no compiler, a compile error, a bad cached object).
struct ToolchainError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// A bad fusion setting (AUTOFUSE_FLAGS, CompilerConfig): the message names the flag and lists
/// the valid flags or values. A user error, never turned into an eager fallback.
struct FlagError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

}  // namespace af
