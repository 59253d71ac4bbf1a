"""torch.cat -> the Graph IR `concat` op.

Frontend tests (no kernels): aten.cat becomes one `concat` {dim} node over its inputs, each
cast to the result dtype; the cases a kernel cannot compute stay opaque with a reason. Every
translated text goes through the C++ parser and verifier, and every node's eager closure is
run and compared with eager.

Acceptance tests (end to end): graphs around a cat (rotary embedding, elementwise branches, a
consumer after the cat, odd sizes, mixed dtypes) are EXACTLY ONE generated kernel holding every
ATen op that computes (views are read by the kernel in place), equal to eager at
assert_close's default tolerances, in fp32 and bf16; through the Inductor frontend too (the
`frontend` fixture), where Inductor writes each cat input into its slice and every group must be
an AscIR kernel.
"""

import pytest
import torch

import autofuse
from autofuse import _C
from autofuse.fx_to_graph import translate
from helpers import (aten_graph, check_inductor_groups, compile_fn, inductor_frontend, kernel_steps, kernel_targets,
                     reference_in_float, run_eagerly)

aten = torch.ops.aten
# The Inductor-frontend cases `make test` runs (conftest.py; `make fuzz` runs them all).
INDUCTOR_QUICK = ["consumer_after_cat_is_one_kernel[inductor-bf16"]
DTYPES = [pytest.param(torch.float32, id="fp32"), pytest.param(torch.bfloat16, id="bf16")]
VIEW_KINDS = {"reshape", "permute", "unsqueeze", "squeeze", "slice", "expand"}


# Frontend ------------------------------------------------------------------------------------


def translated(fn, *args, dynamic=False):
    """The Translation of fn's (inference) ATen graph, checked by the C++ verifier (printed back
    as is; with dynamic shapes only verified, the frontend writes a sum size as `(s0 + s1)`)
    and, node by node through the eager closures, against eager fn."""
    gm, call_args = aten_graph(fn, *args, dynamic=dynamic)
    tr = translate(gm, "t")
    printed = _C.check_graph(tr.text)
    assert dynamic or printed == tr.text
    expected = fn(*args)
    expected = expected if isinstance(expected, tuple) else (expected,)
    got = run_eagerly(tr, call_args)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        torch.testing.assert_close(g, e)
    return tr


def concats(tr):
    return [n for n in tr.nodes if n.kind == "concat"]


def opaque(tr):
    return [(n.origin, n.reason) for n in tr.nodes if n.kind == "opaque"]


def operands(tr, n):
    return [tr.nodes[o] for o in n.operands]


@pytest.mark.parametrize(
    "shapes,dim,norm",
    [
        ([(8, 24), (8, 40)], -1, 1),
        ([(8, 24), (8, 40)], 1, 1),
        ([(3, 16), (5, 16)], 0, 0),
        ([(3, 16), (5, 16)], -2, 0),
        ([(2, 3, 5), (2, 7, 5)], 1, 1),
        ([(2, 3, 7), (2, 3, 13), (2, 3, 1)], -1, 2),
    ],
    ids=["last", "last_pos", "first", "first_neg", "middle", "three_inputs"],
)
def test_cat_is_one_concat_node(shapes, dim, norm):
    xs = [torch.randn(s) for s in shapes]
    tr = translated(lambda *xs: torch.cat(xs, dim), *xs)
    (c,) = concats(tr)
    assert opaque(tr) == [] and tr.fusible == tr.fx_ops == 1
    assert c.origin == "aten.cat.default" and c.attrs == {"dim": norm}
    assert [o.kind for o in operands(tr, c)] == ["input"] * len(xs)
    out = list(shapes[0])
    out[norm] = sum(s[norm] for s in shapes)
    assert c.type.shape == tuple(out) and c.type.dtype == torch.float32
    names = ", ".join(f"%{o.name}" for o in operands(tr, c))
    assert f"= concat({names}) {{dim = {norm}}} : f32[{', '.join(map(str, out))}]\n" in tr.text


def test_same_input_twice_is_one_operand_node():
    tr = translated(lambda x: torch.cat((x, x.to(torch.bfloat16), x), 0), torch.randn(3, 4))
    (c,) = concats(tr)
    x = tr.nodes[tr.placeholders[0]]
    assert c.type.dtype == torch.float32
    assert operands(tr, c)[0] is operands(tr, c)[2] is x


