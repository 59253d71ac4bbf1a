"""The Inductor frontend (issue 17): Inductor's fusion groups as AscIR kernels.

The seed's four starting patterns are each exactly one AscIR kernel; what a group cannot
express (an embedding gather, scatter_add) stays with Inductor's C++ for that node, named with
its reason by explain; a plain Inductor compile in the same process keeps Inductor's own kernels; a broken toolchain leaves the graph on Inductor's kernels with a warning.
"""

import os
import re

import pytest
import torch
import torch.nn.functional as F
from torch._inductor.utils import run_and_get_code

import autofuse
from autofuse import CompilerConfig
from autofuse.inductor import compiled_graphs, torch_internals
from helpers import check_inductor_kernels, reference_in_float


def compile_inductor(fn, config=None, **kwargs):
    config = config or CompilerConfig(frontend="inductor")
    return torch.compile(fn, backend=autofuse.get_backend(config), **kwargs)


def sigmoid_scale_bias(x, scale, bias):
    return torch.sigmoid(x) * scale + bias


def affine(x, gamma, beta):
    return x * gamma + beta


def scaled_sum(x, gamma, beta):
    return torch.sum(x, -1) * 0.125


def normalize(x, gamma, beta):
    """mean -> sub -> square -> reduce -> rsqrt -> mul -> add."""
    d = x - x.mean(-1, keepdim=True)
    return d * torch.rsqrt(d.square().mean(-1, keepdim=True) + 1e-5) * gamma + beta


SEEDS = [sigmoid_scale_bias, affine, scaled_sum, normalize]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])
@pytest.mark.parametrize("fn", SEEDS, ids=lambda f: f.__name__)
def test_seed_patterns_are_one_ascir_kernel(fn, dtype):
    """Each of the seed's four starting patterns: exactly one AscIR kernel, fp32 and bf16."""
    x = torch.randn(16, 768, dtype=dtype)
    gamma, beta = torch.randn(768, dtype=dtype), torch.randn(768, dtype=dtype)
    got = compile_inductor(fn)(x, gamma, beta)
    torch.testing.assert_close(got, reference_in_float(fn, x, gamma, beta))
    rec = check_inductor_kernels(1, "cpu")
    (group,) = rec.groups
    assert group.ascir.startswith(f"ascgraph @{group.name} {{")
    assert ("reduce_" in group.ascir) == (fn in (scaled_sum, normalize))


@pytest.mark.parametrize("how", ["config", "env", "options"])
def test_selected_by_config_env_or_compile_options(how, monkeypatch):
    fn, x = (lambda x: torch.relu(x) * 2), torch.randn(4, 8)
    if how == "config":
        compiled = compile_inductor(fn)
    elif how == "env":
        monkeypatch.setenv("AUTOFUSE_FRONTEND", "inductor")
        compiled = torch.compile(fn, backend="autofuse")
    else:
        compiled = torch.compile(fn, backend="autofuse", options={"frontend": "inductor"})
    torch.testing.assert_close(compiled(x), fn(x))
    check_inductor_kernels(1)
    assert autofuse.compiled_graphs() == []  # autofuse's own frontend saw nothing


def test_an_unknown_frontend_is_refused():
    with pytest.raises(ValueError, match="unknown frontend 'tvm'"):
        autofuse.get_backend(CompilerConfig(frontend="tvm"))


def test_a_plain_inductor_compile_next_to_ours_keeps_inductor_kernels():
    fn = lambda x: torch.sigmoid(x) * 3 + 1  # noqa: E731
    x = torch.randn(8, 32)
    _, before = run_and_get_code(torch.compile(fn, backend="inductor"), x)
    torch._dynamo.reset()
    got, ours = run_and_get_code(compile_inductor(fn), x)
    torch.testing.assert_close(got, fn(x))
    torch._dynamo.reset()
    _, after = run_and_get_code(torch.compile(fn, backend="inductor"), x)
    assert "AscKernel" in "".join(ours) and "cpp_fused" not in "".join(ours)
    for code in (before, after):
        assert "AscKernel" not in "".join(code) and "cpp_fused" in "".join(code)
    scheduling = torch_internals.codegen_common.device_codegens["cpu"].scheduling
    assert not getattr(scheduling, "__name__", "").startswith("Autofuse")


