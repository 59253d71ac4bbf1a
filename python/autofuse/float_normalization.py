"""bf16 convolutions and batched matmuls computed in fp32 on a CPU without bf16 arithmetic (XLA's
FloatNormalization).

Without bf16 dot-product instructions (cpu.bf16_arithmetic: AMD Zen 3, Intel before Cooper Lake)
ATen's bf16 convolution runs on slow paths: ResNet-50's at batch 2 took 1.1-4.4 s a forward
against 0.12-0.18 s in fp32 (bench/bench_conv_layouts.py, 2 threads), ConvNeXt-T's 0.37 s
against 0.02 s; a bf16 bmm of attention's shapes (48 x 128 x 64 by 48 x 64 x 128) 20.8 ms
against 5.3 ms with its operands converted (scaled_dot_product_attention has its own bf16 kernels
and is left alone: 3.3 ms against 7.0 ms). This FX pass gives each bf16 convolution (and
convolution backward) and bmm fp32 operands and converts its results back to bf16: the products
of bf16 values are exact in fp32 and oneDNN's bf16 convolution sums them in fp32 too, so the
values differ only by summation order. The conversions of activations are elementwise ops that fuse into the kernels producing
or consuming them; a weight's is a conversion per call (its cost: reading the weight once).
Linear layers get the same treatment from packed_linear's table (its pack is the fp32 copy).
"""

from __future__ import annotations

import operator

import torch
import torch.fx
from torch.utils._pytree import tree_map_only

from . import cpu

aten, prims = torch.ops.aten, torch.ops.prims
_UPCAST = (aten.convolution.default, aten.convolution_backward.default, aten.bmm.default)


def _convert(graph: torch.fx.Graph, value: torch.fx.Node, dtype: torch.dtype) -> torch.fx.Node:
    """A new node: `value` converted to `dtype` (strides kept), placed by the caller's
    inserting_* context."""
    node = graph.call_function(prims.convert_element_type.default, (value, dtype))
    node.meta = {"val": value.meta["val"].to(dtype)}
    return node


def _is_bf16(a: object) -> bool:
    val = a.meta.get("val") if isinstance(a, torch.fx.Node) else None
    return isinstance(val, torch.Tensor) and val.dtype == torch.bfloat16


def _results(node: torch.fx.Node) -> list:
    """The nodes holding `node`'s tensor results: itself, or a tuple's getitem users."""
    if isinstance(node.meta.get("val"), torch.Tensor):
        return [node]
    return [u for u in node.users if u.target is operator.getitem]


def upcast_bf16(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """`gm` with its bf16 convolutions and bmms (_UPCAST) computed in fp32 where this CPU lacks
    bf16 arithmetic."""
    graph = gm.graph
    ops = [n for n in graph.nodes if n.op == "call_function" and n.target in _UPCAST
           and any(_is_bf16(a) for a in n.args)]
    if not ops or cpu.bf16_arithmetic(cpu.capabilities()):
        return gm
    for op in ops:
        with graph.inserting_before(op):
            op.args = tuple(_convert(graph, a, torch.float32) if _is_bf16(a) else a for a in op.args)
        op.meta["val"] = tree_map_only(torch.Tensor, lambda v: v.to(torch.float32), op.meta["val"])
        for result in _results(op):
            if result is not op:  # a getitem of the tuple
                result.meta["val"] = result.meta["val"].to(torch.float32)
            with graph.inserting_after(result):
                back = _convert(graph, result, torch.bfloat16)
            result.replace_all_uses_with(back, delete_user_cb=lambda user: user is not back)
    graph.lint()
    gm.recompile()
    return gm
