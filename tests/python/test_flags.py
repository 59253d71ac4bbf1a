"""AUTOFUSE_FLAGS and the CompilerConfig fusion fields: parsing, errors that name the flag,
and their effect on what gets fused (each compiled program still matches eager)."""

import re

import pytest
import torch

import autofuse
from autofuse import _C

from autofuse._C import StepKind
from helpers import compile_fn

DEFAULT_FLAGS = (
    "--enable_autofuse=true;--autofuse_enable_pass=elementwise,broadcast,reduce,concat;"
    "--max_fusion_size=64;--max_fusion_inputs=8;--recomputation_threshold=1;"
    "--max_reduce_epilogue=32;--emulate_precision_casts=false"
)

# AscIR ops that are no compute nodes (FusionOptions::max_nodes does not count them).
NON_COMPUTE = {"data", "load", "store", "output", "scalar"}

NODE_LINE = re.compile(r"^\s*%(\S+) = (\w+)\(([^)]*)\).*? : \w+ \[[^\]]*\] repeats \[([^\]]*)\]")


def kernel_graphs(fused_text):
    """Per kernel of a FusedGraph text: its AscIR nodes as (name, op, operands, repeats)."""
    kernels = []
    for line in fused_text.splitlines():
        if re.match(r"^\s*kernel @", line):
            kernels.append([])
            continue
        m = NODE_LINE.match(line)
        if m and kernels:
            operands = [o.strip().lstrip("%") for o in m.group(3).split(",") if o.strip()]
            repeats = [r.strip() for r in m.group(4).split(",") if r.strip()]
            kernels[-1].append((m.group(1), m.group(2), operands, repeats))
    return kernels


def compute_nodes(kernel):
    return [n for n in kernel if n[1] not in NON_COMPUTE]


def reduce_nodes(kernel):
    """Nodes that reduce: a reduce_* op, or a dim of repeat 1 where an operand's is larger (a
    reduced dim keeps its place with repeat 1; a broadcast goes the other way)."""
    repeats = {name: rep for name, _op, _ins, rep in kernel}
    found = []
    for name, op, ins, rep in kernel:
        if op in NON_COMPUTE:
            continue
        shrinks = any(
            len(repeats.get(i, [])) == len(rep) and any(r == "1" and s != "1" for r, s in zip(rep, repeats[i]))
            for i in ins
        )
        if op.startswith("reduce") or shrinks:
            found.append(name)
    return found


REDUCE_THEN_BROADCAST = """fusedgraph @r {
  kernel @k0(%x) -> (%1) ops [%0, %1] {
    ascgraph @k0 {
      axis z0 : 4
      axis z1 : 8
      %x.data = data() {index = 0} sched [z0, z1] : f32 [z0, z1] repeats [4, 8] strides [8, 1]
      %x.load = load(%x.data) sched [z0, z1] : f32 [z0, z1] repeats [4, 8] strides [8, 1]
      %0 = exp(%x.load) sched [z0, z1] : f32 [z0, z1] repeats [4, 8] strides [8, 1]
      %1 = sum_of(%0) sched [z0, z1] : f32 [z0, z1] repeats [4, 1] strides [1, 0]
      %1.store = store(%1) sched [z0, z1] : f32 [z0] repeats [4] strides [1]
      %1.out = output(%1.store) {index = 0} sched [z0, z1] : f32 [z0] repeats [4] strides [1]
    }
  }
  kernel @k1(%1) -> (%b) ops [%b] {
    ascgraph @k1 {
      axis z0 : 8
      axis z1 : 4
      %1.data = data() {index = 0} sched [z0, z1] : f32 [z0, z1] repeats [1, 4] strides [0, 1]
      %1.load = load(%1.data) sched [z0, z1] : f32 [z0, z1] repeats [1, 4] strides [0, 1]
      %b = broadcast(%1.load) sched [z0, z1] : f32 [z0, z1] repeats [8, 4] strides [4, 1]
      %b.store = store(%b) sched [z0, z1] : f32 [z0, z1] repeats [8, 4] strides [4, 1]
      %b.out = output(%b.store) {index = 0} sched [z0, z1] : f32 [z0, z1] repeats [8, 4] strides [4, 1]
    }
  }
  return %1, %b
}"""


