"""Dynamic shapes: one compiled program serves every size; kernels take the size symbols."""

import math

import torch

import autofuse


def fn(x, b):
    y = torch.sigmoid(x) * b + 1
    return y.view(-1), x.t() * 2, x[1:] * 3, x.sum(0) + b


def test_one_program_serves_all_sizes():
    compiled = torch.compile(fn, backend="autofuse", dynamic=True)
    for shape in [(6, 8), (5, 3), (17, 33), (9, 1000)]:
        x, b = torch.randn(shape), torch.randn(shape[1])
        got, expected = compiled(x, b), fn(x, b)
        torch.testing.assert_close(got, expected)
        assert [g.stride() for g in got] == [e.stride() for e in expected]
    recs = autofuse.compiled_graphs()
    assert len(recs) == 1, [r.name for r in recs]
    rec = recs[0]
    assert rec.fallback == "" and rec.num_kernels >= 3
    assert rec.translation.symbols and rec.graph_text.startswith("graph @g")
    header = rec.graph_text.splitlines()[0]
    assert all(f"{s} = " in header for s in rec.translation.symbols)
    assert any(rec.program.kernel_symbols(k) for k in range(rec.num_kernels))


def test_automatic_dynamic_recompile_still_fuses():
    compiled = torch.compile(lambda x: torch.tanh(x) * 0.5 + 0.5, backend="autofuse")
    for n in (16, 24, 40):
        x = torch.randn(n, 3)
        torch.testing.assert_close(compiled(x), torch.tanh(x) * 0.5 + 0.5)
    recs = autofuse.compiled_graphs()
    assert len(recs) == 2  # static first, then one dynamic graph for every later size
    assert recs[1].translation.symbols
    assert all(r.fallback == "" and r.num_kernels == 1 for r in recs)


def test_norms_over_a_symbolic_dim_are_one_kernel():
    """layer_norm's variance over a symbolic count is a mean of squares, not a division by a
    SymInt, so the whole norm stays one kernel; var with a correction keeps the division."""

    def ln(x, w, b):
        return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b)

    def var1(x):
        return torch.var(x, -1) * 2

    compiled = torch.compile(ln, backend="autofuse", dynamic=True)
    compiled_var = torch.compile(var1, backend="autofuse", dynamic=True)
    for rows, hidden in [(3, 64), (5, 7), (2, 1000), (1, 4099)]:
        x, w, b = torch.randn(1, rows, hidden), torch.randn(hidden), torch.randn(hidden)
        torch.testing.assert_close(compiled(x, w, b), ln(x, w, b))
        torch.testing.assert_close(compiled_var(x), var1(x))
    ln_recs = [r for r in autofuse.compiled_graphs() if "rsqrt" in r.graph_text]
    assert ln_recs and all(r.fallback == "" and r.num_kernels == 1 for r in ln_recs), [
        (r.num_kernels, r.fallback) for r in ln_recs]
    assert any(r.translation.symbols for r in ln_recs)


def _positions(x):
    """GPT-2's embedding prologue in a few ops: `full` over the input's sizes, position ids
    from `arange`, and a flattening `view`; each reads a size as a SymInt graph input."""
    b, s = x.shape
    pos = torch.arange(s) + 1
    return (torch.full((b, s), 2.0) * x + pos).view(b * s)


def test_symint_arguments_of_fused_ops():
    """A fused op whose arguments name SymInt graph inputs (`full([s0, s1], 2.0)`): its eager
    closure read them from a map of its tensor operands (KeyError: arg0_1), so the whole graph
    ran eagerly; they are computed from the symbol values now."""
    compiled = torch.compile(_positions, backend="autofuse", dynamic=True)
    with autofuse.collect_records() as recs:
        for shape in [(2, 8), (3, 5), (4, 7)]:
            x = torch.randn(shape)
            torch.testing.assert_close(compiled(x), _positions(x))
    assert len(recs) == 1 and recs[0].fallback == "" and recs[0].num_kernels >= 1, [
        (r.name, r.fallback) for r in recs]
    assert not recs[0].runner.broken
    full = [n for n in recs[0].translation.nodes if n.fx is not None and n.fx.target == torch.ops.aten.full.default]
    assert full and full[0].kind == "broadcast"
    # Its eager meaning too (what the executor runs when a kernel leaves it to ATen).
    x = torch.randn(3, 5)
    env = [None] * len(recs[0].translation.nodes) + [recs[0].translation.read_symbols([3, 5, x])]
    assert torch.equal(full[0].run(env), torch.full((3, 5), 2.0))


def test_float_global_input_is_a_real_constant():
    """math.pi under dynamic=True is an f64 graph input; the f64 scalar math around it stays
    ATen and reads the executor's precomputed constants (scalar_tensor(2.0)), which were made
    inside AOTAutograd's FakeTensorMode (FakeTensors: the first call failed)."""

    def gelu_tanh_scale(x):
        return x * math.sqrt(2.0 / math.pi) + 1

    compiled = torch.compile(gelu_tanh_scale, backend="autofuse", dynamic=True)
    with autofuse.collect_records() as recs:
        for shape in [(2, 8), (3, 5)]:
            x = torch.randn(shape)
            torch.testing.assert_close(compiled(x), gelu_tanh_scale(x))
    assert [r.fallback for r in recs] == [""] and recs[0].num_kernels == 1 and not recs[0].runner.broken
    assert any(n.origin == "aten.scalar_tensor.default" for n in recs[0].translation.nodes)
