"""FX -> Graph IR translation: kinds, explicit promotion/broadcast, layouts, opaque reasons.

No kernels are compiled here: every text goes through the C++ parser and verifier
(_C.check_graph), which must print it back byte for byte.
"""

import math

import pytest
import torch
from torch._dynamo.backends.common import aot_autograd
from torch._functorch.aot_autograd import make_boxed_func

from autofuse import _C
from autofuse.backend import decomposition_table
from autofuse.fx_to_graph import translate


def translated(fn, *args):
    """The Translation of fn's (inference) ATen graph, after checking it with the C++ side."""
    graphs = []

    def capture(gm, example_inputs):
        graphs.append(gm)
        return make_boxed_func(gm.forward)

    backend = aot_autograd(fw_compiler=capture, decompositions=decomposition_table())
    torch.compile(fn, backend=backend, dynamic=False)(*args)
    assert len(graphs) == 1
    tr = translate(graphs[0], "t")
    assert _C.check_graph(tr.text) == tr.text
    return tr


def node(tr, name):
    return tr.nodes[tr.index[name]]


def kinds(tr):
    return [n.kind for n in tr.nodes]


def test_promotion_is_explicit():
    tr = translated(lambda x, y: x + y, torch.randn(4, 3, dtype=torch.float16), torch.randn(4, 3))
    add = next(n for n in tr.nodes if n.kind == "add")
    a, b = (tr.nodes[o] for o in add.operands)
    assert a.kind == "cast" and a.type.dtype == torch.float32
    assert tr.nodes[a.operands[0]].type.dtype == torch.float16
    assert add.type.dtype == torch.float32


def test_broadcast_is_explicit_and_scalars_are_consts():
    tr = translated(lambda x, b: x * 0.5 + b, torch.randn(2, 5), torch.randn(5))
    assert kinds(tr).count("broadcast") == 1
    bc = next(n for n in tr.nodes if n.kind == "broadcast")
    assert bc.type.shape == (2, 5) and tr.nodes[bc.operands[0]].type.shape == (5,)
    const = next(n for n in tr.nodes if n.kind == "const")
    assert const.attrs == {"value": 0.5} and const.type.shape == ()
    assert "%c = const() {value = 0.5} : f32[]" in tr.text


def test_comparison_gives_bool_and_where_reads_bool():
    tr = translated(lambda x: torch.where(x > 0.5, x, x * 2), torch.randn(3, 4, dtype=torch.bfloat16))
    gt = next(n for n in tr.nodes if n.kind == "gt")
    assert gt.type.dtype == torch.bool
    assert tr.nodes[gt.operands[1]].type.dtype == torch.bfloat16  # the scalar, typed as x
    where = next(n for n in tr.nodes if n.kind == "where")
    assert where.type.dtype == torch.bfloat16


@pytest.mark.parametrize("mode,kind", [(None, "div"), ("floor", "div_floor"), ("trunc", "div_trunc")])
def test_division_modes(mode, kind):
    tr = translated(lambda x: torch.div(x, 3.0, rounding_mode=mode), torch.randn(6))
    assert kind in kinds(tr)


def test_int64_ops_are_fusible():
    tr = translated(lambda x: (x * 3 + 1) % 4, torch.arange(6))
    assert {"mul", "add", "remainder"} <= set(kinds(tr)), tr.text
    assert tr.fusible == 3


def test_integer_scalar_math_is_opaque_with_reason():
    """A one-element integer op (a step counter) stays ATen: a launch costs more than the op."""
    tr = translated(lambda x, n: (x + 1, n + 1), torch.randn(4), torch.tensor(3))
    add = next(n for n in tr.nodes if n.origin == "aten.add.Tensor" and n.type.dtype == torch.int64)
    assert add.kind == "opaque" and "integer scalar math" in add.reason


def test_unknown_ops_are_opaque():
    tr = translated(lambda x: torch.cumsum(x, 0).sigmoid(), torch.randn(5))
    cumsum = next(n for n in tr.nodes if n.origin == "aten.cumsum.default")
    assert cumsum.kind == "opaque" and cumsum.reason
    assert "sigmoid" in kinds(tr)


def test_activation_ops_stay_whole():
    fns = [torch.nn.functional.silu, torch.nn.functional.gelu, torch.sigmoid, torch.tanh,
           lambda x: torch.nn.functional.gelu(x, approximate="tanh"), torch.nn.functional.relu6]
    for fn in fns:
        torch._dynamo.reset()
        tr = translated(fn, torch.randn(8))
        compute = [n for n in tr.nodes if n.kind not in ("input", "const")]
        assert len(compute) == 1, tr.text