def test_reduce_detector_tells_reductions_from_broadcasts():
    # The helpers the reduce test relies on: a reduction is found by shape even under another
    # op name, a broadcast is not one, and compute nodes exclude data/load/store/output.
    kernels = kernel_graphs(REDUCE_THEN_BROADCAST)
    assert [len(compute_nodes(k)) for k in kernels] == [2, 1]
    assert [reduce_nodes(k) for k in kernels] == [["1"], []]


def test_parse_flags_defaults_and_canonical_text():
    d = _C.parse_flags("")
    assert d == {
        "enable_autofuse": True,
        "passes": ["elementwise", "broadcast", "reduce", "concat"],
        "max_fusion_size": 64,
        "max_fusion_inputs": 8,
        "recomputation_threshold": 1,
        "max_reduce_epilogue": 32,
        "emulate_precision_casts": False,
        "flags": DEFAULT_FLAGS,
    }
    d = _C.parse_flags(
        "--enable_autofuse=true;--autofuse_enable_pass=reduce,concat;--autofuse_disable_pass=concat;"
        "--max_fusion_size=64;--recomputation_threshold=1"
    )
    assert d["passes"] == ["elementwise", "broadcast", "reduce"]
    assert _C.parse_flags(d["flags"]) == d  # the canonical text round-trips


@pytest.mark.parametrize(
    "text, message",
    [
        ("--autofuse_disable_pass=reduc", 'unknown pass "reduc" in --autofuse_disable_pass; valid passes: '
         "elementwise, broadcast, reduce, concat"),
        ("--max_fusion_size=0", 'bad value "0" for --max_fusion_size; valid values: an integer >= 1'),
        ("--recomputation_threshold=300", "--recomputation_threshold; valid values: an integer from 0 to 255"),
        ("--enable_autofuse=on", 'bad value "on" for --enable_autofuse; valid values: true, false'),
        ("--fusion_size=4", 'unknown flag "--fusion_size"; valid flags: --enable_autofuse=true|false'),
        ("--autofuse_disable_pass=broadcast", 'pass "broadcast" cannot be disabled'),
        ("--autofuse_enable_pgo=true", "--autofuse_enable_pgo is a CANN AutoFuse flag autofuse does not implement"),
    ],
)
def test_parse_errors_name_the_flag(text, message):
    with pytest.raises(_C.FlagError) as info:
        _C.parse_flags(text)
    assert str(info.value).startswith("AUTOFUSE_FLAGS: ")
    assert message in str(info.value)
    assert isinstance(info.value, ValueError)


def test_config_reads_env_and_fields_win(monkeypatch):
    monkeypatch.setenv("AUTOFUSE_FLAGS", "--max_fusion_size=8;--autofuse_disable_pass=reduce,concat")
    cfg = autofuse.CompilerConfig()
    assert cfg.autofuse_flags == "--max_fusion_size=8;--autofuse_disable_pass=reduce,concat"
    s = cfg.fusion_settings()
    assert (s["max_fusion_size"], s["passes"]) == (8, ["elementwise", "broadcast"])
    s = cfg.replace(max_fusion_size=4, enable_passes=["reduce"], recomputation_threshold=0).fusion_settings()
    assert (s["max_fusion_size"], s["passes"], s["recomputation_threshold"]) == (
        4, ["elementwise", "broadcast", "reduce"], 0)
    # Within the fields, disabling wins (CANN's rule); a comma string is a list too.
    s = autofuse.CompilerConfig(autofuse_flags="", enable_passes="reduce,concat", disable_passes=["concat"],
                                max_fusion_inputs=3, max_reduce_epilogue=0).fusion_settings()
    assert (s["passes"], s["max_fusion_inputs"], s["max_reduce_epilogue"]) == (
        ["elementwise", "broadcast", "reduce"], 3, 0)
    assert not autofuse.CompilerConfig(autofuse_flags="", enable_autofuse=False).fusion_settings()["enable_autofuse"]
    assert autofuse.CompilerConfig(autofuse_flags="", emulate_precision_casts=True).fusion_settings()[
        "emulate_precision_casts"]


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"autofuse_flags": "--max_fusion_size=-3"}, 'AUTOFUSE_FLAGS: bad value "-3" for --max_fusion_size'),
        ({"disable_passes": ["reduc"]}, 'CompilerConfig: unknown pass "reduc" in --autofuse_disable_pass'),
        ({"max_fusion_size": 0}, 'CompilerConfig: bad value "0" for --max_fusion_size'),
        ({"recomputation_threshold": 2.5}, 'CompilerConfig: bad value "2.5" for --recomputation_threshold'),
        ({"enable_autofuse": "yes"}, 'CompilerConfig: bad value "yes" for --enable_autofuse'),
        ({"enable_passes": ["reduce;--max_fusion_size=1"]}, "--autofuse_enable_pass (';' separates flags)"),
    ],
)
def test_bad_setting_fails_when_the_backend_is_created(changes, message):
    cfg = autofuse.CompilerConfig(autofuse_flags="").replace(**changes)
    with pytest.raises(_C.FlagError, match=re.escape(message)):
        autofuse.get_backend(cfg)
    assert autofuse.compiled_graphs() == []


