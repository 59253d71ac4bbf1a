"""Compiled inference graphs kept in AOTAutograd's cache (aot_cache.py): a compile after
torch._dynamo.reset() (as in a second process) loads the traced graph instead of tracing it,
compiles it again with the current settings and computes what eager computes."""

import re

import torch

import autofuse
from torch._dynamo.utils import counters


def _aot(name: str) -> int:
    return counters["aot_autograd"][name]


def _norm_gelu(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.gelu(torch.nn.functional.layer_norm(x, (x.shape[-1],), w) * 2.0)


def _compile_twice(fn, *args, backend="autofuse", **kwargs):
    """(hits, outputs) of two compiles of `fn` with a Dynamo reset between them."""
    outs = []
    hits = _aot("autograd_cache_hit")
    for _ in range(2):
        torch._dynamo.reset()
        outs.append(torch.compile(fn, backend=backend, **kwargs)(*args))
    return _aot("autograd_cache_hit") - hits, outs


def test_second_compile_loads_the_traced_graph_and_matches_eager():
    x, w = torch.randn(6, 40), torch.randn(40)
    with torch.no_grad():
        with autofuse.collect_records() as recs:
            hits, outs = _compile_twice(_norm_gelu, x, w, dynamic=False)
    assert hits == 1
    for out in outs:
        torch.testing.assert_close(out, _norm_gelu(x, w))
    assert len(recs) == 2 and all(r.num_kernels >= 1 for r in recs)  # compiled again, as a miss would


def test_a_loaded_graph_keeps_its_size_symbols():
    torch._dynamo.reset()
    hits = _aot("autograd_cache_hit")
    with torch.no_grad():
        for rows in (5, 9):  # the second size makes the graph dynamic
            fn = torch.compile(_norm_gelu, backend="autofuse")
            x, w = torch.randn(rows, 24), torch.randn(24)
            torch.testing.assert_close(fn(x, w), _norm_gelu(x, w))
        torch._dynamo.reset()
        fn = torch.compile(_norm_gelu, backend="autofuse")
        fn(torch.randn(5, 24), torch.randn(24))  # static again, then dynamic: loaded
        for rows in (7, 13, 1):
            x, w = torch.randn(rows, 24), torch.randn(24)
            torch.testing.assert_close(fn(x, w), _norm_gelu(x, w))
    assert _aot("autograd_cache_hit") - hits >= 1


class _CacheWrite(torch.nn.Module):
    """A static KV cache written at `pos` (input_updates.py's case): the facts of which inputs
    the graph updates travel with the kept graph."""

    def __init__(self):
        super().__init__()
        self.register_buffer("keys", torch.zeros(2, 16, 8))

    def forward(self, pos: torch.Tensor, new: torch.Tensor) -> torch.Tensor:
        self.keys.index_copy_(1, pos, new)
        return torch.softmax(self.keys * 2.0, dim=-1).sum(1)


def test_a_loaded_graph_updates_its_inputs_in_place():
    hits = _aot("autograd_cache_hit")
    eager = _CacheWrite()
    compiled = [_CacheWrite(), _CacheWrite()]
    with torch.no_grad():
        for mod in compiled:
            torch._dynamo.reset()
            step = torch.compile(mod, backend="autofuse")
            for t in range(4):
                pos, new = torch.tensor([t]), torch.full((2, 1, 8), float(t + 1))
                want = eager(pos, new) if mod is compiled[0] else None
                got = step(pos, new)
                if want is not None:
                    torch.testing.assert_close(got, want)
        torch.testing.assert_close(compiled[1].keys, eager.keys)
    assert _aot("autograd_cache_hit") - hits == 1


def test_inductor_is_never_served_an_autofuse_graph():
    x, w = torch.randn(3, 56), torch.randn(56)
    with torch.no_grad():
        torch._dynamo.reset()
        torch.compile(_norm_gelu, backend="autofuse", dynamic=False)(x, w)
        hits = _aot("autograd_cache_hit")
        torch._dynamo.reset()
        with autofuse.collect_records() as recs:
            out = torch.compile(_norm_gelu, backend="inductor", dynamic=False)(x, w)
    assert _aot("autograd_cache_hit") == hits and not recs
    torch.testing.assert_close(out, _norm_gelu(x, w))


def test_training_graphs_are_not_kept():
    x, w = torch.randn(4, 32), torch.randn(32, requires_grad=True)
    hits, outs = _compile_twice(_norm_gelu, x, w, dynamic=False)
    assert hits == 0
    outs[1].sum().backward()
    want = w.grad.clone()
    w.grad = None
    _norm_gelu(x, w).sum().backward()
    torch.testing.assert_close(want, w.grad)


def test_a_loaded_graph_compiles_with_the_current_settings():
    """Loaded, then compiled again with autofuse off: the graph runs eagerly (the loaded
    GraphModule's own forward), with eager's results."""
    x, w = torch.randn(5, 72), torch.randn(72)
    off = autofuse.get_backend(autofuse.CompilerConfig(autofuse_flags="--enable_autofuse=false"))
    hits = _aot("autograd_cache_hit")
    with torch.no_grad(), autofuse.collect_records() as recs:
        for backend in ("autofuse", off):
            torch._dynamo.reset()
            out = torch.compile(_norm_gelu, backend=backend, dynamic=False)(x, w)
            torch.testing.assert_close(out, _norm_gelu(x, w))
    assert _aot("autograd_cache_hit") - hits == 1
    assert [bool(r.fallback) for r in recs] == [False, True]


class _ConvNet(torch.nn.Module):
    """Two convolutions with BatchNorm and ReLU between them: channels_last.py's case."""

    def __init__(self):
        super().__init__()
        self.c1, self.bn, self.c2 = torch.nn.Conv2d(3, 16, 3), torch.nn.BatchNorm2d(16), torch.nn.Conv2d(16, 8, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.c2(torch.relu(self.bn(self.c1(x)))) + 1.0


def test_a_loaded_graph_gets_the_layout_passes_of_a_traced_one(monkeypatch):
    """A loaded graph's values belong to the fake mode it was unpickled in, not the tracing
    context's: the layout pass once failed on them and a warm start ran every convolution NCHW."""
    from autofuse import conv_layouts

    rule = conv_layouts.LayoutRule("pinned", frozenset({torch.float32}), lambda c: True, lambda s: True)
    monkeypatch.setattr(conv_layouts, "RULES", (rule,))
    net, x = _ConvNet().eval(), torch.randn(2, 3, 20, 20)
    with torch.no_grad(), autofuse.collect_records() as recs:
        hits, outs = _compile_twice(net, x, dynamic=False)
    assert hits == 1
    for out in outs:
        torch.testing.assert_close(out, net(x))
    traced, loaded = recs
    assert "strides [5184, 1, 288, 16]" in traced.graph_text  # the first convolution's, channels-last
    for text in ("graph_text", "fused_text"):
        assert re.sub(rf"@{loaded.name}\b", f"@{traced.name}", getattr(loaded, text)) == getattr(traced, text)