class GatherScatter(torch.nn.Module):
    """An embedding gather and a scatter_add (indirect indexing) next to pointwise work."""

    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(100, 32)

    def forward(self, ids, rows, x):
        h = self.emb(ids) * 2.0 + x
        z = torch.zeros(4, 32).scatter_add(0, rows, torch.sigmoid(x[:, 0]))
        return h, z, F.layer_norm(torch.relu(x) * 3.0, (32,))


def test_gathers_are_ours_scatters_stay_with_inductor_per_node_with_reason():
    m = GatherScatter()
    ids, rows, x = torch.randint(0, 100, (8, 5)), torch.randint(0, 4, (8, 32)), torch.randn(8, 5, 32)
    x.requires_grad_()
    report = autofuse.explain(m, ids, rows, x, config=CompilerConfig(frontend="inductor"))
    for got, want in zip(report.output, m(ids, rows, x)):
        torch.testing.assert_close(got, want)
    left = [g for g in report.groups if not g.kernel]
    text = str(report)
    for g in left:  # the embedding's scatter-accumulate (backward)
        assert "scatter" in g.reason, g.reason
        assert f"[{', '.join(g.nodes)}]" in text and g.reason in text
    assert any("aten._unsafe_masked_index_put_accumulate.default" in g.origins for g in left), left
    # The embedding gather is an AscIR kernel: a load indexed by the ids (docs/ir.md).
    gathers = [g for g in report.groups if g.kernel and "aten.embedding.default" in g.origins]
    assert gathers and all(re.search(r"= load\(%\S+, %\S+\) \{index_bound = 100, index_stride = 32\}", g.ascir)
                           for g in gathers), gathers
    assert len(report.graphs) == 2  # forward and backward


def test_a_gather_checks_its_index_and_wraps_negative_ones():
    """x[idx] wraps a negative index (Inductor's wrap_neg); an embedding index outside the
    table raises IndexError, as eager does, and the compiled model keeps working after."""
    def index(x, idx, w):
        return torch.relu(x[idx] * w + 1.0)

    x, w = torch.randn(50, 32), torch.randn(32)
    idx = torch.tensor([-1, 3, -50, 7, 49])
    compiled = torch.compile(index, backend="autofuse", options={"frontend": "inductor"})
    torch.testing.assert_close(compiled(x, idx, w), index(x, idx, w))
    emb = torch.nn.Embedding(10, 16)
    f = torch.compile(lambda i: torch.tanh(emb(i) * 2.0), backend="autofuse", options={"frontend": "inductor"})
    ok = torch.tensor([[0, 9, 3]])
    with torch.no_grad():
        torch.testing.assert_close(f(ok), torch.tanh(emb(ok) * 2.0))
        for bad in (10, -1):
            with pytest.raises(IndexError, match="out of bounds"):
                f(torch.tensor([[0, bad, 3]]))
            with pytest.raises(IndexError):
                emb(torch.tensor([[0, bad, 3]]))
        torch.testing.assert_close(f(ok), torch.tanh(emb(ok) * 2.0))
    report = autofuse.explain(index, x, idx, w, config=CompilerConfig(frontend="inductor"))
    assert [g.kernel for g in report.groups] == [True], str(report)


def _relative_positions(x):
    n = x.shape[-1]
    rel = torch.arange(n)[None, :] - torch.arange(n)[:, None]  # decreases along the rows
    return x * rel.to(x.dtype) + (torch.arange(n)[:, None] * 3 - torch.arange(n)[None, :]).abs()


@pytest.mark.parametrize("dynamic", [False, True])
def test_integer_index_math_is_one_kernel(dynamic):
    """Relative positions (j - i, a difference of two iota reads) and abs(3i - j) (integer
    math on iotas, which Inductor's index propagation writes as one index expression)."""
    torch._dynamo.reset()
    f = torch.compile(_relative_positions, backend="autofuse", options={"frontend": "inductor"}, dynamic=dynamic)
    for n in (12, 7):
        x = torch.randn(n, n)
        torch.testing.assert_close(f(x), _relative_positions(x))
    report = autofuse.explain(_relative_positions, torch.randn(12, 12), config=CompilerConfig(frontend="inductor"))
    assert [g.kernel for g in report.groups] == [True], str(report)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32])
