"""The issue's acceptance: two elementwise chains, each one kernel, equal to eager; on the cpu
target and on the ascendc target (AUTOFUSE_TARGET: the kernel in Ascend C, run against
ascendc_emu, unless its layout has no Ascend C mapping); through autofuse's frontend and through
Inductor's (the `frontend` fixture: Inductor's fusion group, one AscIR kernel)."""

import os

import pytest
import torch

from autofuse.backend import fused_op_count
from helpers import (check_inductor_kernels, compile_fn, kernel_steps, kernel_targets, only_record,
                     reference_in_float)

pytestmark = pytest.mark.usefixtures("frontend")


@pytest.fixture(autouse=True, params=["cpu", "ascendc"])
def target(request, monkeypatch):
    monkeypatch.setenv("AUTOFUSE_TARGET", request.param)
    return request.param

SHAPES = [(1,), (7,), (1024,), (3, 1000), (64, 4096), (2, 3, 5, 7)]
# The ascendc cases `make test` runs (conftest.py; `make fuzz` runs them all).
ASCENDC_QUICK = ["ascendc-autofuse-7-", "ascendc-autofuse-2x3x5x7-",
                 "transposed_input[ascendc-autofuse-3x1000-", "ascendc-autofuse-torch.bfloat16-",
                 "python_scalar_operands[ascendc-autofuse", "ascendc-inductor-3x1000-"]
# The Inductor-frontend cases `make test` runs.
INDUCTOR_QUICK = ["fp32[cpu-inductor-2x3x5x7-", "fp32[ascendc-inductor-3x1000-sigmoid",
                  "transposed_input[cpu-inductor-3x1000-affine", "cpu-inductor-torch.bfloat16-sigmoid",
                  "python_scalar_operands[cpu-inductor"]


def sigmoid_scale_bias(x, scale, bias):
    return torch.sigmoid(x) * scale + bias


def affine(x, gamma, beta):
    return x * gamma + beta


PATTERNS = [sigmoid_scale_bias, affine]


def _params(last, dtype=torch.float32):
    return torch.randn(last, dtype=dtype), torch.randn(last, dtype=dtype)


def _check_one_kernel(fn, x, a, b):
    expected = reference_in_float(fn, x, a, b)
    got = compile_fn(fn)(x, a, b)
    torch.testing.assert_close(got, expected)
    assert got.stride() == expected.stride()
    if os.environ["AUTOFUSE_FRONTEND"] == "inductor":
        return check_inductor_kernels(1, os.environ["AUTOFUSE_TARGET"])
    rec = only_record()
    assert rec.fallback == ""
    assert rec.num_kernels == 1, rec.fused_text
    (name, ops, inputs, outputs), = kernel_steps(rec)
    # Every ATen op of the graph (sigmoid/mul/add) runs inside that one kernel.
    assert fused_op_count(rec) == rec.fx_ops, rec.fused_text
    # On ascendc the kernel is Ascend C (a transposed input included: the schedule vectorizes
    # along the axis every operand reads contiguously, or broadcasts).
    assert kernel_targets(rec) == [os.environ["AUTOFUSE_TARGET"]]
    return rec


@pytest.mark.parametrize("fn", PATTERNS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_one_kernel_fp32(fn, shape):
    x = torch.randn(shape)
    a, b = _params(shape[-1])
    _check_one_kernel(fn, x, a, b)


@pytest.mark.parametrize("fn", PATTERNS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("shape", [(64, 4096), (3, 1000)], ids=lambda s: "x".join(map(str, s)))
def test_one_kernel_transposed_input(fn, shape):
    x = torch.randn(shape[::-1]).t()  # a non-contiguous view
    assert not x.is_contiguous()
    a, b = _params(shape[-1])
    _check_one_kernel(fn, x, a, b)


@pytest.mark.parametrize("fn", PATTERNS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_low_precision(fn, dtype):
    x = torch.randn(3, 1000, dtype=dtype)
    a, b = _params(1000, dtype)
    rec = _check_one_kernel(fn, x, a, b)
    if os.environ["AUTOFUSE_FRONTEND"] == "autofuse":
        assert rec.graph_text.count("f32") == 0  # no promotion: computed in f32 inside the kernel


def test_python_scalar_operands():
    def fn(x, bias):
        return torch.sigmoid(x) * 2.5 + bias - 1

    x, bias = torch.randn(5, 33), torch.randn(33)
    got = compile_fn(fn)(x, bias)
    torch.testing.assert_close(got, fn(x, bias))
    if os.environ["AUTOFUSE_FRONTEND"] == "inductor":
        assert "value = 2.5" in check_inductor_kernels(1).groups[0].ascir
        return
    rec = only_record()
    assert rec.num_kernels == 1
    assert "const() {value = 2.5} : f32[]" in rec.graph_text
