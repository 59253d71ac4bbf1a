"""Linear layers on weights packed once, not on every call.

A model's linear layers reach the executor as `addmm(bias, x, permute(W, [1, 0]))` or
`mm(x, permute(W, [1, 0]))` (GPT-2's Conv1D: `addmm(bias, x, W)` with W stored [in, out]), where
W is a parameter. ATen's fp32 call hands W in its plain layout to MKL's sgemm, which packs
its panels anew on every call. With W packed once (what Inductor does under `freezing`: MKL's packed sgemm,
mkl._mkl_reorder_linear_weight and _mkl_linear) the same arithmetic runs 1.07-1.47x faster at
these models' sizes (2 threads, wall time; 1.07-1.43x at 1 thread in CPU time). A pack serves
the row count it was made for, so dynamic shapes keep one per count (libraries(): a library
serves one row count per pack).

bf16 and fp16 stay on ATen's call. oneDNN's linear on a reordered weight
(mkldnn._reorder_linear_weight, _linear_pointwise) was 1.16-1.41x ATen's at 1 thread but
0.55-0.68x at 2 threads for 768 output features (1.22-1.53x for 3072 or 32 rows), which made
whole bf16 models slower at torch's default thread count.

Packs are kept per step, keyed by W's storage pointer, layout and version counter: an optimizer
step, `load_state_dict` or any in-place write through PyTorch bumps the version, and the next
call repacks (a training step repacks once). Writes that bypass PyTorch (through a NumPy view
of the parameter) are not seen: CompilerConfig(pack_weights=False) or AUTOFUSE_PACK_WEIGHTS=0
turns packing off. Only graph inputs that are parameters or buffers (AOTAutograd's static
inputs) are packed: an activation would be repacked on every call.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable, Collection, Dict, Optional

import torch

aten = torch.ops.aten
_MAX_PACKS = 4  # packs kept per step (one per row count)


@dataclasses.dataclass(frozen=True)
class Library:
    """One packed-linear implementation."""

    pack: Callable[[torch.Tensor, int], torch.Tensor]  # (weight [N, K], rows) -> the pack
    call: Callable[..., torch.Tensor]  # (x [M, K], pack, weight [N, K], bias or None, rows) -> [M, N]


@functools.lru_cache(maxsize=None)
def libraries() -> Dict[torch.dtype, Library]:
    """dtype -> the packed linear this torch build has for it (see the module docstring)."""
    libs: Dict[torch.dtype, Library] = {}
    mkl = torch.ops.mkl
    if torch.backends.mkl.is_available() and hasattr(mkl, "_mkl_linear"):
        libs[torch.float32] = Library(
            pack=lambda w, rows: mkl._mkl_reorder_linear_weight.default(w, rows),
            call=lambda x, pack, w, b, rows: mkl._mkl_linear.default(x, pack, w, b, rows))
    return libs


def available() -> bool:
    """Whether this torch has a packed linear for some dtype."""
    return bool(libraries())


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
    """env -> the node's value through its dtype's Library on a cached pack of its weight, for
    `addmm(bias[N], x, w)` (beta = alpha = 1) or `mm(x, w)` whose `w` is a static input read
    as a linear weight (_weight); None for any other node. A weight without a version counter
    (an inference-mode tensor) runs `plain`, the ATen call."""
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
    lib = libraries().get(val.dtype) if isinstance(val, torch.Tensor) else None
    if found is None or lib is None:
        return None
    metas = [a.meta.get("val") for a in (x, mat2, bias) if isinstance(a, torch.fx.Node)]
    if any(not isinstance(m, torch.Tensor) or m.dtype != val.dtype for m in metas):
        return None
    if bias is not None and (not isinstance(bias, torch.fx.Node) or bias.meta["val"].dim() != 1):
        return None
    w_node, transposed = found
    w_slot, x_slot = slot_of(w_node), slot_of(x)
    b_slot = slot_of(bias) if bias is not None else None
    packs: Dict[tuple, torch.Tensor] = {}  # (pointer, version, shape, strides, rows) -> pack
    pack, call = lib.pack, lib.call

    def run(env: list) -> torch.Tensor:
        w, x_t = env[w_slot], env[x_slot]
        if w.is_inference():
            return plain(env)
        rows = x_t.shape[0]
        key = (w.data_ptr(), w._version, w.shape, w.stride(), rows)
        weight = w if transposed else w.t()  # [N, K]
        p = packs.get(key)
        if p is None:
            if len(packs) >= _MAX_PACKS:
                packs.clear()
            p = packs[key] = pack(weight, rows)
        return call(x_t, p, weight, env[b_slot] if b_slot is not None else None, rows)

    return run
