"""Issue 3's acceptance: the normalization structures of transformers, each EXACTLY ONE
generated kernel (every ATen op of the graph inside it), equal to eager at assert_close's
default tolerances in fp32, and in bf16 to eager computed in f32 from the same bf16 inputs
(helpers.reference_in_float).

Runtime: one Dynamo compile + one C++ kernel per (pattern, shape, dtype). The large shapes'
ids contain "large" (`-k "not large"` leaves them out).

Through the Inductor frontend (the `frontend` fixture), Inductor's scheduler decides the
groups: every group must be an AscIR kernel (none left to Inductor's C++), matching eager.
"""

import os

import pytest
import torch
import torch.nn.functional as F

import autofuse
from autofuse.backend import fused_op_count
from helpers import check_inductor_groups, compile_fn, kernel_steps, kernel_targets, reference_in_float

pytestmark = pytest.mark.usefixtures("frontend")

EPS = 1e-6


def layer_norm(x, w, b):
    return F.layer_norm(x, (x.shape[-1],), w, b)


def rms_norm(x, w):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * w


def softmax_last(x):
    return torch.softmax(x, -1)


def log_softmax_last(x):
    return torch.log_softmax(x, -1)


def mean_sub_square_chain(x, b):
    """mean -> sub -> square -> mean -> (+ eps) rsqrt -> mul -> add."""
    d = x - x.mean(-1, keepdim=True)
    return d * torch.rsqrt(d.square().mean(-1, keepdim=True) + 1e-5) + b


def residual_rms_norm(x, r, w):
    h = x + r
    return h, h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + EPS) * w


def scaled_sum(x):
    return torch.sum(x, -1) * 0.125


def _vec(x):
    return torch.randn(x.shape[-1], dtype=x.dtype)


def _chain_bias(x):
    """The chain's bias. In bf16, eager's rsqrt rounds twice (1 / bf16(sqrt x)) on its scalar
    path (tensors of a few elements, vector tails) and once on its vector path; the kernel
    rounds once. Where `+ b` cancels the output to near 0, that 1-ulp rsqrt difference exceeds
    bf16's rtol, so in bf16 the bias keeps the output away from 0 (8 + N(0, 1))."""
    b = _vec(x)
    return b + 8 if x.dtype == torch.bfloat16 else b


# pattern -> its extra arguments after x (made from x)
PATTERNS = {
    layer_norm: lambda x: (_vec(x), _vec(x)),
    rms_norm: lambda x: (_vec(x),),
    softmax_last: lambda x: (),
    log_softmax_last: lambda x: (),
    mean_sub_square_chain: lambda x: (_chain_bias(x),),
    residual_rms_norm: lambda x: (torch.randn_like(x), _vec(x)),
    scaled_sum: lambda x: (),
}


def _shape_param(shape):
    name = "x".join(map(str, shape))
    large = shape[0] * shape[-1] * (shape[1] if len(shape) == 3 else 1) >= 100_000
    return pytest.param(shape, id=f"{name}-large" if large else name)


SHAPES = [_shape_param(s) for s in [(1, 7), (8, 4096), (4, 128, 768), (2, 50257)]]
DTYPES = [pytest.param(torch.float32, id="fp32"), pytest.param(torch.bfloat16, id="bf16")]


def check_one_kernel(fn, *args):
    """fn compiled by autofuse: one graph, compiled (no eager fallback), exactly one kernel
    holding every ATen op of the graph, results equal to eager (in f32 for bf16 inputs)."""
    expected = reference_in_float(fn, *args)
    with autofuse.collect_records() as recs:
        got = compile_fn(fn)(*args)
    torch.testing.assert_close(got, expected)
    if os.environ["AUTOFUSE_FRONTEND"] == "inductor":
        return check_inductor_groups()
    assert len(recs) == 1, [(r.name, r.fallback) for r in recs]
    (rec,) = recs
    assert rec.fallback == "", f"{rec.fallback}\n{rec.graph_text}"
    assert rec.num_kernels == 1, rec.fused_text
    assert len(kernel_steps(rec)) == 1
    assert fused_op_count(rec) == rec.fx_ops, rec.fused_text
    return rec


def _is_autofuse():
    return os.environ["AUTOFUSE_FRONTEND"] == "autofuse"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("fn", list(PATTERNS), ids=lambda f: f.__name__)
def test_norm_is_one_kernel(fn, shape, dtype):
    x = torch.randn(shape, dtype=dtype)
    rec = check_one_kernel(fn, x, *PATTERNS[fn](x))
    assert "reduce_" in (rec.graph_text if _is_autofuse() else "".join(g.ascir for g in rec.groups))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 128, 768)], ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("fn", list(PATTERNS), ids=lambda f: f.__name__)
def test_norm_is_one_ascendc_kernel(fn, shape, dtype, monkeypatch):
    # On the ascendc target the row reduction is Ascend C (whole rows in UB, ReduceSum /
    # ReduceMax), run against ascendc_emu; a device-rule violation would make the graph fall back.
    monkeypatch.setenv("AUTOFUSE_TARGET", "ascendc")
    x = torch.randn(shape, dtype=dtype)
    rec = check_one_kernel(fn, x, *PATTERNS[fn](x))
    if _is_autofuse():
        assert kernel_targets(rec) == ["ascendc"], rec.program.source()[:400]


