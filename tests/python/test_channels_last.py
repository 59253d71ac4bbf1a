"""Convolutions channels-last (channels_last.py): a graph with 2-d convolutions runs them, and the
vector work between them, in the channels-last layout; results, gradients and the strides a
caller sees equal eager's, and a backward reads its forward's saved values in their layout
without falling back. The layout each convolution takes is conv_layouts.RULES' per CPU: these
tests pin one rule (channels-last from 28 x 28 output pixels, and depthwise), so they check the
same mixed layouts on every CPU; test_rules_choose_by_cpu_and_dtype checks the table."""

import collections
import copy

import pytest
import torch

import autofuse
from autofuse import CompilerConfig, conv_layouts, cpu, packed_conv
from autofuse._C import StepKind
from helpers import compile_fn


@pytest.fixture(autouse=True)
def pinned_rule(monkeypatch):
    """Every CPU takes the AVX-512 row's rule (the tests' expected layouts follow it)."""
    rule = conv_layouts.LayoutRule("pinned", frozenset({torch.float32, torch.bfloat16}), lambda c: True,
                                   lambda s: s.depthwise or s.out_pixels >= 28 * 28)
    monkeypatch.setattr(conv_layouts, "RULES", (rule,))


_RULES = conv_layouts.RULES
_ZEN3 = {"avx2": True}
_ZEN4 = {"avx2": True, "avx512_f": True, "avx512_bf16": True}
_AMX = {"avx2": True, "avx512_f": True, "avx512_bf16": True, "amx_bf16": True}


@pytest.mark.parametrize("caps, dtype, want", [
    # (depthwise 7 x 7 at 56 x 56, its backward, 1 x 1 at 56 x 56, 3 x 3 at 56 x 56, 1 x 1 at 14 x 14,
    #  on a kept pack: 3 x 3 at 14 x 14, a 7 x 7 stem on 3 channels; 3 x 3 at 7 x 7)
    (_ZEN3, torch.float32, [False, True, True, False, False, True, False, False]),
    (_ZEN4, torch.float32, [True, True, True, True, False, False, True, False]),
    (_ZEN4, torch.bfloat16, [True, True, True, True, False, False, True, False]),
    (_AMX, torch.float32, [True, True, True, True, False, True, True, False]),  # packs: channels-last
    (_AMX, torch.bfloat16, [True, True, True, True, True, True, True, False]),
    (_ZEN4, torch.float16, [True, True, True, True, True, True, True, True]),  # no row: Inductor's choice
])
def test_rules_choose_by_cpu_and_dtype(monkeypatch, caps, dtype, want):
    monkeypatch.setattr(conv_layouts, "RULES", _RULES)  # the real table
    monkeypatch.setattr(cpu, "capabilities", lambda: collections.defaultdict(bool, caps))
    shapes = [conv_layouts.ConvShape(dtype, False, True, (7, 7), 3136, 3136, 96, False),
              conv_layouts.ConvShape(dtype, True, True, (7, 7), 3136, 3136, 96, False),
              conv_layouts.ConvShape(dtype, False, False, (1, 1), 3136, 3136, 64, False),
              conv_layouts.ConvShape(dtype, False, False, (3, 3), 3136, 3136, 64, False),
              conv_layouts.ConvShape(dtype, False, False, (1, 1), 196, 196, 256, False),
              conv_layouts.ConvShape(dtype, False, False, (3, 3), 196, 196, 256, True),
              conv_layouts.ConvShape(dtype, False, False, (7, 7), 224 * 224, 112 * 112, 3, True),
              conv_layouts.ConvShape(dtype, False, False, (3, 3), 49, 49, 512, False)]
    assert [conv_layouts.prefers_channels_last(s) for s in shapes] == want


