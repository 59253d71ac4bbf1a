"""A linear layer's bias added by the kernel that consumes the product, not by the matmul.

ATen's bf16 `addmm(bias, x, W)` copies the broadcast bias into its result and has oneDNN add
the product to it: two more passes over the result than `mm(x, W)`, which ran 10-18% faster
at these models' sizes (2 threads; BERT/ViT 394-512 rows, 768-3072 features). When every
use of the product is elementwise (GELU after a feed-forward layer, the residual add before a
LayerNorm), possibly through a view that keeps the last dimension (the [rows, N] product seen
as [batch, seq, N]), the graph is rewritten to `add(view(mm(x, W)), bias)`: the add joins the
consumer's kernel and costs nothing. Products read by anything else (attention's Q/K/V
projections) keep their addmm. fp32 linears keep the bias in MKL's packed sgemm
(packed_linear.py), where it is free already.
"""

from __future__ import annotations

import copy

import torch

from . import aten_table

aten = torch.ops.aten
SPLIT_DTYPES = (torch.bfloat16,)  # dtypes whose ATen addmm pays for its bias
_ROW_VIEWS = (aten.view.default, aten._unsafe_view.default, aten.reshape.default)


def _elementwise(node: torch.fx.Node) -> bool:
    return node.op == "call_function" and aten_table.family(node.target) == "elementwise"


def _row_view(node: torch.fx.Node, n: int) -> bool:
    """Whether `node` views the product as [..., n] and only elementwise ops read it."""
    val = node.meta.get("val")
    return (node.op == "call_function" and node.target in _ROW_VIEWS and isinstance(val, torch.Tensor)
            and val.dim() >= 1 and val.shape[-1] == n and bool(node.users)
            and all(_elementwise(u) for u in node.users))


def _splittable(node: torch.fx.Node) -> bool:
    """An `addmm(bias[N], x, W)` with beta = alpha = 1 in a SPLIT_DTYPES dtype whose every use
    is elementwise, directly or through a row view (_row_view)."""
    if node.op != "call_function" or node.target != aten.addmm.default or len(node.args) != 3:
        return False
    if any(node.kwargs.get(k, 1) != 1 for k in ("beta", "alpha")):
        return False
    bias, val = node.args[0], node.meta.get("val")
    bias_val = bias.meta.get("val") if isinstance(bias, torch.fx.Node) else None
    if not isinstance(val, torch.Tensor) or val.dtype not in SPLIT_DTYPES or val.dim() != 2:
        return False
    if not isinstance(bias_val, torch.Tensor) or bias_val.dim() != 1 or bias_val.dtype != val.dtype:
        return False
    n = val.shape[-1]
    return bool(node.users) and all(_elementwise(u) or _row_view(u, n) for u in node.users)


def _add_bias(graph: torch.fx.Graph, source: torch.fx.Node, bias: torch.fx.Node) -> torch.fx.Node:
    """`add(source, bias)` inserted right after `source`, typed as `source`."""
    with graph.inserting_after(source):
        add = graph.call_function(aten.add.Tensor, (source, bias))
    add.meta = dict(source.meta)
    return add


def move_bias_adds(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """`gm` with every _splittable addmm rewritten as mm followed by the bias add at each use
    (after the use's row view): a new module when something was rewritten (`gm` itself is
    never changed), else `gm`."""
    if not any(_splittable(n) for n in gm.graph.nodes):
        return gm
    graph = copy.deepcopy(gm.graph)  # nodes copied, their meta shared
    for node in list(graph.nodes):
        if not _splittable(node):
            continue
        bias, x, w = node.args
        with graph.inserting_after(node):
            mm = graph.call_function(aten.mm.default, (x, w))
        mm.meta = dict(node.meta)
        direct = None  # the one add the product's elementwise uses share
        for use in list(node.users):
            if _elementwise(use):
                direct = direct or _add_bias(graph, mm, bias)
                use.replace_input_with(node, direct)
                continue
            with graph.inserting_after(use):
                view = graph.call_function(use.target, (mm, *use.args[1:]), dict(use.kwargs))
            view.meta = dict(use.meta)
            use.replace_all_uses_with(_add_bias(graph, view, bias))
            graph.erase_node(use)
        graph.erase_node(node)
    graph.lint()
    return torch.fx.GraphModule(gm, graph)
