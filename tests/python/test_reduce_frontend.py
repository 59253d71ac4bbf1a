"""Reductions in the torch frontend: ATen reductions -> Graph IR reduce_* nodes, and the norms /
softmax / var decompositions as elementwise + reduce chains (kinds, dims, keepdim, casts).

No kernels are compiled here. Every text goes through the C++ parser and verifier
(_C.check_graph), which must print it back as is.
"""

import operator

import pytest
import torch
import torch.nn.functional as F

import autofuse
from autofuse import _C
from autofuse.fx_to_graph import translate
from autofuse.ir_nodes import dtype_name
from helpers import aten_graph, compile_fn, run_eagerly

def translated(fn, *args, dynamic=False):
    """The Translation of fn's (inference) ATen graph. Its nodes' eager closures (what the
    kernels must compute) are run on the call's arguments and compared with eager fn at
    assert_close's default tolerances; the text goes through the C++ verifier."""
    gm, call_args = aten_graph(fn, *args, dynamic=dynamic)
    tr = translate(gm, "t")
    assert _C.check_graph(tr.text) == tr.text
    expected = fn(*args)
    expected = expected if isinstance(expected, tuple) else (expected,)
    got = run_eagerly(tr, call_args)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        torch.testing.assert_close(g, e, equal_nan=True)
    return tr


def reduces(tr):
    return [n for n in tr.nodes if n.kind.startswith("reduce_")]


def compute_kinds(tr):
    """The kinds of the nodes that compute (no inputs, consts, broadcasts or views)."""
    skip = {"input", "const", "broadcast", "reshape", "permute", "unsqueeze", "squeeze", "slice", "expand"}
    return [n.kind for n in tr.nodes if n.kind not in skip]


def opaque(tr):
    return [(n.origin, n.reason) for n in tr.nodes if n.kind == "opaque"]


def operand(tr, n, k=0):
    return tr.nodes[n.operands[k]]


X = torch.randn(8, 16)
X3 = torch.randn(4, 6, 10)
XB = torch.randn(8, 16, dtype=torch.bfloat16)

# (id, fn, input, kind, dims, keepdim, operand dtype, result shape); the operand is the input
# itself unless the dtypes differ (then a cast of it), or the comparison for any_dim / all_dim.
SINGLE = [
    ("sum_last", lambda x: x.sum(-1), X, "reduce_sum", [1], 0, torch.float32, (8,)),
    ("sum_keepdim", lambda x: x.sum(0, keepdim=True), X, "reduce_sum", [0], 1, torch.float32, (1, 16)),
    ("sum_all", lambda x: x.sum(), X, "reduce_sum", [0, 1], 0, torch.float32, ()),
    ("sum_dims_neg", lambda x: x.sum((-1, 0)), X3, "reduce_sum", [0, 2], 0, torch.float32, (6,)),
    ("sum_bf16", lambda x: x.sum(1), XB, "reduce_sum", [1], 0, torch.bfloat16, (8,)),
    ("sum_dtype_f32", lambda x: x.sum(1, dtype=torch.float32), XB, "reduce_sum", [1], 0, torch.float32, (8,)),
    ("mean_middle", lambda x: x.mean(1, keepdim=True), X3, "reduce_mean", [1], 1, torch.float32, (4, 1, 10)),
    ("mean_all", lambda x: x.mean(), XB, "reduce_mean", [0, 1], 0, torch.bfloat16, ()),
    ("mean_dtype", lambda x: x.mean((0, 2), dtype=torch.float32), X3.half(), "reduce_mean", [0, 2], 0,
     torch.float32, (6,)),
    ("amax", lambda x: x.amax(-1), X, "reduce_max", [1], 0, torch.float32, (8,)),
    ("amin_keepdim", lambda x: x.amin((0, 1), keepdim=True), X3, "reduce_min", [0, 1], 1, torch.float32,
     (1, 1, 10)),
    ("max_all", lambda x: x.max(), XB, "reduce_max", [0, 1], 0, torch.bfloat16, ()),
    ("max_dim_values", lambda x: x.max(1).values, X, "reduce_max", [1], 0, torch.float32, (8,)),
    ("min_dim_values_keepdim", lambda x: x.min(0, keepdim=True)[0], X, "reduce_min", [0], 1, torch.float32,
     (1, 16)),
    ("prod_dim", lambda x: x.prod(1), X, "reduce_prod", [1], 0, torch.float32, (8,)),
    ("prod_all", lambda x: x.prod(), X3, "reduce_prod", [0, 1, 2], 0, torch.float32, ()),
    ("any_dim_bool", lambda x: (x > 0).any(1), X, "reduce_any", [1], 0, torch.bool, (8,)),
    ("any_float", lambda x: x.any(), X, "reduce_any", [0, 1], 0, torch.bool, ()),
    ("all_dim", lambda x: (x > -1).all(0), X, "reduce_all", [0], 0, torch.bool, (16,)),
    ("all_float_keepdim", lambda x: x.all(-1, keepdim=True), XB, "reduce_all", [1], 1, torch.bool, (8, 1)),
]