class Block(torch.nn.Module):
    """A ResNet stage boundary: conv-BN-ReLU, 1 x 1 conv-BN + residual-ReLU at 28 x 28 (channels-last),
    then a stride-2 convolution to 14 x 14 (NCHW: faster there), then a head that flattens."""

    def __init__(self, c: int = 8, flatten: bool = False):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, c, 3, padding=1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(c)
        self.conv2 = torch.nn.Conv2d(c, c, 1, bias=True)  # its weight's gradient: a view restores it
        self.bn2 = torch.nn.BatchNorm2d(c)
        self.down = torch.nn.Conv2d(c, c, 1, stride=2)
        self.flatten = flatten

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = torch.relu(self.bn2(self.conv2(y)) + y)
        y = torch.sigmoid(self.down(y)) * y[:, :, ::2, ::2]
        return y.view(y.shape[0], -1) if self.flatten else y


def _graphs(fn):
    with autofuse.collect_records() as recs:
        out = fn()
    return out, recs


def _conv_layouts(rec) -> list:
    """Per convolution (or its backward) of the record's graph: whether it reads its
    activations channels-last."""
    convs = [n.fx for n in rec.translation.nodes
             if n.fx is not None and (n.fx.target in (torch.ops.aten.convolution.default,
                                                      torch.ops.aten.convolution_backward.default)
                                      or isinstance(n.fx.target, packed_conv.PackedConvolution))]
    return [c.args[0].meta["val"].is_contiguous(memory_format=torch.channels_last) for c in convs]


@pytest.mark.parametrize("flatten", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_inference_runs_channels_last_and_keeps_eager_strides(dtype, flatten):
    torch.manual_seed(0)
    m = Block(flatten=flatten).eval().to(dtype)
    x = torch.randn(2, 3, 28, 28, dtype=dtype)
    with torch.no_grad():
        want = m(x)
        got, recs = _graphs(lambda: compile_fn(m)(x))
    torch.testing.assert_close(got, want)
    assert got.stride() == want.stride()
    (rec,) = recs
    assert rec.fallback == ""
    assert _conv_layouts(rec) == [True, True, False]  # 28 x 28 outputs channels-last, 14 x 14 not
    # The normalize/residual/ReLU kernels between the convolutions store channels-last.
    stores = [rec.translation.nodes[i] for s in rec.steps if s.kind == StepKind.kernel for i in s.ops]
    assert any(len(n.type.shape) == 4 and n.type.strides[1] == 1 for n in stores)


def test_off_keeps_the_eager_layout():
    torch.manual_seed(0)
    m = Block().eval()
    x = torch.randn(2, 3, 28, 28)
    with torch.no_grad():
        want = m(x)
        got, recs = _graphs(lambda: compile_fn(m, CompilerConfig(channels_last=False))(x))
    torch.testing.assert_close(got, want)
    assert _conv_layouts(recs[0]) == [False, False, False]


def test_channels_last_input_needs_no_copy():
    torch.manual_seed(0)
    m = Block().eval()
    x = torch.randn(2, 3, 28, 28).contiguous(memory_format=torch.channels_last)
    with torch.no_grad():
        want = m(x)
        got, recs = _graphs(lambda: compile_fn(m)(x))
    torch.testing.assert_close(got, want)
    assert got.stride() == want.stride()
    fx = [n for n in recs[0].translation.nodes if n.fx is not None]
    assert not any(n.fx.kwargs.get("memory_format") == torch.channels_last for n in fx)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_training_step_matches_eager_without_fallback(dtype):
    torch.manual_seed(0)
    m = Block(flatten=True).train().to(dtype)
    ref = copy.deepcopy(m)
    x = torch.randn(2, 3, 28, 28, dtype=dtype)
    compiled = compile_fn(m)

    def step(model):
        out = model(x)
        (out.float() ** 2).mean().backward()
        return out

    want = step(ref)
    got, recs = _graphs(lambda: step(compiled))
    tol = {} if dtype == torch.float32 else {"atol": 2e-2, "rtol": 2e-2}
    torch.testing.assert_close(got, want, **tol)
    for (name, p), q in zip(m.named_parameters(), ref.parameters()):
        torch.testing.assert_close(p.grad, q.grad, **tol, msg=lambda s: f"{name}: {s}")
        assert p.grad.stride() == q.grad.stride(), name
    for b, c in zip(m.buffers(), ref.buffers()):
        torch.testing.assert_close(b, c, **tol)
    assert [r.tag for r in recs] == ["fw", "bw"]
    assert all(r.fallback == "" for r in recs), [r.fallback for r in recs]
    assert _conv_layouts(recs[0]) == [True, True, False]
    assert sorted(_conv_layouts(recs[1])) == [False, True, True]
    # The backward ran its own kernels: its inputs had the layout it was compiled for.
    assert all(r.runner is not None and not r.runner._warned and not r.runner.broken for r in recs)


def test_backward_without_convolutions_reads_channels_last_values():
    # The convolution's weight is frozen: the backward has no convolution of its own, but the
    # values its forward saved (BatchNorm's input) are channels-last.
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1).requires_grad_(False),
                            torch.nn.BatchNorm2d(8), torch.nn.ReLU())
    ref = copy.deepcopy(m)
    x = torch.randn(2, 3, 28, 28)
    compiled = compile_fn(m)
    (ref(x) ** 2).mean().backward()
    _, recs = _graphs(lambda: (compiled(x) ** 2).mean().backward())
    for p, q in zip(m.parameters(), ref.parameters()):
        if q.grad is not None:
            torch.testing.assert_close(p.grad, q.grad)
    assert [r.tag for r in recs] == ["fw", "bw"]
    assert _conv_layouts(recs[0]) == [True]
    assert all(r.fallback == "" and not r.runner._warned and not r.runner.broken for r in recs)


