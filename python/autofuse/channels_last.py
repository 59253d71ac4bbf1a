"""Convolutions in their faster layout, and the vector work between them in it.

oneDNN computes a CPU convolution on NHWC (blocked) data: ATen's convolution of a contiguous
NCHW tensor reorders its input and its result on every call, a channels-last one does not.
Inductor therefore runs every convolution of a CPU graph channels-last
(GraphLowering.decide_layout_opt with oneDNN); measured here, which layout is faster depends on
the CPU, the dtype and the convolution (conv_layouts.RULES), so this FX pass picks per
convolution: where a graph has 2-d convolutions on CPU with oneDNN, each convolution (and
convolution backward: grad_output and input) reads its activations in its faster layout
(_prefers_channels_last), a clone where a value is in the other, and the graph's meta values
are computed again under its fake mode, node by node: the BatchNorm / ReLU / residual work
between convolutions takes their layout (TensorIterator's rule for an elementwise result), so
its Graph IR types carry those strides and its kernels iterate in that memory order. A view
the new strides do not allow reads a contiguous clone.

The values a caller sees keep the strides eager gives them (a copy where they changed, which the
kernel computing the value fuses: its store takes the old strides; a view where only size-1
dims' strides differ). A forward's values saved for its backward do not: their strides are
reported to AOTAutograd (TracingContext.output_strides), which hands the backward graph inputs
with those strides; the backward's placeholders take them before its own propagation (also in
a backward without convolutions of its own). Not under dynamic shapes (as Inductor: its layouts regress there),
and not in a graph that reads memory through explicit strides (as_strided).
"""

from __future__ import annotations

import copy
import operator
from typing import Any, Collection, List, Optional, Sequence

import torch
import torch.fx
from torch._guards import TracingContext
from torch._subclasses.fake_tensor import FakeTensor
from torch._prims_common import is_non_overlapping_and_dense_or_false
from torch.fx.experimental.symbolic_shapes import free_symbols

from . import conv_layouts, packed_conv
from .log import logger

aten = torch.ops.aten
# Convolution-class op -> the argument positions of its activations.
_CONV_ACTIVATIONS = {aten.convolution.default: (0,), aten.convolution_backward.default: (0, 1)}
_VIEWS = (aten.view.default, aten._unsafe_view.default)
_EXPLICIT_STRIDES = (aten.as_strided.default, aten.as_strided_copy.default, aten.as_strided_scatter.default)


def _val(node: Any) -> Optional[torch.Tensor]:
    val = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    return val if isinstance(val, torch.Tensor) else None


def _prefers_channels_last(conv: torch.fx.Node, weights: Collection[torch.fx.Node]) -> bool:
    """Whether convolution (or convolution backward) `conv` runs faster channels-last on this
    CPU (conv_layouts.RULES), on a kept pack there if its weight is a parameter in `weights`."""
    backward = conv.target is aten.convolution_backward.default
    out, x, w = (_val(conv.args[0]), _val(conv.args[1]), _val(conv.args[2])) if backward else (
        _val(conv), _val(conv.args[0]), _val(conv.args[1]))
    groups = conv.args[9] if backward else conv.args[8]
    return conv_layouts.prefers_channels_last(conv_layouts.ConvShape(
        dtype=x.dtype, backward=backward, packed=packed_conv.parameter_weight(conv, weights) is not None,
        in_channels=x.shape[1], depthwise=groups == x.shape[1] > 1, kernel=tuple(w.shape[2:]),
        in_pixels=x.shape[2] * x.shape[3], out_pixels=out.shape[2] * out.shape[3]))


def _applies(gm: torch.fx.GraphModule, weights: Collection[torch.fx.Node]) -> bool:
    """Whether the graph's convolutions run in their faster layouts: it has some, one of them
    faster channels-last, every one 2-d on CPU (4-d activations) with static shapes, oneDNN is
    on, and nothing reads explicit strides."""
    if not (torch.backends.mkldnn.enabled and torch.backends.mkldnn.is_available()):
        return False
    convs = [n for n in gm.graph.nodes if n.op == "call_function" and n.target in _CONV_ACTIVATIONS]
    if not convs or any(n.op == "call_function" and n.target in _EXPLICIT_STRIDES for n in gm.graph.nodes):
        return False
    for n in convs:
        for i in _CONV_ACTIVATIONS[n.target]:
            v = _val(n.args[i])
            if v is None or v.dim() != 4 or v.device.type != "cpu" or free_symbols(v):
                return False
    return any(_prefers_channels_last(n, weights) for n in convs)


def _fake_value(node: torch.fx.Node) -> Any:
    """`node`'s value computed from its operands' (fake) values."""
    args, kwargs = torch.fx.node.map_arg((node.args, node.kwargs), lambda a: a.meta.get("val"))
    if node.target is operator.getitem:
        return args[0][args[1]]
    return node.target(*args, **kwargs)


def _clone_before(graph: torch.fx.Graph, user: torch.fx.Node, pos: int, fmt: torch.memory_format) -> None:
    """Makes argument `pos` of `user` a clone of itself in memory format `fmt`."""
    src = user.args[pos]
    with graph.inserting_before(user):
        c = graph.call_function(aten.clone.default, (src,), {"memory_format": fmt})
    c.meta = {"val": src.meta["val"].clone(memory_format=fmt)}
    user.update_arg(pos, c)


