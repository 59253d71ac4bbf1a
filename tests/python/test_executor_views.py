"""The executor computes views an eager step needs as one as_strided of the tensor they alias,
and only those; when the aliased tensor's strides differ from its type at run time, the ATen
view ops run instead."""

import pytest
import torch

import autofuse
from autofuse import executor as ex


def mlp(x, w1, w2):
    """Views of inputs and of kernel outputs around two matmuls (ATen), elementwise between."""
    h = torch.sigmoid(x) * 2.0
    h = (h.reshape(-1, h.shape[-1]) @ w1.t()).reshape(*x.shape[:-1], w1.shape[0])
    h = torch.relu(h)[..., 1:]
    return (h.transpose(-1, -2).contiguous() @ w2).sum(-1) + 1.0


def args(batch=3):
    g = torch.Generator().manual_seed(batch)
    return (torch.randn(batch, 5, 16, generator=g), torch.randn(9, 16, generator=g),
            torch.randn(5, 4, generator=g))


def compiled_records(dynamic):
    torch._dynamo.reset()
    cf = torch.compile(mlp, backend="autofuse", dynamic=dynamic)
    with autofuse.collect_records() as recs:
        out = cf(*args())
    torch.testing.assert_close(out, mlp(*args()))
    (rec,) = [r for r in recs if not r.fallback]
    return cf, rec


@pytest.mark.parametrize("dynamic", [False, True])
def test_views_match_eager_and_only_needed_ones_run(dynamic):
    cf, rec = compiled_records(dynamic)
    for b in (2, 4, 7):
        torch.testing.assert_close(cf(*args(b)), mlp(*args(b)))
    runner = rec.runner
    views = [s for s in runner._steps if s[0] == ex._VIEW]
    assert views, "the matmuls read views: some must be computed"
    eager_reads = {o for s in runner._steps if s[0] == ex._EAGER for o in runner.nodes[s[1]].operands}
    out_slots = {v for is_node, v in runner._outputs if is_node}
    for s in views:
        assert s[1] in eager_reads | out_slots, f"%{runner.nodes[s[1]].name} is computed but unused"


def test_a_root_with_unexpected_strides_runs_the_aten_view_chain():
    cf, rec = compiled_records(False)
    runner = rec.runner
    ran = []
    # Make every root's expected strides wrong (checking roots the executor would trust too),
    # and count the ATen view ops that run instead.
    for i, s in enumerate(runner._steps):
        if s[0] == ex._VIEW:
            _, slot, root, view, _strides, chain, frees = s
            wrong = (-1,) * (len(runner.nodes[root].type.strides) + 1)
            chain = tuple((c, lambda env, run=run: ran.append(run) or run(env)) for c, run in chain)
            runner._steps[i] = (ex._VIEW, slot, root, view, wrong, chain, frees)
    runner.regenerate()
    assert "stride() == (-1, " in runner.source
    torch.testing.assert_close(cf(*args(3)), mlp(*args(3)))
    assert ran, "the ATen view chain never ran"
