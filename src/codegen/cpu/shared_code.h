// Kernels of one module with the same code compiled once: a model's layers give the same fused
// kernels (a 6-layer Llama's prefill graph: 73 kernels, 6 of each per-layer one), which differ
// only in their names and in the comments naming their IR values. The second of a kind is
// printed as a forward to the first, so g++ compiles each distinct kernel once.
#pragma once
#include <string>
#include <unordered_map>

namespace af::codegen {

/// The kernels of one translation unit seen so far, by their code with names and comments
/// taken out.
class SharedCode {
 public:
  /// The name of an earlier kernel whose source is `source` with `name` in place of its own, or
  /// "" (and `source` is remembered as `name`'s).
  std::string same_as(const std::string& name, const std::string& source);

 private:
  std::unordered_map<std::string, std::string> first_;  // canonical code -> first kernel's name
};

/// The forwards that make kernel `name` run `first`'s code: its TilingData type, tiling and
/// kernel functions.
std::string forward_kernel(const std::string& name, const std::string& first);

}  // namespace af::codegen
