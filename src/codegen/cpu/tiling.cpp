// The tiling function of a kernel: its TilingCall, printed as C++ or evaluated (tiling.h).
#include "codegen/cpu/tiling.h"

#include <algorithm>

#include "codegen/tiling_data.h"
#include "graph/op_registry.h"
#include "runtime/include/autofuse_cpu_tiling.h"
#include "schedule/reduce_plan.h"
#include "support/error.h"

namespace af::codegen {
namespace {

/// The bytes every store of `g` writes (a row store of a reduction counts once per row): what
/// decides streaming stores.
sym::Expr store_bytes(const ascir::AscGraph& g) {
  sym::Expr bytes = 0;
  for (const auto& n : g.nodes)
    if (n.op == "store") bytes = bytes + dtype_size(n.out.dtype) * sym::product(n.out.repeats);
  return bytes;
}

/// K's TilingData: its size symbols, then tile, block and the streaming-store switch.
std::string cpu_tiling_data(const KernelContext& k) {
  std::vector<TilingField> fields = nest_tiling_fields(k, "tile size (elements)");
  fields.push_back({"int64_t", "stream_stores", "1: full output vectors use non-temporal stores"});
  return tiling_data_struct(k.name, fields);
}

/// The header of a tiling function: the symbols read into C variables and td.
std::string tiling_prologue(const KernelContext& k) {
  std::vector<std::string> vars;
  for (const auto& name : k.size_symbols) vars.push_back(k.sym_var.at(name));
  return tiling_function_head(k.name, vars);
}

/// The tiling function of a reduction: af_tiling_reduce picks the tile along the row, the rows
/// per block, block_dim and the TilingCase (tiling_key: all_load when the row buffer fits).
std::string reduce_tiling_function(const KernelContext& k, const TilingCall& c) {
  const std::string tile = k.sym_var.at(k.tile_param);
  std::string f = tiling_prologue(k);
  f += "  int64_t tile = 0, block = 0, block_dim = 1, key = 0;\n";
  const std::string compute = std::to_string(c.compute_milli) + " / AF_LANES";
  const std::string model = std::to_string(c.passes) + ", af_max(" +
                            std::to_string(c.memory_milli) + ", " + compute + "), af_max(" +
                            std::to_string(c.split_memory_milli) + ", " + compute + ")";
  if (c.family == ascir::ScheduleFamily::ReduceInner) {
    f += "  af_tiling_reduce(AF_LANES, " + cpp_expr(k, c.a) + ", " + cpp_expr(k, c.b) + ", " +
         std::to_string(c.bytes_per_element) + ", " + std::to_string(c.ub_bytes) + ", " +
         (c.two_cases ? "1" : "0") + ", " + model + ", target, &tile, &block, &block_dim, &key);\n";
  } else {
    // One chunk of AF_OUTER_VECTORS x AF_LANES columns per row of the block split; the row
    // "length" is the reduced extent times the chunk.
    f += "  const int64_t " + tile + " = AF_LANES * AF_OUTER_VECTORS;\n";
    f += "  af_tiling_reduce(AF_LANES, " + cpp_expr(k, c.a) + ", " + cpp_expr(k, c.b) + " * " +
         tile + ", 0, 0, 0, " + model + ", target, &tile, &block, &block_dim, &key);\n";
    f += "  tile = " + tile + ";\n";
  }
  f += "  td->" + tile + " = tile;\n";
  f += "  td->" + k.sym_var.at(k.block_param) + " = block;\n";
  f += "  td->stream_stores = " +
       (c.family == ascir::ScheduleFamily::ReduceInner
            ? "af_tiling_stream_stores(" + cpp_expr(k, c.output_bytes) + ")"
            : std::string("0")) +
       ";\n";
  f += "  td->header.block_dim = block_dim;\n";
  f += "  td->header.tiling_key = key;\n";
  f += "}\n";
  return f;
}

/// The tiling function: stores the symbols, then af_tiling_elementwise picks the tile size, the
/// tiles per block and block_dim from the vectorized dim's size and the outer dims' product.
std::string elementwise_tiling_function(const KernelContext& k, const TilingCall& c) {
  std::string f = tiling_prologue(k);
  f += "  int64_t tile = 0, block = 0, block_dim = 1;\n";
  f += "  af_tiling_elementwise(AF_LANES, " + cpp_expr(k, c.a) + ", " + cpp_expr(k, c.b) + ", " +
       std::to_string(c.bytes_per_element) + ", " + std::to_string(c.ub_bytes) + ", af_max(" +
       std::to_string(c.memory_milli) + ", " + std::to_string(c.compute_milli) +
       " / AF_LANES), target, &tile, &block, &block_dim);\n";
  f += "  td->" + k.sym_var.at(k.tile_param) + " = tile;\n";
  f += "  td->" + k.sym_var.at(k.block_param) + " = block;\n";
  f += "  td->stream_stores = af_tiling_stream_stores(" + cpp_expr(k, c.output_bytes) + ");\n";
  f += "  td->header.block_dim = block_dim;\n";
  f += "  td->header.tiling_key = " + std::to_string(k.g->schedule->tiling_key) + ";\n";
  f += "}\n";
  return f;
}

}  // namespace

TilingCall tiling_call(const KernelContext& k) {
  const ascir::AscGraph& g = *k.g;
  const ascir::ScheduleInfo& s = *g.schedule;
  auto param_free = [&](const sym::Expr& e, const std::string& what) {
    for (const auto& name : e.symbols())
      if (name == k.tile_param || name == k.block_param)
        throw CompileError("codegen @" + g.name + ": " + what + " depends on tiling parameter " +
                           name);
  };
  TilingCall c;
  c.family = s.family;
  c.bytes_per_element = s.bytes_per_element;
  c.ub_bytes = s.ub_bytes;
  c.two_cases = s.tiling_cases.size() > 1;
  c.output_bytes = store_bytes(g);
  c.memory_milli = s.bytes_per_element * 1000 / 8;
  for (const ascir::AscNode& n : g.nodes) {
    const graph::OpDef* def = graph::find_op(n.op);
    if (n.op == "cast") c.compute_milli += 1000;
    if (def && (def->cls == graph::OpClass::Elementwise || def->cls == graph::OpClass::Reduce))
      c.compute_milli += static_cast<int64_t>(def->cost * 1000);
  }
  if (is_reduce_case(k)) {
    // Per row element: every full load read once (all_load, from the row buffer after the first
    // pass) or once per pass (split), every full store written once.
    const schedule::ReducePlan& plan = k.plan;
    int64_t load_bytes = 0, store_bytes = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const ascir::AscNode& n = g.nodes[i];
      if (!plan.full[i]) continue;
      if (n.op == "load") load_bytes += dtype_size(n.out.dtype);
      if (n.op == "store") store_bytes += dtype_size(n.out.dtype);
    }
    c.passes = plan.passes;
    c.memory_milli = (load_bytes + store_bytes) * 1000 / 8;
    c.split_memory_milli = (plan.passes * load_bytes + store_bytes) * 1000 / 8;
    c.a = g.axis(k.block_parent).size;
    if (c.family == ascir::ScheduleFamily::ReduceInner) {
      c.b = g.axis(k.vec_parent).size;
    } else {
      sym::Expr reduced = 1;
      for (int a : reduced_loops(k)) reduced = reduced * g.axis(a).size;
      c.b = reduced;
    }
    return c;
  }
  c.a = g.axis(k.vec_parent).size;
  param_free(c.a, "the vectorized dim's size");
  c.b = 1;
  if (k.block_parent != k.tile_outer) {
    const auto& x = g.axis(k.block_parent);
    if (x.kind != ascir::AxisKind::Merged)
      throw CompileError("codegen @" + g.name +
                         ": the block axis must split the tile_outer axis "
                         "or a merge of it with the outer axes");
    for (int part : x.from)
      if (part != k.tile_outer) c.b = c.b * g.axis(part).size;
  }
  param_free(c.b, "the outer dims' size");
  param_free(c.output_bytes, "the output size");
  return c;
}

