"""Issue 4, first acceptance point: one dynamic compile serves 20 shapes with no new C++ builds.

A transformer-like block (LayerNorm, GELU MLP whose nn.Linear layers stay ATen, residual,
softmax) is compiled with `dynamic=True` and run over 20 (batch, seq) shapes: batch 1 and 2,
sequence lengths 7 and 7919 (primes) and sizes not divisible by 8 (the vector width). Every
output must match eager, and autofuse's own counter (`autofuse.stats()["cxx_compiles"]`) must
show C++ compilations on the first shape and on at most one later shape, Dynamo's 0/1
specialisation of batch 1; every other shape compiles nothing. The JIT cache is a fresh
directory per test (AUTOFUSE_CACHE_DIR = tmp_path), so a warm disk cache cannot hide a
compilation. A second test checks that the kernel sources carry no concrete value of a size
the graph left symbolic: the same model compiled from different first shapes builds nothing
new (the generated sources, hence their cache keys, are identical). Both tests run through both
frontends (the `frontend` fixture): through Inductor's, every fusion group of every graph is an
AscIR kernel whose sizes are symbols.
"""

import re
from typing import Dict, List, Tuple

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import autofuse
import autofuse.inductor
from helpers import inductor_frontend, kernel_targets

pytestmark = pytest.mark.usefixtures("frontend")
# The Inductor-frontend cases `make test` runs (conftest.py).
INDUCTOR_QUICK = ["[inductor-cpu]"]

HIDDEN = 32  # small, so the 7919-long sequence stays fast
FIRST = (2, 13)  # a general first shape: Dynamo marks batch and seq symbolic from here
SHAPES = [FIRST, (1, 13), (3, 7), (1, 7919), (4, 2), (2, 7), (5, 33), (7, 100), (1, 2), (8, 17),
          (3, 9), (2, 127), (6, 5), (1, 64), (2, 3), (4, 4), (9, 11), (1, 31), (3, 255), (2, 7919)]


class Block(nn.Module):
    """LayerNorm -> Linear -> GELU -> Linear, plus the residual, then softmax over the last dim."""

    def __init__(self, d: int):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc2(F.gelu(self.fc1(self.ln(x)))) + x
        return torch.softmax(h, -1)


def _fresh_cache(monkeypatch: pytest.MonkeyPatch, path) -> None:
    """Points the JIT cache at an empty directory (CompilerConfig reads it per compile)."""
    monkeypatch.setenv("AUTOFUSE_CACHE_DIR", str(path))
    torch._dynamo.reset()
    autofuse.reset_records()
    autofuse.inductor.reset_records()


def _run_shapes(model: nn.Module, compiled, shapes: List[Tuple[int, int]]) -> Dict[Tuple[int, int], int]:
    """Runs every shape, checks it against eager; returns the C++ compilations each caused."""
    compiles = {}
    with torch.no_grad():
        for b, s in shapes:
            x = torch.randn(b, s, HIDDEN)
            before = autofuse.stats()["cxx_compiles"]
            got = compiled(x)
            compiles[(b, s)] = autofuse.stats()["cxx_compiles"] - before
            torch.testing.assert_close(got, model(x), msg=lambda m: f"shape {(b, s)}: {m}")
    return compiles


def _assert_all_compiled(records) -> None:
    """Every graph autofuse saw became kernels: a silent eager fallback would also compile 0.
    Through the Inductor frontend: every fusion group of every graph is an AscIR kernel."""
    if inductor_frontend():
        records = autofuse.inductor.compiled_graphs()
        assert records, "Inductor compiled no graph for autofuse"
        for r in records:
            assert r.fallback == "" and r.groups, (r.name, r.fallback)
            assert all(g.kernel for g in r.groups), [(g.nodes, g.reason) for g in r.groups]
        return
    assert records, "autofuse compiled no graph"
    for r in records:
        assert r.fallback == "", f"graph {r.name} runs eagerly: {r.fallback}"
        assert r.num_kernels > 0 and r.runner is not None and r.runner.kernel_steps > 0, r.name


def _specialised_sizes() -> List[int]:
    """Element counts a kernel specialised to the first shape would spell as literals: the
    first shape's rows (and seq) times the hidden and MLP widths. None is a power of two or
    otherwise a plausible compile-time constant (tile size, buffer budget)."""
    b, s = FIRST
    return sorted({n * w for n in (s, b * s) for w in (HIDDEN, 4 * HIDDEN)})


