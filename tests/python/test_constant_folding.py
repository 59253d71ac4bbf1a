"""Input-free subgraphs are computed once at compile time (constant_folding.py): never random
ones, never returned values, never under dynamic sizes, never what kernels compute anyway."""

import math

import torch

from autofuse import constant_folding
from helpers import aten_graph, compile_fn, only_record


def buckets(n: int, num: int = 32, max_distance: int = 128) -> torch.Tensor:
    """T5's relative-position buckets of an n x n attention (int64 math on aranges)."""
    ctx = torch.arange(n)[:, None]
    mem = torch.arange(n)[None, :]
    rel = mem - ctx
    half = num // 2
    out = (rel > 0).to(torch.long) * half
    rel = rel.abs()
    exact = half // 2
    large = exact + (torch.log(rel.float() / exact) / math.log(max_distance / exact) * (half - exact)).to(torch.long)
    large = torch.min(large, torch.full_like(large, half - 1))
    return out + torch.where(rel < exact, rel, large)


def with_bias(x: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
    return x + table[buckets(x.shape[-1])].permute(2, 0, 1)


def test_position_buckets_fold_and_match_eager():
    torch.manual_seed(0)
    x, table = torch.randn(4, 16, 16), torch.randn(32, 4)
    f = compile_fn(with_bias)
    for _ in range(2):
        torch.testing.assert_close(f(x, table), with_bias(x, table))
    rec = only_record()
    assert "_folded_constant" in rec.graph_text
    assert "arange" not in rec.graph_text and "where" not in rec.graph_text


def test_input_module_is_not_changed():
    gm, args = aten_graph(with_bias, torch.randn(4, 8, 8), torch.randn(32, 4))
    before = gm.code
    out = constant_folding.fold_constants(gm)
    assert out is not gm and gm.code == before
    torch.testing.assert_close(out(*args)[0], gm(*args)[0])


def test_random_values_are_drawn_on_every_call():
    f = compile_fn(lambda x: x + torch.rand(8))
    x = torch.zeros(8)
    assert not torch.equal(f(x), f(x))


def test_returned_values_are_fresh_on_every_call():
    f = compile_fn(lambda x: (x + 1, torch.arange(6) * 2))
    x = torch.zeros(3)
    _, first = f(x)
    first.add_(100)  # the caller owns what it got back
    torch.testing.assert_close(f(x)[1], torch.arange(6) * 2)


def test_dynamic_sizes_are_not_folded():
    f = torch.compile(with_bias, backend="autofuse", dynamic=True)
    table = torch.randn(32, 4)
    for n in (5, 9, 12):
        x = torch.randn(4, n, n)
        torch.testing.assert_close(f(x, table), with_bias(x, table))


def test_constants_kernels_compute_are_left_to_them():
    f = compile_fn(lambda x: x * (torch.full((64,), 2.0) + 1.0))
    x = torch.randn(64)
    torch.testing.assert_close(f(x), x * 3.0)
    assert "_folded_constant" not in only_record().graph_text
