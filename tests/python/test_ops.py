"""Many ops, dtypes and layouts through the whole pipeline, compared with eager (values and
strides). Few graphs, many ops each, so the suite compiles little."""

import logging

import pytest
import torch
import torch.nn.functional as F

import autofuse
from helpers import compile_fn


def check(fn, *args):
    expected = fn(*args)
    got = compile_fn(fn)(*args)
    torch.testing.assert_close(got, expected, equal_nan=True)
    for g, e in zip(got, expected):
        if e.numel() > 1:
            assert g.stride() == e.stride()
    recs = autofuse.compiled_graphs()
    assert len(recs) == 1 and recs[0].fallback == "" and recs[0].num_kernels >= 1
    return recs[0]


def test_layouts_offsets_and_aliases():
    big = torch.randn(10, 12)

    def fn(x, xs, t0):
        a = torch.sigmoid(x) * t0 + 1  # 0-d tensor operand
        b = xs.exp() - xs.abs().sqrt() + xs.neg().clamp(-0.5, 0.5)  # non-dense input
        c = torch.where((x > 0) & (x < 1), x, -x).relu()
        return a, b, c, x.t(), a, x.expand(2, 9, 10) * 2

    check(fn, big[1:, 2:], big[:, ::2], torch.tensor(1.5))


def test_math_and_mixed_dtypes():
    def fn(x, y16, w):
        a = x.to(torch.float16) + y16
        b = y16 * w  # f16 * f32 -> f32
        c = torch.logical_not(x > 0.5) | (y16 < 0)
        d = torch.isnan(x / (x - x)) ^ torch.isinf(1.0 / x)
        e = torch.pow(x.abs() + 1, 2.5) + torch.pow(2.0, x) + x**2
        g = torch.floor(x * 3) + torch.ceil(x) + torch.trunc(x) + torch.round(x * 2) + torch.sign(x)
        h = torch.maximum(x, w) - torch.minimum(x, w) + torch.remainder(x, 0.7)
        i = (F.hardtanh(x) + F.silu(x) + F.gelu(x) + torch.erf(x) + torch.log1p(x.abs())
             + torch.expm1(x) + torch.rsqrt(x.abs() + 1) + torch.reciprocal(x + 10)
             + torch.sin(x) + torch.cos(x) + torch.exp2(x) + torch.tanh(x))
        return a, b, c, d, e, g, h, i

    check(fn, torch.randn(9, 10), torch.randn(9, 10, dtype=torch.float16), torch.randn(10))


def test_permuted_results_and_views():
    def fn(x):
        y = x.view(3, 3, 10).permute(2, 0, 1) * 2  # a permuted-layout result
        z = y + 1
        return z.sum(0), z.contiguous(), z, (x + 1).unsqueeze(1).squeeze(1)

    check(fn, torch.randn(9, 10))


