"""Reshapes moved to the graph's boundary, so elementwise work beside one fuses with its kernel.

A reshape between two computed values is a fusion barrier: the kernels on either side loop over
different shapes. GroupNorm normalizes x seen as [N, G, C/G, H*W] and returns [N, C, H, W], so
the SiLU after it would be a kernel of its own; its backward's SiLU gradient is computed as
[N, C, H, W] and reshaped for the statistics' sums. Elementwise ops commute with a reshape (it
relabels positions in row-major order), so this FX pass rewrites, for operands of the op's own
shape (no broadcasting) and Python scalars:

  sink:  E(view(y1, T), ..., view(yk, T)), every yi of one shape and computed by an op a
         kernel computes (not a matmul's result: E would only leave its consumers' kernel),
         becomes view(E(y1, ..., yk), T): E joins the kernel computing the yi;
  hoist: view(E(a1, ..., ak), T), where E and the elementwise ops computing it from inputs of
         the graph (or views of them) are read by nothing else, becomes E(view(a1, T), ...,
         view(ak, T)) with the ops below E rewritten alike: they join the kernel reading the
         view, and the new views are views of inputs (free). A leaf that is itself a view of an
         input or a kernel's value of shape T is that value (view(view(y, S), T) is y).

A permute is a barrier too: ConvNeXt's residual add reads two channels-last values, each the
permute of an NHWC value a kernel computes (the normalization's output and the scaled MLP
output), so the add would be a one-op kernel between two others. Elementwise ops commute with
one permutation of all their operands, so a permute sinks like a reshape:

  sink:  E(permute(y1, P), ..., permute(yk, P)), every yi row-major, of one shape and computed
         by a kernel, becomes permute(E(y1, ..., yk), P), whose strides are those eager gives E
         (the permutation of a row-major layout its operands share).

A sink moves a view toward the graph's outputs, a hoist toward its inputs, neither undoes the
other (a sunk view's operand is computed, a hoisted view's an input or gone), so the pass ends.
"""

from __future__ import annotations

import copy
from typing import List, Optional, Tuple

import torch
from torch._prims_common import make_contiguous_strides_for
from torch.fx.experimental.symbolic_shapes import statically_known_true

from . import aten_table

aten = torch.ops.aten
_VIEWS = (aten.view.default, aten._unsafe_view.default, aten.reshape.default)


def _val(node) -> Optional[torch.Tensor]:
    val = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    return val if isinstance(val, torch.Tensor) else None


