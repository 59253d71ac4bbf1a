"""What the CPU and this torch build can do: the facts the measured tables (packed_linear.CHOICES,
conv_layouts.RULES) choose their rows by."""

from __future__ import annotations

import collections
import functools
from typing import Any, Dict

import torch


@functools.lru_cache(maxsize=None)
def capabilities() -> Dict[str, Any]:
    """The core's probe of the host CPU (_C.host_cpu(), src/target/host_cpu.h: "avx2",
    "avx512_f", "avx512_bf16", "amx_bf16", "avx_ne_convert", ... and "vendor"; False for a
    feature it does not probe), and whether this torch has MKL's and oneDNN's packed linears
    ("mkl", "onednn")."""
    from . import _C

    caps = collections.defaultdict(bool, _C.host_cpu())
    caps["mkl"] = torch.backends.mkl.is_available() and hasattr(torch.ops.mkl, "_mkl_linear")
    caps["onednn"] = torch.backends.mkldnn.is_available() and hasattr(torch.ops.mkldnn, "_linear_pointwise")
    return caps


def bf16_arithmetic(caps: Dict[str, Any]) -> bool:
    """Whether a CPU with capabilities `caps` has bf16 dot-product instructions (AVX-512 BF16,
    AMX, AVX-NE-CONVERT) that oneDNN computes bf16 matmuls and convolutions with; without them
    (AMD Zen 3, Intel before Cooper Lake) ATen's bf16 matmul runs 6-10x slower than fp32's."""
    return bool(caps["avx512_bf16"] or caps["amx_bf16"] or caps["avx_ne_convert"])
