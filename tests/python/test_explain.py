"""autofuse.explain: kernels with their ATen ops, ops left to ATen with reasons, counts."""

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
    assert "5 of 6 ATen ops replaced" in text


def test_explain_reports_fallback(tmp_path):
    config = autofuse.CompilerConfig(cxx="/nonexistent/cxx", cache_dir=str(tmp_path))
    report = autofuse.explain(lambda x: torch.exp(x) * 3, torch.randn(5), config=config)
    assert report.num_kernels == 0
    assert report.graphs[0].fallback.startswith("toolchain error")
    assert "runs eagerly" in str(report)
