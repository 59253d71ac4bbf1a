"""Slice and select scatters as concatenations, so backward graphs fuse them.

The backward of slicing (`x[..., :h]`, `x[..., h:]`: rotary embeddings' rotate_half, a split)
and of indexing one position is `slice_scatter` / `select_scatter` of the gradient into a
zeroed tensor. ATen runs each as a functional op that clones its whole input first; two of them
and an add cost a Llama layer's backward three full copies. The same value is the concatenation
of the input's parts outside the slice with the source inside it, which the concat pass turns
into one kernel with the zeros, the add and the producers of the pieces.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional

import torch

aten = torch.ops.aten


def slice_scatter(x: torch.Tensor, src: torch.Tensor, dim: int = 0, start: Optional[Any] = None,
                  end: Optional[Any] = None, step: int = 1) -> Any:
    """x with x[start:end] along `dim` replaced by src: cat(x[:start], src, x[end:]) (pieces
    of extent 0 are left out by the concat rule); NotImplemented (ATen's op) for a step."""
    if step != 1 or x.dim() == 0:
        return NotImplemented
    dim = dim % x.dim()
    size = x.shape[dim]
    start = 0 if start is None else (start + size if start < 0 else start)
    end = size if end is None else (end + size if end < 0 else end)
    start, end = min(max(start, 0), size), min(max(end, start), size)
    head = aten.slice.Tensor(x, dim, 0, start)
    tail = aten.slice.Tensor(x, dim, end, size)
    return aten.cat.default([head, src, tail], dim)


def select_scatter(x: torch.Tensor, src: torch.Tensor, dim: int, index: int) -> Any:
    """x with x.select(dim, index) replaced by src: a slice scatter of src unsqueezed."""
    if x.dim() == 0:
        return NotImplemented
    dim = dim % x.dim()
    index = index + x.shape[dim] if index < 0 else index
    return slice_scatter(x, aten.unsqueeze.default(src, dim), dim, index, index + 1)


def scatter_decompositions() -> Dict[Any, Callable]:
    """ATen op -> decomposition into a concatenation."""
    return {aten.slice_scatter.default: slice_scatter, aten.select_scatter.default: select_scatter}