@pytest.mark.parametrize(
    "dtypes,result",
    [
        ((torch.float32, torch.bfloat16), torch.float32),
        ((torch.bfloat16, torch.float16), torch.float32),
        ((torch.bfloat16, torch.bool), torch.bfloat16),
        ((torch.int64, torch.float16), torch.float16),
        ((torch.bool, torch.bool), torch.bool),
    ],
    ids=["f32_bf16", "bf16_f16", "bf16_bool", "i64_f16", "bool"],
)
def test_mixed_dtypes_are_cast_to_the_result_dtype(dtypes, result):
    xs = [(torch.randn(4, 6) * 4).to(d) for d in dtypes]
    tr = translated(lambda a, b: torch.cat((a, b), -1), *xs)
    (c,) = concats(tr)
    assert c.type.dtype == result
    for x, o in zip(xs, operands(tr, c)):
        assert o.type.dtype == result
        if x.dtype == result:
            assert o.kind == "input"
        else:
            assert o.kind == "cast" and operands(tr, o)[0].kind == "input"
            assert f"= concat(%{o.name}" in tr.text or f", %{o.name})" in tr.text


def test_rotate_half_reads_the_slices():
    def rotate_half(x):
        h = x.shape[-1] // 2
        return torch.cat((-x[..., h:], x[..., :h]), -1)

    tr = translated(rotate_half, torch.randn(2, 4, 16, 64))
    (c,) = concats(tr)
    assert c.attrs == {"dim": 3} and opaque(tr) == []
    neg, low = operands(tr, c)
    assert neg.kind == "neg" and operands(tr, neg)[0].kind == "slice" and low.kind == "slice"
    assert [n.attrs["start"] for n in (operands(tr, neg)[0], low)] == [32, 0]


def test_inputs_empty_along_dim_are_left_out():
    a, b = torch.randn(3, 4), torch.randn(3, 5)
    tr = translated(lambda a, b: torch.cat((a, b[:, :0], b, a[:, 4:]), 1), a, b)
    (c,) = concats(tr)
    assert [o.type.shape for o in operands(tr, c)] == [(3, 4), (3, 5)]
    assert c.type.shape == (3, 9)


def test_cat_feeds_elementwise_consumers():
    tr = translated(lambda a, b: torch.cat((a.exp(), b * 3), -1).tanh() + 1, torch.randn(4, 7), torch.randn(4, 13))
    assert opaque(tr) == []
    (c,) = concats(tr)
    kinds = [n.kind for n in tr.nodes if n.kind not in ("input", "const")]
    assert kinds == ["exp", "mul", "concat", "tanh", "add"]
    assert tr.fusible == tr.fx_ops == 5


@pytest.mark.parametrize("dim", [0, 1])
def test_dynamic_sizes_add_up(dim):
    a, b = torch.randn(6, 9), torch.randn(6, 5) if dim else torch.randn(4, 9)
    tr = translated(lambda a, b: torch.cat((a.exp(), b * 2), dim) + 1, a, b, dynamic=True)
    (c,) = concats(tr)
    assert tr.symbols and opaque(tr) == [] and c.attrs == {"dim": dim}
    x, y = (o.type.shape for o in operands(tr, c))
    assert c.type.shape[dim] == x[dim] + y[dim] and c.type.shape[1 - dim] == x[1 - dim]


def test_legacy_1d_empty_inputs_are_skipped_as_eager_skips_them():
    # A KV cache's first update: cat(empty(0), key) along the sequence dim of a rank-4 key.
    fn = lambda cache, k: torch.cat((cache, k * 2), -2) + 1  # noqa: E731
    args = (torch.empty(0), torch.randn(2, 3, 5, 4))
    tr = translated(fn, *args)
    (c,) = concats(tr)
    assert [o.type.shape for o in operands(tr, c)] == [(2, 3, 5, 4)]
    autofuse.reset_records()
    torch.testing.assert_close(compile_fn(fn)(*args), fn(*args))


@pytest.mark.parametrize(
    "fn,args,words",
    [
        (lambda a, b: torch.cat((a[:0], b[:0]), 0), (torch.randn(3, 4), torch.randn(2, 4)),
         "all empty along dim 0"),
    ],
    ids=["all_empty"],
)
def test_unsupported_cats_are_opaque_with_reason(fn, args, words):
    tr = translated(fn, *args)
    assert concats(tr) == []
    reasons = [r for o, r in opaque(tr) if o == "aten.cat.default"]
    assert reasons and words in reasons[0], tr.text


@pytest.mark.parametrize(
    "args",
    [(torch.arange(6).view(2, 3), torch.arange(3).view(1, 3)),
     (torch.ones(2, 3, dtype=torch.int16), torch.ones(1, 3, dtype=torch.int8))],  # promoted to i16
    ids=["i64", "i16_i8"],
)
def test_integer_cats_are_concats(args):
    fn = lambda a, b: torch.cat((a, b), 0)  # noqa: E731
    tr = translated(fn, *args)
    assert len(concats(tr)) == 1 and opaque(tr) == [], tr.text
    autofuse.reset_records()
    got = compile_fn(fn)(*args)
    assert got.dtype == fn(*args).dtype and torch.equal(got, fn(*args))