@pytest.mark.parametrize("fn,x,kind,dims,keepdim,dtype,shape", [c[1:] for c in SINGLE], ids=[c[0] for c in SINGLE])
def test_single_reduction(fn, x, kind, dims, keepdim, dtype, shape):
    tr = translated(fn, x)
    (r,) = reduces(tr)
    assert opaque(tr) == []
    assert (r.kind, r.attrs) == (kind, {"dims": dims, "keepdim": keepdim})
    assert r.type.shape == shape
    assert r.type.dtype == dtype == operand(tr, r).type.dtype  # result dtype = operand dtype
    src = operand(tr, r)
    if src.kind != "gt":  # (any/all of a comparison read it as is)
        if x.dtype == dtype:
            assert src.kind == "input"
        else:  # dtype= / bool reads: an explicit cast of the input first
            assert src.kind == "cast" and operand(tr, src).kind == "input"
    attrs = ", ".join([f"dims = [{', '.join(map(str, dims))}]", f"keepdim = {keepdim}"])
    type_text = f"[{', '.join(map(str, shape))}]"
    assert f"%{r.name} = {kind}(%{src.name}) {{{attrs}}} : {dtype_name(dtype)}{type_text}" in tr.text
    assert tr.fusible >= 1


def test_reduce_text():
    tr = translated(lambda x: x.mean(1, keepdim=True), X)
    assert "  %mean = reduce_mean(%arg0_1) {dims = [1], keepdim = 1} : f32[8, 1]\n" in tr.text


def test_max_dim_with_used_indices_is_opaque():
    tr = translated(lambda x: x.max(1), X)
    assert reduces(tr) == []
    (origin, reason), *_ = opaque(tr)
    assert origin == "aten.max.dim" and "indices" in reason


def test_values_only_max_dim_is_one_node_for_its_getitem():
    tr = translated(lambda x: torch.sigmoid(x.max(-1, keepdim=True).values) * x, X)
    (r,) = reduces(tr)
    assert r.origin == "aten.max.dim" and opaque(tr) == []
    sig = next(n for n in tr.nodes if n.kind == "sigmoid")
    assert operand(tr, sig) is r  # getitem(max.dim, 0) is the reduce itself
    assert not any(n.fx is not None and n.fx.target is operator.getitem for n in tr.nodes)
    assert (tr.fx_ops, tr.fusible) == (3, 3)  # max.dim, sigmoid, mul (the getitem is no op)


@pytest.mark.parametrize(
    "fn,x",
    [
        (lambda x: x.sum(1), torch.arange(12).view(3, 4)),
        (lambda x: (x > 0).sum(1), torch.randn(3, 4)),  # bool -> i64 first, as eager
        (lambda x: x.amax(0), torch.arange(12, dtype=torch.int32).view(3, 4)),
        (lambda x: x.any(0), torch.arange(12).view(3, 4)),
    ],
    ids=["int", "bool_sum", "int_amax", "int_any"],
)
def test_integer_reductions_are_reduces(fn, x):
    tr = translated(fn, x)
    assert reduces(tr) and opaque(tr) == [], tr.text
    autofuse.reset_records()
    got = compile_fn(fn)(x)
    assert got.dtype == fn(x).dtype and torch.equal(got, fn(x))


