"""What the CPU and this torch build can do: the facts the measured tables (packed_linear.CHOICES,
conv_layouts.RULES) choose their rows by."""

from __future__ import annotations

import collections
import functools
from typing import Any, Dict

import torch


def _vendor() -> str:
    """The CPU vendor id ("GenuineIntel", "AuthenticAMD"); "" where /proc/cpuinfo lacks it."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("vendor_id"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


@functools.lru_cache(maxsize=None)
def capabilities() -> Dict[str, Any]:
    """torch.cpu.get_capabilities() (False for a feature it does not list: "avx2", "avx512_f",
    "avx512_bf16", "amx_bf16", ...), the vendor ("vendor"), and whether this torch has MKL's
    and oneDNN's packed linears ("mkl", "onednn")."""
    get = getattr(torch.cpu, "get_capabilities", None)
    caps = collections.defaultdict(bool, get() if get is not None else {})
    caps["vendor"] = _vendor()
    caps["mkl"] = torch.backends.mkl.is_available() and hasattr(torch.ops.mkl, "_mkl_linear")
    caps["onednn"] = torch.backends.mkldnn.is_available() and hasattr(torch.ops.mkldnn, "_linear_pointwise")
    return caps


def bf16_arithmetic(caps: Dict[str, Any]) -> bool:
    """Whether a CPU with capabilities `caps` has bf16 dot-product instructions (AVX-512 BF16,
    AMX, AVX-NE-CONVERT) that oneDNN computes bf16 matmuls and convolutions with; without them
    (AMD Zen 3, Intel before Cooper Lake) ATen's bf16 matmul runs 6-10x slower than fp32's."""
    return bool(caps["avx512_bf16"] or caps["amx_bf16"] or caps["avx_ne_convert"])
