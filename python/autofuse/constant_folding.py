"""Subgraphs that read no graph input, computed once when the graph is compiled.

A static-shape graph often builds tensors from sizes alone: T5's relative-position buckets
(arange, sub, abs, log, min, where on int64: 19 ATen ops per forward, about 0.5 ms at 128
tokens), a causal mask, position ids. Their values are the same on every call, so the compiler
evaluates them with ATen at compile time and the graph reads the results as constants
(Inductor folds such subgraphs under `freezing`; here no parameter is folded, so nothing
depends on weights staying fixed). A node folds when it is a functional ATen op that is not
random (`nondeterministic_seeded`) and every input is folded or a constant of the module.
Only the frontier is kept, the folded values read by the rest of the graph, each at most
_MAX_BYTES. Values the graph returns are not folded (a caller could write into them), and
neither is anything under dynamic shapes that reads a size: sizes are graph inputs there. A
subgraph of ops the kernels compute themselves (float elementwise over `full`) is left to them.
"""

from __future__ import annotations

import copy
import operator
from typing import Any, Dict

import torch
import torch.fx
from torch._subclasses.fake_tensor import unset_fake_temporarily

from . import aten_table

_MAX_BYTES = 16 << 20  # the largest folded value kept (bytes of its storage)
_KERNEL_DTYPES = (torch.float32, torch.float16, torch.bfloat16, torch.bool)
_CONSTANT_FACTORIES = (torch.ops.aten.full.default, torch.ops.aten.scalar_tensor.default)


def _pure(node: torch.fx.Node) -> bool:
    """Whether `node` computes a value from its arguments alone: a functional ATen op that
    draws no random numbers, or an element of such an op's tuple result."""
    if node.op != "call_function":
        return False
    if node.target is operator.getitem:
        return True
    target = node.target
    if not isinstance(target, torch._ops.OpOverload) or target._schema.is_mutable:
        return False
    return torch.Tag.nondeterministic_seeded not in target.tags


def _kernel_op(node: torch.fx.Node) -> bool:
    """Whether generated kernels compute `node` themselves (a float or bool elementwise,
    view, reduce or concat op; `full` becomes a constant inside the kernel): folding such a
    node alone would trade arithmetic for a memory read."""
    if node.target in _CONSTANT_FACTORIES:  # a kernel constant, or one the executor makes once
        return True
    val = node.meta.get("val")
    return (aten_table.family(node.target) != "" and isinstance(val, torch.Tensor)
            and val.dtype in _KERNEL_DTYPES)


def _foldable(graph: torch.fx.Graph) -> Dict[torch.fx.Node, bool]:
    """The nodes that read no graph input (get_attr constants and _pure ops over them), in
    graph order, each with whether it or a folded node it reads is not a _kernel_op."""
    folded: Dict[torch.fx.Node, bool] = {}
    for n in graph.nodes:
        if n.op == "get_attr" or (_pure(n) and all(a in folded for a in n.all_input_nodes)):
            folded[n] = not _kernel_op(n) or any(folded[a] for a in n.all_input_nodes)
    return folded


def fold_constants(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """`gm` with every frontier value of its input-free subgraphs (module docstring) computed
    now and read as a module constant: a new module when something was folded (`gm` itself is
    never changed), else `gm`."""
    foldable = _foldable(gm.graph)
    frontier = [
        n for n, worth in foldable.items()
        if worth and n.op == "call_function" and n.users and all(u.op != "output" for u in n.users)
        and any(u not in foldable for u in n.users)
    ]
    if not frontier:
        return gm
    values: Dict[torch.fx.Node, Any] = {}
    try:
        with unset_fake_temporarily(), torch.no_grad():
            for n in foldable:
                if n.op == "get_attr":
                    values[n] = operator.attrgetter(n.target)(gm)
                    continue
                args = torch.fx.node.map_arg(n.args, values.__getitem__)
                kwargs = torch.fx.node.map_arg(n.kwargs, values.__getitem__)
                values[n] = n.target(*args, **kwargs)
    except Exception:  # an op that fails now fails on every call: leave it to the call, as eager
        return gm
    keep = [n for n in frontier if isinstance(values[n], torch.Tensor)
            and values[n].untyped_storage().nbytes() <= _MAX_BYTES]
    if not keep:
        return gm
    graph = copy.deepcopy(gm.graph)
    by_name = {n.name: n for n in graph.nodes}
    out = torch.fx.GraphModule(gm, graph)
    for k, n in enumerate(keep):
        name = f"_folded_constant_{k}"
        while hasattr(out, name):
            name += "_"
        out.register_buffer(name, values[n], persistent=False)
        old = by_name[n.name]
        with graph.inserting_before(old):
            const = graph.get_attr(name)
        const.meta = dict(old.meta)
        old.replace_all_uses_with(const)
    graph.eliminate_dead_code()
    graph.lint()
    out.recompile()
    return out
