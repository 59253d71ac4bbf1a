"""bf16 convolutions and bmms computed in fp32 on a CPU without bf16 arithmetic
(float_normalization.py): the convolutions (and their backward) and bmms read fp32 operands, results and gradients stay bf16 and
match eager's at bf16 tolerance; on a CPU with bf16 arithmetic the graph is left as it was.
The CPU is pinned (cpu.capabilities), so both cases run on every machine."""

import copy

import pytest
import torch

import autofuse
from autofuse import packed_conv
from helpers import compile_fn

_CONVS = (torch.ops.aten.convolution.default, torch.ops.aten.convolution_backward.default)
_TOL = {"atol": 2e-2, "rtol": 2e-2}


def _as_close_as_eager(got: torch.Tensor, eager: torch.Tensor, exact: torch.Tensor, what: str) -> None:
    """`got` is as close to the float64 result `exact` as eager's bf16 result, or within bf16's
    tolerance of it (eager's bf16 weight gradients sum in bf16 on some CPUs: far from exact)."""
    err, eager_err = ((t.double() - exact).abs().max().item() for t in (got, eager))
    assert err <= max(1.25 * eager_err, 2e-2 * (1 + exact.abs().max().item())), (what, err, eager_err)


@pytest.fixture(params=[False, True], ids=["no-bf16-arithmetic", "avx512-bf16"])
def bf16_arithmetic(request, pin_cpu):
    pin_cpu(avx512_bf16=request.param, amx_bf16=False, avx_ne_convert=False)
    return request.param


def _conv_dtypes(rec) -> list:
    """The dtype each convolution (or convolution backward) of the record's graph computes in."""
    return [n.fx.args[1 if n.fx.target is _CONVS[1] else 0].meta["val"].dtype
            for n in rec.translation.nodes if n.fx is not None and (
                n.fx.target in _CONVS or isinstance(n.fx.target, packed_conv.PackedConvolution))]


@pytest.mark.parametrize("train", [False, True])
def test_bf16_convolutions_compute_in_fp32_without_bf16_arithmetic(bf16_arithmetic, train):
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
                            torch.nn.Conv2d(8, 8, 3, groups=8), torch.nn.SiLU()).to(torch.bfloat16).train(train)
    ref, exact = copy.deepcopy(m), copy.deepcopy(m).double()
    x = torch.randn(2, 3, 16, 16, dtype=torch.bfloat16)
    with torch.set_grad_enabled(train), autofuse.collect_records() as recs:
        got = compile_fn(m)(x)
        if train:
            got.float().square().sum().backward()
    with torch.set_grad_enabled(train):
        want, want64 = ref(x), exact(x.double())
        if train:
            want.float().square().sum().backward()
            want64.square().sum().backward()
    assert got.dtype == torch.bfloat16
    torch.testing.assert_close(got, want, **_TOL)
    for (name, p), q, e in zip(m.named_parameters(), ref.parameters(), exact.parameters()):
        if train:
            assert p.grad.dtype == torch.bfloat16
            _as_close_as_eager(p.grad, q.grad, e.grad, name)
    assert [r.tag for r in recs] == (["fw", "bw"] if train else ["inference"])
    assert all(r.fallback == "" for r in recs), [r.fallback for r in recs]
    want_dtype = torch.bfloat16 if bf16_arithmetic else torch.float32
    dtypes = [d for r in recs for d in _conv_dtypes(r)]
    assert len(dtypes) == (4 if train else 2)
    assert set(dtypes) == {want_dtype}


def test_bf16_bmm_computes_in_fp32_without_bf16_arithmetic(bf16_arithmetic):
    torch.manual_seed(0)
    q, k, v = (torch.randn(6, 32, 16, dtype=torch.bfloat16) for _ in range(3))

    def attention(q, k, v):
        return torch.bmm(torch.softmax(torch.bmm(q, k.transpose(1, 2)) * 0.25, dim=-1), v)

    with torch.no_grad(), autofuse.collect_records() as recs:
        got = compile_fn(attention)(q, k, v)
    assert got.dtype == torch.bfloat16
    torch.testing.assert_close(got, attention(q, k, v), **_TOL)
    (rec,) = recs
    assert rec.fallback == ""
    bmms = [n.fx for n in rec.translation.nodes if n.fx is not None and n.fx.target is torch.ops.aten.bmm.default]
    assert len(bmms) == 2
    assert {b.meta["val"].dtype for b in bmms} == {torch.bfloat16 if bf16_arithmetic else torch.float32}