@pytest.mark.parametrize(
    "fn,x,origin,words",
    [
        (lambda x: x.argmax(1), X, "aten.argmax.default", "runs as ATen"),
        (lambda x: x.argmin(), X, "aten.argmin.default", "runs as ATen"),
        (lambda x: x[:, :0].sum(1), X, "aten.sum.dim_IntList", "empty reduction: dim 1 of %slice_1 has size 0"),
        (lambda x: x[:, :0].mean(1), X, "aten.mean.dim", "empty reduction: dim 1 of %slice_1 has size 0"),
        (lambda x: x.sum(0) + x.sum(0).sum(0), torch.randn(5), "aten.sum.dim_IntList", "rank-0"),
        (lambda x: torch.any(x > 0, dim=[]), X, "aten.any.dims", "no dims"),  # [] = no dims here
        (lambda x: x.prod(1), XB, "aten.prod.dim_int", "eager accumulates it in torch.bfloat16"),
    ],
    ids=["argmax", "argmin", "empty", "empty_mean", "rank0",
         "any_no_dims", "prod_bf16"],
)
def test_unsupported_reductions_are_opaque_with_reason(fn, x, origin, words):
    tr = translated(fn, x)
    reasons = [r for o, r in opaque(tr) if o == origin]
    assert reasons and words in reasons[0], tr.text


def test_softmax():
    tr = translated(lambda x: torch.softmax(x, -1), X)
    assert opaque(tr) == []
    assert compute_kinds(tr) == ["reduce_max", "sub", "exp", "reduce_sum", "div"]
    for r in reduces(tr):
        assert r.attrs == {"dims": [1], "keepdim": 1} and r.type.shape == (8, 1)


def test_softmax_bf16_computes_in_f32_and_casts_once():
    tr = translated(lambda x: torch.softmax(x, -1), XB)
    assert compute_kinds(tr) == ["cast", "reduce_max", "sub", "exp", "reduce_sum", "div", "cast"]
    assert [r.type.dtype for r in reduces(tr)] == [torch.float32] * 2
    (_, out), = tr.outputs
    assert tr.nodes[out].kind == "cast" and tr.nodes[out].type.dtype == torch.bfloat16


@pytest.mark.parametrize("dim,dims,shape", [(0, [0], (1, 6, 10)), (1, [1], (4, 1, 10))])
def test_softmax_over_outer_dims(dim, dims, shape):
    tr = translated(lambda x: torch.softmax(x, dim), X3)
    assert [(r.attrs["dims"], r.type.shape) for r in reduces(tr)] == [(dims, shape)] * 2


def test_log_softmax():
    tr = translated(lambda x: F.log_softmax(x, -1), XB)
    assert opaque(tr) == []
    assert compute_kinds(tr) == ["cast", "reduce_max", "sub", "exp", "reduce_sum", "log", "sub", "cast"]


def _layer_norm_kinds(tr):
    return [k for k in compute_kinds(tr) if k != "cast"]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_layer_norm(dtype):
    x, w, b = torch.randn(4, 6, 10, dtype=dtype), torch.randn(10, dtype=dtype), torch.randn(10, dtype=dtype)
    tr = translated(lambda x, w, b: F.layer_norm(x, (10,), w, b), x, w, b)
    assert opaque(tr) == []
    assert _layer_norm_kinds(tr) == [
        "reduce_mean", "sub", "mul", "reduce_sum", "div", "add", "rsqrt", "sub", "mul", "mul", "add"]
    for r in reduces(tr):
        assert r.attrs == {"dims": [2], "keepdim": 1} and r.type.dtype == torch.float32
    div = next(n for n in tr.nodes if n.kind == "div")
    assert operand(tr, div, 1).attrs == {"value": 10.0}  # biased variance: / N
    casts = [n for n in tr.nodes if n.kind == "cast"]
    if dtype == torch.float32:
        assert casts == []
    else:  # x and the parameters read as f32, one cast back at the end
        assert [operand(tr, c).kind for c in casts] == ["input", "input", "input", "add"]
        assert [c.type.dtype for c in casts] == [torch.float32] * 3 + [torch.bfloat16]


