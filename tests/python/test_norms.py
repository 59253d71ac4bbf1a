"""Normalizations of CNNs through the Graph IR frontend (issue 18): BatchNorm in eval mode is a
per-channel scale and shift (decompositions.batch_norm_no_training), so the normalize, the
residual add and the activation after it are one kernel beside the convolution; in training its
statistics reduce N and the spatial dims around the kept channel dim (a reduce_inner row over
several dims), one kernel forward and one backward."""

import copy

import pytest
import torch

import autofuse
from autofuse._C import StepKind
from helpers import compile_fn, only_record


class ConvBnRelu(torch.nn.Module):
    """A ResNet basic block's tail: conv -> BatchNorm -> + residual -> ReLU."""

    def __init__(self, c: int, dims: int):
        super().__init__()
        self.conv = torch.nn.Conv2d(c, c, 3, padding=1, bias=False) if dims == 2 else torch.nn.Identity()
        self.bn = torch.nn.BatchNorm2d(c) if dims == 2 else torch.nn.BatchNorm1d(c)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)) + x)


def _randomized(m: torch.nn.Module) -> torch.nn.Module:
    with torch.no_grad():
        m.bn.weight.uniform_(0.5, 1.5)
        m.bn.bias.uniform_(-0.5, 0.5)
        m.bn.running_mean.uniform_(-1, 1)
        m.bn.running_var.uniform_(0.5, 2.0)
    return m.eval()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("shape", [(2, 16, 14, 14), (3, 24), (2, 8, 17)])
def test_batch_norm_eval_is_one_kernel_with_its_activation(dtype, shape, pin_cpu):
    pin_cpu(avx512_bf16=True)  # bf16 convolutions in bf16 (no conversion kernels around them)
    torch.manual_seed(0)
    m = _randomized(ConvBnRelu(shape[1], 2 if len(shape) == 4 else 1)).to(dtype)
    x = torch.randn(shape, dtype=dtype)
    with torch.no_grad():
        got, want = compile_fn(m)(x), m(x)
    torch.testing.assert_close(got, want)
    rec = only_record()
    kernels = [{rec.translation.nodes[i].kind for i in s.ops} for s in rec.steps if s.kind == StepKind.kernel]
    # Where the convolution runs channels-last (conv_layouts.RULES, packed_conv), a kernel copies
    # the input into that layout first: not part of the BatchNorm.
    kernels = [k for k in kernels if k != {"cast"}]
    # The per-channel scale and shift are constant along the spatial dims: computed once per row
    # inside the normalize kernel; on [N, C] they vary along the innermost dim: their own kernel.
    assert len(kernels) == (1 if len(shape) > 2 else 2), kernels
    assert any({"mul", "add", "relu"} <= k for k in kernels), kernels  # normalize, residual, ReLU
    left = [rec.translation.nodes[s.ops[0]].origin for s in rec.steps if s.kind == StepKind.opaque]
    assert not any("batch_norm" in o for o in left), left


def _kernel_count(rec):
    return sum(1 for s in rec.steps if s.kind == StepKind.kernel)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("shape", [(4, 16, 10, 10), (2, 8, 7, 9), (6, 12)])
def test_batch_norm_training_is_one_kernel_each_way(dtype, shape):
    """BatchNorm + ReLU in training: the statistics (reduced over N and the spatial dims around
    the kept channel dim), the normalize, the ReLU, the saved mask and the running-stat updates
    are one forward kernel; the backward's two sums and grad_input one kernel. Outputs,
    gradients and running stats equal eager's, over two steps."""
    torch.manual_seed(0)
    bn = torch.nn.BatchNorm2d(shape[1]) if len(shape) == 4 else torch.nn.BatchNorm1d(shape[1])
    eager = torch.nn.Sequential(bn, torch.nn.ReLU()).to(dtype).train()
    with torch.no_grad():
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.uniform_(-0.5, 0.5)
    mine = copy.deepcopy(eager)
    compiled = compile_fn(mine)
    tol = {"atol": 1e-2, "rtol": 1e-2} if dtype == torch.bfloat16 else {}
    for step in range(2):
        x = torch.randn(shape, dtype=dtype)
        xa, xb = x.clone().requires_grad_(), x.clone().requires_grad_()
        # The gradients' reference: eager's BatchNorm under the compiled ReLU's mask, in f64 for
        # bf16 (whose gradients eager itself gets only to about 1e-2). A bf16 output rounding to
        # 0 on one side only flips the mask there (plain Inductor differs from eager the same
        # way); in f32 the masks are equal.
        ref = copy.deepcopy(eager).to(torch.float64 if dtype == torch.bfloat16 else dtype)
        xr = x.to(ref[0].weight.dtype).requires_grad_()
        want, got = eager(xa), compiled(xb)
        torch.testing.assert_close(got, want, **tol)
        if dtype == torch.float32:
            assert torch.equal(want > 0, got > 0)
        g = torch.randn_like(want)
        got.backward(g)
        (ref[0](xr) * (got > 0)).backward(g.to(xr.dtype))
        torch.testing.assert_close(xb.grad, xr.grad.to(dtype), **tol)
        for p, q in zip(mine[0].parameters(), ref[0].parameters()):
            torch.testing.assert_close(p.grad, q.grad.to(dtype), **tol)
            p.grad = None
        torch.testing.assert_close(mine[0].running_mean, eager[0].running_mean, **tol)
        torch.testing.assert_close(mine[0].running_var, eager[0].running_var, **tol)
        assert int(mine[0].num_batches_tracked) == int(eager[0].num_batches_tracked) == step + 1
    recs = {r.tag: r for r in autofuse.compiled_graphs()}
    assert _kernel_count(recs["fw"]) == 1 and _kernel_count(recs["bw"]) == 1, recs
    for rec in recs.values():
        left = [rec.translation.nodes[s.ops[0]].origin for s in rec.steps if s.kind == StepKind.opaque]
        assert not any("batch_norm" in o or o.startswith("aten.sum") for o in left), left


