"""AUTOFUSE_DUMP: every compiled graph leaves its FX graph and every IR stage in the directory."""

import os

import torch

from helpers import only_record


def test_dump_writes_every_stage(tmp_path, monkeypatch):
    dump = tmp_path / "dump"
    monkeypatch.setenv("AUTOFUSE_DUMP", str(dump))

    def fn(x, b):
        return torch.nn.functional.gelu(x) + b

    x, b = torch.randn(3, 20), torch.randn(20)
    torch.testing.assert_close(torch.compile(fn, backend="autofuse", dynamic=False)(x, b), fn(x, b))
    name = only_record().name
    files = set(os.listdir(dump))
    for suffix in ["fx.txt", "graph.ir", "lowered.txt", "fused.txt", "scheduled.txt", "cpp", "run.py"]:
        assert f"{name}.{suffix}" in files, sorted(files)
    assert "aten.gelu.default" in (dump / f"{name}.fx.txt").read_text()
    assert "gelu(" in (dump / f"{name}.graph.ir").read_text()
    assert "kernel @k0" in (dump / f"{name}.fused.txt").read_text()
    assert "launch(0, [" in (dump / f"{name}.run.py").read_text()