def test_factories_and_integer_division():
    def fn(x, i):
        return (torch.zeros_like(x) + x, torch.ones(3, 4) * x[:3], torch.div(x, 3, rounding_mode="floor"),
                torch.div(x, 3, rounding_mode="trunc"), x // 2, i * 2 + 1, (i > 2).float() * x[0])

    check(fn, torch.randn(5, 4), torch.randint(0, 5, (5, 4)))


def test_input_with_unexpected_strides_runs_eagerly(caplog):
    def fn(x):
        return torch.sigmoid(x) + 1

    x = torch.randn(6, 8)
    rec = check(lambda x: (fn(x),), x)
    odd = torch.randn(8, 6).t()  # same shape, other strides: the kernels assume x's
    with caplog.at_level(logging.WARNING, logger="autofuse"):
        (got,) = rec.runner(odd)
        rec.runner(odd)
    torch.testing.assert_close(got, fn(odd))
    warnings = [r for r in caplog.records if "runs eagerly" in r.getMessage() or "eagerly" in r.getMessage()]
    assert len(warnings) == 1  # warned once


def test_launch_failure_falls_back_to_eager(caplog):
    from autofuse import _C
    from autofuse.executor import Executor

    x = torch.randn(4, 5)
    rec = check(lambda x: (torch.exp(x) - 1,), x)

    class FailingLaunch:
        """The real program whose launches fail (as a tiling function rejecting sizes would)."""

        def __init__(self, program):
            self.program = program

        def __getattr__(self, name):
            return getattr(self.program, name)

        def launch(self, *args):
            raise _C.CompileError("tiling rejected the sizes")

    runner = Executor(rec.translation, FailingLaunch(rec.program), rec.runner.fallback, "failing")
    with caplog.at_level(logging.WARNING, logger="autofuse"):
        (got,) = runner(x)
        (again,) = runner(x)
    torch.testing.assert_close(got, torch.exp(x) - 1)
    torch.testing.assert_close(again, got)
    assert sum("failed at run time" in r.getMessage() for r in caplog.records) == 1


def test_low_precision_rounding_division_matches_eager():
    # Eager rounds the quotient to f16/bf16 before trunc, and div_floor on f16/bf16 rounds each
    # step of its algorithm; an f32 quotient rounded once differs (e.g. 0.5732 / 0.01686: eager
    # trunc gives 34, the f32 quotient 33.998 truncs to 33).
    def fn(a, b, c, d):
        return (torch.div(a, b, rounding_mode="trunc"), torch.div(a, b, rounding_mode="floor"),
                torch.div(c, d, rounding_mode="trunc"), torch.div(c, d, rounding_mode="floor"))

    a = torch.randn(4, 1000, dtype=torch.float16) * 10
    b = torch.randn(4, 1000, dtype=torch.float16) * 0.01
    b[0, :7] = 0
    check(fn, a, b, a.to(torch.bfloat16), b.to(torch.bfloat16))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_rounding_division_by_a_scalar_matches_eager_on_every_value(dtype):
    # With a Python scalar divisor eager divides in f32 and rounds once (no per-step rounding):
    # -1.2998 / -1.3 = 0.99985 truncs to 0, while a quotient rounded to f16 first (1.0) gives 1.
    # The concat fuzzer found it (seed 559); every finite value of the dtype is checked.
    bits = torch.arange(-(2**15), 2**15, dtype=torch.int32).to(torch.int16).view(dtype)
    x = bits[torch.isfinite(bits)]

    def fn(x):
        return (torch.div(x, -1.3, rounding_mode="trunc"), torch.div(x, 0.7, rounding_mode="floor"),
                torch.div(x, 3.0, rounding_mode="trunc"))

    for got, want in zip(compile_fn(fn)(x), fn(x)):
        assert torch.equal(got.isnan(), want.isnan())
        assert torch.equal(got[~got.isnan()], want[~want.isnan()])


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("name", ["add", "sub", "rsub", "mul", "div"])
def test_python_scalar_rounds_like_eager(name, dtype):
    """Eager's f16/bf16 add/sub round a Python scalar to the tensor dtype, mul/div do not; a
    non-representable scalar (0.1) tells them apart in ~15% of the elements."""
    fns = {
        "add": lambda x: x + 0.1,
        "sub": lambda x: x - 0.1,
        "rsub": lambda x: 0.1 - x,
        "mul": lambda x: x * 0.1,
        "div": lambda x: x / 0.1,
    }
    fn = fns[name]
    x = torch.randn(4096, dtype=dtype) * 0.3
    torch._dynamo.reset()
    out = torch.compile(fn, backend="autofuse")(x)
    assert torch.equal(out, fn(x))


@pytest.mark.parametrize("fmt", ["preserve", "contiguous"])
def test_clone_is_a_fused_copy(fmt):
    """clone() keeps eager's layout (preserve_format keeps the transposed strides), contiguous()
    makes it row-major; both run in the kernel of their consumer."""
    x = torch.randn(96, 40).t()
    fn = (lambda x: x.clone() * 2) if fmt == "preserve" else (lambda x: x.contiguous() + 1)
    torch._dynamo.reset()
    with autofuse.collect_records() as recs:
        out = torch.compile(fn, backend="autofuse")(x)
    ref = fn(x)
    torch.testing.assert_close(out, ref)
    assert out.stride() == ref.stride()
    assert recs[0].fallback == "" and recs[0].num_kernels == 1
