// Loop layout analysis for the Schedule pass: the global layout of every data and store tensor
// over the kernel's loop axes, size-1 axis removal, reordering by the output's strides and the
// merge of adjacent axes that are contiguous in every tensor.
#pragma once
#include <vector>

#include "ascir/asc_graph.h"

namespace af::schedule {

/// One tensor's extent and stride (in elements) along one loop dim.
struct DimLayout {
  sym::Expr repeat;
  sym::Expr stride;
};

/// A data or store node's global layout, one DimLayout per dim of its LoopLayout.
struct TensorLayout {
  int node = -1;
  std::vector<DimLayout> dims;
};

/// The loop dims (outer -> inner) with their sizes, and the layout of every data and store
/// tensor over them. A dim is one axis or, after merge_dims, a run of adjacent axes.
struct LoopLayout {
  std::vector<std::vector<int>> dims;  // axis ids per dim, outer -> inner
  std::vector<sym::Expr> sizes;        // size per dim
  std::vector<TensorLayout> tensors;   // data nodes, then store nodes, in node order
  int first_store = -1;                // index into `tensors`
};

/// The layout over the loop axes of the first store (each dim one axis). Data tensors may omit
/// axes (broadcast); a dim with repeat 1 in a data tensor gets stride 0. Throws CompileError
/// when there is no store, stores disagree on their axes, or a tensor has an axis outside them.
LoopLayout collect_layout(const ascir::AscGraph& g);

/// Removes dims of constant size 1 (their index is always 0); keeps one when all are.
void drop_unit_dims(LoopLayout& l);

/// Stable-sorts the dims by the first store's stride, largest (outermost) first. Symbolic
/// strides are compared at a large value of every symbol (256).
void reorder_by_store(LoopLayout& l);

/// After reorder_by_store: where the innermost dim has a constant size under half of `lanes`
/// (a store's few channels, e.g. NCHW -> NHWC of 3 channels: a vector of 3 useful lanes) and a
/// loaded tensor is contiguous (stride 1) along another dim of at least `lanes`, that dim
/// becomes the innermost: full vectors loaded, the store strided (a scatter).
void prefer_contiguous_load_inner(LoopLayout& l, int64_t lanes);

/// Merges adjacent dims where every tensor has stride_outer == stride_inner * size_inner; the
/// merged dim keeps the inner stride and the product of the repeats. With `cls` (one entry per
/// dim), only dims of the same class merge (a reduced dim never merges with a kept one).
void merge_dims(LoopLayout& l, std::vector<int>* cls = nullptr);

/// Stable-sorts the dims by tensor `ref`'s stride, largest (outermost) first; a stride-0 dim
/// (broadcast in `ref`) counts as outermost. `cls` (one entry per dim) follows when given.
void reorder_by_tensor(LoopLayout& l, int ref, std::vector<int>* cls = nullptr);

/// The layout of the data and store tensors of `g` over `loop` (one dim per axis). A store may
/// have repeat 1 (stride 0) on an axis of `row_axes`: a value written once per row. Throws
/// CompileError like collect_layout.
LoopLayout collect_layout_over(const ascir::AscGraph& g, const std::vector<int>& loop,
                               const std::vector<int>& row_axes);

}  // namespace af::schedule
