// Sanitizer builds of JIT'd code (AUTOFUSE_SANITIZE=address,undefined): which sanitizers, their
// compiler flags, and whether this process can load objects built with them.
#pragma once
#include <string>
#include <vector>

namespace af::jit {

/// One sanitizer a JIT build can be instrumented with.
enum class Sanitizer : unsigned { Address = 1u << 0, Undefined = 1u << 1 };

/// A set of sanitizers (empty: an ordinary build).
class Sanitizers {
 public:
  Sanitizers() = default;
  /// Parses "address,undefined" (names in any order, "" = none). Throws FlagError naming the
  /// unknown name and listing the known ones.
  static Sanitizers parse(const std::string& text);

  bool empty() const { return bits_ == 0; }
  bool has(Sanitizer s) const { return bits_ & static_cast<unsigned>(s); }
  Sanitizers with(Sanitizer s) const;
  /// The canonical text ("address,undefined"; "" when empty).
  std::string to_string() const;

  /// Compiler (and link) flags: -fsanitize=<list> -fno-omit-frame-pointer -g; none when empty.
  /// UndefinedBehaviorSanitizer reports and goes on (its runtime's log_path collects them);
  /// AddressSanitizer stops at the first bad access.
  std::vector<std::string> flags() const;

  /// Why this process cannot load an object built with these sanitizers ("" when it can): an
  /// AddressSanitizer object needs the ASan runtime first in the process
  /// (LD_PRELOAD=$(g++ -print-file-name=libasan.so)).
  std::string load_problem() const;

 private:
  unsigned bits_ = 0;
};

}  // namespace af::jit
