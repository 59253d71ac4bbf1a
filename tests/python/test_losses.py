"""Classification losses compiled with autofuse: forward values and gradients against eager.

cross_entropy and nll_loss carry trace-time constants into the graph (the ignore_index mask's
fill value, the class weights gathered per target) and reduce over a batch whose valid count is
data-dependent; a model's training loop ends in one of them, so a crash here is a crash of the
user's training. Each case runs forward and backward and compares both with eager.
"""

import pytest
import torch
import torch.nn.functional as F

import autofuse
from autofuse._C import StepKind
from helpers import compile_fn

N, C = 8, 1000

# (name, kwargs of the loss, targets are probabilities, ignore some targets)
CROSS_ENTROPY_CASES = [
    ("mean", {}, False, False),
    ("sum", {"reduction": "sum"}, False, False),
    ("none", {"reduction": "none"}, False, False),
    ("weight", {"weight": True}, False, False),
    ("weight_sum", {"weight": True, "reduction": "sum"}, False, False),
    ("ignore_index", {"ignore_index": 3}, False, True),
    ("ignore_index_weight", {"ignore_index": 3, "weight": True}, False, True),
    ("ignore_default", {}, False, True),  # targets of -100, the default ignore_index
    ("label_smoothing", {"label_smoothing": 0.1}, False, False),
    ("label_smoothing_weight_none", {"label_smoothing": 0.2, "weight": True, "reduction": "none"}, False, False),
    ("label_smoothing_ignore", {"label_smoothing": 0.1, "ignore_index": 3}, False, True),
    ("probabilities", {}, True, False),
    ("probabilities_smoothing_sum", {"label_smoothing": 0.1, "reduction": "sum"}, True, False),
    ("probabilities_weight", {"weight": True}, True, False),
]

NLL_CASES = [
    ("mean", {}, False),
    ("sum", {"reduction": "sum"}, False),
    ("none", {"reduction": "none"}, False),
    ("weight", {"weight": True}, False),
    ("ignore_index", {"ignore_index": 3}, True),
    ("ignore_index_weight_sum", {"ignore_index": 3, "weight": True, "reduction": "sum"}, True),
]


def _inputs(dtype, probabilities, ignore, ignore_index=-100):
    logits = torch.randn(N, C, dtype=dtype)
    if probabilities:
        target = torch.softmax(torch.randn(N, C), dim=1).to(dtype)
    else:
        target = torch.randint(0, C, (N,))
        if ignore:
            target[::3] = ignore_index  # a third of the batch ignored
    return logits, target


def _kwargs(spec, dtype):
    kw = dict(spec)
    if kw.pop("weight", False):
        kw["weight"] = torch.rand(C, dtype=dtype) + 0.5
    return kw


def _tolerance(dtype):
    # bf16: the compiled loss keeps fp32 between its ops where eager rounds each to bf16.
    return {} if dtype == torch.float32 else {"atol": 2e-2, "rtol": 2e-2}


def _check(loss, logits, target, kw, dtype):
    compiled = compile_fn(lambda z, t: loss(z, t, **kw))
    z_eager = logits.clone().requires_grad_(True)
    z_ours = logits.clone().requires_grad_(True)
    expected = loss(z_eager, target, **kw)
    got = compiled(z_ours, target)
    torch.testing.assert_close(got, expected, **_tolerance(dtype))
    grad_out = torch.rand_like(expected)
    expected.backward(grad_out)
    got.backward(grad_out)
    torch.testing.assert_close(z_ours.grad, z_eager.grad, **_tolerance(dtype))
    recs = autofuse.compiled_graphs()
    assert [r.tag for r in recs] == ["fw", "bw"], [(r.name, r.tag) for r in recs]
    assert all(not r.fallback for r in recs), [r.fallback for r in recs]  # compiled, not eager
    assert all(any(s.kind == StepKind.kernel for s in r.steps) for r in recs)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])
@pytest.mark.parametrize("name,spec,probabilities,ignore", CROSS_ENTROPY_CASES, ids=[c[0] for c in CROSS_ENTROPY_CASES])
def test_cross_entropy(name, spec, probabilities, ignore, dtype):
    logits, target = _inputs(dtype, probabilities, ignore, spec.get("ignore_index", -100))
    _check(F.cross_entropy, logits, target, _kwargs(spec, dtype), dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])
@pytest.mark.parametrize("name,spec,ignore", NLL_CASES, ids=[c[0] for c in NLL_CASES])
def test_nll_loss(name, spec, ignore, dtype):
    logits, target = _inputs(dtype, False, ignore, spec.get("ignore_index", -100))
    log_probs = torch.log_softmax(logits.float(), dim=1).to(dtype)
    _check(F.nll_loss, log_probs, target, _kwargs(spec, dtype), dtype)


def test_issue_snippet_returns_eager_value():
    """The report's snippet: a compiled cross_entropy on fresh inputs."""
    z, t = torch.randn(8, 1000), torch.randint(0, 1000, (8,))
    f = torch.compile(lambda z, t: F.cross_entropy(z, t), backend="autofuse")
    torch.testing.assert_close(f(z, t), F.cross_entropy(z, t))


def test_every_target_ignored_is_nan_like_eager():
    """Mean over zero valid targets: eager's 0/0 is NaN; so is ours (no crash, no 0)."""
    z, t = torch.randn(4, 10), torch.full((4,), -100)
    f = compile_fn(lambda z, t: F.cross_entropy(z, t))
    torch.testing.assert_close(f(z, t), F.cross_entropy(z, t), equal_nan=True)
