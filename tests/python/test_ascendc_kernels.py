"""The Ascend C emitter beyond the acceptance patterns (docs/ascendc.md): masks and comparisons
(bool values as f32 0 / 1 in UB, Compare + Select), the advanced math calls, rounding and
clamps, column reductions, rows longer than the UB, strided views. Each function must compile to Ascend C kernels only (run against
ascendc_emu, which raises on any device-rule violation and the graph would fall back) and match
eager (bf16: computed in f32 from the same inputs, helpers.reference_in_float), NaN and inf
included."""

import pytest
import torch
import torch.nn.functional as F

import autofuse
from helpers import compile_fn, kernel_targets, reference_in_float


def masks(x, y, m):
    a = torch.where(m, x, y * 2)
    b = (x > y) & ~m
    c = torch.where(x.isnan(), 0.0, x).clamp(-1, 1)
    return a, b, c, (x >= 0.5).float() * y, torch.isinf(y) | (y <= -1)


def masked_softmax(x, m):
    s = x.masked_fill(~m, float("-inf"))
    return torch.softmax(s, -1), (x > 0).any(0), (x > -3).all(-1)


def math(x, y):
    return torch.tanh(x) * torch.erf(y), torch.sin(x) + torch.cos(y), torch.pow(x.abs() + 1, y)


def rounding(x, y):
    return torch.round(x * 4), torch.floor(x) + torch.trunc(y), torch.maximum(x, y).clamp(min=0)


def column_stats(x, w):
    mean = x.mean(0)
    var = ((x - mean) ** 2).mean(0)
    return (x - mean) * torch.rsqrt(var + 1e-5) * w, x.amax(0), x.amin(0)


def long_rows(x, w):
    """Rows longer than the UB: streamed through it in tiles (tiling key 1), a pass per stage."""
    return torch.log_softmax(x, -1), F.layer_norm(x, (x.shape[-1],), w), x.amax(-1), (x > 0).all(-1)


def strided_views(x, b):
    """Views read or written with a stride along the vectorized axis: DataCopyPad of one element
    per 32-byte block, then Gather (reads); Brcb, then DataCopyPad (writes)."""
    return (torch.sigmoid(x.t()) * 2 + b, x[:, ::2] * 3 + x[:, 1::2],
            torch.softmax(x.t(), -1))  # the softmax keeps its input's strides: a scatter


def _inputs(name, dtype):
    g = torch.Generator().manual_seed(3)
    x = torch.randn(6, 300, generator=g).to(dtype)
    y = torch.randn(6, 300, generator=g).to(dtype)
    x[0, 3] = float("nan")
    y[1, 4] = float("inf")
    m = torch.rand(6, 300, generator=g) > 0.4
    return {
        "masks": (x, y, m),
        "masked_softmax": (x, m),
        "math": (x, y),
        "rounding": (x, y),
        "column_stats": (x, torch.randn(300, generator=g).to(dtype)),
        "strided_views": (torch.randn(300, 6, generator=g).to(dtype),
                          torch.randn(300, generator=g).to(dtype)),
        "long_rows": (torch.randn(3, 50000, generator=g).to(dtype),
                      torch.randn(50000, generator=g).to(dtype)),
    }[name]


# The cases `make test` runs (conftest.py; `make fuzz` runs them all).
ASCENDC_QUICK = ["fp32", "masks-bf16", "strided_views-bf16", "long_rows-bf16"]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])
@pytest.mark.parametrize("fn", [masks, masked_softmax, math, rounding, column_stats, long_rows,
                                strided_views],
                         ids=lambda f: f.__name__)
def test_every_kernel_is_ascendc_and_matches_eager(fn, dtype, monkeypatch):
    monkeypatch.setenv("AUTOFUSE_TARGET", "ascendc")
    args = _inputs(fn.__name__, dtype)
    expected = reference_in_float(fn, *args)
    with autofuse.collect_records() as recs:
        got = compile_fn(fn)(*args)
    for g, e in zip(got, expected):
        torch.testing.assert_close(g, e, equal_nan=True)
    assert recs and all(r.fallback == "" for r in recs), [r.fallback for r in recs]
    for r in recs:
        assert set(kernel_targets(r)) == {"ascendc"}, r.program.source()[:600]


@pytest.mark.parametrize("cann", ["", "8", "9"])
def test_masks_in_each_cann_spelling_match_eager(cann, monkeypatch):
    """The compare of a tensor with a scalar is spelled per CANN release (CompareScalar in 8.x
    and by default, Compares in 9.x; docs/ascendc.md "Conformance"); ascendc_emu runs both."""
    monkeypatch.setenv("AUTOFUSE_TARGET", "ascendc")
    monkeypatch.setenv("AUTOFUSE_CANN_VERSION", cann)
    args = _inputs("masks", torch.float32)
    with autofuse.collect_records() as recs:
        got = compile_fn(masks)(*args)
    for g, e in zip(got, masks(*args)):
        torch.testing.assert_close(g, e, equal_nan=True)
    source = "".join(r.program.source() for r in recs)
    assert recs and all(r.fallback == "" for r in recs), [r.fallback for r in recs]
    spelled, other = ("Compares(", "CompareScalar(") if cann == "9" else ("CompareScalar(", "Compares(")
    assert f"AscendC::{spelled}" in source and f"AscendC::{other}" not in source


def erf_twice(x, y):
    return torch.erf(x) * y + 3 * torch.erf(y)


def sin_cos(x):
    return torch.sin(x) * 2.5 + torch.cos(x)


def erf_colsum(x):
    return torch.erf(x).sum(0)


@pytest.mark.parametrize("fn, shapes", [(erf_twice, [(40, 300), (40, 300)]), (sin_cos, [(40, 300)]),
                                        (erf_colsum, [(64, 30000)])], ids=lambda v: getattr(v, "__name__", ""))
def test_advanced_math_leaves_the_other_tiles_alone(fn, shapes, monkeypatch):
    """Erf, Sin, Cos and Power split their whole temporary buffer (its GetSize(), to the end of
    the TBuf a sub-tensor views) between their intermediates, as CANN's implementations do and
    ascendc_emu now does: a temporary buffer that is a tile of the kernel's scratch would be
    written over the tiles after it (the hoisted 3.0 and 2.5, the column accumulator)."""
    monkeypatch.setenv("AUTOFUSE_TARGET", "ascendc")
    g = torch.Generator().manual_seed(5)
    args = [torch.randn(*s, generator=g) for s in shapes]
    with autofuse.collect_records() as recs:
        got = compile_fn(fn)(*args)
    assert recs and all(r.fallback == "" for r in recs), [r.fallback for r in recs]
    assert all(set(kernel_targets(r)) == {"ascendc"} for r in recs)
    torch.testing.assert_close(got, fn(*args), rtol=1e-5, atol=1e-4)
