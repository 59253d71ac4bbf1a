// The host side of an Ascend C kernel (tiling.h).
#include "codegen/ascendc/tiling.h"

#include "codegen/ascendc/kernel_facts.h"
#include "codegen/tiling_data.h"

namespace af::codegen {

std::string ascendc_tiling_data(const KernelContext& k) {
  std::vector<TilingField> fields = nest_tiling_fields(k, "elements per UB tile");
  return tiling_data_struct(k.name, fields);
}

std::string tiling_function(const KernelContext& k, const target::Target& t,
                            const std::string& bytes_per_element, int64_t ub_for_tiles) {
  const ascir::AscGraph& g = *k.g;
  const ascir::ScheduleInfo& s = *g.schedule;
  sym::Expr a = g.axis(k.vec_parent).size, b = 1;
  if (k.block_parent != k.tile_outer)
    for (int part : g.axis(k.block_parent).from)
      if (part != k.tile_outer) b = b * g.axis(part).size;
  std::vector<std::string> vars;
  for (const auto& name : k.size_symbols) vars.push_back(k.sym_var.at(name));
  std::string f = tiling_function_head(k.name, vars);
  f += "  (void)target;  // the device's UB and vector cores are this source's constants\n";
  f +=
      "  int64_t tile = 0, block = 0, block_dim = 0, key = " + std::to_string(s.tiling_key) + ";\n";
  if (rows_in_ub(k)) {  // whole rows: tile = the row; the rows split into blocks
    a = g.axis(k.vec_parent).size;
    b = g.axis(k.block_parent).size;
  }
  f += std::string(rows_in_ub(k) ? "  af_ascendc_tiling_rows("
                                 : "  af_ascendc_tiling_elementwise(") +
       cpp_expr(k, a) + ", " + cpp_expr(k, b) + ", " + bytes_per_element + ", " +
       std::to_string(ub_for_tiles) + ", " + std::to_string(t.device.cores) +
       ", &tile, &block, &block_dim" + (rows_in_ub(k) ? ", &key" : "") + ");\n";
  f += "  td->" + k.sym_var.at(k.tile_param) + " = tile;\n";
  f += "  td->" + k.sym_var.at(k.block_param) + " = block;\n";
  f += "  td->header.block_dim = block_dim;\n";
  f += "  td->header.tiling_key = key;\n";
  return f + "}\n";
}

}  // namespace af::codegen
