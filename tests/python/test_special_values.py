"""Every transcendental and activation autofuse fuses, on every kernel ISA the host runs, in f32,
bf16 and f16, at the special values (+-0, +-inf, NaN, subnormals, huge magnitudes) as well as
random ones. A result matches eager's; where eager's vectorized path leaves the math at a special
value, it matches the op computed in float64 and rounded once (docs/reliability.md lists those)."""

import pytest
import torch
import torch.nn.functional as F

import autofuse
from helpers import compile_fn

SPECIAL = [0.0, -0.0, float("inf"), float("-inf"), float("nan"), 1e-40, -1e-40, 1e-45, -1e-45,
           1e-30, 3e19, -3e19, 3e38, -3e38, 88.5, -88.5, 1e-7, -1e-7, 20.0, -20.0]

# name -> op (every unary transcendental and activation in python/autofuse/aten_table.py and
# decompositions.py); a domain-limited op gets values of its domain too (NaN outside is tested).
OPS = {
    "exp": torch.exp, "exp2": torch.exp2, "expm1": torch.expm1, "log": torch.log,
    "log1p": torch.log1p, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt, "reciprocal": torch.reciprocal,
    "sigmoid": torch.sigmoid, "tanh": torch.tanh, "erf": torch.erf, "sin": torch.sin,
    "cos": torch.cos, "relu": torch.relu, "silu": F.silu, "gelu": F.gelu,
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"), "elu": F.elu, "softplus": F.softplus,
    "mish": F.mish, "logsigmoid": F.logsigmoid, "hardswish": F.hardswish,
    "hardsigmoid": F.hardsigmoid, "tanhshrink": F.tanhshrink, "softsign": F.softsign,
    "leaky_relu": F.leaky_relu, "square": torch.square, "cube": lambda x: torch.pow(x, 3.0),
}
DTYPES = [torch.float32, torch.bfloat16, torch.float16]


def _values(dtype):
    g = torch.Generator().manual_seed(0)
    x = torch.cat([torch.randn(301, generator=g) * s for s in (0.01, 1.0, 10.0)])
    return torch.cat([x, torch.tensor(SPECIAL)]).to(dtype)


def _program(x):
    return tuple(op(x) for op in OPS.values())


def _math(op, x):
    """The op in float64, rounded once to x's dtype (no vectorized float path in between)."""
    return op(x.double()).to(x.dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d)[6:])
@pytest.mark.parametrize("isa", ["avx512", "avx2", "scalar"])
def test_special_values_match_eager_or_the_math(isa, dtype):
    if isa not in autofuse.host_isas():
        pytest.skip(f"this host does not run {isa}")
    x = _values(dtype)
    config = autofuse.CompilerConfig(isa=isa, fallback_on_error=False)
    got = compile_fn(_program, config)(x)
    assert not any(r.fallback for r in autofuse.compiled_graphs())
    rtol, atol = (1.3e-6, 1e-5) if dtype == torch.float32 else (1.6e-2, 1e-2)
    for (name, op), g, e in zip(OPS.items(), got, _program(x)):
        m = _math(op, x)
        ok = torch.isclose(g.double(), e.double(), rtol=rtol, atol=atol, equal_nan=True)
        ok |= torch.isclose(g.double(), m.double(), rtol=rtol, atol=atol, equal_nan=True)
        bad = (~ok).nonzero().flatten()[:5].tolist()
        assert not bad, (f"{name}: at x={[x[i].item() for i in bad]}: ours {[g[i].item() for i in bad]}, "
                         f"eager {[e[i].item() for i in bad]}, float64 {[m[i].item() for i in bad]}")