def test_layer_norm_over_two_dims_without_affine():
    tr = translated(lambda x: F.layer_norm(x, (6, 10)), X3)
    assert opaque(tr) == []
    assert [r.attrs for r in reduces(tr)] == [{"dims": [1, 2], "keepdim": 1}] * 2


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_rms_norm_functional(dtype):
    x, w = torch.randn(4, 6, 10, dtype=dtype), torch.randn(10, dtype=dtype)
    tr = translated(lambda x, w: F.rms_norm(x, (10,), w, eps=1e-6), x, w)
    assert opaque(tr) == []
    assert [k for k in compute_kinds(tr) if k != "cast"] == ["pow", "reduce_mean", "add", "rsqrt", "mul", "mul"]
    (r,) = reduces(tr)
    assert r.attrs == {"dims": [2], "keepdim": 1} and r.type.dtype == torch.float32


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_rms_norm_hand_written(dtype):
    def rms(x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w

    x, w = torch.randn(8, 32, dtype=dtype), torch.randn(32, dtype=dtype)
    tr = translated(rms, x, w)
    assert opaque(tr) == []
    # Eager computes each op in the input dtype: no casts (kernels accumulate bf16 in f32).
    assert compute_kinds(tr) == ["pow", "reduce_mean", "add", "rsqrt", "mul", "mul"]
    (r,) = reduces(tr)
    assert (r.attrs, r.type.dtype, r.type.shape) == ({"dims": [1], "keepdim": 1}, dtype, (8, 1))


@pytest.mark.parametrize(
    "fn,n_out,divisor,post",
    [
        (lambda x: x.var(-1), 1, 15.0, []),
        (lambda x: x.var(1, correction=0, keepdim=True), 1, 16.0, []),
        (lambda x: x.std(-1), 1, 15.0, ["sqrt"]),
        (lambda x: torch.var_mean(x, 1, correction=2), 2, 14.0, ["reshape"]),
        (lambda x: torch.std_mean(x, -1), 2, 15.0, ["sqrt", "reshape"]),
    ],
    ids=["var", "var_keepdim", "std", "var_mean", "std_mean"],
)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_var_std(fn, n_out, divisor, post, dtype):
    tr = translated(fn, X.to(dtype))
    assert opaque(tr) == []
    kinds = [n.kind for n in tr.nodes if n.kind not in ("input", "const", "broadcast", "cast")]
    assert kinds[:5] == ["reduce_mean", "sub", "mul", "reduce_sum", "div"] and sorted(kinds[5:]) == sorted(post)
    div = next(n for n in tr.nodes if n.kind == "div")
    assert operand(tr, div, 1).attrs == {"value": divisor}  # N - correction
    # The mean in f32; the squared deviations summed in f64, as eager's Welford in double.
    assert [r.type.dtype for r in reduces(tr)] == [torch.float32, torch.float64]
    assert [tr.nodes[v].type.dtype for _, v in tr.outputs] == [dtype] * n_out


def test_mean_sub_square_chain():
    def chain(x, b):
        d = x - x.mean(-1, keepdim=True)
        return d * torch.rsqrt((d * d).mean(-1, keepdim=True) + 1e-5) + b

    tr = translated(chain, X, torch.randn(16))
    assert compute_kinds(tr) == ["reduce_mean", "sub", "mul", "reduce_mean", "add", "rsqrt", "mul", "add"]


def test_dynamic_shapes():
    tr = translated(lambda x: torch.softmax(x, -1) + x.sum(0), torch.randn(6, 9), dynamic=True)
    assert tr.symbols and opaque(tr) == []
    amax, sum_exp, sum0 = reduces(tr)
    assert amax.kind == "reduce_max" and amax.attrs == {"dims": [1], "keepdim": 1}
    rows, cols = (str(d) for d in tr.nodes[tr.placeholders[-1]].type.shape)
    assert {rows, cols} <= set(tr.symbols)
    assert tuple(map(str, amax.type.shape)) == (rows, "1")
    assert sum0.attrs == {"dims": [0], "keepdim": 0} and tuple(map(str, sum0.type.shape)) == (cols,)
