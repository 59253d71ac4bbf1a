"""The "autofuse" logger the PyTorch way (log.py): TORCH_LOGS="+autofuse" and the README's
one-line `logging.getLogger("autofuse").setLevel(logging.DEBUG)` both show our debug lines on
stderr, AUTOFUSE_LOG=debug too, and nothing below a warning shows by default. Each case runs
in a fresh interpreter: torch reads TORCH_LOGS when it is imported."""
import os
import subprocess
import sys

import pytest

PROGRAM = """
import logging, torch, autofuse
{setup}
torch.compile(lambda x: torch.sigmoid(x) * x, backend="autofuse")(torch.randn(8))
"""
README_LINE = 'logging.getLogger("autofuse").setLevel(logging.DEBUG)'


def stderr_of(setup: str, **env) -> str:
    environ = {k: v for k, v in os.environ.items() if k not in ("TORCH_LOGS", "AUTOFUSE_LOG")}
    environ.update(env)
    r = subprocess.run([sys.executable, "-c", PROGRAM.format(setup=setup)], capture_output=True, text=True,
                       env=environ, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stderr


@pytest.mark.parametrize("how", ["TORCH_LOGS", "readme", "AUTOFUSE_LOG"])
def test_debug_lines_show(how):
    if how == "TORCH_LOGS":
        err = stderr_of("", TORCH_LOGS="+autofuse")
    elif how == "readme":
        err = stderr_of(README_LINE)
    else:
        err = stderr_of("", AUTOFUSE_LOG="debug")
    assert "fusion flags:" in err  # a debug line of the pipeline
    assert "autofuse: graph g0: 1 kernel(s)" in err  # the info line of the compile


def test_quiet_by_default_and_not_printed_twice():
    err = stderr_of("logging.basicConfig(level=logging.DEBUG)")
    assert "fusion flags:" not in err
    lines = [ln for ln in err.splitlines() if "kernel(s) for" in ln]
    assert not lines  # info is below the logger's default level


def test_registered_with_torch_logging():
    from torch._logging import _internal

    assert _internal.log_registry.is_log("autofuse")