def _same_shape(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether two (fake) values provably have one shape; symbolic sizes are compared without
    adding a guard to the finished graph."""
    return a.dim() == b.dim() and all(statically_known_true(x == y) for x, y in zip(a.shape, b.shape))


def _contiguous(v: torch.Tensor) -> bool:
    """Whether a (fake) value is provably row-major (strides of size-1 dims aside), guard-free."""
    return all(statically_known_true(s == c) or statically_known_true(n == 1)
               for s, c, n in zip(v.stride(), make_contiguous_strides_for(v.shape), v.shape))


def _is_view(node) -> bool:
    return (isinstance(node, torch.fx.Node) and node.op == "call_function" and node.target in _VIEWS
            and _val(node) is not None and _val(node.args[0]) is not None)


def _fusible(node: torch.fx.Node) -> bool:
    """Whether a kernel may compute `node` (an elementwise, reduction or concat op): a value
    an ATen op computes (a matmul) gains nothing from an op moved next to it."""
    return node.op == "call_function" and aten_table.family(node.target) in (
        "elementwise", "reduce", "concat")


def _is_input(node: torch.fx.Node) -> bool:
    """A graph input or a view of one (through any views)."""
    while _is_view(node):
        node = node.args[0]
    return node.op == "placeholder"


def _inverse(dims: List[int]) -> List[int]:
    """The permutation undoing `dims` (its entries in 0..n-1)."""
    return [dims.index(i) for i in range(len(dims))]


def _is_permute(node) -> bool:
    return (isinstance(node, torch.fx.Node) and node.op == "call_function" and node.target == aten.permute.default
            and _val(node) is not None and _val(node.args[0]) is not None)


def _tensor_operands(e: torch.fx.Node, contiguous: bool = True) -> Optional[List[torch.fx.Node]]:
    """The tensor operands of elementwise op `e`, each of e's shape and (where `contiguous`)
    row-major; None when `e` is not such an op (another op, a broadcast operand, a non-scalar
    constant)."""
    out_val = _val(e)
    if e.op != "call_function" or aten_table.family(e.target) != "elementwise" or out_val is None:
        return None
    nodes = []
    for a in [*e.args, *e.kwargs.values()]:
        if isinstance(a, torch.fx.Node):
            v = _val(a)
            if v is None or not _same_shape(v, out_val) or (contiguous and not _contiguous(v)):
                return None
            nodes.append(a)
        elif isinstance(a, (torch.Tensor, list, tuple)):
            return None
    return nodes


def _call(graph: torch.fx.Graph, target, args, kwargs) -> torch.fx.Node:
    """A new node whose meta value is computed from its operands' (fake) values."""
    node = graph.call_function(target, tuple(args), dict(kwargs))
    vals, kw = torch.fx.node.map_arg((tuple(args), dict(kwargs)), lambda a: a.meta["val"])
    node.meta["val"] = target(*vals, **kw)
    return node


def _sunk_views(e: torch.fx.Node) -> Optional[Tuple[List[torch.fx.Node], Optional[List[int]]]]:
    """(e's tensor operands, None) when all are reshapes to one shape of row-major values of one
    shape a kernel computes; (e's tensor operands, P) when one is permute(y, P) of a row-major y
    a kernel computes and each, and e's value, is such a permute or laid out as one (a
    channels-last value); else None."""
    ops = _tensor_operands(e, contiguous=False)
    if not ops:
        return None
    if all(_is_view(v) for v in ops):
        sources = [v.args[0] for v in ops]
        if all(_contiguous(_val(v)) for v in ops) and all(
                _same_shape(_val(s), _val(sources[0])) and _contiguous(_val(s)) and _fusible(s) for s in sources):
            return ops, None
        return None
    permutes = [v for v in ops if _is_permute(v) and _contiguous(_val(v.args[0])) and _fusible(v.args[0])]
    if not permutes or e.kwargs.get("memory_format", torch.preserve_format) != torch.preserve_format:
        return None  # a clone or convert to a layout of its own is no permute's consumer
    dims = [d % _val(e).dim() for d in permutes[0].args[1]]
    inverse = _inverse(dims)
    # Every other operand is laid out as such a permute and is not row-major as it stands
    # (with size-1 dims it could be both: sinking would then make another sinkable permute).
    if all(_contiguous(_val(v).permute(inverse)) for v in [*ops, e]) and all(
            v in permutes or not _contiguous(_val(v)) for v in ops):
        return ops, dims
    return None


def _unpermuted(graph: torch.fx.Graph, v: torch.fx.Node, dims: List[int]) -> torch.fx.Node:
    """A node of value v.permute(inverse of dims): a permute's source, or a new permute."""
    if _is_permute(v) and [d % len(dims) for d in v.args[1]] == dims:
        return v.args[0]
    return _call(graph, aten.permute.default, [v, _inverse(dims)], {})


def _sink(graph: torch.fx.Graph, e: torch.fx.Node) -> bool:
    found = _sunk_views(e)
    if found is None:
        return False
    ops, dims = found
    with graph.inserting_before(e):
        swap = {v: v.args[0] if dims is None else _unpermuted(graph, v, dims) for v in ops}
        inner = _call(graph, e.target, [swap.get(a, a) for a in e.args],
                      {k: swap.get(v, v) for k, v in e.kwargs.items()})
        outer = _call(graph, aten.reshape.default, [inner, ops[0].args[1]], {}) if dims is None else \
            _call(graph, aten.permute.default, [inner, dims], {})
    if dims is not None and not all(statically_known_true(a == b) for a, b in
                                    zip(_val(outer).stride(), _val(e).stride())):
        graph.erase_node(outer)  # not eager's layout after all: left as it was
        graph.erase_node(inner)
        for n in swap.values():
            if not n.users:
                graph.erase_node(n)
        return False
    e.replace_all_uses_with(outer)
    graph.erase_node(e)
    return True


def _hoisted_dag(view: torch.fx.Node) -> Optional[List[torch.fx.Node]]:
    """The elementwise ops a hoist of `view` rewrites, in graph order: the ops of the view's
    operand's shape computing it from graph inputs, each read only by the view or by those ops;
    None when there are none or anything else reads one of them."""
    e = view.args[0]
    dag, stack = set(), [e]
    while stack:
        n = stack.pop()
        if n in dag:
            continue
        ops = _tensor_operands(n)
        if not ops:
            return None
        dag.add(n)
        stack.extend(a for a in ops if not _is_input(a) and _undone(a, view) is None)
    if not all(u in dag or u is view for n in dag for u in n.users):
        return None
    return [n for n in view.graph.nodes if n in dag]


def _undone(a: torch.fx.Node, view: torch.fx.Node) -> Optional[torch.fx.Node]:
    """The source of view `a` when `view` would reshape it back to that source's shape (the
    backward's view of a value the forward reshaped), else None."""
    src = a.args[0] if _is_view(a) else None
    if src is not None and _same_shape(_val(src), _val(view)) and _contiguous(_val(src)) and (
            _fusible(src) or _is_input(src)):
        return src
    return None


def _hoist(graph: torch.fx.Graph, view: torch.fx.Node) -> bool:
    if not _is_view(view):
        return False
    dag = _hoisted_dag(view)
    if dag is None:
        return False
    swap = {}
    with graph.inserting_before(view):
        for n in dag:
            for a in _tensor_operands(n):
                if a not in dag and a not in swap:
                    swap[a] = _undone(a, view) or _call(graph, aten.reshape.default, [a, view.args[1]], {})
            swap[n] = _call(graph, n.target, [swap.get(a, a) for a in n.args],
                            {k: swap.get(v, v) for k, v in n.kwargs.items()})
    view.replace_all_uses_with(swap[view.args[0]])
    graph.erase_node(view)
    for n in reversed(dag):
        graph.erase_node(n)
    return True


def _movable(node: torch.fx.Node) -> bool:
    """Whether a sink or a hoist may apply at `node` (checked before copying the graph)."""
    if _sunk_views(node) is not None:
        return True
    return _is_view(node) and _hoisted_dag(node) is not None


def _drop_aliases(graph: torch.fx.Graph) -> None:
    """aten.alias nodes read only by ops replaced by their source (AOTAutograd's aliases of
    saved values sit between the views this pass moves)."""
    for node in list(graph.nodes):
        if (node.op == "call_function" and node.target == aten.alias.default
                and all(u.op == "call_function" for u in node.users)):
            node.replace_all_uses_with(node.args[0])
            graph.erase_node(node)


def move_views(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """`gm` with its reshapes sunk and hoisted past elementwise ops (see the module text): a
    new module when something moved (`gm` itself is never changed), else `gm`."""
    if not any(_movable(n) for n in gm.graph.nodes):
        return gm
    graph = copy.deepcopy(gm.graph)  # nodes copied, their meta shared
    _drop_aliases(graph)
    moved = 0
    while any(_sink(graph, n) or _hoist(graph, n) for n in list(graph.nodes)):
        moved += 1  # each rewrite erases nodes: rescan from the start
    if not moved:
        return gm
    graph.eliminate_dead_code()
    graph.lint()
    return torch.fx.GraphModule(gm, graph)
