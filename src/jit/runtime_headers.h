// Where the generated kernels' runtime headers (autofuse_cpu.h and the rest of
// src/runtime/include) are found: next to the installed binary that holds this code, or in the
// source tree it was built from.
#pragma once
#include <string>
#include <vector>

namespace af::jit {

/// The real path of the shared object or executable the core is linked into (autofuse/_C*.so,
/// autofuse-opt); "" when unknown.
std::string containing_object();

/// The directory holding autofuse_cpu.h for kernel compiles, searched once per process: the
/// `include` directory beside the shared object or executable containing the core (an
/// installed wheel: autofuse/_C*.so and autofuse/include, autofuse/bin/autofuse-opt and
/// autofuse/include), then the source tree of this build. Throws ToolchainError naming the
/// places looked at when none has the headers.
const std::string& runtime_include_dir();

/// The directories runtime_include_dir() looks at, in order (for its message and tests).
std::vector<std::string> runtime_include_candidates();

}  // namespace af::jit
