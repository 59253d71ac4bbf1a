// The CUDA kernel and tiling printer (kernel.h).
#include "codegen/cuda/kernel.h"

#include <cmath>
#include <cstdio>

#include "codegen/cuda/ops.h"
#include "codegen/tiling_data.h"
#include "graph/op_registry.h"
#include "support/error.h"

namespace af::codegen {
namespace {

using ascir::AscGraph;
using ascir::AscNode;

/// The dtype an op's registry form is chosen by: its operand's (where: its value operands').
DType operand_dtype(const AscGraph& g, const AscNode& n) {
  return g.nodes.at(static_cast<size_t>(n.inputs.at(n.op == "where" ? 1 : 0))).out.dtype;
}

std::vector<std::string> placeholder_args(size_t n) {
  std::vector<std::string> args;
  for (size_t i = 0; i < n; ++i) args.push_back("x" + std::to_string(i));
  return args;
}

/// A constant as a CUDA literal of lane type `lane` (inf and NaN by their bits).
std::string literal(const AscNode& n) {
  const Attr& v = n.attrs.at("value");
  if (n.out.dtype == DType::Bool) return std::get<int64_t>(v) ? "true" : "false";
  if (!is_floating(n.out.dtype)) return std::to_string(std::get<int64_t>(v)) + "LL";
  const double* d = std::get_if<double>(&v);
  double x = d ? *d : static_cast<double>(std::get<int64_t>(v));
  if (std::isnan(x)) return "__int_as_float(0x7fc00000)";
  if (std::isinf(x)) return x > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float(0xff800000)";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9gf", static_cast<double>(static_cast<float>(x)));
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s.insert(s.size() - 1, ".0");
  return s;
}

}  // namespace

std::string cuda_kernel_reason(const AscGraph& g) {
  if (!g.schedule) return "the kernel is not scheduled";
  if (g.schedule->family != ascir::ScheduleFamily::Elementwise)
    return "a " + std::string(ascir::name(g.schedule->family)) +
           " kernel (the CUDA target prints elementwise kernels so far)";
  for (const AscNode& n : g.nodes) {
    if (!cuda_lane_type(n.out.dtype))
      return "%" + n.name + " is " + std::string(dtype_name(n.out.dtype)) +
             ", which CUDA kernels do not compute";
    if (n.op == "load" && n.inputs.size() == 2) return "%" + n.name + " is a gather";
    const graph::OpDef* def = graph::find_op(n.op);
    if (!def || def->cls != graph::OpClass::Elementwise) continue;
    const DType t = operand_dtype(g, n);
    if (!cuda_lane_type(t) || !cuda_op_expr(n.op, t, placeholder_args(n.inputs.size()), n.attrs))
      return "%" + n.name + ": no CUDA form of " + n.op + " on " + std::string(dtype_name(t));
  }
  return "";
}

std::string cuda_tiling_data(const KernelContext& k) {
  std::vector<TilingField> fields = nest_tiling_fields(k, "tile size (elements)");
  fields.push_back({"int64_t", "threads", "threads per thread block"});
  return tiling_data_struct(k.name, fields);
}

std::string cuda_tiling_function(const KernelContext& k) {
  const AscGraph& g = *k.g;
  std::vector<std::string> vars;
  for (const auto& name : k.size_symbols) vars.push_back(k.sym_var.at(name));
  std::string f = tiling_function_head(k.name, vars);
  int64_t align = 1;
  for (const auto& p : g.schedule->params)
    if (p.name == k.tile_param) align = p.align;
  const std::string tile = k.sym_var.at(k.tile_param), block = k.sym_var.at(k.block_param);
  const std::string a = std::to_string(align);
  f += "  (void)target;\n";
  f += "  const int64_t extent = " + cpp_expr(k, g.axis(k.vec_parent).size) + ";\n";
  f += "  const int64_t " + tile + " = af_min((extent + " + a + " - 1) / " + a + " * " + a +
       ", 1024 / " + a + " * " + a + ");\n";
  f += "  const int64_t " + block + " = 1;\n";
  f += "  td->" + tile + " = " + tile + ";\n";
  f += "  td->" + block + " = " + block + ";\n";
  f += "  td->threads = af_min((" + tile + " + 31) / 32 * 32, 256);\n";
  f += "  td->header.block_dim = " + cpp_expr(k, g.axis(k.block_outer).size) + ";\n";
  f += "  td->header.tiling_key = " + std::to_string(g.schedule->tiling_key) + ";\n";
  f += "}\n";
  return f;
}

