"""Decompositions that turn normalizations and statistics into elementwise + reduce chains.

Most come from torch's own table (torch._decomp): softmax / log_softmax (max-subtracted
exp / sum, computed in f32 for f16/bf16 inputs like eager) and layer norm (torch._refs:
var_mean over the normalized dims in f32, rsqrt, scale and shift, one cast back). torch's
var / var_mean decompositions emit prims (prims.var, prims.sum, broadcast_in_dim) that the
Graph IR has no kinds for, so var.correction and var_mean.correction are written here in ATen
reduce ops instead: a two-pass mean / sum of squared deviations in the computation dtype (f32
for f16/bf16, as eager accumulates), divided by max(0, N - correction), cast back once (a
symbolic N with correction 0, as in layer norm under dynamic shapes: the mean of the squares).
std / std_mean decompose (torch's core table) into var / var_mean and sqrt, so they follow.
BatchNorm in eval mode becomes a per-channel scale and shift (batch_norm_no_training).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Dict, Optional, Sequence, Tuple

import torch
from torch._prims_common import get_computation_dtype, reduction_dims

aten = torch.ops.aten

# Composite ops taken from torch's decomposition table.
TORCH_DECOMPOSED = [
    aten.native_layer_norm.default,
    aten._softmax.default,
    aten._log_softmax.default,
]


def _dims(x: torch.Tensor, dim: Optional[Sequence[int]]) -> Tuple[int, ...]:
    """The reduced dims of var(x, dim): None or [] mean every dim (as torch)."""
    if isinstance(dim, int):
        dim = [dim]
    if dim is not None and len(dim) == 0:
        dim = None
    return reduction_dims(x.shape, dim)


def _var_and_mean(
    x: torch.Tensor, dim: Optional[Sequence[int]], correction: Any, keepdim: bool
) -> Any:
    """(var, mean) of `x` over `dim` in the computation dtype, or NotImplemented when the
    decomposition does not apply (complex or integer inputs keep the ATen op)."""
    if not x.dtype.is_floating_point:
        return NotImplemented
    dims = _dims(x, dim)
    correction = 1 if correction is None else correction
    acc = x.to(get_computation_dtype(x.dtype))
    mean = torch.mean(acc, list(dims), keepdim=True)
    dev = acc - mean
    n = math.prod(x.shape[d] for d in dims)
    if correction == 0 and not isinstance(n, int):
        # A symbolic count: the mean of the squares, not a division by a SymInt (which the
        # Graph IR has no scalar for, so it would stay an ATen op between two kernels).
        var = torch.mean(dev * dev, list(dims), keepdim=keepdim)
    else:
        var = torch.sum(dev * dev, list(dims), keepdim=keepdim) / max(0, n - correction)
    if not keepdim:
        mean = mean.view(var.shape)
    return var, mean


def var_correction(
    x: torch.Tensor, dim: Optional[Sequence[int]] = None, *, correction: Any = None, keepdim: bool = False
) -> Any:
    """aten.var.correction as mean, sub, mul, sum, div (cast back to x's dtype once)."""
    r = _var_and_mean(x, dim, correction, keepdim)
    if r is NotImplemented:
        return r
    return r[0].to(x.dtype)


def var_mean_correction(
    x: torch.Tensor, dim: Optional[Sequence[int]] = None, *, correction: Any = None, keepdim: bool = False
) -> Any:
    """aten.var_mean.correction: var as var_correction, mean the same reduce_mean (one read)."""
    r = _var_and_mean(x, dim, correction, keepdim)
    if r is NotImplemented:
        return r
    return r[0].to(x.dtype), r[1].to(x.dtype)


def batch_norm_no_training(
    x: torch.Tensor, weight: Optional[torch.Tensor], bias: Optional[torch.Tensor],
    running_mean: torch.Tensor, running_var: torch.Tensor, momentum: float, eps: float
) -> Any:
    """BatchNorm in eval mode as ATen's CPU kernel computes it: per channel alpha = weight *
    rsqrt(running_var + eps) and beta = bias - running_mean * alpha (in the computation dtype),
    then x * alpha + beta, cast back once; so the normalize and the activation after it are one
    kernel. The saved mean and rstd are empty, as ATen's. (torch's own decomposition calls the
    mutating _native_batch_norm_legit, which AOTAutograd rejects.)"""
    if not x.is_floating_point() or x.dim() < 2:
        return NotImplemented
    acc = get_computation_dtype(x.dtype)
    shape = [1, x.shape[1]] + [1] * (x.dim() - 2)
    alpha = torch.rsqrt(running_var.to(acc) + eps)
    if weight is not None:
        alpha = alpha * weight.to(acc)
    beta = -running_mean.to(acc) * alpha
    if bias is not None:
        beta = beta + bias.to(acc)
    out = x.to(acc) * alpha.reshape(shape) + beta.reshape(shape)
    empty = x.new_zeros((0,), dtype=acc)
    return out.to(x.dtype), empty, empty


def reduction_decompositions() -> Dict[Any, Callable]:
    """ATen op -> decomposition for the reductions autofuse turns into Graph IR chains."""
    from torch._decomp import get_decompositions

    table: Dict[Any, Callable] = dict(get_decompositions(TORCH_DECOMPOSED))
    table[aten.var.correction] = var_correction
    table[aten.var_mean.correction] = var_mean_correction
    table[aten._native_batch_norm_legit_no_training.default] = batch_norm_no_training
    return table

