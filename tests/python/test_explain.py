"""autofuse.explain: kernels with their ops, bytes and TilingCases, ops left to ATen and
rejected fusions with reasons, counts, and the Graphviz picture of the fused graph."""

import logging
import os
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
    assert r'label="k0: 4 op(s)\lread 160 B, write 128 B\lunfused 800 B\ltiling: elementwise\l"' in g.dot
    assert r'label="k1: 2 op(s)\lread 256 B, write 128 B\lunfused 640 B\ltiling: elementwise\l"' in g.dot
    text = str(report)
    assert "kernel  ops   read  written  unfused  saved  tiling cases" in text
    assert "  k0        4  160 B    128 B    800 B    64%  elementwise" in text
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
