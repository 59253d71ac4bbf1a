"""autofuse.explain: kernels with their ops, bytes and TilingCases, ops left to ATen and
rejected fusions with reasons, counts, and the Graphviz picture of the fused graph."""

import logging
import os
import re
import shutil
import xml.etree.ElementTree as ET

import pytest
import torch

import autofuse


def fn(x, b):
    y = torch.relu(x * 2.0 + b)
    z = torch.cumsum(y, dim=-1)  # not fusible
    return torch.sigmoid(z) - y


def test_explain_lists_kernels_and_reasons(capsys):
    x, b = torch.randn(4, 8), torch.randn(8)
    report = autofuse.explain(fn, x, b, print_report=True)
    torch.testing.assert_close(report.output, fn(x, b))
    assert len(report.graphs) == 1
    g = report.graphs[0]
    assert g.fallback == ""
    assert report.num_kernels == 2
    ops = [op for k in g.kernels for op in k.aten_ops]
    assert "aten.relu.default" in ops and "aten.sigmoid.default" in ops
    left = {op: reason for op, _node, reason in g.left_out}
    assert "aten.cumsum.default" in left and left["aten.cumsum.default"]
    assert report.fused_ops == 5 and report.total_ops == 6
    text = capsys.readouterr().out
    assert "kernel k0" in text and "kernel k1" in text
    assert "aten.cumsum.default" in text
    assert "5 of 6 computing ATen ops replaced" in text


def test_explain_reports_fallback(tmp_path):
    config = autofuse.CompilerConfig(cxx="/nonexistent/cxx", cache_dir=str(tmp_path))
    report = autofuse.explain(lambda x: torch.exp(x) * 3, torch.randn(5), config=config)
    assert report.num_kernels == 0
    assert report.graphs[0].fallback.startswith("toolchain error")
    assert "runs eagerly" in str(report)


def _kernel(report, name):
    return next(k for k in report.graphs[0].kernels if k.name == name)


def test_explain_kernel_ops_bytes_and_tiling_cases():
    x, b = torch.randn(4, 8), torch.randn(8)
    report = autofuse.explain(fn, x, b)
    g = report.graphs[0]
    k0, k1 = _kernel(report, "k0"), _kernel(report, "k1")
    assert [kind for kind, _ in k0.ops] == ["mul", "broadcast", "add", "relu"]
    assert [kind for kind, _ in k1.ops] == ["sigmoid", "sub"]
    # k0 reads x (4x8 f32) and b (8 f32), writes relu; eagerly mul, add and relu each read
    # their operands (add reads b, not its broadcast) and write a 4x8 result.
    assert (k0.bytes_read, k0.bytes_written) == (128 + 32, 128)
    assert k0.unfused_bytes == (128 + 128) + (128 + 32 + 128) + (128 + 128)
    assert (k1.bytes_read, k1.bytes_written, k1.unfused_bytes) == (256, 128, (128 + 128) + (3 * 128))
    assert k0.saved_bytes == 800 - 288
    assert k0.tiling_cases == ["elementwise"] and k1.tiling_cases == ["elementwise"]
    assert [op for op, _node, _reason in g.fallbacks] == ["aten.cumsum.default"]
    assert "aten.cumsum.default" in g.fallbacks[0][2]  # the reason names the op
    # The C++ DOT printer counts the same bytes.
    assert (r'label="k0: 3 ATen op(s), 4 IR op(s)\lread 160 B, write 128 B\lunfused 800 B\ltiling: elementwise\l"'
            in g.dot)
    assert (r'label="k1: 2 ATen op(s), 2 IR op(s)\lread 256 B, write 128 B\lunfused 640 B\ltiling: elementwise\l"'
            in g.dot)
    text = str(report)
    assert "kernel  ATen ops  IR ops   read  written  unfused  saved  tiling cases" in text
    assert "  k0             3       4  160 B    128 B    800 B    64%  elementwise" in text
    assert "Graph IR: mul %mul, broadcast %" in text