def test_bad_env_flag_raises_instead_of_running_eagerly(monkeypatch):
    monkeypatch.setenv("AUTOFUSE_FLAGS", "--enable_autofuse=true;--max_fusion_size=many")
    fn = torch.compile(lambda x: torch.exp(x) + 1, backend="autofuse", dynamic=False)
    with pytest.raises(Exception, match=re.escape('bad value "many" for --max_fusion_size')):
        fn(torch.randn(8))
    assert all(not r.fallback for r in autofuse.compiled_graphs())


def chain6(x):
    return torch.tanh(torch.sin(torch.abs(torch.exp(torch.neg(torch.cos(x))))))


def test_max_fusion_size_bounds_every_kernel():
    x = torch.randn(4, 33)
    ref = chain6(x)
    with autofuse.collect_records() as recs:
        torch.testing.assert_close(compile_fn(chain6, autofuse.CompilerConfig())(x), ref)
    (rec,) = recs
    assert [len(compute_nodes(k)) for k in kernel_graphs(rec.fused_text)] == [6]

    torch._dynamo.reset()
    cfg = autofuse.CompilerConfig(autofuse_flags="--max_fusion_size=2")
    with autofuse.collect_records() as recs:
        torch.testing.assert_close(compile_fn(chain6, cfg)(x), ref)
    (rec,) = recs
    sizes = [len(compute_nodes(k)) for k in kernel_graphs(rec.fused_text)]
    assert sum(sizes) == 6 and len(sizes) >= 3 and max(sizes) <= 2, sizes
    assert rec.num_kernels == len(sizes)
    assert "more than max_nodes 2" in rec.fused_text  # the rejected fusions say why


def test_enable_autofuse_false_runs_eagerly():
    x = torch.randn(4, 33)
    cfg = autofuse.CompilerConfig(autofuse_flags="--enable_autofuse=false;--max_fusion_size=2")
    with autofuse.collect_records() as recs:
        torch.testing.assert_close(compile_fn(chain6, cfg)(x), chain6(x))
    (rec,) = recs
    assert rec.fallback == "autofuse is off (--enable_autofuse=false)"
    assert rec.num_kernels == 0
    report = autofuse.explain(chain6, x, config=cfg)
    assert report.num_kernels == 0 and "--enable_autofuse=false" in str(report)


def test_enable_fusion_false_wins_over_the_flags():
    x = torch.randn(4, 33)
    cfg = autofuse.CompilerConfig(autofuse_flags="--enable_autofuse=true", enable_fusion=False)
    with autofuse.collect_records() as recs:
        torch.testing.assert_close(compile_fn(chain6, cfg)(x), chain6(x))
    (rec,) = recs
    assert [len(compute_nodes(k)) for k in kernel_graphs(rec.fused_text)] == [1] * 6