def _grads_match(eager, mine, x, dtype, fwd=lambda m, x: m(x)):
    """Runs one forward and backward of both modules on x; compares outputs and gradients."""
    tol = {"atol": 2e-2, "rtol": 2e-2} if dtype == torch.bfloat16 else {}
    xa, xb = x.clone().requires_grad_(), x.clone().requires_grad_()
    want, got = fwd(eager, xa), fwd(mine, xb)
    torch.testing.assert_close(got, want, **tol)
    g = torch.randn_like(want)
    want.backward(g)
    got.backward(g)
    torch.testing.assert_close(xb.grad, xa.grad, **tol)
    for p, q in zip(mine.parameters(), eager.parameters()):
        torch.testing.assert_close(p.grad, q.grad, **tol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("shape,groups", [((4, 16, 10, 10), 4), ((2, 12, 7, 9), 3), ((3, 8, 33), 8)])
def test_group_norm_silu_is_one_kernel_forward_two_backward(dtype, shape, groups):
    """GroupNorm + SiLU: the statistics over each sample's group (a contiguous row of the
    [N, G, C / G, H * W] view), the normalize and the SiLU one kernel (the reshape back to
    [N, C, H, W] sunk below the SiLU, view_motion.py); backward the per-group sums with
    grad_input one kernel, the per-channel weight and bias sums (over N and H * W around C)
    another, the SiLU's gradient inside them."""
    torch.manual_seed(0)
    eager = torch.nn.Sequential(torch.nn.GroupNorm(groups, shape[1]), torch.nn.SiLU()).to(dtype)
    with torch.no_grad():
        eager[0].weight.uniform_(0.5, 1.5)
        eager[0].bias.uniform_(-0.5, 0.5)
    mine = copy.deepcopy(eager)
    _grads_match(eager, compile_fn(mine), torch.randn(shape, dtype=dtype), dtype)
    recs = {r.tag: r for r in autofuse.compiled_graphs()}
    assert _kernel_count(recs["fw"]) == 1 and _kernel_count(recs["bw"]) == 2, recs
    for rec in recs.values():
        assert not any(s.kind == StepKind.opaque and "group_norm" in rec.translation.nodes[s.ops[0]].origin
                       for s in rec.steps)


def test_instance_norm_silu_forward_is_one_kernel():
    """InstanceNorm runs as BatchNorm without running stats over [1, N * C, H, W]: its
    statistics, normalize and the SiLU after the reshape back one kernel."""
    torch.manual_seed(0)
    eager = torch.nn.Sequential(torch.nn.InstanceNorm2d(8, affine=True), torch.nn.SiLU())
    mine = copy.deepcopy(eager)
    x = torch.randn(3, 8, 9, 11)
    with torch.no_grad():
        torch.testing.assert_close(compile_fn(mine)(x), eager(x))
    assert _kernel_count(only_record()) == 1
    _grads_match(eager, compile_fn(copy.deepcopy(eager)), x, torch.float32)


def test_batch_norm_training_with_large_unaligned_rows():
    """A row over several dims whose first segment starts 64-byte aligned and whose next ones
    do not (C * H * W = 3 * 8181 floats apart), in an output large enough for streaming stores
    (>= 16 MiB): written with plain stores, equal to eager."""
    torch.manual_seed(0)
    eager = torch.nn.Sequential(torch.nn.BatchNorm2d(3), torch.nn.ReLU()).train()
    mine = copy.deepcopy(eager)
    x = torch.randn(200, 3, 101, 81)
    with torch.no_grad():
        torch.testing.assert_close(compile_fn(mine)(x), eager(x))
    torch.testing.assert_close(mine[0].running_var, eager[0].running_var)


def test_group_norm_silu_under_dynamic_shapes():
    """GroupNorm + SiLU compiled with dynamic=True over several batch and spatial sizes: one
    kernel forward per graph, results equal to eager (view_motion compares symbolic sizes
    without guarding on them)."""
    torch.manual_seed(0)
    eager = torch.nn.Sequential(torch.nn.GroupNorm(4, 16), torch.nn.SiLU())
    compiled = torch.compile(copy.deepcopy(eager), backend="autofuse", dynamic=True)
    with torch.no_grad():
        for shape in [(2, 16, 9, 7), (3, 16, 5, 11), (5, 16, 6, 6)]:
            x = torch.randn(shape)
            torch.testing.assert_close(compiled(x), eager(x))
    recs = autofuse.compiled_graphs()
    assert recs and all(_kernel_count(r) == 1 and r.fallback == "" for r in recs), recs
    assert len(recs) <= 2, [r.name for r in recs]  # the first shape static, then one dynamic graph