def test_explain_lists_rejected_fusions_with_reasons():
    x, b = torch.randn(4, 8), torch.randn(8)
    # relu feeds both the cumsum (ATen) and the sub after it: fusing them would make a cycle.
    report = autofuse.explain(fn, x, b)
    rejected = report.graphs[0].rejected
    assert [(r.producer, r.consumer, r.sibling) for r in rejected] == [("%relu", "%sub", False)]
    assert "cycle through %cumsum" in rejected[0].reason
    assert "%relu -> %sub: fusing %relu into %sub would create a cycle" in str(report)

    off = autofuse.explain(fn, x, b, config=autofuse.CompilerConfig(enable_fusion=False))
    g = off.graphs[0]
    assert len(g.kernels) == 6 and all(len(k.ops) == 1 for k in g.kernels)
    assert len(g.rejected) == 5
    assert {r.reason for r in g.rejected} == {"fusion is disabled"}
    assert ("%add", "%relu") in {(r.producer, r.consumer) for r in g.rejected}
    assert "rejected fusions:\n    %mul -> %add: fusion is disabled" in str(off)


def _check_pictures(directory, name):
    png = (directory / f"{name}.fused.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 1000
    svg = ET.parse(directory / f"{name}.fused.svg").getroot()
    assert svg.tag == "{http://www.w3.org/2000/svg}svg"
    titles = {t.text for t in svg.iter("{http://www.w3.org/2000/svg}title")}
    assert {"cluster_k0", "cluster_k1"} <= titles
    assert (directory / f"{name}.fused.dot").read_text().startswith(f'digraph "{name}" {{')


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` not installed")
def test_explain_draws_pictures(tmp_path):
    x, b = torch.randn(4, 8), torch.randn(8)
    report = autofuse.explain(fn, x, b, picture_dir=str(tmp_path / "pics"))
    g = report.graphs[0]
    assert set(g.pictures) == {"dot", "svg", "png", "overview dot", "overview svg", "overview png",
                               "k0 dot", "k0 svg", "k1 dot", "k1 svg"}
    k1 = ET.parse(tmp_path / "pics" / f"{g.name}.k1.svg").getroot()  # one kernel: its cluster only
    titles = {t.text for t in k1.iter("{http://www.w3.org/2000/svg}title")}
    assert "cluster_k1" in titles and "cluster_k0" not in titles
    overview = ET.parse(tmp_path / "pics" / f"{g.name}.overview.svg").getroot()
    titles = {t.text for t in overview.iter("{http://www.w3.org/2000/svg}title")}
    assert {"k0", "k1"} <= titles and "cluster_k0" not in titles  # one node per kernel
    _check_pictures(tmp_path / "pics", g.name)
    assert (tmp_path / "pics" / f"{g.name}.fused.dot").read_text() == g.dot
    assert f"pictures: {g.pictures['overview svg']}, {g.pictures['svg']}" in str(report)

    # With a dump dir the pipeline itself dumps the DOT, and explain renders pictures there.
    config = autofuse.CompilerConfig(dump_dir=str(tmp_path / "dump"))
    torch.compile(fn, backend=autofuse.get_backend(config))(x, b)
    name = autofuse.compiled_graphs()[-1].name
    assert (tmp_path / "dump" / f"{name}.fused.dot").read_text().startswith(f'digraph "{name}" {{')
    report = autofuse.explain(fn, x, b, config=config)
    _check_pictures(tmp_path / "dump", report.graphs[0].name)


def test_explain_without_pictures_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    report = autofuse.explain(fn, torch.randn(4, 8), torch.randn(8))
    assert report.graphs[0].pictures == {} and report.graphs[0].dot.startswith("digraph")
    assert os.listdir(tmp_path) == []


def _path_without(tmp_path, tool):
    """A PATH with every program of the current PATH but `tool` (symlinks in one directory)."""
    shadow = tmp_path / "bin"
    shadow.mkdir()
    for d in os.environ.get("PATH", "").split(os.pathsep):
        if not os.path.isdir(d):
            continue
        for f in os.listdir(d):
            if f != tool and not os.path.lexists(shadow / f):
                (shadow / f).symlink_to(os.path.join(d, f))
    return str(shadow)


def test_explain_without_graphviz_warns(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("PATH", _path_without(tmp_path, "dot"))
    assert shutil.which("dot") is None
    x, b = torch.randn(4, 8), torch.randn(8)
    with caplog.at_level(logging.WARNING, logger="autofuse"):
        report = autofuse.explain(fn, x, b, picture_dir=str(tmp_path / "pics"))
    torch.testing.assert_close(report.output, fn(x, b))
    g = report.graphs[0]
    assert report.num_kernels == 2
    assert set(g.pictures) == {"dot", "overview dot", "k0 dot", "k1 dot"} and os.path.getsize(g.pictures["dot"]) > 0
    assert sorted(os.listdir(tmp_path / "pics")) == [f"{g.name}.{k}.dot" for k in ("fused", "k0", "k1", "overview")]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("`dot` is not on PATH" in w and "graphviz" in w for w in warnings), warnings


class Block(torch.nn.Module):
    """A residual MLP block: views (reshape, transpose) between computing ops."""

    def __init__(self):
        super().__init__()
        self.up = torch.nn.Linear(8, 16)
        self.norm = torch.nn.LayerNorm(16)

    def forward(self, x):
        h = self.norm(torch.nn.functional.gelu(self.up(x)))
        return (h.reshape(4, 2, 16).transpose(0, 1).sum(0) * 2).sigmoid()


def test_explain_training_lists_forward_and_backward_and_counts_no_views():
    m = Block()
    x = torch.randn(8, 8)
    m.up.weight.grad = marker = torch.full_like(m.up.weight, 7.0)
    report = autofuse.explain(m, x)
    assert [g.tag for g in report.graphs] == ["fw", "bw"]
    assert m.up.weight.grad is marker and m.norm.weight.grad is None  # grads left as they were
    for g in report.graphs:
        assert g.compute_ops < g.fx_ops  # views, transposes and getitems are not counted
        assert 0 < g.fused_compute_ops <= g.compute_ops
    fw = report.graphs[0]
    assert "(fw)" in str(report) and "(bw)" in str(report)
    assert f"{fw.fused_compute_ops}/{fw.compute_ops} computing ATen ops fused" in str(report)
    # Each kernel names the modules its ops come from.
    origins = [o for k in fw.kernels for o in k.origins]
    assert any(o.startswith("norm (LayerNorm)") for o in origins), origins
    assert "from: " in str(report)


def test_explain_inference_runs_no_backward():
    with torch.no_grad():
        report = autofuse.explain(Block(), torch.randn(8, 8))
    assert [g.tag for g in report.graphs] == ["inference"]


# Issue 40: an unusable picture_dir; explain's counts, views, rejected edges, tuple types,
# graph breaks, enable_autofuse=False and per-kernel pictures.


@pytest.mark.parametrize("where", ["proc", "file"])
def test_explain_unusable_picture_dir_warns_and_returns_the_report(tmp_path, caplog, where):
    directory = "/proc/pics" if where == "proc" else str(tmp_path / "a_file")
    if where == "file":
        (tmp_path / "a_file").write_text("not a directory")
    x, b = torch.randn(4, 8), torch.randn(8)
    with caplog.at_level(logging.WARNING, logger="autofuse"):
        report = autofuse.explain(fn, x, b, picture_dir=directory)
    torch.testing.assert_close(report.output, fn(x, b))
    assert report.num_kernels == 2 and all(g.pictures == {} for g in report.graphs)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("picture_dir" in w and directory in w and "[Errno" in w for w in warnings), warnings
    assert report.pictures_not_written.startswith(f"picture_dir {directory!r} is unusable: [Errno")
    assert f"pictures not written: picture_dir {directory!r} is unusable" in str(report)


@pytest.fixture(scope="module")
def bert_report(tmp_path_factory):
    """explain of a tiny BertModel (random weights, 2 layers), pictures drawn (DOT only
    without Graphviz): views between its linears, SDPA's tuple output, rejected fusions."""
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    cfg = transformers.BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                  intermediate_size=64, max_position_embeddings=32)
    model = transformers.BertModel(cfg).eval()
    with torch.no_grad():
        return autofuse.explain(model, torch.randint(0, 100, (2, 8)), picture_dir=str(tmp_path_factory.mktemp("pics")))


def test_explain_views_are_one_line_not_left_to_aten(bert_report):
    (g,) = bert_report.graphs
    text = str(bert_report)
    assert len(g.aliases) > 30  # BERT's reshapes and permutes around its linears
    assert not [op for op, _node, reason in g.left_out if "alias" in reason or op == "operator.getitem"]
    assert "runs as an ATen alias" not in text
    assert f"  views and aliases ATen runs (not counted): {len(g.aliases)} (aten.view.default x" in text
    assert {op for op, _n, _r in g.left_out} == {"aten.gather.default", "aten.embedding.default", "aten.addmm.default",
                                                "aten._scaled_dot_product_flash_attention_for_cpu.default"}


def test_explain_text_table_and_pictures_count_the_same_ops(bert_report):
    (g,) = bert_report.graphs
    text = str(bert_report)
    left = g.compute_ops - g.fused_compute_ops
    assert len(g.left_out) == left > 0
    assert sum(len(k.aten_ops) for k in g.kernels) == g.fused_compute_ops
    assert f"{g.fused_compute_ops} of {g.compute_ops} computing ATen ops replaced" in text
    assert f"{g.fused_compute_ops}/{g.compute_ops} computing ATen ops fused, {left} left to ATen" in text
    title = (f"{len(g.kernels)} kernel(s) compute {g.fused_compute_ops} of {g.compute_ops} ATen ops, "
             f"{left} left to ATen")
    assert title in g.dot and title in g.overview_dot and "ATen step(s)" not in g.dot
    for k in g.kernels:  # the table's row, the cluster's label and the kernel's own picture
        assert re.search(rf"\n  {k.name} +{len(k.aten_ops)} +{len(k.ops)} ", text), k.name
        label = f"{k.name}: {len(k.aten_ops)} ATen op(s), {len(k.ops)} IR op(s)"
        assert label in g.dot and label in g.overview_dot and label in g.kernel_dots[k.name]


def _dot_edges(dot):
    """(from node, to node, attributes) of the edges of a DOT text, and each node's label."""
    labels = dict(re.findall(r'^  "(\w+)" \[label="([^"]*)"', dot, re.M))
    labels.update(re.findall(r'^    "(\w+)" \[label="([^"]*)"', dot, re.M))  # ops inside clusters
    return re.findall(r'^  "(\w+)" -> "(\w+)" \[(.*)\];$', dot, re.M), labels


def test_explain_rejected_fusion_names_the_edge_it_draws(bert_report):
    (g,) = bert_report.graphs
    assert g.rejected and not any(r.sibling for r in g.rejected)
    edges, labels = _dot_edges(g.dot)
    red = [(a, b, attrs) for a, b, attrs in edges if "rejected: " in attrs]
    assert len(red) == len(g.rejected)
    for r in g.rejected:
        m = re.match(r"fusing (%\w+) into (%\w+) would create a cycle", r.reason)
        assert m and m.groups() == (r.producer, r.consumer), str(r)  # the reason's pair is the record's
        (edge,) = [(a, b) for a, b, attrs in red if f'labeltooltip="{r.reason}"' in attrs]
        for node, name in zip(edge, (r.producer, r.consumer)):  # op labels: "%add_4", "cast %clone"
            assert labels[node] == name or labels[node].endswith(" " + name), (labels[node], name)
        assert f"    {r.producer} -> {r.consumer}: fusing {r.producer} into {r.consumer}" in str(bert_report)
    overview, _ = _dot_edges(g.overview_dot)
    assert len([e for e in overview if "rejected: " in e[2]]) == len(g.rejected)


def test_explain_pictures_type_sdpa_output_as_its_tuple(bert_report):
    (g,) = bert_report.graphs
    for dot in (g.dot, g.overview_dot):
        assert 'label="i64[]"' not in dot and ': i64[]"' not in dot
        tooltips = re.findall(r'tooltip="%_scaled_dot_product_flash_attention_for_cpu : ([^"]*)"', dot)
        assert tooltips and set(tooltips) == {"(f32[2, 2, 8, 16], f32[2, 2, 8])"}


def test_explain_lists_each_kernel_picture(bert_report):
    (g,) = bert_report.graphs
    text = str(bert_report)
    for k in g.kernels:
        ext = "svg" if shutil.which("dot") else "dot"
        assert k.picture.endswith(f"{g.name}.{k.name}.{ext}") and os.path.getsize(k.picture) > 0
        assert f"  kernel {k.name}: " in text and f"    picture: {k.picture}\n" in text
    assert f"; {len(g.kernels)} per kernel, listed with each kernel" in text


def test_explain_with_autofuse_disabled_says_so_and_counts_the_ops():
    x, b = torch.randn(4, 8), torch.randn(8)
    report = autofuse.explain(fn, x, b, config=autofuse.CompilerConfig(enable_autofuse=False))
    torch.testing.assert_close(report.output, fn(x, b))
    (g,) = report.graphs
    assert report.disabled == "CompilerConfig(enable_autofuse=False)"
    assert (g.compute_ops, g.fused_compute_ops, report.num_kernels) == (6, 0, 0)  # mul add relu cumsum sigmoid sub
    text = str(report)
    assert text.startswith("autofuse explain: autofuse is disabled (CompilerConfig(enable_autofuse=False))")
    assert "0 of 6 computing ATen ops replaced" in text and "0/6 computing ATen ops fused" in text
    flags = autofuse.explain(fn, x, b, config=autofuse.CompilerConfig(autofuse_flags="--enable_autofuse=false"))
    assert flags.disabled == "--enable_autofuse=false in AUTOFUSE_FLAGS" and flags.compute_ops == 6


def _with_break(x):
    y = torch.relu(x * 2)
    print("explain test: a graph break")
    return torch.sigmoid(y) + 1


def test_explain_reports_the_graph_break_and_its_reason(capsys):
    x = torch.randn(4, 8)
    report = autofuse.explain(_with_break, x)
    torch.testing.assert_close(report.output, torch.sigmoid(torch.relu(x * 2)) + 1)
    assert len(report.graphs) == 2
    (brk,) = report.breaks
    first = report.graphs[0]
    assert brk.graphs == [first.name]
    assert brk.where.startswith("test_explain.py:") and "print(" in brk.where
    assert "print" in brk.summary and "Hint" not in brk.summary
    text = str(report)
    assert "graph break(s): 1" in text and f"after {first.name} at {brk.where}: " in text
    assert f"  graph break after it: {brk.where}: {brk.summary}" in text
    assert not report.graphs[1].graph_break


def test_collect_records_nest():
    # explain collects each Dynamo graph's records inside the caller's collector: leaving the
    # inner one (an equal list) must not end the outer one.
    x = torch.randn(4, 8)
    with autofuse.collect_records() as outer:
        with autofuse.collect_records() as inner:
            torch.compile(lambda t: torch.exp(t) * 3, backend="autofuse")(x)
        assert len(inner) == 1 and outer == inner
        torch.compile(lambda t: torch.tanh(t) + 1, backend="autofuse")(x)
    assert len(outer) == 2 and len(inner) == 1