def test_integer_kinds_follow_the_op_registry(dtype):
    """The integer kinds kernels compute are the registry's rows for i64 and i32 (relu and sign
    among them; the AscIR builder asks it), one kernel matching eager exactly."""
    from autofuse import _C

    int_kinds = {k for k, (_, _, dtypes) in _C.op_registry().items() if {"i64", "i32"} <= set(dtypes)}
    assert {"add", "relu", "sign", "maximum"} <= int_kinds and "div" not in int_kinds

    def f(a, b):
        return torch.relu(a - b) * torch.sign(b) + torch.maximum(a, b)

    g = torch.Generator().manual_seed(0)
    a, b = (torch.randint(-50, 50, (6, 24), generator=g, dtype=dtype) for _ in range(2))
    torch.testing.assert_close(compile_inductor(f)(a, b), f(a, b), rtol=0, atol=0)
    check_inductor_kernels(1)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.int32])
def test_every_registry_kind_of_inductors_op_names(dtype):
    """An Inductor op whose name is a registry kind is the builder's to compute (fmod,
    remainder, shifts among them: no table in the frontend), exactly as eager: float
    fmod/remainder of signed values, integer shifts by 0..79 bits (past the width too)."""
    g = torch.Generator().manual_seed(0)
    if dtype.is_floating_point:
        def f(x, y):
            return torch.fmod(x, y) * 2 + torch.remainder(x, y)

        args = (torch.randn(7, 80, generator=g) * 5, torch.randn(7, 80, generator=g) * 2 + 0.5)
    else:
        def f(x, y):
            return ((x << y) + 1) * ((x >> y) - 1)

        args = (torch.randint(-2**30, 2**30, (7, 80), generator=g, dtype=dtype),
                torch.arange(80, dtype=dtype).expand(7, 80).contiguous())
    torch.testing.assert_close(compile_inductor(f)(*args), f(*args), rtol=0, atol=0)
    check_inductor_kernels(1)


def test_a_training_step_matches_eager():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.LayerNorm(32), torch.nn.GELU(),
                                torch.nn.Linear(32, 16))
    ref = [p.detach().clone().requires_grad_() for p in model.parameters()]
    x = torch.randn(8, 16)
    loss = compile_inductor(model)(x).square().mean()
    loss.backward()
    want = torch.func.functional_call(model, dict(zip([n for n, _ in model.named_parameters()], ref)), (x,))
    want.square().mean().backward()
    torch.testing.assert_close(loss, want.square().mean())
    for p, r in zip(model.parameters(), ref):
        torch.testing.assert_close(p.grad, r.grad)
    recs = compiled_graphs()
    assert len(recs) == 2 and all(r.kernels and r.fallback == "" for r in recs)


def test_a_broken_toolchain_leaves_the_graph_on_inductor_kernels(tmp_path, caplog):
    config = CompilerConfig(frontend="inductor", cxx=str(tmp_path / "no-such-g++"), cache_dir=str(tmp_path))
    fn, x = (lambda x: torch.tanh(x) * 2 - 1), torch.randn(4, 16)
    got, code = run_and_get_code(compile_inductor(fn, config), x)
    torch.testing.assert_close(got, fn(x))
    (rec,) = compiled_graphs()
    assert "no-such-g++" in rec.fallback
    assert "runs on Inductor's own kernels" in caplog.text
    assert "cpp_fused" in code[-1]


