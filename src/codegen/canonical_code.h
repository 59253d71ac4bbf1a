// A kernel's code with its names taken out: two kernels whose canonical code is equal compute
// the same thing and differ only in what they are called (a model's layers give many such
// kernels, within a graph and across graphs). The CPU emitter prints the second of a kind in a
// module as a forward to the first (cpu/shared_code.h); the JIT loads a kernel some cached
// module already holds instead of compiling it again (jit/kernel_index.h).
#pragma once
#include <string>
#include <vector>

namespace af::codegen {

/// `source` without its // comments (outside string and character literals) and with each whole
/// identifier names[i], or names[i] followed by '_' (K_kernel, K_TilingData), spelled "@i"
/// (also inside string literals: a static_assert's message), the names taken in order.
std::string canonical_code(const std::string& source, const std::vector<std::string>& names);

}  // namespace af::codegen
