"""A small model mixing nn.Linear with activation/scaling/residual chains."""

import torch
import torch.nn.functional as F

import autofuse
from autofuse._C import StepKind
from helpers import compile_fn, kernel_steps, only_record


class Block(torch.nn.Module):
    """Linear -> GELU chain -> Linear -> SiLU/scale/residual chain."""

    def __init__(self, d=32, h=64):
        super().__init__()
        self.up = torch.nn.Linear(d, h)
        self.down = torch.nn.Linear(h, d)
        self.gamma = torch.nn.Parameter(torch.randn(d))

    def forward(self, x):
        h = F.gelu(self.up(x), approximate="tanh") * 0.5 + 0.1  # chain 1
        y = self.down(h)
        return F.silu(y) * self.gamma + x  # chain 2 (residual)


def test_linears_are_aten_and_chains_are_kernels():
    model = Block()
    x = torch.randn(8, 32)
    with torch.no_grad():
        expected = model(x)
        got = compile_fn(model)(x)
    torch.testing.assert_close(got, expected)
    rec = only_record()
    assert rec.fallback == ""
    kernels = kernel_steps(rec)
    assert len(kernels) == 2, rec.fused_text
    opaque_targets = [rec.translation.nodes[s.ops[0]].origin for s in rec.steps if s.kind == StepKind.opaque]
    assert opaque_targets.count("aten.addmm.default") == 2
    chain1 = {rec.translation.nodes[rec.translation.index[o]].origin for o in kernels[0][1]}
    assert "aten.gelu.default" in chain1
    chain2 = {rec.translation.nodes[rec.translation.index[o]].origin for o in kernels[1][1]}
    assert {"aten.silu.default", "aten.mul.Tensor", "aten.add.Tensor"} <= chain2


def test_training_step_matches_eager():
    model = Block()
    x = torch.randn(4, 32)
    ref = Block()
    ref.load_state_dict(model.state_dict())

    xc = x.clone().requires_grad_()
    compile_fn(model)(xc).square().sum().backward()
    xr = x.clone().requires_grad_()
    ref(xr).square().sum().backward()

    torch.testing.assert_close(xc.grad, xr.grad)
    for (name, p), q in zip(model.named_parameters(), ref.parameters()):
        torch.testing.assert_close(p.grad, q.grad, msg=name)
    tags = sorted(r.tag for r in autofuse.compiled_graphs())
    assert tags == ["bw", "fw"]
    assert all(r.fallback == "" and r.num_kernels >= 1 for r in autofuse.compiled_graphs())
