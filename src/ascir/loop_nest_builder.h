// LoopNestBuilder: a Builder over a loop nest's kernel axes whose reads, writes and index values
// are given by index expressions in the loop variables (the Inductor frontend's kernels).
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ascir/builder.h"
#include "ascir/loop_space.h"

namespace af::ascir {

/// A Builder whose axes are a LoopSpace's: a frontend that traces loop bodies reads, writes and
/// computes index values by the bodies' own index expressions, and this class turns each into
/// strides and an offset over the axes (or a CompileError with the reason it cannot).
///
/// An index value (Inductor's index_expr) is computed in i64, then cast, as Inductor computes
/// it: an affine index reads the arange table, the kernel input kArange whose element i is i (the
/// caller passes one of at least arange_length() elements), at that index; a decreasing one is
/// the difference of two such reads; abs, min, max, sums and products of them compute in i64.
class LoopNestBuilder : public Builder {
 public:
  /// The name of the arange table input (an i64 tensor whose element i is i).
  static constexpr const char* kArange = "af_arange";

  LoopNestBuilder(std::string name, LoopSpace space);

  const LoopSpace& space() const { return space_; }

  /// The tile of input `name` of `dtype` at `index`; -1 (no node) when values may not have
  /// `dtype` (the use of the value fails, with its reason).
  int read(const std::string& name, DType dtype, const sym::Expr& index);
  /// Rows of input `name` picked by integer value `at`: `index` is `row` * row_symbol + an affine
  /// rest, `row` a positive constant; the kernel checks 0 <= at < bound.
  int gather(const std::string& name, DType dtype, const sym::Expr& index,
             const std::string& row_symbol, int at, int64_t bound);
  /// The value of `index` at every point of the loop nest, as `dtype` (f32, f16, bf16, i64 or
  /// i32; a loop-invariant one: a constant).
  int index_value(const sym::Expr& index, DType dtype);
  /// Stores `x` as output `name` of `dtype` at `index`.
  void write(const std::string& name, int x, DType dtype, const sym::Expr& index);

  /// Whether two indices address the same element at every point of the loop nest.
  bool same_index(const sym::Expr& a, const sym::Expr& b) const;
  /// The lowest and highest value of an affine index over the loop ranges.
  std::pair<sym::Expr, sym::Expr> bounds(const sym::Expr& index) const;
  /// The elements the axes `axes` count together.
  sym::Expr count(const std::vector<int>& axes) const;
  /// reduce_mean of what `sum` sums when `sum` is a reduce_sum over `count` elements; else -1.
  int mean_of(int sum, const sym::Expr& count);
  /// The least length of the arange table the kernel reads; nullopt where it reads none.
  std::optional<sym::Expr> arange_length() const;

 private:
  int read_at(const std::string& name, DType dtype, const sym::Linear& at);
  int iota(const sym::Expr& e);           // e linear over the axes, as i64 values
  int integer_value(const sym::Expr& e);  // e over the axes, as i64 values
  int arange_read(const sym::Linear& at);
  std::vector<int> reduced_axes(int reduce) const;

  LoopSpace space_;
  std::vector<std::string> axis_symbols_;
  std::vector<sym::Expr> arange_lengths_;  // of each read, distinct
};

}  // namespace af::ascir
