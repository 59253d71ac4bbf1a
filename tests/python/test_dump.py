"""AUTOFUSE_DUMP: every compiled graph leaves its FX graph and every IR stage in the directory; a
directory that cannot be written is a warning, and the model still runs on its kernels."""

import logging
import os
import subprocess
import sys

import pytest
import torch

import autofuse
from autofuse import dumps
from helpers import compile_fn, only_inductor_record, only_record


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
    # After each FX pass that ran, in the pass list's order (backend.FX_PASSES): an inference
    # graph whose weights' packs are kept runs every one.
    from autofuse.backend import FX_PASSES

    ran = [p.name for p in FX_PASSES if f"{name}.fx.{p.name}.txt" in files]
    assert ran == ["input_updates", "float_normalization", "channels_last", "constant_folding", "bias_epilogue",
                   "view_motion", "packed_conv"]
    assert "aten.gelu.default" in (dump / f"{name}.fx.view_motion.txt").read_text()


def _warnings(caplog):
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


@pytest.mark.parametrize("how", ["env /proc", "option file"])
def test_unusable_dump_dir_is_a_warning_and_the_model_runs(tmp_path, monkeypatch, caplog, how):
    """A dump dir that cannot be made (under /proc) or is a file: once crashed the model call
    (BackendCompilerFailed: FileNotFoundError / FileExistsError). Now one warning naming the
    variable or option and the OS error, and every graph still compiles to kernels."""
    monkeypatch.setattr(dumps, "_warned", set())
    if how == "env /proc":
        bad, config, named, error = "/proc/autofuse-nope", None, "AUTOFUSE_DUMP", "FileNotFoundError"
        monkeypatch.setenv("AUTOFUSE_DUMP", bad)
    else:
        bad = tmp_path / "a-file"
        bad.write_text("not a directory")
        config, named, error = autofuse.CompilerConfig(dump_dir=str(bad)), "CompilerConfig.dump_dir", "FileExistsError"

    def fn(x):
        return torch.sigmoid(x) * x + 1

    with caplog.at_level(logging.WARNING, logger="autofuse"):
        compiled = compile_fn(fn, config)
        for shape in [(8,), (3, 5)]:  # two graphs, one warning
            x = torch.randn(shape)
            torch.testing.assert_close(compiled(x), fn(x))
    recs = autofuse.compiled_graphs()
    assert len(recs) == 2 and all(r.num_kernels == 1 and not r.fallback for r in recs), recs
    warnings = _warnings(caplog)
    assert len(warnings) == 1, warnings
    assert f"cannot write dump files to '{bad}' ({named}): {error}" in warnings[0], warnings[0]
    assert "without dumps" in warnings[0]


def test_unusable_dump_dir_with_the_inductor_frontend(tmp_path, caplog, monkeypatch):
    monkeypatch.setattr(dumps, "_warned", set())
    bad = tmp_path / "a-file"
    bad.write_text("")
    config = autofuse.CompilerConfig(frontend="inductor", dump_dir=str(bad / "sub"))
    fn = lambda x: torch.tanh(x) * 2 - 1  # noqa: E731
    x = torch.randn(4, 16)
    with caplog.at_level(logging.WARNING, logger="autofuse"):
        torch.testing.assert_close(compile_fn(fn, config)(x), fn(x))
    assert only_inductor_record().kernels
    warnings = _warnings(caplog)
    assert len(warnings) == 1 and "NotADirectoryError" in warnings[0], warnings


def test_full_dump_dir_is_a_warning_and_the_model_runs(tmp_path, caplog, monkeypatch):
    """A dump dir whose filesystem fills up: the files that fit are written, the rest are one
    warning with the OS error, and the graph runs on its kernels."""
    monkeypatch.setattr(dumps, "_warned", set())
    small = tmp_path / "small"
    small.mkdir()
    if not _mount_tmpfs(small, "4k"):
        pytest.skip("no tmpfs mount here (needs root and CAP_SYS_ADMIN)")
    try:
        try:
            (small / "filler").write_bytes(b"x" * 8192)
        except OSError:
            pass  # the filesystem is full
        fn = lambda x: torch.exp(x) * 3  # noqa: E731
        x = torch.randn(4, 16)
        with caplog.at_level(logging.WARNING, logger="autofuse"):
            torch.testing.assert_close(compile_fn(fn, autofuse.CompilerConfig(dump_dir=str(small)))(x), fn(x))
        assert only_record().num_kernels == 1 and not only_record().fallback
        warnings = _warnings(caplog)
        assert len(warnings) == 1 and "No space left on device" in warnings[0], warnings
    finally:
        subprocess.run(["umount", "-l", str(small)], capture_output=True)


def _mount_tmpfs(path, size):
    """Mounts a tmpfs of `size` at path; False where this machine does not let us."""
    try:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(path)],
                              capture_output=True)
    except OSError:
        return False
    return done.returncode == 0


def test_a_fresh_process_numbers_its_dumps_from_g0(tmp_path):
    """Dump files carry the graph's name, the process-wide one logs, warnings, compiled_graphs()
    and explain use (so a dump dir set after other compiles starts at that graph's number): a
    fresh process's first graph is g0, its backward g1_bw."""
    program = ("import torch\n"
               "m = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.GELU())\n"
               "torch.compile(m, backend='autofuse')(torch.randn(4, 8)).sum().backward()\n")
    env = dict(os.environ, AUTOFUSE_DUMP=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    names = sorted({f.split(".")[0] for f in os.listdir(tmp_path)})
    assert names == ["g0", "g1_bw"], names