OUTER_AND_MIDDLE = [
    ("sum", 0, (8, 4096)),
    ("softmax", 0, (8, 4096)),
    ("sum", 0, (4, 128, 768)),
    ("softmax", 0, (4, 128, 768)),
    ("sum", 1, (4, 128, 768)),
    ("softmax", 1, (4, 128, 768)),
    ("sum", 1, (3, 50, 7)),
    ("softmax", 1, (3, 50, 7)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "op,dim,shape",
    [pytest.param(op, d, s, id=f"{op}_dim{d}-{p.id}") for op, d, s in OUTER_AND_MIDDLE for p in [_shape_param(s)]],
)
def test_outer_and_middle_dims_are_one_kernel(op, dim, shape, dtype):
    fn = {"sum": torch.sum, "softmax": torch.softmax}[op]
    rec = check_one_kernel(lambda x: fn(x, dim), torch.randn(shape, dtype=dtype))
    if _is_autofuse():
        reduces = [n for n in rec.translation.nodes if n.kind.startswith("reduce_")]
        assert reduces and all(n.attrs["dims"] == [dim] for n in reduces)


# The ascendc cases `make test` runs (conftest.py; `make fuzz` runs them all): the norms in
# fp32 and LayerNorm/softmax in bf16; the column and middle reductions in fp32 (bf16 column
# reductions are in make test through test_ascendc_kernels.py).
ASCENDC_QUICK = ["-4x128x768-fp32", "layer_norm-4x128x768-bf16", "-softmax_last-4x128x768-bf16",
                 "sum_dim0-8x4096-fp32", "softmax_dim0-4x128x768-large-fp32",
                 "sum_dim1-3x50x7-fp32", "softmax_dim1-4x128x768-large-fp32"]
# The Inductor-frontend cases `make test` runs: the seed's normalize chain in both dtypes, the
# norms at one shape, a row too long for one tile, a column and a middle reduction, the
# identity reduces, one Ascend C norm.
INDUCTOR_QUICK = ["one_kernel[inductor-mean_sub_square_chain-4x128x768-large-bf16",
                  "one_kernel[inductor-rms_norm-8x4096-bf16", "one_kernel[inductor-log_softmax_last-2x50257-large-fp32",
                  "ascendc_kernel[inductor-layer_norm-4x128x768-fp32", "one_kernel[inductor-sum_dim0-8x4096-fp32",
                  "one_kernel[inductor-softmax_dim1-3x50x7-fp32", "real_ones[inductor-3"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "op,dim,shape",
    [pytest.param(op, d, s, id=f"{op}_dim{d}-{p.id}") for op, d, s in OUTER_AND_MIDDLE for p in [_shape_param(s)]],
)
def test_outer_and_middle_dims_on_ascendc(op, dim, shape, dtype, monkeypatch):
    # reduce_outer in Ascend C: a tile of columns accumulated over the reduced rows (Add / Max),
    # one pass per stage of the plan (softmax: max, then the sum of exp, then the division).
    monkeypatch.setenv("AUTOFUSE_TARGET", "ascendc")
    fn = {"sum": torch.sum, "softmax": torch.softmax}[op]
    rec = check_one_kernel(lambda x: fn(x, dim), torch.randn(shape, dtype=dtype))
    if _is_autofuse():
        assert kernel_targets(rec) == ["ascendc"], rec.program.source()[:400]


# Found by the reduction fuzzer: a reduce over a size-1 dim, or of an already reduced value,
# fused next to a real reduction must stay the identity (it once accumulated over the row).
IDENTITY_REDUCES = [
    ((6, 1), lambda x: (x.amax(-1, keepdim=True) * x, x.sum(0))),
    ((1, 7), lambda x: (x.sum(0), torch.softmax(x, -1))),
    ((6, 1), lambda x: torch.exp(x - x.amin(-1, keepdim=True)).sum(0)),
    ((4, 3), lambda x: x.amax(-1, keepdim=True).sum(-1)),
    ((2, 3), lambda x: x.sum((0, 1), keepdim=True).sum()),
    ((2, 4097), lambda x: x.sum((0, 1), keepdim=True).sum()),
]


@pytest.mark.parametrize("case", range(len(IDENTITY_REDUCES)))
def test_identity_reduces_next_to_real_ones(case):
    shape, fn = IDENTITY_REDUCES[case]
    x = torch.randn(shape)
    expected = fn(x)
    with autofuse.collect_records() as recs:
        got = compile_fn(fn)(x)
    torch.testing.assert_close(got, expected)
    assert all(r.fallback == "" for r in recs)
    if not _is_autofuse():
        check_inductor_groups()


@pytest.mark.parametrize("name", ["layer_norm", "softmax"])
def test_transposed_input_is_one_kernel(name):
    """The decompositions' `.contiguous()` of a transposed input (an aten.clone) is a copy that
    fuses into the normalization kernel instead of splitting it."""
    x = torch.randn(512, 64).t()
    w, b = torch.randn(512), torch.randn(512)
    fn = {"layer_norm": lambda x: F.layer_norm(x, (512,), w, b),
          "softmax": lambda x: torch.softmax(x, -1)}[name]
    check_one_kernel(fn, x)
