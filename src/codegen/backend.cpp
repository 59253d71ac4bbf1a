// Backend's defaults.
#include "codegen/backend.h"

#include "support/error.h"

namespace af::codegen {

std::string Backend::tiling_choice(const ascir::AscGraph&, const sym::Bindings&, int64_t,
                                   const target::Target&) const {
  throw CompileError("target " + std::string(name()) + " cannot evaluate its tiling here");
}

Package Backend::package(const std::vector<KernelUnit>&, const target::Target&,
                         const std::string&) const {
  throw CompileError("target " + std::string(name()) + " has no package format to export");
}

}  // namespace af::codegen
