// What the Ascend C kernel printer reads off a kernel (kernel_facts.h).
#include "codegen/ascendc/kernel_facts.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "codegen/ascendc/op_rules.h"
#include "graph/op_registry.h"

namespace af::codegen {

using ascir::AscGraph;
using ascir::AscNode;

/// Ascend C's element type of a dtype a kernel moves ("" for one it does not).
std::string_view device_type(DType t) {
  switch (t) {
    case DType::F32: return "float";
    case DType::F16: return "half";
    case DType::BF16: return "bfloat16_t";
    case DType::Bool: return "uint8_t";  // 0 / 1 per byte in GM; f32 0 / 1 in UB
    default: return "";
  }
}

/// An f32 C expression for `v`, exact: a hexadecimal literal, inf and NaN by their bits.
std::string float_literal(double v) {
  float f = static_cast<float>(v);
  if (std::isnan(f)) return "af_f32_bits(0x7fc00000u)";
  if (std::isinf(f)) return f > 0 ? "af_f32_bits(0x7f800000u)" : "af_f32_bits(0xff800000u)";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%af", static_cast<double>(f));
  return buf;
}

double scalar_value(const AscNode& n) {
  auto it = n.attrs.find("value");
  if (it != n.attrs.end() && std::holds_alternative<double>(it->second))
    return std::get<double>(it->second);
  if (it != n.attrs.end() && std::holds_alternative<int64_t>(it->second))
    return static_cast<double>(std::get<int64_t>(it->second));
  return NAN;
}

/// Data nodes of k loaded along the vectorized axis: each takes a VECIN queue.
int queued_inputs(const KernelContext& k) {
  const AscGraph& g = *k.g;
  int count = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const AscNode& n = g.nodes[i];
    if (n.op != "data" || lane_stride(k, n) == sym::Expr(0)) continue;
    for (const AscNode& u : g.nodes)
      if (u.op == "load" && u.inputs.at(0) == static_cast<int>(i)) {
        ++count;
        break;
      }
  }
  return count;
}

/// Store nodes of g: each takes a VECOUT queue.
int stored_outputs(const AscGraph& g) {
  return static_cast<int>(std::count_if(g.nodes.begin(), g.nodes.end(),
                                        [](const AscNode& n) { return n.op == "store"; }));
}

/// Whether k's schedule is reduce_inner (whole rows in UB, reduced by ReduceSum/ReduceMax).
bool rows_in_ub(const KernelContext& k) {
  return k.g->schedule->family == ascir::ScheduleFamily::ReduceInner;
}

/// Whether k's schedule is reduce_outer (a tile of columns accumulated over the reduced rows).
bool columns(const KernelContext& k) {
  return k.g->schedule->family == ascir::ScheduleFamily::ReduceOuter;
}

/// Whether node i of k is computed per element (else once per row: a reduction's result and
/// what follows from it; for reduce_outer a tile of columns).
bool full(const KernelContext& k, int i) {
  return !ascir::is_reduce(k.g->schedule->family) || k.plan.full.at(static_cast<size_t>(i));
}

namespace {
constexpr ReduceCall kReduceCalls[] = {
    {"reduce_sum", "af_sum_tile", "Add", "af_fold_add", "0.0f", false, true},
    {"reduce_mean", "af_sum_tile", "Add", "af_fold_add", "0.0f", true, true},
    {"reduce_max", "AscendC::ReduceMax", "Max", "af_fold_max", "af_f32_bits(0xff800000u)", false,
     false},
    {"reduce_min", "AscendC::ReduceMin", "Min", "af_fold_min", "af_f32_bits(0x7f800000u)", false,
     false},
    {"reduce_any", "AscendC::ReduceMax", "Max", "af_fold_max", "0.0f", false,
     false},  // of bool's 0 / 1
    {"reduce_all", "AscendC::ReduceMin", "Min", "af_fold_min", "1.0f", false, false},
};

}  // namespace

const ReduceCall* find_reduce(const std::string& op) {
  for (const ReduceCall& r : kReduceCalls)
    if (r.op == op) return &r;
  return nullptr;
}

/// The node-level reason (see ascendc_reason) or "".
std::string node_reason(const KernelContext& k, int i) {
  const AscNode& n = k.g->nodes[static_cast<size_t>(i)];
  const std::string what = "%" + n.name + " (" + n.op + ")";
  if (n.op == "output") return "";
  if (device_type(n.out.dtype).empty())
    return what + ": dtype " + std::string(dtype_name(n.out.dtype)) + " has no Ascend C mapping";
  if (n.op == "data" || n.op == "store") {
    sym::Expr s = lane_stride(k, n);
    bool row_store = n.op == "store" && s == sym::Expr(0) && !full(k, i) && rows_in_ub(k);
    if (n.op == "store" && s == sym::Expr(0) && !row_store)
      return what + ": one element stored per row outside a row reduction";
    if (s != sym::Expr(1) && s != sym::Expr(0) && dtype_size(n.out.dtype) == 1)
      return what + ": a bool with stride " + s.str() +
             " along the vectorized axis (Gather and Brcb move 2- and 4-byte elements)";
    return "";
  }
  if (graph::is_reduce_op(n.op)) {
    if (!find_reduce(n.op)) return what + ": no Ascend C reduction for this op";
    if (!full(k, n.inputs.at(0))) return what + ": reduces a row value";
    return "";
  }
  if (n.op == "load" && n.inputs.size() == 2)
    return what + ": a gather (a load indexed by a value) has no Ascend C form";
  if (n.op == "load" || n.op == "broadcast" || n.op == "scalar" || n.op == "cast") return "";
  if (!find_rule(n)) return what + ": no Ascend C mapping for this op";
  return "";
}

}  // namespace af::codegen
