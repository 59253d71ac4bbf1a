// CompileStats: counters of the JIT (compiles vs cache hits, seconds spent compiling).
#pragma once

namespace af {

/// Counters a test or benchmark reads (compiles vs cache hits, seconds spent).
struct CompileStats {
  int cxx_compiles = 0;
  int cache_hits = 0;
  double compile_seconds = 0;
};

}  // namespace af
