// The JIT's precompiled header: a request's pch_header (the cpu backend's autofuse_cpu.h) parsed
// once per (compiler, flags, headers) into `<cache>/pch/<key>/<pch_header>.gch`, next to copies of
// the runtime headers, so that a kernel compile skips parsing immintrin.h and sleef.h. Layout and
// checks: docs/cache.md.
#pragma once
#include <optional>
#include <string>

#include "jit/compile.h"

namespace af::jit {

/// True when `req` may use a PCH: req.pch_header is set, $AUTOFUSE_JIT_PCH is not "0", the
/// source's first preprocessing line is `#include "<pch_header>"` (only comments and blank lines
/// before it), and an include dir holds that header.
bool wants_pch(const CompileRequest& req);

/// The PCH's key (32 hex digits): FNV-1a-128 of AUTOFUSE_VERSION, the compiler identity, the
/// flags, the host CPU (for =native flags), and the include dirs with their runtime headers.
std::string pch_key(const CompileRequest& req);

/// `<cache_dir>/pch/<pch_key(req)>`: where the PCH for `req` lives once built.
std::string pch_dir(const CompileRequest& req, const std::string& cache_dir);

/// Returns the verified PCH directory for `req` (to pass first among the -I dirs), building it
/// under the key's lock when it is missing or corrupt. Returns nullopt, after logging one line
/// through req.log, when `req` does not want a PCH or building it failed; never throws a
/// ToolchainError for a PCH problem (a missing compiler is still reported by the kernel compile).
std::optional<std::string> prepare_pch(const CompileRequest& req, const std::string& cache_dir);

/// Marks the PCH of `req` unusable for the rest of this process (a kernel compile with it failed
/// but succeeded without it); later requests compile without it.
void disable_pch(const CompileRequest& req, const std::string& cache_dir);

}  // namespace af::jit