std::string cuda_kernel_function(const KernelContext& k) {
  const AscGraph& g = *k.g;
  std::vector<std::string> lines;
  auto line = [&](int depth, const std::string& s) {
    lines.push_back(std::string(2 * static_cast<size_t>(depth), ' ') + s);
  };
  std::string params = "const " + k.name + "_TilingData td";
  for (int i : g.data_nodes())
    params += ", const " + *cuda_storage_type(g.nodes[static_cast<size_t>(i)].out.dtype) +
              "* __restrict__ in" + index_attr(g.nodes[static_cast<size_t>(i)]);
  for (int i : g.output_nodes())
    params += ", " + *cuda_storage_type(g.nodes[static_cast<size_t>(i)].out.dtype) +
              "* __restrict__ out" + index_attr(g.nodes[static_cast<size_t>(i)]);
  line(0, "extern \"C\" __global__ void " + k.name + "_kernel(" + params + ") {");
  for (const auto& [name, var] : k.sym_var) line(1, "const int64_t " + var + " = td." + var + ";");
  for (const auto& a : g.axes)
    line(1, "const int64_t " + size_var(a.id) + " = " + cpp_expr(k, a.size) + ";  // " + a.name);
  const std::string bo = "i" + std::to_string(k.block_outer);
  line(1, "for (int64_t " + bo + " = blockIdx.x; " + bo + " < td.header.block_dim; " + bo +
              " += gridDim.x) {  // " + g.axis(k.block_outer).name);
  IndexDeriver idx(g, &lines, "    ");
  idx.set(k.block_outer, bo);
  int depth = 2;
  for (size_t l = 1; l + 1 < k.nest.size(); ++l) {
    const int a = k.nest[l];
    idx.set_indent(std::string(2 * static_cast<size_t>(depth), ' '));
    const std::string var = "i" + std::to_string(a);
    line(depth, "for (int64_t " + var + " = 0; " + var + " < " + loop_extent(k, idx, a) + "; ++" +
                    var + ") {  // " + g.axis(a).name);
    idx.set(a, var);
    ++depth;
  }
  idx.set_indent(std::string(2 * static_cast<size_t>(depth), ' '));
  idx.set(k.vec, "0", true);
  line(depth, "const int64_t n = " + loop_extent(k, idx, k.vec) + ";  // elements of this tile");
  std::vector<std::string> base(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const AscNode& n = g.nodes[i];
    if (n.op != "data" && n.op != "store") continue;
    base[i] = "b" + std::to_string(i);
    line(depth,
         "const int64_t " + base[i] + " = " + tile_base_offset(k, idx, n) + ";  // %" + n.name);
  }
  line(depth, "for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {");
  ++depth;
  std::vector<std::string> var(g.nodes.size());
  auto at = [&](size_t data) {
    const sym::Expr ls = lane_stride(k, g.nodes[data]);
    if (ls == sym::Expr(0)) return base[data];
    return base[data] + " + j" + (ls == sym::Expr(1) ? "" : " * " + cpp_expr(k, ls));
  };
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const AscNode& n = g.nodes[i];
    var[i] = "v" + std::to_string(i);
    const std::string lane = *cuda_lane_type(n.out.dtype);
    auto in = [&](size_t j) { return var.at(static_cast<size_t>(n.inputs.at(j))); };
    if (n.op == "data" || n.op == "output") continue;
    if (n.op == "broadcast") {
      var[i] = in(0);
    } else if (n.op == "load") {
      const size_t d = static_cast<size_t>(n.inputs.at(0));
      line(depth,
           "const " + lane + " " + var[i] + " = " +
               cuda_load_expr(n.out.dtype, "in" + index_attr(g.nodes[d]) + "[" + at(d) + "]") +
               ";");
    } else if (n.op == "store") {
      std::string out;
      for (const AscNode& user : g.nodes)
        if (user.op == "output" && user.inputs.at(0) == static_cast<int>(i))
          out = "out" + index_attr(user);
      if (out.empty()) codegen_fail(g, "%" + n.name + " feeds no output");
      line(depth, out + "[" + at(i) + "] = " + cuda_store_expr(n.out.dtype, in(0)) + ";");
    } else if (n.op == "scalar") {
      line(depth, "const " + lane + " " + var[i] + " = " + literal(n) + ";");
    } else if (n.op == "cast") {
      const DType from = g.nodes.at(static_cast<size_t>(n.inputs.at(0))).out.dtype;
      line(depth,
           "const " + lane + " " + var[i] + " = " + cuda_cast_expr(from, n.out.dtype, in(0)) + ";");
    } else {
      std::vector<std::string> args;
      for (size_t j = 0; j < n.inputs.size(); ++j) args.push_back(in(j));
      std::optional<std::string> e = cuda_op_expr(n.op, operand_dtype(g, n), args, n.attrs);
      if (!e) codegen_fail(g, "%" + n.name + ": no CUDA form of " + n.op);
      line(depth, "const " + lane + " " + var[i] + " = " + *e + ";  // %" + n.name);
    }
  }
  for (; depth > 0; --depth) line(depth - 1, "}");
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

}  // namespace af::codegen
