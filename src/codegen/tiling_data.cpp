// The TilingData printer (tiling_data.h).
#include "codegen/tiling_data.h"

namespace af::codegen {

std::vector<TilingField> nest_tiling_fields(const KernelContext& k,
                                            const std::string& tile_comment) {
  std::vector<TilingField> fields;
  for (const auto& name : k.size_symbols)
    fields.push_back({"int64_t", k.sym_var.at(name), "size symbol " + name});
  fields.push_back({"int64_t", k.sym_var.at(k.tile_param), tile_comment});
  fields.push_back({"int64_t", k.sym_var.at(k.block_param), "tiles per block"});
  return fields;
}

std::string tiling_data_struct(const std::string& kernel, const std::vector<TilingField>& fields) {
  std::string s = "struct " + kernel + "_TilingData {\n  af_tiling_header header;\n";
  for (const TilingField& f : fields)
    s += "  " + f.type + " " + f.name + ";" + (f.comment.empty() ? "" : "  // " + f.comment) + "\n";
  return s + "};\nstatic_assert(sizeof(" + kernel + "_TilingData) <= AF_MAX_TILING_DATA_BYTES, \"" +
         kernel + ": tiling data too large\");\n";
}

std::string tiling_function_head(const std::string& kernel,
                                 const std::vector<std::string>& symbol_vars) {
  std::string f = "AF_EXPORT void " + kernel +
                  "_tiling(const int64_t* symbols, const af_target* target, void* tiling_data) {\n";
  f += "  " + kernel + "_TilingData* td = static_cast<" + kernel + "_TilingData*>(tiling_data);\n";
  for (size_t i = 0; i < symbol_vars.size(); ++i) {
    f += "  const int64_t " + symbol_vars[i] + " = symbols[" + std::to_string(i) + "];\n";
    f += "  td->" + symbol_vars[i] + " = " + symbol_vars[i] + ";\n";
  }
  return f;
}

}  // namespace af::codegen
