"""Decompositions that turn normalizations and statistics into elementwise + reduce chains.

softmax / log_softmax come from torch's own table (torch._decomp: max-subtracted exp / sum,
computed in f32 for f16/bf16 inputs like eager); layer norm is torch's reference written here
(var_mean over the normalized dims in f32, rsqrt, scale and shift, one cast back) so that its
statistics accumulate in float as eager's, while var / std / var_mean and BatchNorm's batch
statistics sum their squared deviations in f64, as eager's Welford in double does. torch's
var / var_mean decompositions emit prims (prims.var, prims.sum, broadcast_in_dim) that the
Graph IR has no kinds for, so var.correction and var_mean.correction are written here in ATen
reduce ops instead: a two-pass mean / sum of squared deviations (the deviations in the
computation dtype, f32 for f16/bf16, as eager), divided by max(0, N - correction), cast back once (a
symbolic N with correction 0, as in layer norm under dynamic shapes: the mean of the squares).
std / std_mean decompose (torch's core table) into var / var_mean and sqrt, so they follow.
BatchNorm in training (batch_norm_functional, batch_norm_no_stats) is var_mean over N and the
spatial dims around the kept channel dim, with every per-channel value kept in the [1, C, 1, 1]
shape until the outputs, so the statistics, the normalize, the activation after it and the
running-stat updates are one reduction kernel; in eval mode it becomes a per-channel scale and
shift (batch_norm_no_training).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Dict, Optional, Sequence, Tuple

import torch
from torch._prims_common import get_computation_dtype, reduction_dims

aten = torch.ops.aten

# Composite ops taken from torch's decomposition table.
TORCH_DECOMPOSED = [
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
    x: torch.Tensor, dim: Optional[Sequence[int]], correction: Any, keepdim: bool,
    precise: bool = True
) -> Any:
    """(var, mean) of `x` over `dim` in the computation dtype, or NotImplemented when the
    decomposition does not apply (complex or integer inputs keep the ATen op). With `precise`
    the squared deviations are summed in f64, as eager's var / std / var_mean and BatchNorm
    statistics accumulate (Welford in double: their results are about correctly rounded, so a
    float sum, even a cascaded one, would be several times less accurate against float64);
    layer norm and group norm pass False: eager accumulates those in float."""
    if not x.dtype.is_floating_point:
        return NotImplemented
    dims = _dims(x, dim)
    correction = 1 if correction is None else correction
    compute = get_computation_dtype(x.dtype)
    acc = x.to(compute)
    mean = torch.mean(acc, list(dims), keepdim=True)
    dev = acc - mean
    squares = dev * dev
    if precise and compute != torch.float64:
        squares = squares.to(torch.float64)
    n = math.prod(x.shape[d] for d in dims)
    if correction == 0 and not isinstance(n, int):
        # A symbolic count: the mean of the squares, not a division by a SymInt (which the
        # Graph IR has no scalar for, so it would stay an ATen op between two kernels).
        var = torch.mean(squares, list(dims), keepdim=keepdim)
    else:
        var = torch.sum(squares, list(dims), keepdim=keepdim) / max(0, n - correction)
    if not keepdim:
        mean = mean.view(var.shape)
    return var.to(compute), mean


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


def layer_norm(
    x: torch.Tensor, normalized_shape: Sequence[Any], weight: Optional[torch.Tensor],
    bias: Optional[torch.Tensor], eps: float
) -> Any:
    """aten.native_layer_norm as torch's reference computes it (var_mean over the normalized
    dims in the computation dtype, rsqrt, scale and shift, one cast back; mean and rstd in x's
    dtype on the CPU), with the statistics accumulated in float as eager's layer norm does,
    not in double as its var."""
    if not x.is_floating_point() or len(normalized_shape) < 1:
        return NotImplemented
    dims = list(range(x.dim() - len(normalized_shape), x.dim()))
    x = x.contiguous()  # as torch's reference: the output in row-major order whatever x's
    acc = x.to(get_computation_dtype(x.dtype))
    var, mean = _var_and_mean(acc, dims, 0, keepdim=True, precise=False)
    rstd = torch.rsqrt(var + eps)
    out = (acc - mean) * rstd
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out.to(x.dtype), mean.to(x.dtype), rstd.to(x.dtype)


def batch_norm_no_training(
    x: torch.Tensor, weight: Optional[torch.Tensor], bias: Optional[torch.Tensor],
    running_mean: torch.Tensor, running_var: torch.Tensor, momentum: float, eps: float
) -> Any:
    """BatchNorm in eval mode as ATen's CPU kernel computes it: per channel alpha = weight *
    rsqrt(running_var + eps) and beta = bias - running_mean * alpha (in the computation dtype),
    then x * alpha + beta, cast back once. alpha and beta are computed in the [1, C, 1, 1] shape
    (the parameters reshaped first), constant along the spatial dims, so the kernel computes
    them once per row (fusion's row-invariant producers): the normalize, the activation after
    it and alpha and beta are one kernel. The saved mean and rstd are empty, as ATen's.
    (torch's own decomposition calls the mutating _native_batch_norm_legit, which AOTAutograd
    rejects.)"""
    if not x.is_floating_point() or x.dim() < 2:
        return NotImplemented
    acc = get_computation_dtype(x.dtype)
    shape = [1, x.shape[1]] + [1] * (x.dim() - 2)
    alpha = torch.rsqrt(running_var.reshape(shape).to(acc) + eps)
    if weight is not None:
        alpha = alpha * weight.reshape(shape).to(acc)
    beta = -running_mean.reshape(shape).to(acc) * alpha
    if bias is not None:
        beta = beta + bias.reshape(shape).to(acc)
    out = x.to(acc) * alpha + beta
    empty = x.new_zeros((0,), dtype=acc)
    return out.to(x.dtype), empty, empty


def _affine(out: torch.Tensor, weight: Optional[torch.Tensor], bias: Optional[torch.Tensor],
            shape: Sequence[Any]) -> torch.Tensor:
    """out * weight + bias, the per-channel parameters seen as `shape` (either may be None)."""
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def _batch_norm_train(x: torch.Tensor, weight: Optional[torch.Tensor], bias: Optional[torch.Tensor],
                      eps: float) -> Any:
    """(output, mean, biased var, rstd) of BatchNorm with batch statistics, as torch's
    decomposition computes them (native_batch_norm_helper), the statistics in the keepdim
    shape [1, C, 1, ...] so that whatever reads them is a row value of the reduction kernel;
    NotImplemented for what keeps ATen's op."""
    if not x.is_floating_point() or x.dim() < 2:
        return NotImplemented
    dims = [0] + list(range(2, x.dim()))
    var, mean = _var_and_mean(x, dims, 0, keepdim=True)
    rstd = torch.rsqrt(var + eps)
    out = (x - mean) * rstd
    shape = [1, x.shape[1]] + [1] * (x.dim() - 2)
    out = _affine(out, weight, bias, shape)
    return out.to(x.dtype), mean, var, rstd


def batch_norm_functional(
    x: torch.Tensor, weight: Optional[torch.Tensor], bias: Optional[torch.Tensor],
    running_mean: torch.Tensor, running_var: torch.Tensor, training: bool, momentum: float, eps: float
) -> Any:
    """aten._native_batch_norm_legit_functional (BatchNorm in training under AOTAutograd):
    output, saved mean and rstd (x's dtype, as ATen's CPU kernel), and the updated running
    mean and (unbiased) running var, each reshaped to [C] only at the end."""
    r = _batch_norm_train(x, weight, bias, eps) if training else NotImplemented
    if r is NotImplemented:
        return r
    out, mean, var, rstd = r
    c = x.shape[1]
    n = x.numel() // c
    shape = mean.shape
    new_mean = momentum * mean + (1 - momentum) * running_mean.reshape(shape)
    new_var = momentum * (var * (n / (n - 1))) + (1 - momentum) * running_var.reshape(shape)
    # The new running stats in the buffers' dtype (AOTAutograd copies them into the buffers).
    return (out, mean.to(x.dtype).reshape(c), rstd.to(x.dtype).reshape(c),
            new_mean.to(running_mean.dtype).reshape(c), new_var.to(running_var.dtype).reshape(c))


def batch_norm_no_stats(
    x: torch.Tensor, weight: Optional[torch.Tensor], bias: Optional[torch.Tensor], training: bool,
    momentum: float, eps: float
) -> Any:
    """aten._native_batch_norm_legit.no_stats (BatchNorm without running stats; InstanceNorm
    runs as it over [1, N * C, ...])."""
    r = _batch_norm_train(x, weight, bias, eps) if training else NotImplemented
    if r is NotImplemented:
        return r
    out, mean, _, rstd = r
    c = x.shape[1]
    return out, mean.to(x.dtype).reshape(c), rstd.to(x.dtype).reshape(c)


def batch_norm_backward(
    grad_out: torch.Tensor, x: torch.Tensor, weight: Optional[torch.Tensor],
    running_mean: Optional[torch.Tensor], running_var: Optional[torch.Tensor],
    save_mean: Optional[torch.Tensor], save_invstd: Optional[torch.Tensor], train: bool, eps: float,
    output_mask: Sequence[bool]
) -> Any:
    """aten.native_batch_norm_backward as torch's decomposition computes it, with the
    per-channel values in the keepdim shape [1, C, 1, ...] until grad_weight and grad_bias are
    returned, so the two sums and grad_input are one reduction kernel."""
    if not x.is_floating_point() or x.dim() < 2:
        return NotImplemented
    acc = get_computation_dtype(x.dtype)
    shape = [1, x.shape[1]] + [1] * (x.dim() - 2)
    dims = [0] + list(range(2, x.dim()))

    def per_channel(t: Optional[torch.Tensor]) -> Optional[torch.Tensor]:
        return None if t is None else t.reshape(shape).to(acc)

    if train:
        if save_mean is None or save_invstd is None:
            return NotImplemented
        mean, invstd = per_channel(save_mean), per_channel(save_invstd)
    else:
        if running_mean is None or running_var is None:
            return NotImplemented
        mean, invstd = per_channel(running_mean), torch.rsqrt(per_channel(running_var) + eps)
    g, xa = grad_out.to(acc), x.to(acc)
    norm = 1.0 / (x.numel() // x.shape[1])
    grad_sum = torch.sum(g, dims, keepdim=True)
    dot_p = torch.sum(g * (xa - mean), dims, keepdim=True)
    grad_scale = invstd * 1.0 if weight is None else invstd * per_channel(weight)
    if train:
        proj = (xa - mean) * (dot_p * norm * (invstd * invstd))
        grad_input = ((g - proj) - grad_sum * norm) * grad_scale
    else:
        grad_input = g * grad_scale
    w_dtype = x.dtype if weight is None else weight.dtype
    c = x.shape[1]
    grad_weight = (dot_p * invstd).to(w_dtype).reshape(c) if output_mask[1] else None
    grad_bias = grad_sum.to(w_dtype).reshape(c) if output_mask[2] else None
    return grad_input.to(x.dtype), grad_weight, grad_bias


def _grouped(t: torch.Tensor, n: Any, group: int, hxw: Any) -> torch.Tensor:
    """[N, C, *] seen as [N, G, C / G, H * W]."""
    return t.reshape(n, group, t.shape[1] // group, hxw)


def group_norm(
    x: torch.Tensor, weight: Optional[torch.Tensor], bias: Optional[torch.Tensor], n: Any, c: Any,
    hxw: Any, group: int, eps: float
) -> Any:
    """aten.native_group_norm as torch's reference computes it, in the [N, G, C / G, H * W]
    view of x: the statistics reduce its two inner dims (a contiguous row per sample and
    group), the weight and bias are [1, G, C / G, 1], and the result is reshaped back at the
    end (view_motion.py sinks that reshape below the activation after it: one kernel)."""
    if not x.is_floating_point() or x.dim() < 2 or group <= 0 or x.shape[1] % group:
        return NotImplemented
    xv = _grouped(x, n, group, hxw)
    var, mean = _var_and_mean(xv, [2, 3], 0, keepdim=True, precise=False)
    rstd = torch.rsqrt(var + eps)
    out = (xv - mean) * rstd
    shape = [1, group, x.shape[1] // group, 1]
    out = _affine(out, weight, bias, shape)
    return (out.to(x.dtype).reshape(x.shape), mean.to(x.dtype).reshape(n, group),
            rstd.to(x.dtype).reshape(n, group))


def group_norm_backward(
    grad_out: torch.Tensor, x: torch.Tensor, mean: torch.Tensor, rstd: torch.Tensor,
    weight: Optional[torch.Tensor], n: Any, c: Any, hxw: Any, group: int, output_mask: Sequence[bool]
) -> Any:
    """aten.native_group_norm_backward in the [N, G, C / G, H * W] view: the per-group sums
    of g * w * x and g * w and grad_input one reduction kernel (over the two inner dims), the
    per-channel grad_weight and grad_bias another (over N and H * W around the kept channel)."""
    if not x.is_floating_point() or x.dim() < 2 or group <= 0 or x.shape[1] % group:
        return NotImplemented
    acc = get_computation_dtype(x.dtype)
    cg = x.shape[1] // group
    g, xv = _grouped(grad_out, n, group, hxw).to(acc), _grouped(x, n, group, hxw).to(acc)
    mean, rstd = mean.reshape(n, group, 1, 1).to(acc), rstd.reshape(n, group, 1, 1).to(acc)
    gw = g if weight is None else g * weight.reshape(1, group, cg, 1).to(acc)
    grad_input = grad_weight = grad_bias = None
    if output_mask[0]:
        s = 1.0 / (hxw * cg)
        ds = torch.sum(gw * xv, [2, 3], keepdim=True)
        db = torch.sum(gw, [2, 3], keepdim=True)
        c2 = (db * mean - ds) * rstd * rstd * rstd * s
        c3 = -c2 * mean - db * rstd * s
        grad_input = (gw * rstd + xv * c2 + c3).to(x.dtype).reshape(x.shape)
    w_dtype = x.dtype if weight is None else weight.dtype
    if output_mask[1]:
        grad_weight = torch.sum(g * ((xv - mean) * rstd), [0, 3], keepdim=True).to(w_dtype).reshape(c)
    if output_mask[2]:
        grad_bias = torch.sum(g, [0, 3], keepdim=True).to(w_dtype).reshape(c)
    return grad_input, grad_weight, grad_bias


def reduction_decompositions() -> Dict[Any, Callable]:
    """ATen op -> decomposition for the reductions autofuse turns into Graph IR chains."""
    from torch._decomp import get_decompositions

    table: Dict[Any, Callable] = dict(get_decompositions(TORCH_DECOMPOSED))
    table[aten.native_layer_norm.default] = layer_norm
    table[aten.var.correction] = var_correction
    table[aten.var_mean.correction] = var_mean_correction
    table[aten._native_batch_norm_legit_no_training.default] = batch_norm_no_training
    table[aten._native_batch_norm_legit_functional.default] = batch_norm_functional
    table[aten._native_batch_norm_legit.no_stats] = batch_norm_no_stats
    table[aten.native_batch_norm_backward.default] = batch_norm_backward
    table[aten.native_group_norm.default] = group_norm
    table[aten.native_group_norm_backward.default] = group_norm_backward
    return table

