"""Correct or fallen back: unsupported ops run as ATen, compile failures run eagerly."""

import logging
import os
import subprocess

import pytest
import torch

import autofuse
from autofuse.executor_codegen import EAGER
from autofuse._C import StepKind
from helpers import compile_fn, only_record


def test_unsupported_op_runs_as_aten():
    def fn(x):
        y = torch.sigmoid(x) * 2.0 + 1.0
        return torch.sort(y, dim=-1).values * 3.0

    x = torch.randn(6, 10)
    torch.testing.assert_close(compile_fn(fn)(x), fn(x))
    rec = only_record()
    assert rec.fallback == ""
    assert rec.num_kernels == 2  # the chain before the sort and the scaling after it
    opaque = [s for s in rec.steps if s.kind == StepKind.opaque]
    assert any("sort" in rec.translation.nodes[s.ops[0]].origin for s in opaque)


def test_integer_ops_fuse_and_int_pow_stays_aten():
    def fn(x, y):
        return (x * 3 + 1) // 2, x.pow(y), y.float().sigmoid() * 2

    x = torch.randint(-100, 100, (4, 9))
    y = torch.randint(0, 5, (4, 9))
    got = compile_fn(fn)(x, y)
    expected = fn(x, y)
    assert got[0].dtype == got[1].dtype == torch.int64
    torch.testing.assert_close(got, expected, rtol=0, atol=0)
    rec = only_record()
    nodes = [n for n in rec.translation.nodes if n.type.dtype == torch.int64 and n.kind not in ("input", "const")]
    assert {n.kind for n in nodes} == {"mul", "add", "div_floor", "opaque"}, rec.graph_text
    (pow_,) = [n for n in nodes if n.kind == "opaque"]
    assert pow_.reason == "dtype i64 is not supported by generated kernels (pow)"


def test_only_unsupported_ops_runs_eagerly():
    def fn(x):
        return torch.sort(x).values

    x = torch.randn(5, 5)
    torch.testing.assert_close(compile_fn(fn)(x), fn(x))
    assert only_record().fallback.startswith("no fusible ops (1 op: not an elementwise, broadcast, reduce or "
                                             "concat op; runs as ATen aten.sort")


def test_a_graph_of_ops_kernels_lack_for_its_dtype_says_so():
    def fn(x, y):
        return x.pow(y)

    x, y = torch.arange(8, dtype=torch.int16), torch.arange(8, dtype=torch.int16) % 3
    torch.testing.assert_close(compile_fn(fn)(x, y), fn(x, y))
    reason = only_record().fallback
    assert reason.startswith("no fusible ops (1 op: ") and "dtype i16 is not supported by generated kernels (pow)" in reason


def test_toolchain_failure_falls_back_with_warning(tmp_path, caplog):
    config = autofuse.CompilerConfig(cxx="/nonexistent/cxx", cache_dir=str(tmp_path / "cache"))

    def fn(x, b):
        return torch.tanh(x) * b - 0.5

    x, b = torch.randn(4, 16), torch.randn(16)
    with caplog.at_level(logging.WARNING, logger="autofuse"):
        got = compile_fn(fn, config)(x, b)
    torch.testing.assert_close(got, fn(x, b))
    rec = only_record()
    assert rec.fallback.startswith("toolchain error")
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("runs eagerly" in w and "/nonexistent/cxx" in w for w in warnings), warnings


def test_failing_compiler_falls_back_with_its_message(tmp_path, caplog):
    """A compiler that runs but fails (an internal error): its own message reaches the user,
    with the generated source kept for a report, and the graph runs eagerly."""
    cxx = tmp_path / "badcxx"
    cxx.write_text('#!/bin/sh\ncase "$1" in --version) echo "badcxx 1.0"; exit 0;; esac\n'
                   'echo "badcxx: internal compiler error: simulated" >&2\nexit 4\n')
    cxx.chmod(0o755)
    config = autofuse.CompilerConfig(cxx=str(cxx), cache_dir=str(tmp_path / "cache"))
    x = torch.randn(5, 7)
    with caplog.at_level(logging.WARNING, logger="autofuse"):
        torch.testing.assert_close(compile_fn(lambda x: torch.exp(x) * 3, config)(x), torch.exp(x) * 3)
    assert only_record().fallback.startswith("toolchain error")
    message = next(r.getMessage() for r in caplog.records if "runs eagerly" in r.getMessage())
    assert "exit 4" in message and "internal compiler error: simulated" in message, message
    assert "source kept at" in message


def test_toolchain_failure_raises_without_fallback(tmp_path):
    config = autofuse.CompilerConfig(
        cxx="/nonexistent/cxx", cache_dir=str(tmp_path / "cache"), fallback_on_error=False
    )
    with pytest.raises(Exception, match="nonexistent"):
        compile_fn(lambda x: torch.exp(x) + 1, config)(torch.randn(3))


def _sorted_scaled(x, idx):
    y = torch.sigmoid(x) * 2.0
    return torch.sort(y, dim=-1).values[idx] * 3.0


