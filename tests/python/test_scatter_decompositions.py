"""Backward graphs of slicing and indexing: slice_scatter / select_scatter become
concatenations that fuse into kernels (scatter_decompositions.py), with eager's gradients."""

import pytest
import torch

import autofuse
from helpers import compile_fn


def _rotate_half(x):  # Llama's rotary embedding helper
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), -1) * 1.5 + x


def _select(x):
    return (x[:, 3] * 2).exp().sum() + x[:, -1].sum()


def _strided(x):  # a step: stays ATen's slice_scatter
    return x[:, ::2].sin()


@pytest.mark.parametrize("fn,shape,scatter", [(_rotate_half, (2, 3, 5, 8), "slice_scatter"),
                                              (_select, (4, 6, 3), "select_scatter"),
                                              (_strided, (3, 10), None)])
@pytest.mark.parametrize("dynamic", [False, True])
def test_scatters_in_backward_match_eager(fn, shape, scatter, dynamic):
    autofuse.reset_records()
    torch._dynamo.reset()
    f = torch.compile(fn, backend="autofuse", dynamic=dynamic)
    for k in range(2 if dynamic else 1):
        x = torch.randn(*shape[:-1], shape[-1] + 2 * k, requires_grad=True)
        x_ref = x.detach().clone().requires_grad_(True)
        (g,) = torch.autograd.grad(f(x).sum(), x)
        (e,) = torch.autograd.grad(fn(x_ref).sum(), x_ref)
        torch.testing.assert_close(g, e)
    bw = [r for r in autofuse.compiled_graphs() if r.tag == "bw"]
    assert bw and not [r.fallback for r in bw if r.fallback]
    if scatter is not None:
        assert all("scatter" not in r.fx_code for r in bw)
        assert all("aten.cat" not in text for r in bw for text in [_opaque_lines(r)])
    else:
        assert any("slice_scatter" in r.fx_code for r in bw)


def _opaque_lines(rec):
    """The fused graph's lines for ops left to ATen."""
    return "\n".join(line for line in rec.fused_text.splitlines() if "opaque ATen op" in line)
