"""Inference convolutions on oneDNN weight packs kept across calls.

ATen's CPU convolution hands oneDNN the weight in its plain layout, and oneDNN reorders it into
its blocked layout on every call (and a channels-last input's weight is first copied to
channels-last by ATen: a 768 x 384 x 2 x 2 weight took 1 ms a call in ConvNeXt-T). With the
weight reordered once (mkldnn._reorder_convolution_weight, what Inductor does under `freezing`)
and the convolution run as mkldnn._convolution_pointwise on a channels-last input, the
convolutions of a whole forward took, against the faster plain layout of each convolution
(2 threads, interleaved medians on an AMD Zen 3): ResNet-50 batch 2 138.5 ms against 158.6,
batch 1 78.7 against 92.4; ConvNeXt-T batch 1 8.5 against 9.6, batch 2 18.9 against 19.7. The
3 x 3 and 1 x 1 convolutions on 14 x 14 and 7 x 7 maps gain most (512 x 512 x 3 x 3 at 7 x 7:
3.6 ms against 6.2); the stem's 7 x 7 on 3 channels loses (5.1 against 4.1 NCHW), so a
convolution's layout stays conv_layouts.RULES' choice, which knows which convolutions run packed.

This FX pass (pack_convolutions) replaces each forward 2-d fp32 convolution of an inference
graph that reads a channels-last input and a parameter's weight (or the fp32 conversion of a
bf16 one: float_normalization.py; the conversion then runs once per pack, not per call) by a
PackedConvolution call, which keeps its pack while the weight holds it (weight_packs.py) and
otherwise runs ATen's convolution. A training graph writes its weights every step: it keeps ATen's.
"""

from __future__ import annotations

from typing import Collection, List, Optional

import torch
import torch.fx

from . import weight_packs

aten, prims, mkldnn = torch.ops.aten, torch.ops.prims, torch.ops.mkldnn
LABEL = "autofuse::packed_convolution"  # the torch.profiler event around a call on a pack
_profiling = torch._C._autograd._profiler_enabled  # () -> whether a torch.profiler is recording
# ATen's C++ callables: OpOverload.__call__ would add a Python frame to every call.
_CONV, _POINTWISE, _REORDER = (op._op for op in (
    aten.convolution.default, mkldnn._convolution_pointwise.default, mkldnn._reorder_convolution_weight.default))


def available() -> bool:
    """Whether this torch has oneDNN's convolution on packed weights, and oneDNN is on."""
    return (torch.backends.mkldnn.enabled and torch.backends.mkldnn.is_available()
            and hasattr(mkldnn, "_convolution_pointwise"))


def _val(node: object) -> Optional[torch.Tensor]:
    val = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    return val if isinstance(val, torch.Tensor) else None


def _parameter(arg: object, params: Collection[torch.fx.Node]) -> Optional[torch.fx.Node]:
    """The parameter in `params` that `arg` is, directly or as its fp32 conversion read only here."""
    if (isinstance(arg, torch.fx.Node) and arg.target is prims.convert_element_type.default
            and arg.args[1] == torch.float32 and len(arg.users) == 1):
        arg = arg.args[0]
    return arg if arg in params else None


def parameter_weight(conv: torch.fx.Node, params: Collection[torch.fx.Node]) -> Optional[torch.fx.Node]:
    """The parameter in `params` a forward 2-d fp32 convolution `conv` reads as its weight, directly
    or through its fp32 conversion; None for any other node."""
    if conv.op != "call_function" or conv.target is not aten.convolution.default or len(conv.args) != 9:
        return None
    out = _val(conv)
    if out is None or out.dtype != torch.float32 or out.dim() != 4 or conv.args[6]:  # transposed
        return None
    return _parameter(conv.args[1], params)


def runs_packed(conv: torch.fx.Node, params: Collection[torch.fx.Node]) -> bool:
    """Whether pack_convolutions runs `conv` on a kept pack: a forward 2-d fp32 convolution of a
    parameter's weight (parameter_weight) on a channels-last input."""
    x = _val(conv.args[0]) if conv.op == "call_function" and conv.args else None
    return (parameter_weight(conv, params) is not None and x is not None
            and x.is_contiguous(memory_format=torch.channels_last))


class PackedConvolution:
    """aten.convolution(x, W, b, stride, padding, dilation, False, output_padding, groups) of one
    graph node, called as (x, W, b) with W the parameter and b the parameter or None or an fp32
    value: on a oneDNN pack of W in fp32 (and b's fp32 copy) kept across calls for a
    channels-last x, ATen's convolution in fp32 otherwise."""

    def __init__(self, conv: torch.fx.Node):
        self.stride, self.padding, self.dilation = (list(a) for a in conv.args[3:6])
        self.output_padding, self.groups = list(conv.args[7]), conv.args[8]
        self.packs = weight_packs.KeptPacks(limit=1)
        self.biases = weight_packs.KeptPacks(limit=1)  # a bf16 parameter bias -> its fp32 copy
        self.__name__ = "packed_convolution"  # how FX code and reports name the call
        self.__module__ = __name__

    def _pack(self, w: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return _REORDER(w.to(torch.float32), self.padding, self.stride, self.dilation, self.groups, list(x.shape))

    def __call__(self, x: torch.Tensor, w: torch.Tensor, b: Optional[torch.Tensor]) -> torch.Tensor:
        pack = (self.packs.get(w, None, lambda src: self._pack(src, x))
                if x.is_contiguous(memory_format=torch.channels_last) else None)
        if b is not None and b.dtype != x.dtype:
            kept = self.biases.get(b, None, lambda src: src.to(x.dtype)) if pack is not None else None
            b = kept if kept is not None else b.to(x.dtype)
        if pack is None:
            return _CONV(x, w.to(x.dtype), b, self.stride, self.padding, self.dilation, False, self.output_padding,
                         self.groups)
        if _profiling():
            with torch.profiler.record_function(LABEL):
                return _POINTWISE(x, pack, b, self.padding, self.stride, self.dilation, self.groups, "none", [], "")
        return _POINTWISE(x, pack, b, self.padding, self.stride, self.dilation, self.groups, "none", [], "")


def pack_convolutions(gm: torch.fx.GraphModule, params: Collection[int]) -> torch.fx.GraphModule:
    """`gm`, changed in place: each convolution that runs_packed (weights: the placeholders at
    positions `params`) a PackedConvolution call. Only for graphs whose packs are kept (an
    inference graph outside torch.distributed: weight_packs)."""
    placeholders: List[torch.fx.Node] = [n for n in gm.graph.nodes if n.op == "placeholder"]
    weights = {placeholders[k] for k in params if k < len(placeholders)}
    convs = [n for n in gm.graph.nodes if runs_packed(n, weights)] if available() and weights else []
    if not convs:
        return gm
    graph = gm.graph
    for conv in convs:
        w, b = parameter_weight(conv, weights), _parameter(conv.args[2], weights) or conv.args[2]
        with graph.inserting_before(conv):
            packed = graph.call_function(PackedConvolution(conv), (conv.args[0], w, b))
        packed.meta = dict(conv.meta)
        conv.replace_all_uses_with(packed)
        conversions = ((w, conv.args[1]), (b, conv.args[2]))
        graph.erase_node(conv)  # (its args become None)
        for read, converted in conversions:
            if converted is not read and not converted.users:  # an fp32 conversion: now per pack
                graph.erase_node(converted)
    graph.lint()
    gm.recompile()
    return gm
