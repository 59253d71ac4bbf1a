"""f16/bf16 inside kernels (docs/user-guide.md "Precision"): by default a fused chain keeps its values in f32
until the store, which is closer to the exact result than eager's per-op rounding; with
emulate_precision_casts=True every op's result is rounded as eager rounds it."""

import math

import pytest
import torch

import autofuse
from helpers import compile_fn, only_record, reference_in_float

LOW = [torch.bfloat16, torch.float16]


def affine(x, w, b):
    return x * w + b


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def explicit_cast(x):
    return (x.exp() * 3).to(torch.bfloat16).float() * 0.5


def rms(a, b):
    return (a.double() - b.double()).pow(2).mean().sqrt().item()


@pytest.mark.parametrize("dtype", LOW, ids=str)
def test_fused_chain_is_computed_in_f32(dtype):
    x, w, b = (torch.randn(64, 257, dtype=dtype) for _ in range(3))
    got = compile_fn(affine)(x, w, b)
    assert only_record().num_kernels == 1
    torch.testing.assert_close(got, reference_in_float(affine, x, w, b))
    exact = affine(x.double(), w.double(), b.double())
    assert rms(got, exact) <= rms(affine(x, w, b), exact)


@pytest.mark.parametrize("dtype", LOW, ids=str)
def test_emulated_precision_casts_round_like_eager(dtype):
    x, w, b = (torch.randn(64, 257, dtype=dtype) for _ in range(3))
    emulate = autofuse.CompilerConfig(emulate_precision_casts=True)
    # The product of two f16/bf16 values is exact in f32: rounding it, then the sum, is eager.
    assert torch.equal(compile_fn(affine, emulate)(x, w, b), affine(x, w, b))
    torch._dynamo.reset()
    y = torch.randn(8, 3072, dtype=dtype) * 3
    torch.testing.assert_close(compile_fn(gelu_new, emulate)(y), gelu_new(y))


def test_explicit_casts_round_by_default():
    x = torch.randn(16, 100)
    got = compile_fn(explicit_cast)(x)
    assert only_record().num_kernels == 1
    torch.testing.assert_close(got, explicit_cast(x))  # f32 result: bf16 rounding in the middle
    assert not torch.equal(got, (x.exp() * 3) * 0.5)


def test_bf16_gelu_new_no_worse_than_eager():
    x = torch.randn(16, 3072, dtype=torch.bfloat16) * 3
    got = compile_fn(gelu_new)(x)
    exact = gelu_new(x.double())
    assert rms(got, exact) <= rms(gelu_new(x), exact)
    torch.testing.assert_close(got, reference_in_float(gelu_new, x))
