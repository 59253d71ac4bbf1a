"""make bench-conv-layouts: the measurements behind autofuse/conv_layouts.RULES on this CPU.

Every distinct convolution of ResNet-50 and ConvNeXt-T (bench/models.py, random weights) is timed
alone with its activations NCHW and channels-last (the weight as the model holds it), and forward
channels-last on a oneDNN pack of its weight (packed_conv.py: inference), forward in fp32 and bf16
and backward in fp32, in interleaved rounds (bench/common.py). Per convolution: the medians, the
NCHW / channels-last ratio and the layouts this CPU's rule picks without a pack (training) and with
one (inference); per (model, dtype, direction) the totals over the model's convolutions with NCHW
everywhere, channels-last everywhere (Inductor's choice), packed everywhere, the rule's choices and
the fastest of each convolution. A rule row of conv_layouts.RULES
for a new CPU comes from these numbers. Nothing asserts a time. --batch N (default 2), --models.
"""
from __future__ import annotations

import argparse
import collections
import os
import statistics
import sys
from typing import Callable, Dict, Tuple

import torch

sys.path.insert(0, os.path.dirname(__file__))
from common import interleaved_samples  # noqa: E402
import models  # noqa: E402
from autofuse import conv_layouts, cpu, packed_conv  # noqa: E402

aten = torch.ops.aten
Conv = Tuple[tuple, tuple, tuple, tuple, int, tuple]  # input, weight, stride, padding, groups, output shapes


def model_convs(name: str, batch: int) -> Dict[Conv, int]:
    """The model's distinct convolutions and how often each runs in a forward."""
    m = models.build(name, torch.float32, train=False)
    seen: Dict[Conv, int] = collections.Counter()

    def hook(mod, inp, out):
        seen[(tuple(inp[0].shape), tuple(mod.weight.shape), mod.stride, mod.padding, mod.groups,
              tuple(out.shape))] += 1

    for mod in m.modules():
        if isinstance(mod, torch.nn.Conv2d):
            mod.register_forward_hook(hook)
    with torch.no_grad():
        m(**models.example_inputs(name, batch, 0))
    return seen


def conv_call(conv: Conv, dtype: torch.dtype, fmt: torch.memory_format, backward: bool,
              packed: bool = False) -> Callable[[], object]:
    """One call of the convolution (or its backward) with activations in `fmt`; `packed`: the
    forward on a oneDNN pack of the weight made beforehand."""
    xs, ws, stride, padding, groups, outs = conv
    x = torch.randn(xs, dtype=dtype).contiguous(memory_format=fmt)
    w = torch.randn(ws, dtype=dtype)
    if packed:
        pk = torch.ops.mkldnn._reorder_convolution_weight(w, list(padding), list(stride), [1, 1], groups, list(xs))
        return lambda: torch.ops.mkldnn._convolution_pointwise(x, pk, None, list(padding), list(stride), [1, 1], groups,
                                                               "none", [], "")
    if backward:
        g = torch.randn(outs, dtype=dtype).contiguous(memory_format=fmt)
        return lambda: aten.convolution_backward(g, x, w, None, stride, padding, (1, 1), False, (0, 0), groups,
                                                 (True, True, False))
    return lambda: torch.nn.functional.conv2d(x, w, None, stride, padding, 1, groups)


def shape_of(conv: Conv, dtype: torch.dtype, backward: bool, packed: bool) -> conv_layouts.ConvShape:
    xs, ws, _, _, groups, outs = conv
    return conv_layouts.ConvShape(dtype, backward, groups == xs[1] > 1, ws[2:], xs[2] * xs[3], outs[2] * outs[3],
                                  in_channels=xs[1], packed=packed)


def run(name: str, batch: int, dtype: torch.dtype, backward: bool, rounds: int) -> None:
    what = f"{name} batch {batch} {str(dtype).replace('torch.', '')} {'backward' if backward else 'forward'}"
    pack = not backward and dtype == torch.float32 and packed_conv.available()  # packed_conv packs fp32 only
    print(f"\n## {what}\n\n| input | weight | groups | output | x | NCHW ms | CL ms | packed CL ms | NCHW/CL | rule "
          "| rule packed |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    totals: Dict[str, float] = collections.Counter()
    for conv, count in sorted(model_convs(name, batch).items()):
        fns = {fmt: conv_call(conv, dtype, mf, backward)
               for fmt, mf in (("nchw", torch.contiguous_format), ("cl", torch.channels_last))}
        if pack:
            fns["packed"] = conv_call(conv, dtype, torch.channels_last, backward, packed=True)
        with torch.set_grad_enabled(False):
            ms = {k: statistics.median(v) * 1e3 for k, v in interleaved_samples(fns, rounds).items()}
        rule = "cl" if conv_layouts.prefers_channels_last(shape_of(conv, dtype, backward, False)) else "nchw"
        rule_packed = ("packed" if conv_layouts.prefers_channels_last(shape_of(conv, dtype, backward, True)) else
                       "nchw") if pack else rule
        for k, v in ms.items():
            totals[k] += v * count
        for k, v in (("rule", ms[rule]), ("rule_packed", ms[rule_packed]), ("best", min(ms.values()))):
            totals[k] += v * count
        xs, ws, _, _, groups, outs = conv
        print(f"| {list(xs)} | {list(ws)} | {groups} | {outs[2]}x{outs[3]} | {count} | {ms['nchw']:.2f} | "
              f"{ms['cl']:.2f} | {ms.get('packed', float('nan')):.2f} | {ms['nchw'] / ms['cl']:.2f} | {rule} "
              f"| {rule_packed} |")
    packed = (f"packed channels-last {totals['packed']:.1f}, rule with packs {totals['rule_packed']:.1f}, "
              if pack else "")
    print(f"\n{what}, ms per model call: NCHW {totals['nchw']:.1f}, channels-last {totals['cl']:.1f}, "
          f"rule {totals['rule']:.1f}, {packed}best per convolution {totals['best']:.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="resnet50,convnext")
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    caps = {k: v for k, v in cpu.capabilities().items() if k.startswith(("avx", "amx")) and v}
    print(f"# Convolution layouts on {cpu.capabilities()['cpu_name'] or 'this CPU'} "
          f"({', '.join(sorted(caps))}; {torch.get_num_threads()} threads)")
    for dtype in (torch.float32, torch.bfloat16):
        rule = conv_layouts.rule_for(dtype)
        print(f"- {dtype}: rule {rule.cpu if rule else 'none (every convolution channels-last)'}")
    for name in args.models.split(","):
        for dtype, backward in ((torch.float32, False), (torch.float32, True), (torch.bfloat16, False)):
            run(name, args.batch, dtype, backward, args.rounds)


if __name__ == "__main__":
    main()
