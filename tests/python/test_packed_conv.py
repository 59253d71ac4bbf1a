"""Inference convolutions on kept oneDNN packs (packed_conv.py): the same results as eager for
dense, strided, dilated, grouped and depthwise convolutions with and without bias, in fp32 and
in bf16 computed in fp32; a pack kept across calls and remade after any write to the weight or
the bias through PyTorch; never in training, with packing off, or for an NCHW input. The
layout rule is pinned (every convolution channels-last) so the same convolutions pack on every
CPU."""

import copy

import pytest
import torch

import autofuse
from autofuse import CompilerConfig, conv_layouts, packed_conv
from helpers import check_packs_kept_until_written, compile_fn

pytestmark = pytest.mark.skipif(not packed_conv.available(), reason="torch without oneDNN")


@pytest.fixture(autouse=True)
def every_conv_channels_last(monkeypatch):
    rule = conv_layouts.LayoutRule("pinned", frozenset({torch.float32, torch.bfloat16}), lambda c: True,
                                   lambda s: True)
    monkeypatch.setattr(conv_layouts, "RULES", (rule,))


class Net(torch.nn.Module):
    """Each kind of 2-d convolution a CNN has, with BatchNorm, ReLU and a residual between."""

    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 16, 4, stride=4)
        self.dw = torch.nn.Conv2d(16, 16, 7, padding=3, groups=16)
        self.bn = torch.nn.BatchNorm2d(16)
        self.grouped = torch.nn.Conv2d(16, 32, 3, padding=2, dilation=2, groups=4, bias=False)
        self.down = torch.nn.Conv2d(32, 24, 2, stride=2)

    def forward(self, x):
        y = self.stem(x)
        y = torch.relu(self.bn(self.dw(y)) + y)
        return self.down(torch.relu(self.grouped(y)))


_CONVS = 4


def _packed_calls(f, *args):
    """(result, number of calls on a kept pack) of one call of f under the profiler."""
    with torch.profiler.profile() as prof:
        out = f(*args)
    return out, sum(e.name == packed_conv.LABEL for e in prof.events())


@pytest.fixture
def pack_count(monkeypatch):
    """A list that grows by one per weight pack made."""
    made = []
    real = packed_conv.PackedConvolution._pack
    monkeypatch.setattr(packed_conv.PackedConvolution, "_pack", lambda self, w, x: made.append(1) or real(self, w, x))
    return made


def _writes(m):
    """Changes m's weights and biases through each path a user has."""
    with torch.no_grad():
        yield m.stem.weight.mul_(-0.5)
    yield m.dw.weight.data.mul_(0.5)
    with torch.no_grad():
        yield m.down.bias.add_(1.0)  # the bias alone
    m.grouped.weight.data = torch.randn_like(m.grouped.weight) * 0.1
    yield
    yield m.load_state_dict({k: torch.rand_like(v) * 0.2 + 0.05 if v.is_floating_point() else v
                             for k, v in m.state_dict().items()})


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_inference_keeps_packs_and_sees_every_write(dtype, pack_count, pin_cpu):
    pin_cpu(avx512_bf16=False, amx_bf16=False)  # bf16 convolutions in fp32 (float_normalization)
    tol = dict(atol=2e-2, rtol=2e-2) if dtype == torch.bfloat16 else {}
    torch.manual_seed(0)
    m = Net().to(dtype).eval()
    x = torch.randn(2, 3, 32, 32, dtype=dtype)
    f = compile_fn(m)
    with torch.no_grad(), autofuse.collect_records() as recs:
        f(x)
        out, calls = _packed_calls(f, x)
        torch.testing.assert_close(out, m(x), **tol)
        assert calls == _CONVS
        (rec,) = recs
        assert rec.fallback == ""
        check_packs_kept_until_written(f, m, x, _writes, pack_count, tol)
    # bf16: the weights' and biases' fp32 conversions run once per pack, not per call.
    converted = [n.fx.args[0].meta["val"].shape for n in rec.translation.nodes if n.fx is not None
                 and n.fx.target is torch.ops.prims.convert_element_type.default and n.fx.args[0].op == "placeholder"]
    assert converted == ([x.shape] if dtype == torch.bfloat16 else []), converted


def test_no_packs_in_training_or_when_off():
    torch.manual_seed(0)
    m = Net()
    ref = copy.deepcopy(m)
    x = torch.randn(2, 3, 32, 32)
    f = compile_fn(m)
    out, calls = _packed_calls(f, x)
    out.sum().backward()
    want = ref(x)
    want.sum().backward()
    torch.testing.assert_close(out, want)
    torch.testing.assert_close(m.stem.weight.grad, ref.stem.weight.grad)
    assert calls == 0
    m.eval()
    with torch.no_grad():
        out, calls = _packed_calls(compile_fn(m, CompilerConfig(pack_weights=False)), x)
    torch.testing.assert_close(out, m(x))
    assert calls == 0


def test_an_nchw_convolution_runs_atens(monkeypatch):
    # The layout rule keeps every convolution NCHW: nothing is channels-last, nothing packs.
    rule = conv_layouts.LayoutRule("nchw", frozenset({torch.float32}), lambda c: True, lambda s: False)
    monkeypatch.setattr(conv_layouts, "RULES", (rule,))
    torch.manual_seed(0)
    m = Net().eval()
    x = torch.randn(1, 3, 32, 32)
    with torch.no_grad():
        out, calls = _packed_calls(compile_fn(m), x)
    torch.testing.assert_close(out, m(x))
    assert calls == 0


def test_an_inference_mode_weight_runs_atens():
    # No copy-on-write clone of an inference tensor: nothing to keep a pack against.
    torch.manual_seed(0)
    with torch.inference_mode():
        m = Net().eval()
        x = torch.randn(1, 3, 32, 32)
        out, calls = _packed_calls(compile_fn(m), x)
        torch.testing.assert_close(out, m(x))
    assert calls == 0
