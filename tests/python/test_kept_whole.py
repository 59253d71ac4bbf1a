"""Composite ops kept whole (aten_table.KEPT_WHOLE): scaled_dot_product_attention stays one ATen
op (the CPU flash kernel) in the forward and the backward, never bmm + softmax + bmm; embedding's
backward stays ATen's in-place accumulation, never a functional index_put that clones the
table. Both match eager."""

import pytest
import torch
import torch.nn.functional as F

import autofuse
from autofuse import aten_table
from helpers import compile_fn


def _attention(q, k, v, mask):
    out = F.scaled_dot_product_attention(q * 1.5, k, v, attn_mask=mask, is_causal=mask is None)
    return out.transpose(1, 2).reshape(q.shape[0], q.shape[2], -1) + 1.0


@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_attention_stays_whole_forward_and_backward(masked, dtype):
    autofuse.reset_records()
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 4, 33, 16, dtype=dtype, requires_grad=True) for _ in range(3))
    mask = torch.randn(2, 1, 33, 33, dtype=dtype) if masked else None
    f = compile_fn(_attention)
    got = f(q, k, v, mask)
    grads = torch.autograd.grad(got.float().square().sum(), (q, k, v))
    expected = _attention(q, k, v, mask)
    expected_grads = torch.autograd.grad(expected.float().square().sum(), (q, k, v))
    torch.testing.assert_close(got, expected)
    for g, e in zip(grads, expected_grads):
        torch.testing.assert_close(g, e)
    recs = autofuse.compiled_graphs()
    assert {r.tag for r in recs} == {"fw", "bw"} and not [r.fallback for r in recs if r.fallback]
    code = "".join(r.fx_code for r in recs)
    assert "_scaled_dot_product_flash_attention_for_cpu.default" in code
    assert "_scaled_dot_product_flash_attention_for_cpu_backward.default" in code
    assert "bmm" not in code and "_softmax" not in code and "amax" not in code


def test_embedding_backward_accumulates_in_place():
    autofuse.reset_records()
    torch.manual_seed(0)
    emb = torch.nn.Embedding(1000, 16)
    ref = torch.nn.Embedding(1000, 16)
    ref.load_state_dict(emb.state_dict())
    ids = torch.randint(0, 1000, (4, 9))
    ids[0, :3] = 7  # repeated ids accumulate
    f = compile_fn(lambda ids: (emb(ids) * 2).tanh())
    f(ids).square().sum().backward()
    (ref(ids) * 2).tanh().square().sum().backward()
    torch.testing.assert_close(emb.weight.grad, ref.weight.grad)
    bw = [r for r in autofuse.compiled_graphs() if r.tag == "bw"]
    assert len(bw) == 1 and not bw[0].fallback
    assert "embedding_dense_backward.default" in bw[0].fx_code and "index_put" not in bw[0].fx_code


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("padding_idx", [None, 7, 0])
def test_embedding_gradient_is_written_into_a_recycled_table(padding_idx, dtype):
    """The gradient table (1 MiB or more: pooled) is zeroed and accumulated in place as eager
    accumulates it (rows added in index order, padding rows skipped); the user gets it without
    a copy (autograd steals it), and once the user drops it the next step reuses it."""
    torch.manual_seed(0)
    emb = torch.nn.Embedding(8192, 64, padding_idx=padding_idx).to(dtype)
    ref = torch.nn.Embedding(8192, 64, padding_idx=padding_idx).to(dtype)
    ref.load_state_dict(emb.state_dict())
    f = compile_fn(lambda ids: emb(ids).float().sin())
    ptrs = []
    for step in range(3):
        ids = torch.randint(0, 8192, (4, 33))
        ids[0, :5] = 7  # repeated ids, the padding row among them
        ids[1, :2] = 0
        emb.weight.grad = ref.weight.grad = None
        f(ids).sum().backward()
        ref(ids).float().sin().sum().backward()
        torch.testing.assert_close(emb.weight.grad, ref.weight.grad)  # cos: 1-ulp differences
        ptrs.append(emb.weight.grad.data_ptr())
    assert ptrs[1] == ptrs[2], "a dropped gradient table is not recycled"
    held = emb.weight.grad  # kept by the user: the next step must not write into it
    expect = held.clone()
    emb.weight.grad = None
    f(torch.randint(0, 8192, (4, 33))).sum().backward()
    assert emb.weight.grad.data_ptr() != held.data_ptr() and torch.equal(held, expect)


@pytest.mark.parametrize("padding_idx", [-1, 7])
def test_embedding_backward_into_is_atens_kernel(padding_idx):
    torch.manual_seed(0)
    ids = torch.randint(0, 500, (4, 33))
    ids[0, :5] = 7
    g = torch.randn(4, 33, 64)
    out = torch.full((500, 64), float("nan"))  # a recycled table holds old values
    got = aten_table.embedding_dense_backward_into(g, ids, 500, padding_idx, False, out=out)
    assert got is out
    assert torch.equal(got, torch.ops.aten.embedding_dense_backward(g, ids, 500, padding_idx, False))
    scaled = aten_table.embedding_dense_backward_into(g, ids, 500, padding_idx, True, out=out)
    assert torch.equal(scaled, torch.ops.aten.embedding_dense_backward(g, ids, 500, padding_idx, True))