# Hand-built FX graphs: what Dynamo + AOTAutograd do not produce (cat overloads that normally
# decompose into aten.cat, non-tensor inputs, layouts and dtypes the kernels lack).


def hand_built(target, inputs, out, dim):
    """An FX graph `target([placeholders...], dim)` whose placeholders have metas `inputs`
    (tensors or other values) and whose result has meta `out`."""
    g = torch.fx.Graph()
    phs = []
    for k, v in enumerate(inputs):
        p = g.placeholder(f"arg{k}")
        p.meta["val"] = v
        phs.append(p)
    n = g.call_function(target, (phs, dim))
    n.meta["val"] = out
    g.output((n,))
    return torch.fx.GraphModule(torch.nn.Module(), g)


@pytest.mark.parametrize("target", [aten.concat.default, aten.concatenate.default], ids=str)
def test_concat_aliases_map_like_cat(target):
    a, b = torch.randn(2, 3), torch.randn(2, 5, dtype=torch.bfloat16)
    out = torch.cat((a, b), -1)
    tr = translate(hand_built(target, [a, b], out, -1), "t")
    assert _C.check_graph(tr.text) == tr.text
    (c,) = concats(tr)
    assert c.attrs == {"dim": 1} and [o.kind for o in operands(tr, c)] == ["input", "cast"]
    torch.testing.assert_close(run_eagerly(tr, [a, b])[0], out)


@pytest.mark.parametrize(
    "inputs,out,words",
    [
        ([torch.randn(2, 3), 5], torch.randn(2, 8), "is not a tensor node"),
        ([torch.randn(2, 3), torch.randn(2, 3)], torch.empty_strided((2, 6), (12, 1)), "must be dense"),
        ([torch.randn(2, 3), torch.randn(2, 3, dtype=torch.complex64)], torch.randn(2, 6),
         "has a dtype or sizes the IR lacks"),
        ([torch.randn(2, 3), torch.randn(3, 3)], torch.randn(2, 6), "differs from the result [2, 6] outside dim 1"),
        ([torch.randn(2, 3), torch.randn(2, 3)], torch.randn(2, 7), "expected the operands' total 6"),
    ],
    ids=["not_a_tensor", "not_dense", "complex_input", "shape_mismatch", "sum_mismatch"],
)
def test_inexpressible_cats_are_opaque_with_reason(inputs, out, words):
    tr = translate(hand_built(aten.cat.default, inputs, out, 1), "t")
    assert concats(tr) == []
    ((origin, reason),) = opaque(tr)
    assert origin == "aten.cat.default" and words in reason, reason


# End to end ----------------------------------------------------------------------------------


def check_one_kernel(fn, *args):
    """fn compiled by autofuse: one graph, compiled (no eager fallback), exactly one kernel
    holding the concat and every other computing ATen op of the graph, results equal to eager
    (computed in f32 for f16/bf16 inputs)."""
    if inductor_frontend():
        return _check_inductor_frontend(fn, *args)
    expected = reference_in_float(fn, *args)
    with autofuse.collect_records() as recs:
        got = compile_fn(fn)(*args)
    torch.testing.assert_close(got, expected)
    assert len(recs) == 1, [(r.name, r.fallback) for r in recs]
    (rec,) = recs
    assert rec.fallback == "", f"{rec.fallback}\n{rec.graph_text}"
    assert rec.num_kernels == 1, rec.fused_text
    ((_name, ops, _ins, _outs),) = kernel_steps(rec)
    tr = rec.translation
    computing = {n.name for n in tr.nodes if n.fx is not None and n.kind not in VIEW_KINDS | {"input", "const"}}
    assert any(tr.nodes[tr.index[o]].kind == "concat" for o in ops), rec.fused_text
    assert computing <= set(ops), (sorted(computing - set(ops)), rec.fused_text)
    return rec


def _check_inductor_frontend(fn, *args):
    """Through the Inductor frontend: every group an AscIR kernel, the result equal to eager in
    fp32 and to Inductor's own kernels' in every dtype. (Inductor rounds a bf16 cat's buffer
    before its consumer, so reference_in_float, which keeps f32 across the cat, is not what
    Inductor's fusion computes; near a cancellation, as `tanh(..) + 1` here, neither is eager.)"""
    got = compile_fn(fn)(*args)
    rec = check_inductor_groups()
    if all(a.dtype == torch.float32 for a in args):
        torch.testing.assert_close(got, fn(*args))
    torch._dynamo.reset()
    torch.testing.assert_close(got, torch.compile(fn, backend="inductor")(*args))
    return rec