def test_dump_writes_the_effective_flags(tmp_path):
    cfg = autofuse.CompilerConfig(dump_dir=str(tmp_path), autofuse_flags="--max_fusion_size=3",
                                  disable_passes="concat")
    x = torch.randn(4, 33)
    with autofuse.collect_records() as recs:
        compile_fn(chain6, cfg)(x)
    (rec,) = recs
    text = (tmp_path / f"{rec.name}.flags.txt").read_text().strip()
    assert text == cfg.fusion_settings()["flags"]
    assert "--max_fusion_size=3" in text and "--autofuse_disable_pass=concat" in text


class Norms(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.LayerNorm(32)

    def forward(self, x):
        y = torch.softmax(x * 2.0, dim=-1) + self.norm(x).relu()
        return y * torch.sum(x, dim=-1, keepdim=True).sigmoid()


def kernels_with_reduce(recs):
    """(graph, kernel index, reduce nodes) of every kernel holding a reduction."""
    out = []
    for rec in recs:
        for k, kernel in enumerate(kernel_graphs(rec.fused_text)):
            if reduce_nodes(kernel):
                out.append((rec.name, k, reduce_nodes(kernel)))
    return out


@torch.no_grad()
def test_disable_reduce_keeps_reductions_out_of_kernels():
    model = Norms().eval()
    x = torch.randn(6, 32)
    ref = model(x)
    with autofuse.collect_records() as default_recs:
        torch.testing.assert_close(compile_fn(model, autofuse.CompilerConfig())(x), ref)

    torch._dynamo.reset()
    cfg = autofuse.CompilerConfig(autofuse_flags="--autofuse_disable_pass=reduce")
    with autofuse.collect_records() as recs:
        torch.testing.assert_close(compile_fn(model, cfg)(x), ref)
    assert recs and all(not r.fallback for r in recs), [(r.name, r.fallback) for r in recs]
    assert kernels_with_reduce(recs) == []
    for rec in recs:
        source = rec.program.source()
        assert not re.search(r"reduce", source, re.IGNORECASE), rec.name
    if kernels_with_reduce(default_recs):  # reductions are fused by default: the flag took them out
        assert sum(r.num_kernels for r in recs) >= sum(r.num_kernels for r in default_recs)
        left = [s for r in recs for s in r.steps if s.kind == StepKind.opaque]
        assert left, "with reduce disabled the reductions must run as ATen steps"


def cat_branches(a, b):
    return torch.cat((a.sigmoid() * 2, b.relu() + 1), -1).tanh()


def test_disable_concat_keeps_concats_as_aten():
    a, b = torch.randn(5, 24), torch.randn(5, 40)
    ref = cat_branches(a, b)
    with autofuse.collect_records() as recs:
        torch.testing.assert_close(compile_fn(cat_branches, autofuse.CompilerConfig())(a, b), ref)
    (rec,) = recs
    assert rec.num_kernels == 1 and " concat dim 1 " in rec.fused_text, rec.fused_text

    torch._dynamo.reset()
    cfg = autofuse.CompilerConfig(autofuse_flags="--autofuse_disable_pass=concat")
    with autofuse.collect_records() as recs:
        torch.testing.assert_close(compile_fn(cat_branches, cfg)(a, b), ref)
    (rec,) = recs
    assert not rec.fallback and " concat dim " not in rec.fused_text, rec.fused_text
    opaque = [s for s in rec.steps if s.kind == StepKind.opaque and s.reason.startswith("concat pass is disabled")]
    assert len(opaque) == 1, rec.steps
    assert rec.num_kernels == 3  # each branch, and the consumer of the ATen cat


def test_max_fusion_size_counts_every_segment_of_a_concat_kernel():
    a, b = torch.randn(5, 24), torch.randn(5, 40)
    cfg = autofuse.CompilerConfig(autofuse_flags="--max_fusion_size=2")
    with autofuse.collect_records() as recs:
        torch.testing.assert_close(compile_fn(cat_branches, cfg)(a, b), cat_branches(a, b))
    (rec,) = recs
    sizes = [len(compute_nodes(k)) for k in kernel_graphs(rec.fused_text)]
    assert max(sizes) <= 2 and rec.num_kernels == len(sizes), (sizes, rec.fused_text)
