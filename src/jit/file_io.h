// Small-file I/O for the private JIT cache: never follows symlinks, never overwrites.
#pragma once
#include <optional>
#include <string>

namespace af::jit {

/// Reads a whole small file (<= 64 KiB) without following symlinks; nullopt when absent,
/// unreadable or too big.
std::optional<std::string> read_small_file(const std::string& path);
/// Writes `data` to the new file `path` (mode 0600; fails if it exists); false on any error.
bool write_new_file(const std::string& path, const std::string& data);

}  // namespace af::jit
