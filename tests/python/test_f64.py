"""f64 in the Graph IR frontend's kernels (issue 18): the acceptance patterns of elementwise,
broadcast, reduce and concat, in double, fuse into exactly the kernels their f32 versions give
and match eager at f64's default tolerances (the kernels compute in double lanes, `af_vd`)."""

import pytest
import torch

import autofuse
import test_acceptance as elementwise
import test_acceptance_reduce as reduce
from helpers import compile_fn
from test_concat import rotary


def _compiled(fn, args):
    """(result, kernels per graph) of fn compiled by autofuse; every graph compiled."""
    torch._dynamo.reset()
    with autofuse.collect_records() as recs:
        got = compile_fn(fn)(*args)
    assert recs and all(r.fallback == "" for r in recs), [(r.name, r.fallback) for r in recs]
    return got, [r.num_kernels for r in recs]


def _check_like_f32(fn, make_args):
    """fn on f64 arguments: equal to eager, and the same kernels as on f32 arguments."""
    torch.manual_seed(0)
    args64 = make_args(torch.float64)
    got, kernels64 = _compiled(fn, args64)
    torch.testing.assert_close(got, fn(*args64))
    _, kernels32 = _compiled(fn, [a.float() if isinstance(a, torch.Tensor) else a for a in args64])
    assert kernels64 == kernels32


@pytest.mark.parametrize("fn", elementwise.PATTERNS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("shape", [(7,), (3, 1000), (2, 3, 5, 7)], ids=lambda s: "x".join(map(str, s)))
def test_elementwise_and_broadcast(fn, shape):
    _check_like_f32(fn, lambda dt: [torch.randn(shape, dtype=dt), *(torch.randn(shape[-1], dtype=dt),) * 2])


@pytest.mark.parametrize("fn", list(reduce.PATTERNS), ids=lambda f: f.__name__)
@pytest.mark.parametrize("shape", [(3, 17), (8, 1000)], ids=lambda s: "x".join(map(str, s)))
def test_reductions(fn, shape):
    extra = reduce.PATTERNS[fn]
    _check_like_f32(fn, lambda dt: [x := torch.randn(shape, dtype=dt), *extra(x)])


@pytest.mark.parametrize("fn", [lambda x: (x.sum(0) * 2, x.amax(1).exp()), lambda x: torch.relu(x - x.mean((0, 2), keepdim=True))],
                         ids=["outer_middle", "around_kept"])
def test_reductions_over_outer_dims(fn):
    _check_like_f32(fn, lambda dt: [torch.randn(5, 6, 40, dtype=dt)])


@pytest.mark.parametrize("fn,shapes", [(rotary, [(2, 4, 16, 64), (16, 64), (16, 64)]),
                                       (lambda a, b: torch.cat((a.sigmoid(), b * 2), -1) * 0.5, [(5, 7), (5, 13)])],
                         ids=["rotary", "odd_segments"])
def test_concat(fn, shapes):
    _check_like_f32(fn, lambda dt: [torch.randn(s, dtype=dt) for s in shapes])


def test_transcendentals_and_mixed_precision():
    """Every float kind's f64 overload (af_vd), a python scalar, and an f32 operand promoted."""
    def f(x, y):
        a = torch.nn.functional.gelu(x) + torch.nn.functional.gelu(x, approximate="tanh") + torch.erf(x) + torch.tanh(x)
        b = torch.sigmoid(x) * torch.nn.functional.silu(x) + torch.expm1(x) - torch.log1p(x.abs())
        c = torch.sin(x) * torch.cos(x) + torch.exp2(x) + torch.sqrt(x.abs()) + torch.rsqrt(x.abs() + 1)
        d = torch.floor_divide(x, 0.3) + torch.div(x, 0.7, rounding_mode="trunc") + torch.round(x * 3) + x.sign()
        e = torch.where(x > y, torch.maximum(x, y), torch.clamp(x, -0.5, 0.5)) + x.pow(3) + 1.5
        return a + b + c + d + e, (x * y.double()).sum(-1)

    torch.manual_seed(0)
    x = torch.randn(6, 300, dtype=torch.float64)
    x.view(-1)[7] = float("nan")
    y = torch.randn(6, 300, dtype=torch.float32)
    got, kernels = _compiled(f, [x, y])
    torch.testing.assert_close(got, f(x, y), equal_nan=True)
    assert sum(kernels) == 1
