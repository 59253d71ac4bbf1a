#include "codegen/cpu/shared_code.h"

#include "codegen/canonical_code.h"

namespace af::codegen {

std::string SharedCode::same_as(const std::string& name, const std::string& source) {
  auto [it, added] = first_.emplace(canonical_code(source, {name}), name);
  return added ? std::string() : it->second;
}

std::string forward_kernel(const std::string& name, const std::string& first) {
  return "using " + name + "_TilingData = " + first + "_TilingData;\n\n" +  //
         "AF_EXPORT void " + name +
         "_tiling(const int64_t* symbols, const af_target* target, void* tiling_data) {\n" + "  " +
         first + "_tiling(symbols, target, tiling_data);\n}\n\n" +  //
         "AF_EXPORT void " + name +
         "_kernel(void* const* args, const void* tiling_data, int64_t block_idx) {\n" + "  " +
         first + "_kernel(args, tiling_data, block_idx);\n}\n";
}

}  // namespace af::codegen
