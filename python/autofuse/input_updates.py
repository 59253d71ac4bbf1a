"""Input updates done in place: a cache write without a copy of the whole cache.

A model that writes into one of its inputs (Hugging Face's static KV cache: `keys.index_copy_(2,
position, new)` once per layer and token) reaches an inference graph functionalized: the graph
computes the updated value out of place, `index_put(keys, [None, None, position], new)`, which
copies the whole cache, and returns it; AOTAutograd's wrapper then copies it back into the input
(`keys.copy_(updated)`), a second copy of the whole cache. Where nothing else reads the input,
computing the update in place (`index_put_`) gives the same values in the input's own storage,
and the wrapper's copy of a tensor onto itself returns at once. Inductor's reinplacing does the
same for its graphs.
"""

from __future__ import annotations

from typing import Sequence

import torch

aten = torch.ops.aten

# out-of-place op -> its in-place form; the first argument is the tensor written.
IN_PLACE = {
    aten.index_put.default: aten.index_put_.default,
    aten.index_copy.default: aten.index_copy_.default,
}


def update_in_place(gm: torch.fx.GraphModule, data_updates: Sequence[int]) -> torch.fx.GraphModule:
    """`gm` with each input whose data the graph updates (`data_updates`, AotFacts: the first
    graph outputs are the updated inputs, by runtime index, -1 for an update of more than the
    data) updated in place where the update is an IN_PLACE op on the input itself, the input has
    no other reader, the update is returned once and keeps the input's sizes, strides and dtype."""
    if not data_updates:
        return gm
    phs = [n for n in gm.graph.nodes if n.op == "placeholder"]
    out = next(n for n in gm.graph.nodes if n.op == "output").args[0]
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    changed = False
    for k, idx in enumerate(data_updates):
        if idx < 0 or k >= len(outs) or idx >= len(phs):
            continue
        update, ph = outs[k], phs[idx]
        if (not isinstance(update, torch.fx.Node) or update.target not in IN_PLACE or not update.args
                or update.args[0] is not ph or len(ph.users) != 1 or outs.count(update) != 1):
            continue
        new, old = update.meta.get("val"), ph.meta.get("val")
        if not (isinstance(new, torch.Tensor) and isinstance(old, torch.Tensor) and new.dtype == old.dtype
                and new.shape == old.shape and new.stride() == old.stride()):
            continue
        update.target = IN_PLACE[update.target]
        changed = True
    if changed:
        gm.recompile()
    return gm