@pytest.mark.parametrize("target", ["cpu", "ascendc"])
def test_dynamic_block_compiles_once_over_20_shapes(tmp_path, monkeypatch, target):
    _fresh_cache(monkeypatch, tmp_path)
    monkeypatch.setenv("AUTOFUSE_TARGET", target)
    assert any(b == 1 for b, _ in SHAPES) and any(b == 2 for b, _ in SHAPES)
    assert {7, 7919} <= {s for _, s in SHAPES} and any(s % 8 for _, s in SHAPES)
    torch.manual_seed(0)
    model = Block(HIDDEN).eval()
    compiled = torch.compile(model, backend="autofuse", dynamic=True)

    compiles = _run_shapes(model, compiled, SHAPES)

    records = autofuse.compiled_graphs()
    _assert_all_compiled(records)
    assert compiles[FIRST] > 0, f"the first shape compiled no C++ ({compiles})"
    later = {shape: n for shape, n in compiles.items() if shape != FIRST and n}
    assert len(later) <= 1, f"C++ compiled again for shapes {later} (all: {compiles})"
    for (b, s), n in later.items():
        assert b == 1, f"shape {(b, s)} compiled {n} C++ module(s); only batch 1 may specialise"
    if inductor_frontend():
        groups = autofuse.inductor.compiled_graphs()[0].groups
        assert all(re.search(r"axis z\d+ : .*s\d+", g.ascir) for g in groups), groups[0].ascir
        if target == "ascendc":
            assert {g.target for g in groups} == {"ascendc"}
        source = "".join(g.source for g in groups)
        for n in _specialised_sizes():
            assert not re.search(rf"(?<![\w.]){n}(?![\w.])", source), n
        return

    # The first graph is the dynamic one: symbolic sizes reach its kernels as arguments.
    dyn = records[0]
    assert dyn.translation.symbols, dyn.graph_text.splitlines()[0]
    program = dyn.program
    assert any(program.kernel_symbols(k) for k in range(program.num_kernels())), dyn.fused_text
    if target == "ascendc":  # LayerNorm, GELU and softmax: every kernel in Ascend C
        assert set(kernel_targets(dyn)) == {"ascendc"}, dyn.program.source()[:600]
    source = program.source()
    for n in _specialised_sizes():
        assert not re.search(rf"(?<![\w.]){n}(?![\w.])", source), (
            f"kernel source of {dyn.name} spells {n}, a size of the first shape {FIRST}")


def test_kernel_sources_do_not_depend_on_the_first_shape(tmp_path, monkeypatch):
    """Two dynamic compiles of the block from different first shapes (hence different symbol
    hints; Dynamo names the symbols after their sources, so the names agree) produce the same
    kernel sources: the second builds no C++ at all."""
    _fresh_cache(monkeypatch, tmp_path)
    torch.manual_seed(0)
    model = Block(HIDDEN).eval()
    first = _run_shapes(model, torch.compile(model, backend="autofuse", dynamic=True), [FIRST, (3, 11)])
    _assert_all_compiled(autofuse.compiled_graphs())
    assert first[FIRST] > 0 and first[(3, 11)] == 0, first
    sources = _sources()

    _fresh_cache_keep_dir()
    second = _run_shapes(model, torch.compile(model, backend="autofuse", dynamic=True), [(5, 29), FIRST])
    _assert_all_compiled(autofuse.compiled_graphs())
    again = _sources()
    assert second == {(5, 29): 0, FIRST: 0}, (
        f"compiling from first shape (5, 29) built C++ again: {second}; changed sources:\n"
        + "\n".join(_first_difference(a, b) for a, b in zip(sources, again) if a != b))


def _sources() -> List[str]:
    """The kernel sources of the graphs compiled so far (per graph; per fusion group through
    the Inductor frontend)."""
    if inductor_frontend():
        return [g.source for r in autofuse.inductor.compiled_graphs() for g in r.groups]
    return [r.program.source() for r in autofuse.compiled_graphs()]


def _fresh_cache_keep_dir() -> None:
    """Forgets the compiled graphs (Dynamo's and autofuse's records), keeps the JIT cache."""
    torch._dynamo.reset()
    autofuse.reset_records()
    autofuse.inductor.reset_records()


def _first_difference(a: str, b: str) -> str:
    """The first differing line of two sources, for the failure message."""
    for i, (x, y) in enumerate(zip(a.splitlines(), b.splitlines())):
        if x != y:
            return f"line {i + 1}: {x!r} vs {y!r}"
    return "one source is a prefix of the other"
