"""Kernels over more than 2^31 elements: index math in 64 bits (a 32-bit offset wraps and reads
out of bounds). About 9 GB of memory, so only with AUTOFUSE_BIG_TESTS=1 (`make sanitize` sets
it: there AddressSanitizer also checks every access)."""

import os

import pytest
import torch

import autofuse
from helpers import compile_fn, only_record, reference_in_float

pytestmark = pytest.mark.skipif(os.environ.get("AUTOFUSE_BIG_TESTS") != "1", reason="needs ~9 GB; AUTOFUSE_BIG_TESTS=1")

ROWS, COLS = 65537, 32771  # 2^31 + 98,307 elements in bf16 (4.3 GB)


def _fn(x, b):
    return torch.nn.functional.gelu(x) * b + 1.0


def test_elementwise_kernel_over_more_than_2_31_elements():
    x = torch.empty(ROWS, COLS, dtype=torch.bfloat16)
    x.view(-1)[: 1 << 20].normal_()
    x.view(-1)[1 << 20 :].copy_(x.view(-1)[: 1 << 20].repeat(x.numel() // (1 << 20) + 1)[: x.numel() - (1 << 20)])
    b = torch.randn(COLS, dtype=torch.bfloat16)
    got = compile_fn(_fn, autofuse.CompilerConfig(fallback_on_error=False))(x, b)
    assert not only_record().fallback and only_record().num_kernels == 1
    # Rows on both sides of element 2^31 and at the end, against those rows alone computed as a
    # kernel does (in f32, rounded once to bf16).
    for r in (0, (1 << 31) // COLS - 1, (1 << 31) // COLS, (1 << 31) // COLS + 1, ROWS - 2, ROWS - 1):
        torch.testing.assert_close(got[r], reference_in_float(_fn, x[r], b), msg=lambda m: f"row {r}: {m}")
