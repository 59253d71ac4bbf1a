// The JIT: compile a generated C++ translation unit with the system compiler into a shared
// object, cached on disk under a content hash, verified and loaded (docs/cache.md).
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "jit/hash.h"
#include "jit/sanitize.h"
#include "jit/stats.h"

namespace af::jit {

class LoadedModule;

/// One translation unit to build and load, and how.
struct CompileRequest {
  std::string source;                     // the C++ text
  std::string cxx = "g++";                // compiler (PATH-searched when it has no '/')
  std::vector<std::string> flags;         // e.g. {"-O2", "-std=c++17", "-mavx2"}
  std::vector<std::string> include_dirs;  // -I dirs; their is_keyed_header files are keyed
  std::vector<std::string> libs;          // -l names, e.g. "sleef"
  std::string cache_dir;                  // empty = default_cache_dir()
  std::string tag;                        // kernel/graph name for messages and temp file names
  std::function<void(const std::string&)> log;  // receives log lines; may be empty
  /// The header to precompile when the source starts by including it (jit/pch.h; the backend's
  /// Toolchain::pch_header); "": no PCH.
  std::string pch_header;
  Sanitizers sanitize;  // instrument the build (AUTOFUSE_SANITIZE); part of the command and key
};

/// The flags every compile of `req` gets (its own, then the sanitizers'); the PCH is built with
/// the same.
std::vector<std::string> build_flags(const CompileRequest& req);

/// The cache key of a request (32 hex digits): FNV-1a-128 of the source, the compiler identity,
/// the full compile command, the keyed headers, AUTOFUSE_VERSION and AF_ABI_VERSION. Runs
/// `<cxx> --version` once per process; throws ToolchainError when the compiler is missing.
std::string cache_key(const CompileRequest& req);

/// The compiler's argv for building `source_path` into the shared object `output_path`; a
/// non-empty `pch_dir` (see jit/pch.h) goes first among the -I dirs.
std::vector<std::string> compile_command(const CompileRequest& req, const std::string& source_path,
                                         const std::string& output_path,
                                         const std::string& pch_dir = "");

/// Is `name` a runtime header whose edits must invalidate cached objects (autofuse_*.h, and
/// ascendc_emu's emu_*.h and kernel_operator.h)?
bool is_keyed_header(const std::string& name);

/// The keyed headers of `dir`, sorted by name (empty when `dir` cannot be read).
std::vector<std::string> keyed_headers_in(const std::string& dir);

/// Mixes every include dir and the names and contents of its keyed headers (sorted) into `h`.
void hash_keyed_headers(const std::vector<std::string>& dirs, Hasher128& h);

/// The cache directory `req` builds in (its cache_dir, else default_cache_dir()), checked
/// private (ensure_private_dir).
std::string cache_dir_of(const CompileRequest& req);

/// Returns the loaded module for `req`: from this process's memo, else from the verified disk
/// cache, else compiled now (then published to the cache). Adds to *stats (may be null).
/// Thread-safe; each cache entry is loaded at most once per process while someone holds it.
/// Throws ToolchainError (missing compiler, compile error, unusable cache dir, load failure, a
/// sanitizer build this process cannot load).
std::shared_ptr<LoadedModule> compile_and_load(const CompileRequest& req, CompileStats* stats);

/// The module cached under `key` (a cache_key of an earlier request with `req`'s cache dir),
/// from the memo or the verified disk cache, as compile_and_load loads it; nullptr when the
/// entry is missing, corrupt or does not load. Never compiles. Adds a cache hit to *stats.
std::shared_ptr<LoadedModule> load_cached(const CompileRequest& req, const std::string& key,
                                          CompileStats* stats);

}  // namespace af::jit
