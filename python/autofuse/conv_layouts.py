"""Which layout a CPU convolution runs faster in: a table of rules measured per CPU and dtype.

oneDNN computes a convolution on NHWC (blocked) data; whether handing it channels-last
activations beats a contiguous NCHW tensor depends on the CPU, the dtype and the convolution.
Each row of RULES was measured by timing every convolution of ResNet-50 and ConvNeXt-T (batch 2
and 1, forward and backward, 2 threads) alone in both layouts (bench/bench_conv_layouts.py):

- AMD Zen 4 (AVX-512, AVX-512 BF16), fp32 and bf16: channels-last is faster at 56 x 56 and
  28 x 28 outputs (up to 8x for a 1 x 1 expansion at 56 x 56), slower at 14 x 14 for 3 x 3
  convolutions and at 7 x 7 for every dense one (up to 2x); depthwise 7 x 7 convolutions 3-20%
  faster at every size. ResNet-50 fp32: NCHW 93 ms, channels-last 102 ms, this rule 87 ms.
- AMD Zen 3 (AVX2), fp32: 1 x 1 convolutions on 56 x 56 inputs are 1.2-1.3x faster channels-last
  (their backward 1.7-2.7x), 3 x 3 and 7 x 7 ones and those on 14 x 14 / 7 x 7 maps up to 2.3x
  slower; depthwise ones 10-35% slower forward but 2.8-3.6x faster backward. ResNet-50 backward:
  NCHW 403 ms, channels-last 443 ms, this rule 390 ms; ConvNeXt-T backward: NCHW 235 ms,
  channels-last 91 ms. In a whole ConvNeXt-T forward, its depthwise convolutions channels-last
  made it 2% slower (the rule's NCHW ones cost a transpose around its LayerNorm instead).

- Intel Sapphire Rapids (AVX-512, AMX-BF16), batch 2: bf16 is 1.3-7x faster channels-last except
  for the 3 x 3 convolutions at 7 x 7 outputs (NCHW 12-15% faster); ResNet-50 bf16 forward: NCHW
  109 ms, channels-last 67.0 ms, the AVX-512 row below 73.0 ms. fp32 convolutions on a oneDNN
  pack run faster channels-last at every size (ResNet-50: packed everywhere 103.7 ms, the
  AVX-512 row's choices 120.2 ms); without a pack (training) the AVX-512 row's choices hold
  (ResNet-50 forward 121.1 ms against channels-last's 129.8, backward 393.5 against 418.6).

A CPU or dtype no row covers (fp16, f64) gets Inductor's choice: every
convolution channels-last (GraphLowering.decide_layout_opt). bf16 on a CPU without bf16
arithmetic needs no row: its convolutions run in fp32 (float_normalization.py).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Dict, FrozenSet, Tuple

import torch

from . import cpu


@dataclasses.dataclass(frozen=True)
class ConvShape:
    """What a layout rule reads of one convolution (or convolution backward)."""

    dtype: torch.dtype
    backward: bool  # convolution_backward (its grad_output and input)
    depthwise: bool  # groups == input channels > 1
    kernel: Tuple[int, ...]  # the weight's spatial size
    in_pixels: int  # H * W of the input, per image
    out_pixels: int  # H * W of the output (a backward's grad_output), per image
    in_channels: int
    packed: bool  # runs on a kept oneDNN pack where channels-last (packed_conv.runs_packed)


@dataclasses.dataclass(frozen=True)
class LayoutRule:
    """One row of RULES: on CPUs where `when` holds, a convolution of a dtype in `dtypes` runs
    channels-last where `channels_last` says."""

    cpu: str  # the CPUs, in words
    dtypes: FrozenSet[torch.dtype]
    when: Callable[[Dict[str, Any]], bool]  # (cpu.capabilities()) -> the row applies
    channels_last: Callable[[ConvShape], bool]


_F32, _BF16 = frozenset({torch.float32}), frozenset({torch.bfloat16})

# The first row whose dtype and CPU condition hold decides (the module docstring says what each
# was measured against).
RULES: Tuple[LayoutRule, ...] = (
    LayoutRule("AVX-512 with AMX (Intel Sapphire Rapids)", _F32 | _BF16, lambda c: c["amx_bf16"],
               lambda s: (s.depthwise or s.kernel != (3, 3) or s.out_pixels > 7 * 7) if s.dtype == torch.bfloat16
               else s.packed or s.depthwise or s.out_pixels >= 28 * 28),
    LayoutRule("AVX-512 (AMD Zen 4)", _F32 | _BF16, lambda c: c["avx512_f"],
               lambda s: s.depthwise or s.out_pixels >= 28 * 28),
    LayoutRule("AVX2 without AVX-512 (AMD Zen 3)", _F32, lambda c: c["avx2"] and not c["avx512_f"],
               lambda s: (s.in_channels >= 8 or s.kernel[0] * s.kernel[1] <= 16) if s.packed else
               s.backward if s.depthwise else all(k == 1 for k in s.kernel) and s.in_pixels >= 56 * 56),
)


def rule_for(dtype: torch.dtype) -> LayoutRule | None:
    """The row of RULES that decides `dtype`'s convolutions on this CPU; None: Inductor's choice."""
    caps = cpu.capabilities()
    return next((r for r in RULES if dtype in r.dtypes and r.when(caps)), None)


def prefers_channels_last(shape: ConvShape) -> bool:
    """Whether the convolution `shape` runs faster channels-last on this CPU."""
    rule = rule_for(shape.dtype)
    return True if rule is None else rule.channels_last(shape)
