// LoopNestBuilder: index expressions as reads, writes and iotas over a LoopSpace's axes.
#include "ascir/loop_nest_builder.h"

#include <algorithm>

#include "graph/op_registry.h"
#include "support/error.h"

namespace af::ascir {
LoopNestBuilder::LoopNestBuilder(std::string name, LoopSpace space)
    : Builder(std::move(name)), space_(std::move(space)), axis_symbols_(space_.axis_symbols()) {
  for (const sym::Expr& size : space_.axes()) add_axis(size);
}

int LoopNestBuilder::read_at(const std::string& name, DType dtype, const sym::Linear& at) {
  return load(data(name, dtype, at.coeffs, at.rest));
}

int LoopNestBuilder::read(const std::string& name, DType dtype, const sym::Expr& index) {
  sym::Linear at = space_.affine(index, "load of " + name);
  if (!(kTracedTypes & graph::mask_of(dtype))) return -1;
  return read_at(name, dtype, at);
}

int LoopNestBuilder::gather(const std::string& name, DType dtype, const sym::Expr& index,
                            const std::string& row_symbol, int at, int64_t bound) {
  std::optional<sym::Linear> rows = sym::linear_in(index, {row_symbol});
  std::optional<int64_t> row = rows ? rows->coeffs[0].as_const() : std::nullopt;
  if (!row || *row < 1)
    throw CompileError("load of " + name + ": index " + index.str() +
                       " is not a row gather of constant stride");
  sym::Linear rest = space_.affine(rows->rest, "load of " + name);
  return Builder::gather(data(name, dtype, rest.coeffs, rest.rest), at, *row, bound);
}

void LoopNestBuilder::write(const std::string& name, int x, DType dtype, const sym::Expr& index) {
  sym::Linear at = space_.affine(index, "store of " + name);
  store(name, x, dtype, at.coeffs, at.rest);
}

bool LoopNestBuilder::same_index(const sym::Expr& a, const sym::Expr& b) const {
  return space_.to_axes(a) == space_.to_axes(b);
}

std::pair<sym::Expr, sym::Expr> LoopNestBuilder::bounds(const sym::Expr& index) const {
  sym::Linear at = space_.affine(index, "a bound check");
  sym::Expr lo = at.rest, hi = at.rest;
  for (size_t a = 0; a < at.coeffs.size(); ++a) {
    std::optional<bool> up = sym::sign_of(at.coeffs[a]);
    if (!up) throw CompileError("index " + index.str() + ": the sign of a stride is not known");
    (*up ? hi : lo) += at.coeffs[a] * (space_.axes()[a] - 1);
  }
  return {lo, hi};
}

sym::Expr LoopNestBuilder::count(const std::vector<int>& axes) const {
  sym::Expr n = 1;
  for (int a : axes) n = n * space_.axes().at(static_cast<size_t>(a));
  return n;
}

std::vector<int> LoopNestBuilder::reduced_axes(int reduce) const {
  std::vector<bool> in = varies(node(reduce).inputs.at(0)), out = varies(reduce);
  std::vector<int> axes;
  for (size_t a = 0; a < in.size(); ++a)
    if (in[a] && !out[a]) axes.push_back(static_cast<int>(a));
  return axes;
}

int LoopNestBuilder::mean_of(int sum, const sym::Expr& n) {
  if (node(sum).op != "reduce_sum") return -1;
  std::vector<int> axes = reduced_axes(sum);
  if (count(axes) != n) return -1;
  return reduce("reduce_mean", node(sum).inputs.at(0), axes);
}

int LoopNestBuilder::index_value(const sym::Expr& index, DType dtype) {
  const bool floating = dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16;
  if (!floating && dtype != DType::I64 && dtype != DType::I32)
    throw CompileError("index_expr of dtype " + std::string(dtype_name(dtype)) +
                       " (kernels compute f32, f16, bf16, i64, i32)");
  sym::Expr e = space_.to_axes(index);
  if (!sym::uses_any(e, axis_symbols_)) {
    std::optional<int64_t> c = e.as_const();
    if (!c) throw CompileError("index_expr " + index.str() + " (a size as an integer value)");
    return floating ? scalar(static_cast<double>(*c), DType::F32) : scalar(*c, dtype);
  }
  int v = sym::linear_in(e, axis_symbols_) ? iota(e) : integer_value(e);
  return cast(floating ? cast(v, DType::F32) : v, dtype);  // f16/bf16: rounded from f32
}

int LoopNestBuilder::iota(const sym::Expr& e) {
  sym::Linear at = *sym::linear_in(e, axis_symbols_);
  sym::Expr up = 0, down = 0;
  for (size_t a = 0; a <= at.coeffs.size(); ++a) {
    const sym::Expr& c = a < at.coeffs.size() ? at.coeffs[a] : at.rest;
    const sym::Expr x = a < at.coeffs.size() ? sym::Expr::symbol(axis_symbols_[a]) : 1;
    std::optional<bool> pos = sym::sign_of(c);
    if (!pos) throw CompileError("index_expr " + e.str() + ": the sign of a stride is not known");
    (*pos ? up : down) += (*pos ? c : -c) * x;
  }
  if (down == sym::Expr(0)) return arange_read(at);
  return compute("sub", {iota(up), iota(down)});
}

int LoopNestBuilder::arange_read(const sym::Linear& at) {
  sym::Expr length = at.rest + 1;
  for (size_t a = 0; a < at.coeffs.size(); ++a) length += at.coeffs[a] * (space_.axes()[a] - 1);
  if (std::find(arange_lengths_.begin(), arange_lengths_.end(), length) == arange_lengths_.end())
    arange_lengths_.push_back(length);
  return read_at(kArange, DType::I64, at);
}

std::optional<sym::Expr> LoopNestBuilder::arange_length() const {
  if (arange_lengths_.empty()) return std::nullopt;
  sym::Expr n = arange_lengths_[0];
  for (const sym::Expr& m : arange_lengths_) n = sym::Expr::max(n, m);
  return n;
}

int LoopNestBuilder::integer_value(const sym::Expr& e) {
  if (!sym::uses_any(e, axis_symbols_)) {
    std::optional<int64_t> c = e.as_const();
    if (!c) throw CompileError("index_expr " + e.str() + " (a size as an integer value)");
    return scalar(*c, DType::I64);
  }
  if (sym::linear_in(e, axis_symbols_)) return iota(e);
  sym::Expr linear = 0;
  std::vector<int> parts;
  for (const sym::Term& t : e.terms()) {
    sym::Expr invariant = t.coeff, term = t.coeff;
    for (const sym::Factor& f : t.factors) term = term * f.expr();
    if (sym::linear_in(term, axis_symbols_)) {
      linear += term;
      continue;
    }
    int v = -1;
    for (const sym::Factor& f : t.factors) {
      if (!sym::uses_any(f.expr(), axis_symbols_)) {
        invariant = invariant * f.expr();
        continue;
      }
      int fv;
      if (!f.call) {
        fv = iota(f.expr());
      } else if (*f.call == sym::CallKind::Max && f.args[0] == -f.args[1]) {
        fv = compute("abs", {integer_value(f.args[0])});
      } else if (*f.call == sym::CallKind::Max || *f.call == sym::CallKind::Min) {
        fv = compute(*f.call == sym::CallKind::Max ? "maximum" : "minimum",
                     {integer_value(f.args[0]), integer_value(f.args[1])});
      } else {
        throw CompileError("index_expr " + e.str() + ": " + f.expr().str() + " of loop indices");
      }
      v = v < 0 ? fv : compute("mul", {v, fv});
    }
    if (invariant != sym::Expr(1)) v = compute("mul", {v, integer_value(invariant)});
    parts.push_back(v);
  }
  if (linear != sym::Expr(0)) parts.insert(parts.begin(), integer_value(linear));
  int out = parts[0];
  for (size_t i = 1; i < parts.size(); ++i) out = compute("add", {out, parts[i]});
  return out;
}

}  // namespace af::ascir
