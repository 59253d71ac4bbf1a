"""bf16 linear biases move out of addmm into the consuming kernel (bias_epilogue.py) only
where every use of the product is elementwise; results stay eager's."""

import copy

import pytest
import torch

import autofuse
from autofuse import bias_epilogue
from helpers import aten_graph, compile_fn, kernel_steps, only_record

aten = torch.ops.aten


class Block(torch.nn.Module):
    """A transformer feed-forward block and an attention-style projection read by a view
    that is not elementwise-only (a transpose)."""

    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(32, 64)
        self.fc2 = torch.nn.Linear(64, 32)
        self.q = torch.nn.Linear(32, 32)

    def forward(self, x):
        y = self.fc2(torch.nn.functional.gelu(self.fc1(x))) + x
        q = self.q(x).view(*x.shape[:-1], 4, 8).transpose(1, 2)
        return torch.nn.functional.layer_norm(y, (32,)), q


def _no_worse_than_eager(got, eager, exact):
    """bf16 results `got` off the f32 result `exact` by at most twice as much as eager's bf16
    ones (a bf16 matmul rounds its product before the bias add in either order, so results near
    zero differ from eager's by more than assert_close's bf16 tolerance)."""
    for g, e, x in zip(got, eager, exact):
        assert g.shape == x.shape and g.dtype == e.dtype
        limit = 2 * (e.float() - x.float()).abs().max().item() + 1e-3
        assert (g.float() - x.float()).abs().max().item() <= limit


def _f32(m):
    return copy.deepcopy(m).float()


def _targets(gm):
    return [n.target for n in gm.graph.nodes if n.op == "call_function"]


def test_rewrite_splits_only_products_read_elementwise():
    torch.manual_seed(0)
    m = Block().to(torch.bfloat16).eval()
    x = torch.randn(2, 5, 32, dtype=torch.bfloat16)
    with torch.no_grad():
        gm, args = aten_graph(m, x)
        before = _targets(gm)
        out = bias_epilogue.move_bias_adds(gm)
        assert _targets(gm) == before  # the input module is never changed
        after = _targets(out)
        assert before.count(aten.addmm.default) == 3
        assert after.count(aten.addmm.default) == 1  # q's product is transposed: kept whole
        assert after.count(aten.mm.default) == 2
        _no_worse_than_eager(out(*args), gm(*args), _f32(m)(x.float()))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_other_dtypes_keep_addmm(dtype):
    m = Block().to(dtype).eval()
    with torch.no_grad():
        gm, _ = aten_graph(m, torch.randn(2, 5, 32, dtype=dtype))
    assert bias_epilogue.move_bias_adds(gm) is gm


def test_bias_add_runs_in_the_consumer_kernel():
    torch.manual_seed(0)
    m = Block().to(torch.bfloat16).eval()
    x = torch.randn(3, 7, 32, dtype=torch.bfloat16)
    f = compile_fn(m)
    with torch.no_grad():
        _no_worse_than_eager(f(x), m(x), _f32(m)(x.float()))
    kernels = [ops for _name, ops, _ins, _outs in kernel_steps(only_record())]
    gelu = [ops for ops in kernels if any("gelu" in o for o in ops)]
    assert len(gelu) == 1 and any(o.startswith("add") for o in gelu[0]), kernels


def test_training_keeps_products_saved_for_backward():
    torch.manual_seed(0)
    m = Block().to(torch.bfloat16)
    ref, exact = copy.deepcopy(m), _f32(m)
    f = compile_fn(m)
    x = torch.randn(2, 5, 32, dtype=torch.bfloat16)
    for fn, inp in ((f, x), (ref, x), (exact, x.float())):
        y, q = fn(inp)
        (y.float().square().sum() + q.float().sum()).backward()
    grads = [[p.grad for p in mod.parameters()] for mod in (m, ref, exact)]
    _no_worse_than_eager(*grads)
