// The one printer of a kernel's TilingData struct and of its tiling function's opening, for every
// target (runtime/include/autofuse_abi.h: af_tiling_header first, at most
// AF_MAX_TILING_DATA_BYTES; `K_tiling(symbols, target, tiling_data)`).
#pragma once
#include <string>
#include <vector>

#include "codegen/loop_nest.h"

namespace af::codegen {

/// One field of a TilingData struct after the header: its C type, name and comment ("" none).
struct TilingField {
  std::string type;
  std::string name;
  std::string comment;
};

/// The fields every loop nest's TilingData starts with: its size symbols, then its tile and block
/// parameters (`tile_comment` says what the tile is on the target).
std::vector<TilingField> nest_tiling_fields(const KernelContext& k,
                                            const std::string& tile_comment);

/// `struct <kernel>_TilingData { af_tiling_header header; <fields> };` and the static_assert
/// that it fits AF_MAX_TILING_DATA_BYTES.
std::string tiling_data_struct(const std::string& kernel, const std::vector<TilingField>& fields);

/// The opening of `<kernel>_tiling` (AF_EXPORT, the ABI's signature) up to and including the
/// line binding `td` to its TilingData; then, for each of `symbol_vars` (the C variables of the
/// kernel's size symbols, in the order the runtime passes them), the value read from `symbols`
/// and stored in td.
std::string tiling_function_head(const std::string& kernel,
                                 const std::vector<std::string>& symbol_vars);

}  // namespace af::codegen
