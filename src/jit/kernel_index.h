// The JIT cache's kernel index: for a kernel's canonical code (codegen/canonical_code.h) built by
// one toolchain, the cached module that already holds it and its name there. A graph whose
// kernels other graphs compiled (a model's prefill and decode graphs, its static- and
// dynamic-cache graphs, a second model of the same architecture) loads those modules instead of
// compiling the kernels again. Each entry is `<dir>/<kernel key>.kernel` beside the modules, as
// private as they are (docs/cache.md).
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "jit/compile.h"
#include "jit/module.h"

namespace af::jit {

/// A kernel found in the index: the loaded module that holds it and its name there (the module
/// exports `<name>_tiling` and `<name>_kernel`).
struct IndexedKernel {
  std::shared_ptr<LoadedModule> module;
  std::string name;
};

/// The index key of a kernel whose canonical code is `canonical`, built by the toolchain whose
/// cache_key (of a request without a source: its compiler, flags, include dirs and their keyed
/// headers) is `toolchain`.
std::string kernel_key(const std::string& toolchain, const std::string& canonical);

/// The kernel of `key`, its module loaded (load_cached); nullopt when the index has no valid
/// entry for it, or its module is not in the cache, does not load or lacks the kernel's exports.
std::optional<IndexedKernel> find_kernel(const CompileRequest& req, const std::string& key);

/// Records that `module` (loaded from `req`'s cache) holds the kernel of `key` as `name`. An
/// entry that cannot be written is skipped: the index only saves compiles.
void index_kernel(const CompileRequest& req, const std::string& key, const LoadedModule& module,
                  const std::string& name);

}  // namespace af::jit