class Decoder(torch.nn.Module):
    """A U-Net decoder's shapes: reflection padding, a grouped convolution, a transposed
    convolution up to 28 x 28, BatchNorm and an attention-like view over the pixels."""

    def __init__(self, c: int = 8):
        super().__init__()
        self.grouped = torch.nn.Conv2d(c, c, 3, groups=2)
        self.up = torch.nn.ConvTranspose2d(c, c, 2, stride=2)
        self.bn = torch.nn.BatchNorm2d(c)

    def forward(self, x):
        y = self.grouped(torch.nn.functional.pad(x, (1, 1, 1, 1), mode="reflect"))
        y = torch.relu(self.bn(self.up(y)))
        n, c = y.shape[:2]
        weights = torch.softmax(y.view(n, c, -1), dim=-1)
        return y * weights.view_as(y), weights


@pytest.mark.parametrize("train", [False, True])
def test_transposed_grouped_padded_convolutions_match_eager(train):
    torch.manual_seed(0)
    m = Decoder().train(train)
    ref = copy.deepcopy(m)
    x = torch.randn(2, 8, 14, 14, requires_grad=train)
    x_ref = x.detach().clone().requires_grad_(train)
    compiled = compile_fn(m)
    with torch.set_grad_enabled(train):
        want = ref(x_ref)
        got, recs = _graphs(lambda: compiled(x))
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w)
        assert g.stride() == w.stride()
    assert _conv_layouts(recs[0]) == [False, True]  # 14 x 14 grouped NCHW, 28 x 28 transposed CL
    if train:
        (got[0].sum() + got[1].square().sum()).backward()
        (want[0].sum() + want[1].square().sum()).backward()
        torch.testing.assert_close(x.grad, x_ref.grad)
        for p, q in zip(m.parameters(), ref.parameters()):
            torch.testing.assert_close(p.grad, q.grad)
            assert p.grad.stride() == q.grad.stride()
    assert all(r.fallback == "" for r in autofuse.compiled_graphs())


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.int32])
@pytest.mark.parametrize("channels", [1, 3, 4, 16])
def test_few_channels_to_channels_last_matches_eager(dtype, channels):
    # An image's few channels to NHWC: the kernel loads along H*W and scatters into the
    # channels (schedule: prefer_contiguous_load_inner), odd sizes for the masked tail.
    def f(x):
        return (x * 2).contiguous(memory_format=torch.channels_last)

    x = (torch.randn(2, channels, 13, 37) * 8).to(dtype)
    got = compile_fn(f)(x)
    want = f(x)
    torch.testing.assert_close(got, want)
    assert got.stride() == want.stride()