def test_views_keep_eager_layout():
    tr = translated(lambda x: x.t()[1:3].unsqueeze(0) * 1.0, torch.randn(3, 4))
    sl = next(n for n in tr.nodes if n.kind == "slice")
    assert sl.attrs == {"dim": 0, "start": 1, "end": 3, "step": 1}
    assert sl.type.strides == (1, 4) and sl.type.offset == 1
    assert next(n for n in tr.nodes if n.kind == "unsqueeze").attrs == {"dim": 0}


def test_transposed_input_keeps_eager_layout():
    x = torch.randn(4, 3).t()
    tr = translated(lambda x, b: torch.sigmoid(x) * b, x, torch.randn(4))
    sig = next(n for n in tr.nodes if n.kind == "sigmoid")
    assert sig.type.shape == (3, 4) and sig.type.strides == (1, 3)  # eager's transposed layout
    (out_is_node, out), = tr.outputs
    assert tr.nodes[out].kind == "mul" and tr.nodes[out].type.strides == (1, 3)


def test_the_core_judges_a_candidate_op():
    def typed(dtype, shape, strides):
        return (dtype, [str(d) for d in shape], [str(d) for d in strides], "0")

    x = ("x", "input", [], {"index": 0}, typed("f32", (2, 3), (3, 1)))
    neg = lambda t: [x, ("y", "neg", [0], {}, t)]  # noqa: E731
    assert _C.candidate_reason([], neg(typed("f32", (2, 3), (1, 2)))) is None  # transposed: dense
    assert "must be dense" in _C.candidate_reason([], neg(typed("f32", (2, 3), (6, 2))))  # gaps
    y16 = [("x", "input", [], {"index": 0}, typed("i16", (2,), (1,))), ("y", "exp", [0], {}, typed("i16", (2,), (1,)))]
    assert _C.candidate_reason([], y16) == "dtype i16 is not supported by generated kernels (exp)"
    bad_cast = [x, ("x_b", "broadcast", [0], {}, typed("f32", (4, 3), (3, 1))), ("y", "neg", [1], {}, typed("f32", (4, 3), (3, 1)))]
    assert _C.candidate_reason([], bad_cast).startswith("node %x_b: ")


def test_special_float_constants_print_and_parse():
    tr = translated(lambda x: torch.clamp(x, min=-math.inf, max=1e-05) + 1e20, torch.randn(3))
    assert "-inf" in tr.text and "1e-05" in tr.text and "1e+20" in tr.text


def test_check_graph_rejects_bad_text():
    with pytest.raises(_C.CompileError):
        _C.check_graph("graph @g() {\n  %x = frobnicate() : f32[2]\n  return %x\n}\n")


def test_decomposed_activations_have_no_aten_left():
    fns = [torch.nn.functional.elu, torch.nn.functional.leaky_relu, torch.nn.functional.hardswish,
           torch.nn.functional.mish, torch.nn.functional.softplus, lambda x: torch.lerp(x, x * 2, 0.3)]
    for fn in fns:
        torch._dynamo.reset()
        tr = translated(fn, torch.randn(8))
        assert [n.origin for n in tr.nodes if n.kind == "opaque"] == [], tr.text
        assert tr.fusible >= 1


def test_decomposition_table_turns_norms_into_reduce_chains():
    table = decomposition_table()
    aten = torch.ops.aten
    for op in (aten.native_layer_norm.default, aten._softmax.default, aten._log_softmax.default,
               aten.var.correction, aten.var_mean.correction):
        assert op in table, op
    for op in (aten.all.default, aten.all.dim, aten.sum.dim_IntList, aten.amax.default):
        assert op not in table, op  # each maps to one reduce kind


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: torch.nn.functional.layer_norm(x, (6,), torch.ones(6), torch.zeros(6)),
        lambda x: torch.softmax(x, -1),
        lambda x: torch.log_softmax(x, 0),
        lambda x: torch.nn.functional.rms_norm(x, (6,), eps=1e-6),
        lambda x: torch.var_mean(x, -1),
    ],
    ids=["layer_norm", "softmax", "log_softmax", "rms_norm", "var_mean"],
)
def test_norms_arrive_as_elementwise_and_reduce_ops(fn):
    tr = translated(fn, torch.randn(3, 6, dtype=torch.bfloat16))
    assert not any(n.origin.startswith("prims.") or "norm" in n.origin or "softmax" in n.origin for n in tr.nodes)
    left = {n.origin for n in tr.nodes if n.kind == "opaque"}
    assert left == set(), tr.text
    assert any(n.kind.startswith("reduce_") for n in tr.nodes)


def test_argmax_stays_opaque():
    tr = translated(lambda x: torch.argmax(x, -1), torch.randn(4, 5))
    (n,) = [n for n in tr.nodes if n.kind == "opaque"]
    assert n.origin == "aten.argmax.default" and "runs as ATen" in n.reason
