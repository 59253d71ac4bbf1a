"""Measured tuning (CompilerConfig(tune=True) / AUTOFUSE_TUNE=1): a kernel times candidate
tilings once per shape bucket, keeps the fastest in <cache dir>/tuning.txt, later calls and later
processes reuse it without measuring, and results never change."""

import json
import os
import subprocess
import sys

import torch

import autofuse

from helpers import compile_fn


def chain(x, w):
    return torch.nn.functional.layer_norm(torch.sigmoid(x) * w, (x.shape[-1],)) + 1


def run(cfg, *args):
    torch._dynamo.reset()
    with autofuse.collect_records() as recs:
        out = compile_fn(chain, cfg)(*args)
    (rec,) = recs
    assert not rec.fallback, rec.fallback
    return out, rec


def test_tuning_measures_once_then_reuses_and_never_changes_results(tmp_path):
    x, w = torch.randn(300, 1000), torch.randn(1000)
    plain, _ = run(autofuse.CompilerConfig(cache_dir=str(tmp_path)), x, w)
    cfg = autofuse.CompilerConfig(cache_dir=str(tmp_path), tune=True)
    tuned, rec = run(cfg, x, w)
    assert torch.equal(tuned, plain)  # the tiling splits the work, never the values
    stats = rec.program.tuning_stats()
    assert stats["file"] == str(tmp_path / "tuning.txt")
    assert stats["measured"] == rec.num_kernels >= 1
    lines = (tmp_path / "tuning.txt").read_text().splitlines()
    assert len(lines) == rec.num_kernels
    key, cores, ub, ns = lines[0].split()
    assert int(cores) >= 1 and int(ub) > 0 and int(ns) > 0 and "|" in key

    # The same shapes again: the stored choice, no measuring.
    measured = stats["measured"]
    again = compile_fn(chain, cfg)(x, w)
    assert torch.equal(again, plain)
    stats = rec.program.tuning_stats()
    assert stats["measured"] == measured and stats["hits"] >= 1

    # A fresh process reads the file and measures nothing.
    env = dict(os.environ, AUTOFUSE_CACHE_DIR=str(tmp_path), AUTOFUSE_TUNE="1")
    code = (
        "import json, torch, autofuse\n"
        "from test_tuning import chain\n"
        "x, w = torch.randn(300, 1000), torch.randn(1000)\n"
        "with autofuse.collect_records() as recs:\n"
        "    torch.compile(chain, backend='autofuse', dynamic=False)(x, w)\n"
        "print(json.dumps(recs[0].program.tuning_stats()))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300,
                          cwd=os.path.dirname(__file__))
    assert proc.returncode == 0, proc.stderr[-3000:]
    child = json.loads(proc.stdout.strip().splitlines()[-1])
    assert child["measured"] == 0 and child["hits"] >= 1, child


def test_tuning_off_by_default(tmp_path, monkeypatch):
    monkeypatch.delenv("AUTOFUSE_TUNE", raising=False)
    cfg = autofuse.CompilerConfig(cache_dir=str(tmp_path))
    assert cfg.tune is False and cfg.tuning_file() == ""
    _, rec = run(cfg, torch.randn(4, 8), torch.randn(8))
    assert rec.program.tuning_stats()["measured"] == 0
    assert not (tmp_path / "tuning.txt").exists()


def test_tiling_query_says_where_the_choice_comes_from(tmp_path):
    x, w = torch.randn(300, 1000), torch.randn(1000)
    _, plain = run(autofuse.CompilerConfig(cache_dir=str(tmp_path)), x, w)
    _, tuned = run(autofuse.CompilerConfig(cache_dir=str(tmp_path), tune=True), x, w)
    n = torch.get_num_threads()
    for rec, source in ((plain, "untuned"), (tuned, "tuned")):
        program = rec.program
        for k in range(program.num_kernels()):
            assert program.kernel_symbols(k) == []  # static shapes: no size symbols
            t = program.tiling(k, [], n)
            assert t["source"] == source and t["block_dim"] >= 1 and t["cores"] >= 1, t
            assert t["ub_bytes"] > 0 and t["tiling_key"] >= 0, t
    stats = tuned.program.tuning_stats()
    tuned.program.tiling(0, [], n)
    assert tuned.program.tuning_stats() == stats  # a query is not a launch


def test_a_new_shape_bucket_is_unmeasured_until_it_launches(tmp_path):
    cfg = autofuse.CompilerConfig(cache_dir=str(tmp_path), tune=True)
    torch._dynamo.reset()
    x, w = torch.randn(6, 64), torch.randn(64)
    torch._dynamo.mark_dynamic(x, 0)  # the row count is the one size symbol
    with autofuse.collect_records() as recs:
        torch.compile(chain, backend=autofuse.get_backend(cfg))(x, w)
    program = recs[0].program
    n = torch.get_num_threads()
    for k in range(program.num_kernels()):
        assert len(program.kernel_symbols(k)) == 1, program.kernel_symbols(k)
        assert program.tiling(k, [6], n)["source"] == "tuned"  # launched: measured
        assert program.tiling(k, [5], n)["source"] == "tuned"  # the same bucket (bit length 3)
        assert program.tiling(k, [1 << 20], n)["source"] == "unmeasured"  # never launched