def test_dump_writes_the_groups_their_ascir_and_source(tmp_path):
    fn, x = (lambda x: torch.softmax(x, -1) + 1), torch.randn(4, 64)
    got = compile_inductor(fn, CompilerConfig(frontend="inductor", dump_dir=str(tmp_path)))(x)
    torch.testing.assert_close(got, fn(x))
    (rec,) = compiled_graphs()
    names = sorted(os.listdir(tmp_path))
    assert f"{rec.name}.groups.txt" in names
    for g in rec.kernels:
        assert (tmp_path / f"{g.name}.ascir").read_text() == g.ascir
        assert "af_" in (tmp_path / f"{g.name}.cpp").read_text()


def rotary_from_positions(x, inv_freq):
    """Rotary angles from torch.arange (Inductor: an index_expr over the loop, an iota) and a
    cat of the half-size table (an index modulo the half size)."""
    angles = torch.arange(x.shape[1], dtype=torch.float32)[:, None] * inv_freq[None, :]
    emb = torch.cat((angles, angles), -1)
    return x * emb.cos() + x.flip(-1) * emb.sin()


def heads_to_batch(x):
    """[B, S, H*D] -> [B*H, S, D]: Inductor flattens B*H into one loop variable and indexes
    it by // and %; the kernel splits it back into two axes."""
    b, s, _ = x.shape
    return (x.view(b, s, 4, -1).transpose(1, 2).reshape(b * 4, s, -1) * 0.5).sigmoid()


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("fn", [rotary_from_positions, heads_to_batch], ids=lambda f: f.__name__)
def test_iotas_and_split_loops_are_ascir_kernels(fn, dynamic):
    compiled = compile_inductor(fn, dynamic=dynamic)
    shapes = [(2, 16, 64), (3, 24, 64)] if dynamic else [(2, 16, 64)]
    for shape in shapes:
        args = (torch.randn(shape),) + ((torch.rand(32),) if fn is rotary_from_positions else ())
        torch.testing.assert_close(compiled(*args), fn(*args))
    for rec in compiled_graphs():
        assert rec.groups and all(g.kernel for g in rec.groups), [(g.nodes, g.reason) for g in rec.groups]
    text = "".join(g.ascir for r in compiled_graphs() for g in r.groups)
    assert ("af_arange" in text) == (fn is rotary_from_positions)


def test_a_float_iota_past_2_to_the_24_rounds_as_eager():
    """An f32 iota is the i64 index cast to f32 (Inductor's index_expr): exact below 2^24, and
    past it rounded to nearest as eager's arange rounds."""
    n = (1 << 24) + 7
    fn = lambda x: torch.arange(n, dtype=torch.float32) * x  # noqa: E731
    x = torch.ones(())
    assert torch.equal(compile_inductor(fn)(x), fn(x))
    (rec,) = compiled_graphs()
    assert [g.kernel for g in rec.groups] == [True], [(g.nodes, g.reason) for g in rec.groups]


def test_under_inductors_cpp_wrapper_every_group_stays_inductors():
    fn, x = (lambda x: torch.sigmoid(x) * 2 + 1), torch.randn(4, 8)
    with torch._inductor.config.patch(cpp_wrapper=True):
        torch.testing.assert_close(compile_inductor(fn)(x), fn(x))
    (rec,) = compiled_graphs()
    assert rec.groups and all(not g.kernel and "cpp_wrapper" in g.reason for g in rec.groups)


def test_an_error_of_ours_inside_inductors_codegen_leaves_the_graph_on_inductor_kernels(monkeypatch, caplog):
    from autofuse.inductor import scheduling

    def broken(*args, **kwargs):
        raise RuntimeError("simulated frontend bug")

    real = scheduling.make_scheduling

    def make(session):
        cls = real(session)
        monkeypatch.setattr(cls, "_emit", broken)
        return cls

    monkeypatch.setattr(scheduling, "make_scheduling", make)
    monkeypatch.setattr(autofuse.inductor.frontend, "make_scheduling", make)
    fn, x = (lambda x: torch.sigmoid(x) * 2 + 1), torch.randn(4, 8)
    got, code = run_and_get_code(compile_inductor(fn), x)
    torch.testing.assert_close(got, fn(x))
    (rec,) = compiled_graphs()
    assert "simulated frontend bug" in rec.fallback
    assert "runs on Inductor's own kernels" in caplog.text and "cpp_fused" in code[-1]
