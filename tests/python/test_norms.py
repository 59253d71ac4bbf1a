"""Normalizations of CNNs through the Graph IR frontend (issue 18): BatchNorm in eval mode is a
per-channel scale and shift (decompositions.batch_norm_no_training), so the normalize, the
residual add and the activation after it are one kernel beside the convolution."""

import pytest
import torch

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
def test_batch_norm_eval_is_one_kernel_with_its_activation(dtype, shape):
    torch.manual_seed(0)
    m = _randomized(ConvBnRelu(shape[1], 2 if len(shape) == 4 else 1)).to(dtype)
    x = torch.randn(shape, dtype=dtype)
    with torch.no_grad():
        got, want = compile_fn(m)(x), m(x)
    torch.testing.assert_close(got, want)
    rec = only_record()
    kernels = [{rec.translation.nodes[i].kind for i in s.ops} for s in rec.steps if s.kind == StepKind.kernel]
    assert len(kernels) == 2, kernels  # the per-channel scale and shift, then the rows
    assert any({"mul", "add", "relu"} <= k for k in kernels), kernels  # normalize, residual, ReLU
    left = [rec.translation.nodes[s.ops[0]].origin for s in rec.steps if s.kind == StepKind.opaque]
    assert not any("batch_norm" in o for o in left), left
