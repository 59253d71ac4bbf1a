"""Max pooling as the maximum of strided views of the padded input, so inference graphs fuse it.

ATen's CPU max_pool2d on a contiguous (NCHW) tensor computes indices it then drops and runs a
scalar loop per window: 7 ms for ResNet-50's stem pool (2 x 64 x 112 x 112) on this machine's two
cores, more than all of the network's fused BatchNorm kernels together. The values are the
elementwise maximum of the k_h x k_w windows' taps: each tap one strided slice of the input
padded with -inf, which the Graph IR reads as views, so the taps' maximum is one kernel (two
past max_inputs taps) behind the pad.

Only where the indices are not needed: in graphs traced without grad (inference under no_grad
or inference_mode). A graph traced with grad keeps ATen's op, whose indices its backward reads
(AOTAutograd traces the joint graph's forward with grad on, while the traced values themselves
do not say they require grad). The decomposition returns ATen's indices beside the values,
which a graph that only reads the values drops with the dead op.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Dict, Sequence

import torch

aten = torch.ops.aten

MAX_TAPS = 25  # larger windows keep ATen's op (a 5 x 5 window is 25 taps)
_inside = threading.local()  # set while the decomposition traces ATen's op for the indices


def _pair(v: Sequence[int], default: Sequence[int]) -> list:
    v = list(v) if v else list(default)
    return v * 2 if len(v) == 1 else v


def max_pool2d_with_indices(x: torch.Tensor, kernel_size: Sequence[int], stride: Sequence[int] = (),
                            padding: Sequence[int] = (0,), dilation: Sequence[int] = (1,),
                            ceil_mode: bool = False) -> Any:
    """(values, indices) of max_pool2d: values the maximum of the window's taps; NotImplemented
    (ATen's op) with grad enabled, with ceil_mode, a non-float input or more than MAX_TAPS
    taps."""
    if getattr(_inside, "active", False):
        return NotImplemented  # the indices: ATen's own op
    k = _pair(kernel_size, ())
    s, p, d = _pair(stride, k), _pair(padding, (0,)), _pair(dilation, (1,))
    if (torch.is_grad_enabled() or ceil_mode or not x.is_floating_point() or x.dim() not in (3, 4)
            or k[0] * k[1] > MAX_TAPS or not all(isinstance(v, int) for v in (*x.shape[-2:], *k, *s, *p, *d))):
        return NotImplemented
    h, w = x.shape[-2:]
    out = [(size + 2 * pad - dil * (kk - 1) - 1) // st + 1 for size, pad, dil, kk, st in zip((h, w), p, d, k, s)]
    if min(out) <= 0:
        return NotImplemented
    padded = aten.constant_pad_nd.default(x, [p[1], p[1], p[0], p[0]], float("-inf")) if any(p) else x
    values = None
    for i in range(k[0]):
        rows = aten.slice.Tensor(padded, -2, i * d[0], i * d[0] + s[0] * (out[0] - 1) + 1, s[0])
        for j in range(k[1]):
            tap = aten.slice.Tensor(rows, -1, j * d[1], j * d[1] + s[1] * (out[1] - 1) + 1, s[1])
            values = tap if values is None else aten.maximum.default(values, tap)
    _inside.active = True
    try:
        indices = aten.max_pool2d_with_indices.default(x, k, s, p, d, ceil_mode)[1]
    finally:
        _inside.active = False
    return values, indices


def pool_decompositions() -> Dict[Any, Callable]:
    """ATen op -> decomposition into strided views and maximums."""
    return {aten.max_pool2d_with_indices.default: max_pool2d_with_indices}