def test_failing_step_runs_eagerly_and_model_errors_stay_the_models(caplog):
    """An exception inside the executor never reaches the model: a step that fails where the
    eager graph does not runs the graph eagerly from then on, with a warning. An error the eager
    graph raises too (an index out of range) is the model's: raised as eager raises it, and the
    executor keeps serving valid calls."""
    x = torch.randn(6, 10)
    f = compile_fn(_sorted_scaled)
    torch.testing.assert_close(f(x, torch.tensor([1, 4])), _sorted_scaled(x, torch.tensor([1, 4])))
    runner = only_record().runner
    with pytest.raises(IndexError):
        f(x, torch.tensor([1, 40]))
    assert not runner.broken
    torch.testing.assert_close(f(x, torch.tensor([0, 5])), _sorted_scaled(x, torch.tensor([0, 5])))

    def failing(env):
        raise RuntimeError("a step autofuse got wrong")

    runner._steps = [(s[0], s[1], failing) + s[3:] if s[0] == EAGER else s for s in runner._steps]
    runner.regenerate()
    with caplog.at_level(logging.WARNING, logger="autofuse"):
        got = f(x, torch.tensor([2, 3]))
    torch.testing.assert_close(got, _sorted_scaled(x, torch.tensor([2, 3])))
    assert runner.broken
    assert any("failed at run time (RuntimeError: a step autofuse got wrong)" in r.getMessage()
               for r in caplog.records)


def test_eager_dtype_conversions_run_atens_copy():
    """prims.convert_element_type steps (dtypes kernels do not compute, here f64) run as ATen's
    _to_copy (aten_table.EAGER_EQUIVALENTS): the same values, dtype and strides as the prim."""
    from autofuse import aten_table

    x = torch.randn(6, 10)[:, ::2].t()  # strided: the copy keeps the layout
    prim = torch.ops.prims.convert_element_type.default(x, torch.float64)
    mine = aten_table.convert_element_type(x, torch.float64)
    assert mine.dtype == prim.dtype and mine.stride() == prim.stride() and torch.equal(mine, prim)

    def fn(a):
        return (a.double() * 3).float().sigmoid() + 1

    a = torch.randn(8, 33)
    torch.testing.assert_close(compile_fn(fn)(a), fn(a))


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a directory to another user needs root")
def test_cache_dir_of_another_user_is_refused_and_falls_back(tmp_path, caplog):
    """A cache directory owned by someone else could hold their shared objects: autofuse
    refuses it, says why, and the graph runs eagerly."""
    cache = tmp_path / "theirs"
    cache.mkdir(mode=0o700)
    os.chown(cache, 65534, 65534)
    config = autofuse.CompilerConfig(cache_dir=str(cache))
    x = torch.randn(4, 16)
    with caplog.at_level(logging.WARNING, logger="autofuse"):
        got = compile_fn(lambda x: torch.tanh(x) * 2 - 1, config)(x)
    torch.testing.assert_close(got, torch.tanh(x) * 2 - 1)
    assert only_record().fallback.startswith("toolchain error")
    messages = [r.getMessage() for r in caplog.records]
    assert any("owned by uid 65534" in m for m in messages), messages
    assert list(cache.iterdir()) == []  # nothing written into it


def _mount_tmpfs(path, size):
    """Mounts a tmpfs of `size` at path; False where this machine does not let us."""
    try:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(path)],
                              capture_output=True)
    except OSError:
        return False
    return done.returncode == 0


def test_full_disk_while_writing_the_cache_falls_back(tmp_path, caplog):
    """The cache's filesystem is full while a kernel module is written: the user sees why, the
    graph runs eagerly, and once there is room a new compile builds a clean entry."""
    small = tmp_path / "small"
    small.mkdir()
    if not _mount_tmpfs(small, "8k"):
        pytest.skip("no tmpfs mount here (needs root and CAP_SYS_ADMIN)")
    try:
        config = autofuse.CompilerConfig(cache_dir=str(small / "cache"))
        fn = lambda x: torch.tanh(x) * 2 - 1  # noqa: E731
        x = torch.randn(4, 16)
        with caplog.at_level(logging.WARNING, logger="autofuse"):
            torch.testing.assert_close(compile_fn(fn, config)(x), fn(x))
        assert only_record().fallback.startswith("toolchain error")
        assert any("No space left on device" in r.getMessage() for r in caplog.records)
        assert not list((small / "cache").glob("*.so"))  # nothing published

        subprocess.run(["mount", "-o", "remount,size=64m", str(small)], check=True)
        torch._dynamo.reset()
        autofuse.reset_records()
        torch.testing.assert_close(compile_fn(fn, config)(x), fn(x))
        assert not only_record().fallback
    finally:
        subprocess.run(["umount", "-l", str(small)], capture_output=True)


def test_read_only_cache_dir_falls_back(tmp_path, caplog):
    """A cache on a read-only filesystem (as root, mode bits alone do not stop writes): the user
    sees why, the graph runs eagerly with eager's results."""
    ro = tmp_path / "ro"
    ro.mkdir()
    if not _mount_tmpfs(ro, "1m"):
        pytest.skip("no tmpfs mount here (needs root and CAP_SYS_ADMIN)")
    try:
        (ro / "cache").mkdir(mode=0o700)
        subprocess.run(["mount", "-o", "remount,ro", str(ro)], check=True)
        config = autofuse.CompilerConfig(cache_dir=str(ro / "cache"))
        fn = lambda x: torch.sigmoid(x) + 3  # noqa: E731
        x = torch.randn(4, 16)
        with caplog.at_level(logging.WARNING, logger="autofuse"):
            torch.testing.assert_close(compile_fn(fn, config)(x), fn(x))
        assert only_record().fallback.startswith("toolchain error")
        messages = [r.getMessage() for r in caplog.records]
        assert any("Read-only file system" in m for m in messages), messages
    finally:
        subprocess.run(["umount", "-l", str(ro)], capture_output=True)
