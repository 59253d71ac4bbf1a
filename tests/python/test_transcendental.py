"""Transcendental and power ops end to end against eager: pow with the exponents the simplifier
strength-reduces (and one it does not), tanh, erf and both GELUs, in f32, bf16 and f16, on
random values plus the special ones (+-0, +-inf, NaN, subnormals, huge, the branch points of
autofuse_cpu_math.h's polynomials)."""

import re

import pytest
import torch
import torch.nn.functional as F

import autofuse
from helpers import compile_fn, reference_in_float

SPECIAL = [0.0, -0.0, float("inf"), float("-inf"), float("nan"), 1e-40, -1e-40, 1e-30, 3e19,
           -3e19, 0.5625, -0.5625, 1.0, -1.0, 4.0, -4.0, 9.5, -9.5, 50.0, -50.0]
DTYPES = [torch.float32, torch.bfloat16, torch.float16]


def values(dtype, n=4099):
    """Random values (several scales) followed by SPECIAL, as `dtype`."""
    g = torch.Generator().manual_seed(0)
    x = torch.cat([torch.randn(n, generator=g) * s for s in (0.05, 1.0, 4.0)])
    return torch.cat([x, torch.tensor(SPECIAL)]).to(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_pow_constant_exponents_match_eager(dtype, tmp_path):
    """Every exponent of the rule table becomes multiplies / sqrt / rsqrt / reciprocal (no
    af_pow left in the kernel); 1.5 stays pow. Results match eager, specials included."""
    def fn(x):
        return (torch.pow(x, 2.0), torch.pow(x, 3.0), torch.pow(x, 4.0), torch.pow(x, -2.0),
                torch.pow(x.abs(), 0.5), torch.pow(x.abs(), -0.5), torch.pow(x, -1.0),
                torch.pow(x.abs(), 1.5))

    x = values(dtype)
    got = compile_fn(fn, autofuse.CompilerConfig(dump_dir=str(tmp_path)))(x)
    for k, (g, e) in enumerate(zip(got, fn(x))):
        torch.testing.assert_close(g, e, equal_nan=True, msg=lambda m: f"output {k}: {m}")
    source = "".join(p.read_text() for p in tmp_path.glob("g*.cpp"))
    # Generated lines end with "// %value op"; only the 1.5 power is still a pow.
    assert len(set(re.findall(r"af_pow\(.*// (%\S+) pow$", source, re.M))) == 1
    for f in ("af_cube", "af_pow4(", "af_rsquare", "af_sqrt(", "af_rsqrt(", "af_reciprocal("):
        assert f in source, f


def test_pow_rules_without_fusion():
    """One kernel per op: the rewritten pow is still a kernel of its own."""
    def fn(x):
        return torch.pow(x, 3.0) + torch.pow(x, -2.0)

    x = values(torch.float32)
    got = compile_fn(fn, autofuse.CompilerConfig(enable_fusion=False))(x)
    torch.testing.assert_close(got, fn(x), equal_nan=True)


@pytest.mark.parametrize("dtype", DTYPES)
def test_tanh_erf_and_gelus_match_eager(dtype):
    """tanh and erf (autofuse_cpu_math.h) and the GELUs that use them, specials included. Eager's
    vectorized GELU on AVX-512 gives NaN for +inf (and the exact one for -inf); the kernels keep
    the limits of the formula (gelu(+inf) = +inf), so the infinities are checked against the
    formula in float64 instead."""
    def fn(x):
        return (torch.tanh(x), torch.erf(x), F.gelu(x), F.gelu(x, approximate="tanh"),
                0.5 * x * (1.0 + torch.tanh(0.7978845608028654 * (x + 0.044715 * torch.pow(x, 3.0)))))

    x = values(dtype)
    got = compile_fn(fn)(x)
    finite = torch.isfinite(x)
    for k, (g, e) in enumerate(zip(got, reference_in_float(fn, x))):
        torch.testing.assert_close(g[finite], e[finite], equal_nan=True,
                                   msg=lambda m: f"output {k}: {m}")
    ref = fn(x.double())
    for k in range(5):
        inf_out = got[k][torch.isinf(x)].double()
        want = ref[k][torch.isinf(x)]
        torch.testing.assert_close(inf_out[~want.isnan()], want[~want.isnan()])
    assert torch.equal(got[0][torch.isinf(x)].float(), torch.sign(x[torch.isinf(x)]).float())
    assert torch.equal(got[1][torch.isinf(x)].float(), torch.sign(x[torch.isinf(x)]).float())


def test_gelu_no_less_accurate_than_eager_against_float64():
    """Exact GELU over [-8, 8] in fp32, judged in float64: no larger an error than eager's at its
    worst or on average (AVX-512: the piecewise polynomial, af_gelu_piecewise_; else the erf
    formula), nor in relative terms in the negative tail (eager's there: 7e-3; ours 4e-6 on
    AVX-512, 9e-4 with the formula)."""
    x = torch.linspace(-8.0, 8.0, 1_000_001)
    exact = F.gelu(x.double())
    ours = (compile_fn(F.gelu)(x).double() - exact).abs()
    eager = (F.gelu(x).double() - exact).abs()
    assert ours.max() <= eager.max() * 1.01, (ours.max(), eager.max())
    assert ours.square().mean().sqrt() <= eager.square().mean().sqrt()
    tail = (x >= -4) & (x < -1)
    assert (ours[tail] / exact[tail].abs()).max() <= (eager[tail] / exact[tail].abs()).max()