std::string tiling_source(const KernelContext& k) {
  TilingCall c = tiling_call(k);
  return cpu_tiling_data(k) + "\n" +
         (is_reduce_case(k) ? reduce_tiling_function(k, c) : elementwise_tiling_function(k, c));
}

TilingChoice evaluate_tiling(const ascir::AscGraph& g, const sym::Bindings& values, int64_t cores,
                             int64_t lanes) {
  KernelContext k = analyze_kernel(g, g.name);
  TilingCall c = tiling_call(k);
  af_target t{cores, 0, 0, lanes * 4};
  TilingChoice out;
  // reduce_outer's rows are chunks of a fixed width: the tile parameter is known up front.
  const int64_t chunk = lanes * AF_OUTER_VECTORS;
  sym::Bindings v = values;
  if (c.family == ascir::ScheduleFamily::ReduceOuter) v[k.tile_param] = chunk;
  int64_t a = c.a.eval(v), b = c.b.eval(v);
  if (c.family == ascir::ScheduleFamily::Elementwise) {
    af_tiling_elementwise(lanes, a, b, c.bytes_per_element, c.ub_bytes,
                          std::max(c.memory_milli, c.compute_milli / lanes), &t, &out.tile,
                          &out.block, &out.block_dim);
    out.tiling_key = g.schedule->tiling_key;
    out.stream_stores = af_tiling_stream_stores(c.output_bytes.eval(values));
  } else if (c.family == ascir::ScheduleFamily::ReduceInner) {
    af_tiling_reduce(lanes, a, b, c.bytes_per_element, c.ub_bytes, c.two_cases ? 1 : 0, c.passes,
                     std::max(c.memory_milli, c.compute_milli / lanes),
                     std::max(c.split_memory_milli, c.compute_milli / lanes), &t, &out.tile,
                     &out.block, &out.block_dim, &out.tiling_key);
    out.stream_stores = af_tiling_stream_stores(c.output_bytes.eval(values));
  } else {
    af_tiling_reduce(lanes, a, b * chunk, 0, 0, 0, c.passes,
                     std::max(c.memory_milli, c.compute_milli / lanes),
                     std::max(c.split_memory_milli, c.compute_milli / lanes), &t, &out.tile,
                     &out.block, &out.block_dim, &out.tiling_key);
    out.tile = chunk;
  }
  return out;
}

std::string tiling_choice_str(const ascir::AscGraph& g, const TilingChoice& c) {
  const std::vector<ascir::TilingCase> cases = g.schedule->cases();
  std::string_view name = c.tiling_key >= 0 && c.tiling_key < static_cast<int64_t>(cases.size())
                              ? ascir::name(cases[static_cast<size_t>(c.tiling_key)])
                              : ascir::name(g.schedule->family);
  return "tiling_key " + std::to_string(c.tiling_key) + " (" + std::string(name) + ") tile " +
         std::to_string(c.tile) + " block " + std::to_string(c.block) + " block_dim " +
         std::to_string(c.block_dim) + " stream_stores " + std::to_string(c.stream_stores);
}

}  // namespace af::codegen