def rotary(x, cos, sin):
    h = x.shape[-1] // 2
    return x * cos + torch.cat((-x[..., h:], x[..., :h]), -1) * sin


@pytest.mark.usefixtures("frontend")
@pytest.mark.parametrize("dtype", DTYPES)
def test_rotary_embedding_is_one_kernel(dtype):
    x = torch.randn(2, 4, 16, 64, dtype=dtype)
    cos, sin = torch.randn(16, 64, dtype=dtype), torch.randn(16, 64, dtype=dtype)
    check_one_kernel(rotary, x, cos, sin)


@pytest.mark.usefixtures("frontend")
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn,shapes", [(rotary, [(2, 4, 16, 64), (16, 64), (16, 64)]),
                                       (lambda a, b: torch.cat((a.sigmoid(), b * 2), -1) * 0.5,
                                        [(5, 7), (5, 13)])], ids=["rotary", "odd_segments"])
def test_concat_kernel_on_ascendc(fn, shapes, dtype, monkeypatch):
    # The concat kernel in Ascend C: each segment a kernel whose block function the entry calls
    # for its blocks, run against ascendc_emu.
    monkeypatch.setenv("AUTOFUSE_TARGET", "ascendc")
    rec = check_one_kernel(fn, *[torch.randn(s, dtype=dtype) for s in shapes])
    if not inductor_frontend():
        assert kernel_targets(rec) == ["ascendc"], rec.program.source()[:400]


def two_branches(dim):
    return lambda a, b: torch.cat((torch.sigmoid(a) * 2, torch.relu(b) + 1), dim)


@pytest.mark.usefixtures("frontend")
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "dim,sa,sb",
    [(-1, (8, 24), (8, 40)), (0, (3, 16), (5, 16)), (1, (4, 3, 16), (4, 5, 16))],
    ids=["last", "first", "middle"],
)
def test_cat_of_two_elementwise_branches_is_one_kernel(dim, sa, sb, dtype):
    check_one_kernel(two_branches(dim), torch.randn(sa, dtype=dtype), torch.randn(sb, dtype=dtype))


@pytest.mark.usefixtures("frontend")
@pytest.mark.parametrize("dtype", DTYPES)
def test_consumer_after_cat_is_one_kernel(dtype):
    fn = lambda a, b: torch.cat((a.exp(), b * 3), -1).tanh() + 1  # noqa: E731
    check_one_kernel(fn, torch.randn(6, 24, dtype=dtype), torch.randn(6, 40, dtype=dtype))


@pytest.mark.usefixtures("frontend")
@pytest.mark.parametrize("dtype", DTYPES)
def test_odd_segments_are_one_kernel(dtype):
    # Segments of 7 and 13 lanes: no segment boundary falls on a vector of 8 (or 16).
    check_one_kernel(two_branches(-1), torch.randn(5, 7, dtype=dtype), torch.randn(5, 13, dtype=dtype))


@pytest.mark.usefixtures("frontend")
@pytest.mark.parametrize("dtype", DTYPES)
def test_three_input_cat_is_one_kernel(dtype):
    fn = lambda a, b, c: torch.cat((a.sigmoid(), b * 2, c + 1), -1) * 0.5  # noqa: E731
    args = [torch.randn(3, n, dtype=dtype) for n in (7, 13, 9)]
    check_one_kernel(fn, *args)


@pytest.mark.usefixtures("frontend")
def test_mixed_dtype_cat_matches_eager():
    fn = lambda a, b: torch.cat((a * 2, b + 1), -1)  # noqa: E731
    a, b = torch.randn(4, 24), torch.randn(4, 40, dtype=torch.bfloat16)
    rec = check_one_kernel(fn, a, b)
    if not inductor_frontend():
        assert any(n.kind == "cast" for n in rec.translation.nodes)


def test_reduce_over_the_concat_dim_inside_a_segment_does_not_break_compilation():
    # Segment 1 holds x.sum(-1) (it iterates over x's 7 columns, not its 1-wide slice): a
    # consumer of the cat must not be sliced by that loop's size. Found by the concat fuzzer
    # (seeds 96, 256, 642, 819: a compile error, then an eager fallback).
    def fn(x):
        c = torch.cat((x, x.sum(-1, keepdim=True)), -1)
        return c * 2, c

    x = torch.randn(5, 7)
    with autofuse.collect_records() as recs:
        got = compile_fn(fn)(x)
    for g, e in zip(got, fn(x)):
        torch.testing.assert_close(g, e)
    (rec,) = recs
    assert rec.fallback == "", rec.fallback
    assert "not a slice of [5, 8]" in rec.fused_text, rec.fused_text