def _propagate(graph: torch.fx.Graph, inputs: Sequence[Any], relayout: bool, weights: Collection[torch.fx.Node]
               ) -> None:
    """Recomputes every node's meta value, with each convolution's activations in its faster
    layout when `relayout` (`weights`: the parameters whose convolutions can run packed);
    placeholders take the strides of `inputs` (a backward's saved values)."""
    placeholders = iter(inputs)
    for node in list(graph.nodes):
        if node.op == "placeholder":
            given = next(placeholders, None)
            old = _val(node)
            if old is not None and isinstance(given, torch.Tensor) and given.stride() != old.stride():
                node.meta["val"] = old.as_strided(old.shape, given.stride(), old.storage_offset())
            continue
        if node.op != "call_function":
            continue
        if relayout and node.target in _CONV_ACTIVATIONS:
            fmt = torch.channels_last if _prefers_channels_last(node, weights) else torch.contiguous_format
            for pos in _CONV_ACTIVATIONS[node.target]:
                if not _val(node.args[pos]).is_contiguous(memory_format=fmt):
                    _clone_before(graph, node, pos, fmt)
        if node.target in _VIEWS and not _val(node.args[0]).is_contiguous():
            try:
                node.meta["val"] = _fake_value(node)
                continue
            except (RuntimeError, ValueError):  # the new strides do not allow this view: read a copy
                _clone_before(graph, node, 0, torch.contiguous_format)
        node.meta["val"] = _fake_value(node)


def _restore_outputs(graph: torch.fx.Graph, old: List[Optional[torch.Tensor]], visible: int) -> bool:
    """Gives the first `visible` outputs their old strides back (a copy into them, or a view
    where only size-1 dims' strides differ); False where one cannot be restored that way (a
    value with an offset or a non-dense layout)."""
    out = next(n for n in graph.nodes if n.op == "output")
    values = list(out.args[0])
    for k in range(min(visible, len(values))):
        node, before = values[k], old[k]
        now = _val(node)
        if before is None or now is None or now.stride() == before.stride():
            continue
        if before.storage_offset() != 0 or not is_non_overlapping_and_dense_or_false(before):
            return False
        # Strides that differ only on size-1 dims (a 1 x 1 convolution's weight gradient) lay
        # the values out alike: a view restores them, anything else a copy.
        alike = now.storage_offset() == 0 and all(
            a == b for a, b, n in zip(now.stride(), before.stride(), before.shape) if n != 1)
        with graph.inserting_before(out):
            if alike:
                c = graph.call_function(aten.view.default, (node, list(before.shape)))
            else:
                c = graph.call_function(aten.clone.default, (node,))
        c.meta = {"val": now.as_strided(before.shape, before.stride(), 0) if alike else
                  torch.empty_strided(before.shape, before.stride(), dtype=before.dtype, device=before.device)}
        values[k] = c
    out.args = (type(out.args[0])(values),) + tuple(out.args[1:])
    return True


def _visible_outputs(tag: str, count: int) -> int:
    """How many of a graph's outputs the caller sees: a forward's first
    fw_metadata.num_forward_returns (the rest are saved for the backward); all otherwise."""
    if tag != "fw":
        return count
    ctx = TracingContext.try_get()
    meta = getattr(ctx, "fw_metadata", None)
    return getattr(meta, "num_forward_returns", count) if meta is not None else count


def _restrided_inputs(gm: torch.fx.GraphModule, example_inputs: Sequence[Any]) -> bool:
    """Whether an input arrives with other strides than the graph was traced with (a backward
    reading values its forward computed channels-last)."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    return any(isinstance(given, torch.Tensor) and _val(n) is not None and given.stride() != _val(n).stride()
               for n, given in zip(placeholders, example_inputs))


def to_channels_last(gm: torch.fx.GraphModule, example_inputs: Sequence[Any], tag: str,
                     packed: Collection[int] = ()) -> torch.fx.GraphModule:
    """`gm` with its convolutions in their faster layouts (see the module text): a new module
    when the pass applies or an input arrives with other strides than traced (`gm` itself is
    never changed), else `gm`. `packed`: the positions of the inputs (parameters) whose
    convolutions run on kept packs where channels-last (packed_conv.py). A forward reports its
    outputs' strides to AOTAutograd."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    relayout = _applies(gm, {placeholders[k] for k in packed if k < len(placeholders)})
    if not (relayout or _restrided_inputs(gm, example_inputs)):
        return gm
    graph = copy.deepcopy(gm.graph)  # nodes copied, each with its own meta dict
    out = next(n for n in graph.nodes if n.op == "output")
    old = [_val(n) for n in out.args[0]]
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    # the mode of the graph's own values: a graph rebuilt from AOTAutograd's cache
    # (aot_cache._rebuild) has its own, not the tracing context's
    fake_mode = next((v.fake_mode for v in map(_val, placeholders) if isinstance(v, FakeTensor)), None)
    if fake_mode is None:
        return gm
    weights = {placeholders[k] for k in packed if k < len(placeholders)}
    try:
        with fake_mode:
            _propagate(graph, example_inputs, relayout, weights)
            if not _restore_outputs(graph, old, _visible_outputs(tag, len(old))):
                return gm
    except Exception as e:  # an op the fake mode cannot run with the new strides: keep the layouts
        logger.info("autofuse: convolutions keep their layouts: %s: %s", type(e).__name__, e)
        return gm
    graph.lint()
    ctx = TracingContext.try_get()
    if tag == "fw" and ctx is not None and ctx.output_strides is not None:
        out = next(n for n in graph.nodes if n.op == "output")
        ctx.output_strides.extend(tuple(v.stride()) if v is not None else None for v in map(_val, out.args[0]))
    return torch.fx.GraphModule(gm, graph)
