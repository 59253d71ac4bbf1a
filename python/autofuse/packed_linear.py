"""Linear layers on oneDNN with their weights packed once, not on every call.

A model's linear layers reach the executor as `addmm(bias, x, permute(W, [1, 0]))` or
`mm(x, permute(W, [1, 0]))` (GPT-2's Conv1D: `addmm(bias, x, W)` with W stored [in, out]), where
W is a parameter. In bf16 and fp16 ATen hands them to oneDNN, which reorders W into its blocked
layout on every call; oneDNN's linear on W reordered once (`mkldnn._reorder_linear_weight`,
`mkldnn._linear_pointwise`: what Inductor does under `freezing`) does the same arithmetic
1.16-1.41x faster at these models' sizes (1 thread, CPU time, 32-512 rows; AMX host). fp32
stays on ATen's BLAS call: the packed oneDNN call measured 0.93-1.05x of it.

The pack is kept per step, keyed by W's storage pointer, layout and version counter: an
optimizer step, `load_state_dict` or any in-place write through PyTorch bumps the version, and
the next call repacks (a training forward repacks once per step). Writes that bypass PyTorch
(through a NumPy view of the parameter) are not seen: CompilerConfig(pack_weights=False) or
AUTOFUSE_PACK_WEIGHTS=0 turns packing off. Only graph inputs that are parameters or buffers
(AOTAutograd's static inputs) are packed: an activation would be repacked on every call.
"""

from __future__ import annotations

from typing import Any, Callable, Collection, Optional

import torch

aten = torch.ops.aten
_DTYPES = (torch.bfloat16, torch.float16)  # the dtypes whose linear layers run packed


def available() -> bool:
    """Whether this torch has oneDNN's packed linear."""
    return torch.backends.mkldnn.is_available() and hasattr(torch.ops.mkldnn, "_linear_pointwise")


def _weight(mat2: Any, static: Collection[torch.fx.Node]) -> Optional[tuple]:
    """(the parameter node W, whether mat2 reads it transposed) when `mat2` is a static input
    read through 2-D transposes only: permute(W, [1, 0]) of an [out, in] W (nn.Linear), W itself
    ([in, out]: GPT-2's Conv1D; a backward's input gradient), or chains of both."""
    transposed = False
    while isinstance(mat2, torch.fx.Node) and mat2 not in static:
        if mat2.target != aten.permute.default or list(mat2.args[1]) not in ([1, 0], [-1, -2]):
            return None
        mat2, transposed = mat2.args[0], not transposed
    return (mat2, transposed) if isinstance(mat2, torch.fx.Node) else None


def packed_run(node: torch.fx.Node, slot_of: Callable[[torch.fx.Node], int], static: Collection[torch.fx.Node],
               plain: Callable[[list], torch.Tensor]) -> Optional[Callable[[list], torch.Tensor]]:
    """env -> the node's value through oneDNN's linear on a cached pack of its weight, for a
    bf16/fp16 `addmm(bias[N], x, w)` (beta = alpha = 1) or `mm(x, w)` whose `w` is a static
    input read as a linear weight (_weight); None for any other node. A weight without a
    version counter (an inference-mode tensor) runs `plain`, the ATen call."""
    if node.target == aten.addmm.default:
        if len(node.args) != 3 or any(node.kwargs.get(k, 1) != 1 for k in ("beta", "alpha")):
            return None
        bias, x, mat2 = node.args
    elif node.target == aten.mm.default:
        bias, (x, mat2) = None, node.args
    else:
        return None
    found = _weight(mat2, static)
    val = node.meta.get("val")
    if found is None or not isinstance(val, torch.Tensor) or val.dtype not in _DTYPES:
        return None
    metas = [a.meta.get("val") for a in (x, mat2, bias) if isinstance(a, torch.fx.Node)]
    if any(not isinstance(m, torch.Tensor) or m.dtype != val.dtype for m in metas):
        return None
    if bias is not None and (not isinstance(bias, torch.fx.Node) or bias.meta["val"].dim() != 1):
        return None
    w_node, transposed = found
    w_slot, x_slot = slot_of(w_node), slot_of(x)
    b_slot = slot_of(bias) if bias is not None else None
    rows = val.shape[0] if isinstance(val.shape[0], int) else 64  # the batch oneDNN packs for
    cache: list = [None, None]  # [(pointer, version, shape, strides), pack]
    linear, reorder = torch.ops.mkldnn._linear_pointwise.default, torch.ops.mkldnn._reorder_linear_weight.default

    def run(env: list) -> torch.Tensor:
        w = env[w_slot]
        if w.is_inference():
            return plain(env)
        key = (w.data_ptr(), w._version, w.shape, w.stride())
        if cache[0] != key:
            cache[1] = reorder(w if transposed else w.t(), rows)
            cache[0] = key
        bias_t = env[b_slot] if b_slot is not None else None
        return linear(env[x_slot], cache[1], bias_t, "none", [], "")

    return run
