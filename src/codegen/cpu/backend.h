// The cpu target: C++ for the host CPU, the Backend every program can fall back to.
#pragma once
#include "codegen/backend.h"

namespace af::codegen {

/// The cpu Backend (registered as "cpu"): prints every kernel (it gives no reason to refuse
/// one; what it cannot print fails emit with a CompileError) as C++ over the vector library
/// runtime/include/autofuse_cpu.h, built by the JIT with g++ for the target's ISA.
const Backend& cpu_backend();

}  // namespace af::codegen
